//! The fidelity verdict on planted cells: the cells and scenarios the tests plant (here), and
//! the tests by concept: answers, pricing, load and pairs.

mod answers;
mod load;
mod pairs;
mod pricing;

use super::*;
use crate::bench::record::scenario::parse;
use crate::bench::record::scenario::Experiment;
use crate::bench::record::{Cell, CellStatus, Figures, Why};

/// A finished round of `target` in `x`: p50, p99 and CPU per request (µs), a round trip of
/// 20 µs, one server CPU at `busy`.
pub(super) fn round(x: &str, target: &str, repeat: usize, p50: f64, p99: f64, cpu: f64, busy: f64) -> Cell {
    Cell {
        experiment: x.into(),
        target: target.into(),
        twin: false,
        calibration: None,
        connections: 100,
        repeat,
        placed: None,
        does_no_work: false,
        status: CellStatus::Ok,
        seconds: 1.0,
        figures: Figures {
            throughput_rps: 1000.0,
            requests: 3000,
            p50_us: Some(p50),
            p99_us: Some(p99),
            server_cpu_us_per_req: Some(cpu),
            server_cpu_cores: Some(busy),
            why: Some(Why {
                round_trip_us: Some(20.0),
                server_cpus: Some(1),
                ..Default::default()
            }),
            ..Figures::default()
        },
        load: None,
        server_stats: None,
    }
}

/// Three rounds of `target`, each figure scaled by the round's factor in `spread`.
pub(super) fn rounds(x: &str, target: &str, p50: f64, p99: f64, cpu: f64, busy: f64, spread: [f64; 3]) -> Vec<Cell> {
    (0..3)
        .map(|r| {
            let k = spread[r];
            round(
                x,
                target,
                r,
                20.0 + (p50 - 20.0) * k,
                20.0 + (p99 - 20.0) * k,
                cpu,
                busy,
            )
        })
        .collect()
}

pub(super) const EVEN: [f64; 3] = [1.0, 1.0, 1.0];

pub(super) fn scenario(text: &str) -> Vec<Experiment> {
    parse(&format!("name = \"s\"\ndescription = \"d\"\n{text}"), "t")
        .unwrap()
        .experiments
}

/// Keep-alive without work, a closed loop: reactor beside Node, procs-accept beside nginx.
pub(super) fn keepalive() -> Vec<Experiment> {
    scenario(
        "[[experiment]]\nname = \"ka\"\nproto = \"http\"\nmodels = [\"reactor\", \"procs-accept --workers 1\"]\n\
         peers = [\"node\", \"nginx\"]\nconnections = [100]\nduration = \"1s\"\n",
    )
}

/// The table's cell of `r` under the column named `name`.
pub(super) fn column(r: &Row, name: &str) -> String {
    let i = COLUMNS.iter().position(|c| *c == name).expect("a column");
    r.cells()[i].clone()
}

pub(super) fn row<'a>(rows: &'a [Row], product: &str) -> &'a Row {
    rows.iter().find(|r| r.product == product).unwrap()
}
