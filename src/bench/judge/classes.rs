//! Request classes in a verdict: each class's p99 ranked as every request's is, and set against
//! the class's own service time (what its query names under `work_from_request`, else the
//! experiment's `work`): "their p99 is 410× their 20 µs service time under reactor: they wait
//! behind the long requests (5 ms)".

use std::time::Duration;

use super::finding::Finding;
use super::metric::{rankable, P99};
use crate::bench::record::scenario::Experiment;
use crate::bench::record::{median, Cell};
use crate::server::work::CEILING;
use crate::server::Work;
use crate::units::fmt_us;

/// A p99 this many times the service time's own p99 is queueing, not service: said so; and a
/// class this many times longer than another is one the other may wait behind.
const WAITING: f64 = 10.0;

/// A class waits behind a longer one when its p99 reaches this share of the longer one's mean
/// service time (a p99 of 10× 20 µs is a round trip, not a wait behind 5 ms).
const BEHIND: f64 = 0.5;

/// The classes the cells measured (name, path), in the load's order.
pub(super) fn names(cells: &[&Cell]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for k in cells.iter().flat_map(|c| &c.figures.classes) {
        if !out.iter().any(|(n, _)| *n == k.name) {
            out.push((k.name.clone(), k.path.clone()));
        }
    }
    out
}

/// `cells` seen through class `name`: each one's latency figures are the class's (0, which no
/// latency ranking counts, where none of its requests completed).
pub fn view(cells: &[&Cell], name: &str) -> Vec<Cell> {
    cells.iter().map(|c| as_class(c, name)).collect()
}

/// `c` seen through class `name`: its latency figures are the class's (none, not measured, where
/// none of its requests completed or the class was refused).
pub(crate) fn as_class(c: &Cell, name: &str) -> Cell {
    let mut v = Cell::new(&c.experiment, &c.target, c.connections, c.repeat);
    v.status = c.status.clone();
    v.seconds = c.seconds;
    v.figures = c.figures.clone();
    // A class with refused requests (4xx/5xx) has no latency of served ones to rank.
    let k = c.figures.classes.iter().find(|k| k.name == name && k.refused == 0);
    v.figures.p50_us = k.and_then(|k| k.p50_us);
    v.figures.p99_us = k.and_then(|k| k.p99_us);
    v.figures.p999_us = k.and_then(|k| k.p999_us);
    // Its quantiles are taken from its own requests (the sample floor counts those).
    v.figures.requests = c
        .figures
        .classes
        .iter()
        .find(|k| k.name == name)
        .map_or(0, |k| k.requests);
    // Its prediction is the class's too (none where the simulation kept none for it).
    v.figures.predicted = c.figures.predicted.as_ref().and_then(|p| {
        let k = p.classes.iter().find(|k| k.name == name)?;
        Some(crate::queueing::Prediction {
            p50_us: k.p50_us,
            p99_us: k.p99_us,
            classes: Vec::new(),
            ..p.clone()
        })
    });
    v
}

/// A class's service time as served: its mean and its 99th percentile, in µs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Service {
    pub mean: f64,
    pub p99: f64,
}

/// The service time of requests to `path` (`None`: every request's, `work`) as the models
/// serve it: what the path's query names where they serve `work_from_request` (cut at
/// `--max-work`), else the experiment's `work` (cut at its ceiling); `None` where neither names
/// one, or the query is one the server refuses.
pub(super) fn service(x: &Experiment, path: Option<&str>) -> Option<Service> {
    let max = x.max_work();
    let named = match path.filter(|_| x.work_from_request) {
        Some(p) => crate::server::query_work(p, max).ok()?,
        None => None,
    };
    let (work, cap) = match named {
        Some(w) => (w, max),
        None => (x.work.as_deref()?.parse::<Work>().ok()?, CEILING),
    };
    let (mean, p99) = work.as_served(cap);
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    (!mean.is_zero()).then(|| Service {
        mean: us(mean),
        p99: us(p99),
    })
}

/// The median p99 of `target`'s cells at `n` connections (of the class's view when given),
/// where it may be ranked ([`rankable`]: not from cells that starved connections, nor a class
/// with refused requests, nor from too few samples).
fn p99_at(cells: &[&Cell], class: Option<&str>, target: &str, n: usize) -> Option<f64> {
    let seen: Vec<Cell> = match class {
        Some(k) => view(cells, k),
        None => cells.iter().map(|c| (*c).clone()).collect(),
    };
    let seen: Vec<&Cell> = seen.iter().collect();
    let xs: Vec<f64> = seen
        .iter()
        .filter(|c| c.target == target && c.connections == n)
        .filter_map(|c| rankable(&P99, c, &seen).ranked().map(|r| r.get()))
        .collect();
    (!xs.is_empty()).then(|| median(xs))
}

fn times(r: f64) -> String {
    if r >= 10.0 {
        format!("{r:.0}×")
    } else {
        format!("{r:.1}×")
    }
}

/// A p99 finding (of a class, or of every request) set against its service time: how many
/// times its mean the worst and the best targets' p99 are (their medians at the finding's
/// count); that the worst waits behind a far longer class where its p99 reaches half that
/// class's mean; else that requests wait in a queue where its p99 is ten times both the
/// service time's own p99 and the best target's p99. `None` where no service time is known.
pub(super) fn against_service(
    x: &Experiment,
    cells: &[&Cell],
    f: &Finding,
    classes: &[(String, String)],
) -> Option<String> {
    let class = f.class.as_deref();
    let path = class.and_then(|k| classes.iter().find(|(n, _)| n == k).map(|(_, p)| p.as_str()));
    if class.is_none() && !classes.is_empty() && x.work_from_request {
        // Every request's p99 over classes of different work has no one service time.
        return None;
    }
    let sv = service(x, path)?;
    let s = sv.mean;
    let worst = f.last.as_ref().map_or(&f.runner_up, |(t, _)| t);
    let w = p99_at(cells, class, worst, f.connections)?;
    let b = p99_at(cells, class, &f.best, f.connections)?;
    let whose = match class {
        Some(k) => format!("The {k} requests' p99 is"),
        None => "The p99 is".to_string(),
    };
    let mut said = format!(
        "{whose} {} {} {} service time under {worst} and {} under {}",
        times(w / s),
        if class.is_some() { "their" } else { "the" },
        fmt_us(s),
        times(b / s),
        f.best
    );
    // The longest other class, when far longer: what the short ones may wait behind.
    let longer = classes
        .iter()
        .filter(|(n, _)| Some(n.as_str()) != class)
        .filter_map(|(n, p)| Some((n, service(x, Some(p))?.mean)))
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .filter(|(_, l)| *l >= s * WAITING);
    match longer {
        Some((n, l)) if class.is_some() && w >= l * BEHIND => {
            said.push_str(&format!(
                ": under {worst} they wait behind the {n} requests ({})",
                fmt_us(l)
            ));
        }
        // Ten times the service's own p99, and ten times the best target's p99 (which holds
        // the round trip): the rest is waiting.
        _ if w >= sv.p99 * WAITING && w >= b * WAITING => said.push_str(&format!(
            ": under {worst} requests wait in a queue (the service time's own p99 is {})",
            fmt_us(sv.p99)
        )),
        _ => {}
    }
    Some(said + ".")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::record::scenario::{parse, ScenarioFault};
    use crate::bench::record::ClassFigure;

    fn experiment(extra: &str) -> Experiment {
        crate::bench::record::scenario::experiment_of("\"reactor\", \"thread\"", "10", extra).unwrap()
    }

    fn class(name: &str, path: &str, p99: Option<f64>) -> ClassFigure {
        ClassFigure {
            name: name.into(),
            path: path.into(),
            requests: 1000,
            errors: 0,
            refused: 0,
            p50_us: p99.map(|v| v / 2.0),
            p99_us: p99,
            p999_us: p99,
        }
    }

    fn cell(target: &str, short_p99: Option<f64>) -> Cell {
        let mut c = Cell::new("e", target, 10, 0);
        c.status = crate::bench::record::CellStatus::Ok;
        c.figures.throughput_rps = 1000.0;
        c.figures.p99_us = Some(5000.0);
        c.figures.classes = vec![
            class("short", "/?cpu=20us", short_p99),
            class("long", "/?cpu=5ms", Some(9000.0)),
        ];
        c
    }

    #[test]
    fn a_view_holds_the_class_latency_and_zero_where_it_has_none() {
        let cells = [cell("reactor", Some(4000.0)), cell("thread", None)];
        let refs: Vec<&Cell> = cells.iter().collect();
        assert_eq!(
            names(&refs),
            vec![
                ("short".into(), "/?cpu=20us".into()),
                ("long".into(), "/?cpu=5ms".into())
            ]
        );
        let v = view(&refs, "short");
        assert_eq!((v[0].figures.p99_us, v[0].figures.p50_us), (Some(4000.0), Some(2000.0)));
        assert_eq!(v[1].figures.p99_us, None, "no short request completed: not a latency");
        assert_eq!(view(&refs, "long")[1].figures.p99_us, Some(9000.0));
    }

    fn mean(s: Option<Service>) -> Option<f64> {
        s.map(|s| s.mean.round())
    }

    #[test]
    fn service_time_comes_from_the_query_only_when_the_models_read_it() {
        let x = experiment("work_from_request = true\nwork = \"cpu:1ms\"");
        assert_eq!(service(&x, Some("/?cpu=20us")), Some(Service { mean: 20.0, p99: 20.0 }));
        assert_eq!(mean(service(&x, Some("/plain"))), Some(1000.0), "no query: --work");
        assert_eq!(
            service(&x, Some("/?cpu=20ms")),
            None,
            "refused by the server: no service time"
        );
        let x = experiment("work = \"sleep:exp(1ms)\"");
        let s = service(&x, Some("/?cpu=20us")).unwrap();
        assert!((s.mean - 1000.0).abs() < 30.0, "the query is not read: {s:?}");
        assert!((s.p99 - 4605.0).abs() < 300.0, "exp's p99 is ln(100) means: {s:?}");
        assert_eq!(service(&x, None), Some(s));
        assert_eq!(service(&experiment(""), None), None);
        // A heavy tail as served: cut at --max-work, its mean is below the distribution's.
        let x = experiment("work_from_request = true");
        let s = service(&x, Some("/?cpu=lognormal%281ms,3%29")).unwrap();
        assert!(s.mean < 600.0 && s.p99 <= 10_000.0, "{s:?}");
    }

    #[test]
    fn a_class_the_server_would_refuse_is_an_error_when_the_scenario_is_read() {
        let text = "name = \"s\"\ndescription = \"d\"\n[[experiment]]\nname = \"e\"\nproto = \"http\"\n\
                    models = [\"reactor\"]\nconnections = [10]\nduration = \"1s\"\nwork_from_request = true\n\
                    mix = [\"a=1:/?cpu=20us\", \"b=1:/?cpu=50ms\"]\n";
        let e = parse(text, "t").unwrap_err();
        assert!(
            matches!(e.fault(), Some(ScenarioFault::Query { class, .. }) if class == "b"),
            "{e:?}"
        );
        let e = e.to_string();
        assert!(
            e.contains("field 'mix'") && e.contains("class 'b'") && e.contains("--max-work 10ms"),
            "{e}"
        );
        let raised = text.replace("[\"reactor\"]", "[\"reactor --max-work 60ms\"]");
        assert!(parse(&raised, "t").is_ok(), "the entry's own --max-work");
    }

    #[test]
    fn the_short_class_is_said_to_wait_behind_the_long_one() {
        let x = experiment("work_from_request = true");
        let cells = [cell("reactor", Some(8200.0)), cell("thread", Some(60.0))];
        let refs: Vec<&Cell> = cells.iter().collect();
        let f = Finding {
            metric: "p99 latency".into(),
            best: "thread".into(),
            runner_up: "reactor".into(),
            ratio: 8200.0 / 60.0,
            clear: true,
            best_value: 60.0,
            runner_up_value: 8200.0,
            connections: 10,
            client_bound_cells: 0,
            last: None,
            behind: None,
            unranked: Vec::new(),
            class: Some("short".into()),
            placed: None,
            why: String::new(),
            counts: None,
            interval: None,
            rounds: 1,
        };
        let classes = names(&refs);
        let s = against_service(&x, &refs, &f, &classes).unwrap();
        assert_eq!(
            s,
            "The short requests' p99 is 410× their 20us service time under reactor and 3.0× under thread: \
             under reactor they wait behind the long requests (5.00ms)."
        );
        // A short p99 far below the long service time is not a wait behind it.
        let near = [cell("reactor", Some(400.0)), cell("thread", Some(60.0))];
        let near: Vec<&Cell> = near.iter().collect();
        let s = against_service(&x, &near, &f, &classes).unwrap();
        assert!(
            s.ends_with("20× their 20us service time under reactor and 3.0× under thread."),
            "{s}"
        );
        // A class with refused requests has no latency to set against anything.
        let mut refused = cells.clone();
        refused[0].figures.classes[0].refused = 1;
        let refused: Vec<&Cell> = refused.iter().collect();
        assert_eq!(against_service(&x, &refused, &f, &classes), None);
        // Every request's p99 over classes of different work: no one service time to set it against.
        let all = Finding {
            class: None,
            placed: None,
            why: String::new(),
            ..f.clone()
        };
        assert_eq!(against_service(&x, &refs, &all, &classes), None);
        // Without a service time, nothing is said.
        let plain = experiment("");
        assert_eq!(against_service(&plain, &refs, &f, &classes), None);
    }
}
