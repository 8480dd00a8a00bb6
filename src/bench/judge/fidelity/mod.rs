//! Fidelity: whether a model behaves like the product it is built after. Wherever an
//! experiment runs a peer beside a model that stands for it (`record::peer::Peer::stands_for`:
//! Go's net/http beside green, Node's http beside reactor or offload, nginx beside
//! procs-accept, redis-server and memcached beside their stores), each connection count gives
//! a row. The two are compared by shape, not by absolute figures: Node runs JavaScript, and a
//! costlier implementation at the same rate queues longer for its cost, not its architecture.
//! So each side's p50 and p99, past the machine's round trip, are read in its own mean
//! service time E[S] (its CPU per request in these cells, and the work's mean blocking call),
//! at equal load: under `busy_of` each at the same share of its own CPUs (one off its aim by
//! more than 5 points is said); blocking calls at one rate, which is one occupancy for pools
//! of the same size (the row reports it; Go keeps no pool and is compared at the same rate,
//! saying so). The
//! model's shape over the product's, round by round, gives an interval: the pair *stands*
//! where both p50's and p99's lie within 1.25×, *differs* where one lies wholly outside it, and is
//! *unresolved* otherwise (an interval across the margin, one round, or one figure only). A
//! difference is priced (`cause`): a figure the cells measured is named only where what it
//! predicts lies between half the gap and twice it. CPU per request is shown beside, as the
//! implementations' cost.
//!
//! The pairs and the verdict (`pairs`), the interval and the answer (`answer`), a row as the
//! table and the text say it (`row`), a side's rounds and E[S] (`side`), and the pricing of a
//! gap (`cause`).

mod answer;
mod cause;
mod pairs;
mod row;
mod side;

pub use answer::{ratio_said, Answer, Interval, MARGIN};
pub use pairs::{rows, verdict, Said, NAME};
pub use row::{Row, COLUMNS};

// What the tests check of a part, through the facade.
#[cfg(test)]
use pairs::models_for;

#[cfg(test)]
mod tests;
