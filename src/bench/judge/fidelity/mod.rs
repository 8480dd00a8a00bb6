//! Fidelity: whether a model stands for the product it is built after. Wherever an experiment
//! runs a peer beside the model that stands for it (`record::peer::Peer::stands_for`: Go's
//! net/http beside green, Node's http beside reactor or offload, nginx beside procs-accept,
//! redis-server and memcached beside their stores), each connection count gives a row: both
//! targets' p99 and server CPU per request, and their ratios (model ÷ product). The model
//! stands for the product on a row where both ratios are within [`WITHIN`]; where one is not,
//! the row says so with the cause where the cells' own figures name one (what bound each, the
//! context switches and threads each used, the time each waited for a CPU), and says that the
//! card cannot split it where they do not. A figure that may not be ranked (a starved or lost
//! cell, a p99 the client set, too few samples) is shown and not compared, with why.
//!
//! The pairs and the verdict (`pairs`), a row as the table and the text say it (`row`), the
//! medians a side is read by (`side`), and what names a gap (`cause`).

mod cause;
mod pairs;
mod row;
mod side;

pub use cause::UNNAMED;
pub use pairs::{rows, verdict, Said, NAME};
pub use row::{ratio_said, Row, COLUMNS, WITHIN};

#[cfg(test)]
mod tests;
