//! Shapes of one load (a scenario with `compare_shapes`): each experiment carries the same
//! requests in flight another way (many HTTP/1.1 connections, a few pipelined ones, HTTP/2
//! streams over a few connections or one). Target by target, this says which shape the
//! design serves at the lowest server CPU per request and the lowest p99, with the counter
//! that explains it, and what one busy connection costs a design with several workers: a
//! connection, and so all of its streams, stays on the worker that accepted it.

use super::metric::{rankable, Metric, Ranked, CPU, P99};
use super::verdict::Verdict;
use crate::bench::record::scenario::Experiment;
use crate::bench::record::{summarize, Cell, Summary};
use crate::units::fmt_us;

/// Server CPU per request, sub-microsecond ones with two decimals.
fn cpu_us(v: f64) -> String {
    match v < 10.0 {
        true => format!("{v:.2}us"),
        false => fmt_us(v),
    }
}

/// The name of the verdict across shapes.
pub const NAME: &str = "across shapes";

/// Jain's index across a design's workers under this: some of its workers idled (one busy
/// connection, and so all of its streams, stays on the worker that accepted it).
const UNEVEN: f64 = 0.75;

/// ... and this far below the same design's most even shape: the shape, not the design, left
/// them idle.
const UNEVEN_GAP: f64 = 0.2;

/// Jain's index over the stream lanes at least this: the streams were served alike.
const LANES_ALIKE: f64 = 0.9;

/// One target in one shape: the experiment, and the target's median repeat in it.
struct Shape<'a> {
    x: &'a Experiment,
    cell: &'a Cell,
    /// Every cell of the run (what [`rankable`] weighs it beside).
    all: &'a [Cell],
}

impl Shape<'_> {
    fn cpu(&self) -> Option<Ranked> {
        rankable(&CPU, self.cell, &self.beside()).ranked()
    }

    /// Its p99 where it may be ranked ([`rankable`]).
    fn p99(&self) -> Option<Ranked> {
        rankable(&P99, self.cell, &self.beside()).ranked()
    }

    fn beside(&self) -> Vec<&Cell> {
        self.all.iter().collect()
    }

    /// HTTP/2: Jain's index over the client's stream lanes, and how many lanes.
    fn lanes(&self) -> Option<(f64, usize)> {
        let h = self.cell.load.as_ref()?.results.h2.as_ref()?;
        Some((h.lanes_jain?, h.lanes))
    }

    /// How the shape carries its requests, in words.
    fn how(&self) -> String {
        let n = self.cell.connections;
        match (self.x.proto.name(), self.x.load.streams, self.x.load.pipeline) {
            ("h2", s, _) => format!("{n} HTTP/2 connection{} × {s} streams", plural(n)),
            (_, _, p) if p > 1 => format!("{n} HTTP/1.1 connection{} × {p} pipelined", plural(n)),
            _ => format!("{n} HTTP/1.1 connection{}", plural(n)),
        }
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// The shape with the best ranked `value` of metric `m` among `shapes` (of those placed alike
/// as the first), the worst, and their values.
fn extremes<'s, 'a>(
    shapes: &'s [Shape<'a>],
    m: &Metric,
    value: impl Fn(&Shape<'a>) -> Option<Ranked>,
) -> Option<(&'s Shape<'a>, f64, &'s Shape<'a>, f64)> {
    let measured: Vec<(&Shape, Ranked)> = shapes.iter().filter_map(|s| value(s).map(|v| (s, v))).collect();
    let first = measured.first()?.1;
    let measured: Vec<(&Shape, Ranked)> = measured.into_iter().filter(|(_, v)| v.alike(first)).collect();
    if measured.len() < 2 {
        return None;
    }
    let mut order: Vec<Ranked> = measured.iter().map(|(_, v)| *v).collect();
    Ranked::best_first(m, &mut order);
    let of = |v: Ranked| measured.iter().find(|(_, x)| *x == v).map(|(s, _)| *s);
    let (best, worst) = (order[0], order[order.len() - 1]);
    Some((of(best)?, best.get(), of(worst)?, worst.get()))
}

/// The verdict across the shapes of `experiments`, the server on `server_cpus` CPUs (`None`:
/// not recorded); `None` where no target ran in two shapes.
pub fn verdict(experiments: &[Experiment], cells: &[Cell], server_cpus: Option<usize>) -> Option<Verdict> {
    let rows: Vec<Summary> = summarize(cells).into_iter().filter(|s| s.cell.ok()).collect();
    let mut targets: Vec<String> = Vec::new();
    for r in &rows {
        if !targets.contains(&r.cell.label()) {
            targets.push(r.cell.label());
        }
    }
    let lines: Vec<String> = targets
        .iter()
        .filter_map(|t| {
            let shapes: Vec<Shape> = experiments
                .iter()
                .filter_map(|x| {
                    let r = rows
                        .iter()
                        .find(|r| &r.cell.label() == t && r.cell.experiment == x.name)?;
                    Some(Shape {
                        x,
                        cell: &r.cell,
                        all: cells,
                    })
                })
                .collect();
            (shapes.len() >= 2).then(|| target_line(t, &shapes, &rows, server_cpus))
        })
        .collect();
    if lines.is_empty() {
        return None;
    }
    let mut text = format!(
        "{NAME}: the same requests in flight carried {} ways; target by target, the shape it serves best.",
        experiments.len()
    );
    for l in lines {
        text.push('\n');
        text.push_str(&l);
    }
    Some(Verdict {
        experiment: NAME.to_string(),
        text: text.clone(),
        findings: Vec::new(),
        reasons: Vec::new(),
        aa: None,
        expected: Vec::new(),
        // Its first line says it in a sentence.
        headline: text.lines().next().unwrap_or_default().to_string(),
        table: Vec::new(),
        fidelity: Vec::new(),
    })
}

/// One target's line: its cheapest and its fastest shape, what an idle worker cost it, and
/// how evenly its streams were served.
fn target_line(t: &str, shapes: &[Shape], rows: &[Summary], server_cpus: Option<usize>) -> String {
    let mut said = format!("{t}:");
    match extremes(shapes, &CPU, Shape::cpu) {
        Some((best, b, worst, w)) => {
            let why = match (best.cell.figures.syscalls_per_req, worst.cell.figures.syscalls_per_req) {
                (Some(a), Some(z)) => format!(" ({a:.2} syscalls per request against {z:.2})"),
                _ => String::new(),
            };
            said.push_str(&format!(
                " cheapest per request as {} ({} of server CPU), {:.1}× less than as {} ({}){why};",
                best.how(),
                cpu_us(b),
                w / b,
                worst.how(),
                cpu_us(w)
            ));
        }
        None => said.push_str(" server CPU per request not measured in two shapes;"),
    }
    match extremes(shapes, &P99, Shape::p99) {
        Some((best, b, worst, w)) => said.push_str(&format!(
            " lowest p99 as {} ({}), highest as {} ({}).",
            best.how(),
            fmt_us(b),
            worst.how(),
            fmt_us(w)
        )),
        None => said.push_str(" p99 not measured in two shapes."),
    }
    said.push_str(&uneven_workers(shapes, rows, server_cpus));
    // HTTP/2: how evenly the streams were served (each lane a closed loop of its own).
    if let Some((s, (j, n))) = shapes
        .iter()
        .filter_map(|s| s.lanes().map(|l| (s, l)))
        .min_by(|a, b| a.1 .0.total_cmp(&b.1 .0))
    {
        said.push_str(&format!(
            " Streams {} served alike (Jain {j:.2} over its {n} stream lanes as {}).",
            if j >= LANES_ALIKE { "were" } else { "were not" },
            s.how()
        ));
    }
    said
}

/// A design with several workers: where one shape left a worker idle (its Jain across workers
/// under [`UNEVEN`], and [`UNEVEN_GAP`] below its most even shape), what that cost, in words;
/// empty otherwise.
fn uneven_workers(shapes: &[Shape], rows: &[Summary], server_cpus: Option<usize>) -> String {
    let jains = || {
        shapes
            .iter()
            .filter_map(|s| s.cell.figures.jain_workers.map(|j| (s, j)))
    };
    let uneven = jains().filter(|(_, j)| *j < UNEVEN).min_by(|a, b| a.1.total_cmp(&b.1));
    let even = jains().max_by(|a, b| a.1.total_cmp(&b.1));
    let (Some((s, j)), Some((e, je))) = (uneven, even) else {
        return String::new();
    };
    if je - j <= UNEVEN_GAP {
        return String::new();
    }
    let p99 = |s: &Shape| s.p99().map_or("–".to_string(), |v| fmt_us(v.get()));
    // What the idle worker cost: against a design with one worker in the same shape.
    let single = rows
        .iter()
        .filter(|r| r.cell.experiment == s.x.name && r.cell.figures.jain_workers.is_none())
        .filter_map(|r| Some((r, rankable(&P99, &r.cell, &s.beside()).ranked()?)))
        .fold(None, |best: Option<(&Summary, Ranked)>, (r, v)| match best {
            Some((b, bv)) if bv.best_of(v, &P99) != Some(v) => Some((b, bv)),
            _ => Some((r, v)),
        })
        .map(|(r, v)| (r, v.get()));
    let cost = match (server_cpus, single) {
        (Some(1), _) => "with the server on one CPU its workers share it, so what the idle one \
                         could have done cannot show here (give the server two CPUs)"
            .to_string(),
        (_, Some((one, v))) => format!(
            "its p99 {} against {} for {} (one worker) in that shape",
            p99(s),
            fmt_us(v),
            one.cell.label()
        ),
        (_, None) => format!("its p99 {}", p99(s)),
    };
    format!(
        " As {}, its workers shared the requests unevenly (Jain {j:.2} across workers, {je:.2} as {}): \
         a connection stays on the worker that accepted it, and so do all of its streams, so the \
         others idle; {cost}.",
        s.how(),
        e.how(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::record::scenario::parse;
    use crate::bench::record::{CellStatus, Figures};

    fn cell(x: &str, target: &str, conns: usize, cpu: Option<f64>, p99: f64, jain: Option<f64>) -> Cell {
        Cell {
            experiment: x.into(),
            target: target.into(),
            twin: false,
            calibration: None,
            connections: conns,
            repeat: 0,
            placed: None,
            does_no_work: false,
            status: CellStatus::Ok,
            seconds: 1.0,
            figures: Figures {
                throughput_rps: 1000.0,
                requests: 1000,
                p99_us: Some(p99),
                server_cpu_us_per_req: cpu,
                syscalls_per_req: cpu.map(|c| c / 2.0),
                jain_workers: jain,
                ..Figures::default()
            },
            load: None,
            server_stats: None,
        }
    }

    fn scenario() -> Vec<Experiment> {
        let text = "name = \"s\"\ndescription = \"d\"\ncompare_shapes = true\n\
            [[experiment]]\nname = \"h1\"\nproto = \"http\"\nmodels = [\"epoll\", \"multi-reactor --workers 2\"]\nconnections = [100]\nduration = \"1s\"\n\
            [[experiment]]\nname = \"h2\"\nproto = \"h2\"\nmodels = [\"epoll\", \"multi-reactor --workers 2\"]\nconnections = [1]\nstreams = [100]\nduration = \"1s\"\n";
        parse(text, "t").unwrap().experiments
    }

    #[test]
    fn each_target_gets_its_cheapest_and_fastest_shape_and_an_idle_worker_is_explained() {
        let xs = scenario();
        assert_eq!(xs[1].name, "h2-100streams");
        assert_eq!(xs[1].load.streams, 100);
        let cells = vec![
            cell("h1", "epoll", 100, Some(4.0), 900.0, None),
            cell("h2-100streams", "epoll", 1, Some(0.8), 700.0, None),
            cell("h1", "multi-reactor --workers 2", 100, Some(4.2), 800.0, Some(0.99)),
            cell("h2-100streams", "multi-reactor --workers 2", 1, None, 1500.0, Some(0.5)),
        ];
        let v = verdict(&xs, &cells, Some(1)).expect("two shapes ran");
        for said in [
            "epoll: cheapest per request as 1 HTTP/2 connection × 100 streams (0.80us of server CPU), \
             5.0× less than as 100 HTTP/1.1 connections (4.00us) (0.40 syscalls per request against 2.00);",
            "lowest p99 as 1 HTTP/2 connection × 100 streams (700us), highest as 100 HTTP/1.1 connections (900us).",
            // Not measured in one shape: said so, never ranked.
            "multi-reactor --workers 2: server CPU per request not measured in two shapes;",
            "Jain 0.50 across workers, 0.99 as 100 HTTP/1.1 connections",
            "cannot show here (give the server two CPUs)",
        ] {
            assert!(v.text.contains(said), "{said}\n{}", v.text);
        }
    }

    #[test]
    fn on_two_server_cpus_an_idle_worker_is_set_against_a_one_worker_design_in_the_same_shape() {
        let xs = scenario();
        let cells = vec![
            cell("h1", "epoll", 100, Some(4.0), 900.0, None),
            cell("h2-100streams", "epoll", 1, Some(0.8), 700.0, None),
            cell("h1", "multi-reactor --workers 2", 100, Some(4.2), 800.0, Some(0.99)),
            cell(
                "h2-100streams",
                "multi-reactor --workers 2",
                1,
                Some(0.9),
                1500.0,
                Some(0.5),
            ),
        ];
        let v = verdict(&xs, &cells, Some(2)).expect("two shapes ran");
        let said = "its p99 1.50ms against 700us for epoll (one worker) in that shape.";
        assert!(v.text.contains(said), "{said}\n{}", v.text);
    }

    #[test]
    fn a_target_in_one_shape_only_gives_no_verdict() {
        let xs = scenario();
        let cells = vec![cell("h1", "epoll", 100, Some(4.0), 900.0, None)];
        assert!(verdict(&xs, &cells, Some(1)).is_none());
    }

    /// A latency from a cell that starved connections covers only the served ones: never the
    /// lowest p99 of a target's shapes.
    #[test]
    fn a_shape_that_starved_connections_is_not_the_fastest() {
        let xs = scenario();
        let mut starved = cell("h2-100streams", "epoll", 1, Some(0.8), 100.0, None);
        starved.figures.starved_conns = 1;
        let cells = vec![
            cell("h1", "epoll", 100, Some(4.0), 900.0, None),
            starved,
            cell("h1", "poll", 100, Some(4.0), 900.0, None),
        ];
        let v = verdict(&xs, &cells, Some(1)).expect("epoll ran in two shapes");
        assert!(
            v.text.contains("epoll:") && v.text.contains("p99 not measured in two shapes"),
            "{}",
            v.text
        );
        assert!(!v.text.contains("lowest p99 as 1 HTTP/2"), "{}", v.text);
    }
}
