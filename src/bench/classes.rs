//! Request classes in a verdict: each class's p99 ranked as every request's is, and set against
//! the class's own service time (what its query names under `work_from_request`, else the
//! experiment's `work`): "their p99 is 410× their 20 µs service time under reactor: they wait
//! behind the long requests (5 ms)".

use super::results::{median, Cell};
use super::scenario::Experiment;
use super::verdict::Finding;
use crate::units::fmt_us;

/// A p99 this many times the service time is queueing, not service: named with its cause.
const WAITING: f64 = 10.0;

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
pub(super) fn view(cells: &[&Cell], name: &str) -> Vec<Cell> {
    cells
        .iter()
        .map(|c| {
            let mut v = Cell::new(&c.experiment, &c.target, c.connections, c.repeat);
            v.status = c.status.clone();
            v.seconds = c.seconds;
            v.figures = c.figures.clone();
            let k = c.figures.classes.iter().find(|k| k.name == name);
            v.figures.p50_us = k.and_then(|k| k.p50_us).unwrap_or(0.0);
            v.figures.p99_us = k.and_then(|k| k.p99_us).unwrap_or(0.0);
            v.figures.p999_us = k.and_then(|k| k.p999_us).unwrap_or(0.0);
            v
        })
        .collect()
}

/// The mean service time, in µs, of requests to `path` (`None`: every request's, `work`):
/// what the path's query names where the models serve `work_from_request`, else the
/// experiment's `work`; `None` where neither names one.
pub(super) fn service_us(x: &Experiment, path: Option<&str>) -> Option<f64> {
    let named = path.filter(|_| x.work_from_request).and_then(crate::server::query_work);
    let work = named.or_else(|| x.work.as_deref()?.parse::<crate::server::Work>().ok())?;
    let us = work.mean().as_secs_f64() * 1e6;
    (us > 0.0).then_some(us)
}

/// The median p99 of `target`'s cells at `n` connections (of the class's view when given).
fn p99_at(cells: &[&Cell], class: Option<&str>, target: &str, n: usize) -> Option<f64> {
    let xs: Vec<f64> = cells
        .iter()
        .filter(|c| c.target == target && c.connections == n)
        .filter_map(|c| match class {
            Some(k) => c.figures.classes.iter().find(|f| f.name == k)?.p99_us,
            None => Some(c.figures.p99_us),
        })
        .filter(|v| *v > 0.0)
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
/// times it the worst and the best targets' p99 are, and, where the worst waits for far
/// longer requests of another class, that it waits behind them. `None` where no service time
/// is known.
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
    let s = service_us(x, path)?;
    let worst = f.last.as_ref().map_or(&f.runner_up, |(t, _)| t);
    let w = p99_at(cells, class, worst, f.connections)?;
    let b = f.best_value;
    let whose = match class {
        Some(k) => format!("The {k} requests' p99 is"),
        None => "The p99 is".to_string(),
    };
    let mut s_ = format!(
        "{whose} {} {} {} service time under {worst} and {} under {}",
        times(w / s),
        if class.is_some() { "their" } else { "the" },
        fmt_us(s),
        times(b / s),
        f.best
    );
    // The longest other class, when far longer: what the short ones wait behind.
    let longer = classes
        .iter()
        .filter(|(n, _)| Some(n.as_str()) != class)
        .filter_map(|(n, p)| Some((n, service_us(x, Some(p))?)))
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .filter(|(_, l)| *l >= s * WAITING);
    match longer {
        Some((n, l)) if w / s >= WAITING && class.is_some() => {
            s_.push_str(&format!(
                ": under {worst} they wait behind the {n} requests ({})",
                fmt_us(l)
            ));
        }
        _ if w / s >= WAITING => s_.push_str(&format!(": under {worst} requests wait in a queue")),
        _ => {}
    }
    Some(s_ + ".")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::results::ClassFigure;
    use crate::bench::scenario::parse;

    fn experiment(extra: &str) -> Experiment {
        let text = format!(
            "name = \"s\"\ndescription = \"d\"\n[[experiment]]\nname = \"e\"\nproto = \"http\"\n\
             models = [\"reactor\", \"thread\"]\nconnections = [10]\nduration = \"1s\"\n{extra}"
        );
        parse(&text, "test").unwrap().experiments.remove(0)
    }

    fn class(name: &str, path: &str, p99: Option<f64>) -> ClassFigure {
        ClassFigure {
            name: name.into(),
            path: path.into(),
            requests: 100,
            errors: 0,
            p50_us: p99.map(|v| v / 2.0),
            p99_us: p99,
            p999_us: p99,
        }
    }

    fn cell(target: &str, short_p99: Option<f64>) -> Cell {
        let mut c = Cell::new("e", target, 10, 0);
        c.status = super::super::results::CellStatus::Ok;
        c.figures.throughput_rps = 1000.0;
        c.figures.p99_us = 5000.0;
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
        assert_eq!((v[0].figures.p99_us, v[0].figures.p50_us), (4000.0, 2000.0));
        assert_eq!(v[1].figures.p99_us, 0.0, "no short request completed: not a latency");
        assert_eq!(view(&refs, "long")[1].figures.p99_us, 9000.0);
    }

    #[test]
    fn service_time_comes_from_the_query_only_when_the_models_read_it() {
        let x = experiment("work_from_request = true\nwork = \"cpu:1ms\"");
        assert_eq!(service_us(&x, Some("/?cpu=20us")), Some(20.0));
        assert_eq!(service_us(&x, Some("/plain")), Some(1000.0), "no query: --work");
        let x = experiment("work = \"sleep:exp(1ms)\"");
        assert_eq!(
            service_us(&x, Some("/?cpu=20us")),
            Some(1000.0),
            "the query is not read"
        );
        assert_eq!(service_us(&x, None), Some(1000.0));
        assert_eq!(service_us(&experiment(""), None), None);
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
            unranked: Vec::new(),
            class: Some("short".into()),
        };
        let classes = names(&refs);
        let s = against_service(&x, &refs, &f, &classes).unwrap();
        assert_eq!(
            s,
            "The short requests' p99 is 410× their 20us service time under reactor and 3.0× under thread: \
             under reactor they wait behind the long requests (5.00ms)."
        );
        // Every request's p99 over classes of different work: no one service time to set it against.
        let all = Finding {
            class: None,
            ..f.clone()
        };
        assert_eq!(against_service(&x, &refs, &all, &classes), None);
        // Without a service time, nothing is said.
        let plain = experiment("");
        assert_eq!(against_service(&plain, &refs, &f, &classes), None);
    }
}
