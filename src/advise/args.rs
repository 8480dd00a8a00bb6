//! `muxlab advise`'s flags ([`AdviseArgs`]): the workload, the latency target, the designs
//! and the time the answer may take.

use std::path::PathBuf;
use std::time::Duration;

use crate::units::parse_duration;

/// `muxlab advise`'s flags.
#[derive(clap::Args, Debug)]
pub struct AdviseArgs {
    /// Work per request, as `muxlab serve --work` takes it: cpu:exp(100us), sleep:exp(1ms),
    /// cpu:50us+sleep:2ms, cpu:hist:measured.hgrm, ...
    #[arg(long)]
    pub work: String,
    /// The latency target, as `muxlab load --slo` takes it: p99<=5ms (several joined by ',').
    #[arg(long, default_value = "p99<=10ms")]
    pub slo: String,
    /// Keep-alive connections the clients hold.
    #[arg(long, short = 'c', default_value_t = 100)]
    pub connections: usize,
    /// The request rate the server must carry; without it, each design's capacity is found and
    /// ranked.
    #[arg(long)]
    pub rate: Option<f64>,
    /// The protocol: http (keep-alive requests) or echo (each message a request).
    #[arg(long, default_value = "http", value_parser = ["http", "echo"])]
    pub proto: String,
    /// Arrivals of the open loop.
    #[arg(long, value_enum, default_value_t = crate::load::Arrivals::Poisson)]
    pub arrivals: crate::load::Arrivals,
    /// The designs to compare, comma-separated [default: reactor, queue-pool, dispatch,
    /// multi-reactor, reuseport, thread, uring, tokio].
    #[arg(long, value_delimiter = ',')]
    pub models: Vec<String>,
    /// Workers of the designs that have them [default: the server's CPUs, four times that
    /// when the work waits (sleep:)].
    #[arg(long, short = 'w')]
    pub workers: Option<usize>,
    /// The time the whole answer may take.
    #[arg(long, default_value = "5m", value_parser = parse_duration)]
    pub time: Duration,
    /// Print the scenario these flags make (a bench TOML file) and stop.
    #[arg(long)]
    pub print_scenario: bool,
    /// Print the answer as one JSON document (the ranking, ties, capacities with their
    /// brackets, predictions, reasons, the time planned and spent, the results directories).
    #[arg(long)]
    pub json: bool,
    /// Parent directory of the results.
    #[arg(long, default_value = "results")]
    pub out: PathBuf,
}
