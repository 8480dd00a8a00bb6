//! One [`Metric`]: what a figure is called, its unit, which way is better, how to read it from a
//! cell (measured, and as the design's queueing predicts it), and — in [`rankable`], the one
//! rule every consumer asks (the verdicts, the headline and its table, the report's marks and
//! charts, `report A B`, `advise`, `explain`) — whether a cell's value may be ranked at all:
//! measured; from a cell the server bound (not the client, not another task); from a design
//! that served every connection and lost no request in any cell of its experiment; from
//! enough samples for its quantile (n ≥ 10 / (1 − q): 20 for a p50, 1,000 for a p99); over
//! what the measurement resolves. Shares (late events) are ranked as shares, their counts
//! compared by Poisson intervals.
//!
//! The type and the metrics (`metrics`), the rule (`rank`), why a value is not ranked
//! (`unranked`), and shares compared by their counts (`share`). The client's limit the rule
//! reads is `judge::bound`'s ([`client_limit`](super::bound::client_limit)).

mod metrics;
mod rank;
mod share;
mod unranked;

pub use metrics::{
    resolved, throughput_offered, Counts, Metric, ALL, CAPACITY, CPU, CPU_EVENT, FAIRNESS, GAP_P99, LATE, MEMORY,
    MEMORY_RESOLVES_KIB, P50, P99, P999, SYSCALLS, THROUGHPUT, TTFE_P99,
};
pub use rank::{at_least, floor, median, placed_alike, rankable, Rank, Ranked};
pub use share::{poisson_interval, share_said, shares_apart};
pub use unranked::Unranked;

#[cfg(test)]
mod tests;
