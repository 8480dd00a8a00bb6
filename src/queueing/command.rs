//! `muxlab predict`: the queueing prediction for a design and a workload, without a server:
//! what latency and capacity the design's dispatch alone implies, and beside it the M/M/k
//! closed form where the case is one.

use std::str::FromStr;
use std::time::Duration;

use serde::Serialize;

use super::erlang::mmk_sojourn_quantile;
use super::BadPrediction;
use super::{classes_of, discipline_of, predict, Arrivals, Discipline, Prediction, Setup};
use crate::load::Arrivals as ArrivalKind;
use crate::server::work::Dist;
use crate::server::Work;
use crate::units::{format_duration, parse_duration, thousands};

/// `muxlab predict`'s flags.
#[derive(clap::Args, Debug)]
pub struct PredictArgs {
    /// The design (see `muxlab models`).
    #[arg(long, short = 'm')]
    pub model: String,
    /// Its workers [default: one per server CPU, for models that have workers].
    #[arg(long, short = 'w')]
    pub workers: Option<usize>,
    /// The server's CPUs: a count (serve --cpus takes a list).
    #[arg(long, default_value_t = 1)]
    pub cpus: usize,
    /// Work per request, as `muxlab serve --work` takes it (cpu:exp(100us), sleep:1ms, ...).
    #[arg(long, default_value = "none")]
    pub work: String,
    /// Requests name their work in their query, as `serve --work-from-request` reads it (with
    /// --mix classes).
    #[arg(long)]
    pub work_from_request: bool,
    /// Where request-named work is cut.
    #[arg(long, default_value = "10ms", value_parser = parse_duration)]
    pub max_work: Duration,
    /// Request classes, NAME=WEIGHT:PATH, as `muxlab load --mix` takes them.
    #[arg(long = "mix", value_name = "NAME=WEIGHT:PATH")]
    pub mix: Vec<crate::load::MixEntry>,
    /// Open loop at this many requests per second; without it, a closed loop over -c.
    #[arg(long)]
    pub rate: Option<f64>,
    /// Open loop's arrivals.
    #[arg(long, value_enum, default_value_t = ArrivalKind::Uniform)]
    pub arrivals: ArrivalKind,
    /// Closed loop: wait this long after each response.
    #[arg(long, value_parser = parse_duration)]
    pub think: Option<Duration>,
    /// The client's connections (each with one request in flight); in an open loop, without
    /// it none are modelled (requests reach the server as they arrive).
    #[arg(long, short = 'c')]
    pub connections: Option<usize>,
    /// The design's own CPU per request beside the work (its syscalls, wake-ups, copies), as
    /// a bench cell measures it: without it a design whose work is all waiting (sleep:) and
    /// that has a thread per connection is bounded by nothing and is not modelled.
    #[arg(long, value_parser = parse_duration, default_value = "0s")]
    pub design_cpu: Duration,
    /// A reservation (model offload): K of the pool's workers take only work whose mean is
    /// under D, as `serve --reserve under=D:K`.
    #[arg(long, value_name = "under=D:K", value_parser = crate::server::Reserve::from_str)]
    pub reserve: Option<crate::server::Reserve>,
    /// Share the CPUs ideally (processor sharing) instead of in the kernel's slices.
    #[arg(long)]
    pub processor_sharing: bool,
    /// Requests simulated (a tenth more run first, as a warm-up).
    #[arg(long, default_value_t = 200_000)]
    pub requests: usize,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// What `muxlab predict --json` prints.
#[derive(Serialize)]
struct Answer<'a> {
    model: &'a str,
    discipline: &'static str,
    workers: usize,
    cpus: usize,
    #[serde(flatten)]
    prediction: Prediction,
    /// The M/M/k closed form's p50 and p99 where the case is one (µs).
    mmk: Option<(f64, f64)>,
}

/// Runs `muxlab predict`: the text (or JSON) to print, or what is wrong with the flags.
pub fn run(a: &PredictArgs) -> Result<String, BadPrediction> {
    let model = crate::models::find(&a.model).ok_or_else(|| BadPrediction::UnknownModel {
        given: a.model.clone(),
        flag: "--model",
    })?;
    if let (crate::server::Workers::None, Some(workers)) = (model.workers, a.workers) {
        return Err(BadPrediction::NoWorkers {
            model: model.name,
            workers,
        });
    }
    let work: Work = a.work.parse().map_err(|source| BadPrediction::Work { source })?;
    let arrivals = match (a.rate, a.think) {
        (Some(_), Some(_)) => return Err(BadPrediction::RateAndThink),
        (Some(rate), None) if !(rate > 0.0 && rate.is_finite()) => return Err(BadPrediction::Rate { rate }),
        (Some(rate), None) => Arrivals::Open {
            rate,
            poisson: a.arrivals == ArrivalKind::Poisson,
        },
        (None, think) => Arrivals::Closed {
            think: think.unwrap_or(Duration::ZERO),
        },
    };
    if matches!(arrivals, Arrivals::Closed { .. }) && a.connections.is_none() {
        return Err(BadPrediction::ClosedWithoutConnections);
    }
    if a.requests < 1000 || a.cpus == 0 || a.workers == Some(0) || a.connections == Some(0) {
        return Err(BadPrediction::TooFew);
    }
    let mix: Vec<(&str, f64, &str)> = match a.mix.is_empty() {
        true => vec![("", 1.0, "/")],
        false => a
            .mix
            .iter()
            .map(|m| (m.name.as_str(), m.weight, m.path.as_str()))
            .collect(),
    };
    let classes = classes_of(&mix, &work, a.work_from_request, a.max_work).ok_or(BadPrediction::NoWork)?;
    let workers = model.worker_count(a.workers, a.cpus);
    if let Some(r) = a.reserve {
        if !model.flags.contains(&crate::server::Flag::Reserve) {
            return Err(BadPrediction::NoPool {
                model: model.name,
                reserve: r,
            });
        }
        if r.workers >= workers {
            return Err(BadPrediction::ReservesAll {
                reserved: r.workers,
                workers,
            });
        }
    }
    let connections = a.connections.unwrap_or(usize::MAX);
    let setup = Setup {
        discipline: discipline_of(model, workers, connections),
        workers,
        cpus: a.cpus,
        sharing: match a.processor_sharing {
            true => super::Sharing::Processor,
            false => super::Sharing::Slices(super::base_slice().0.as_secs_f64()),
        },
        design_cpu: a.design_cpu,
        connections: a.connections,
        arrivals,
        classes,
        requests: a.requests,
        seed: a.seed,
        reserve: a.reserve,
        lock: None,
        shards: None,
    };
    let p = predict(&setup).ok_or(BadPrediction::NotModelled {
        model: model.name,
        discipline: setup.discipline,
    })?;
    let mmk = mmk_case(&setup);
    if a.json {
        let answer = Answer {
            model: model.name,
            discipline: setup.discipline.describe(),
            workers,
            cpus: a.cpus,
            prediction: p,
            mmk,
        };
        return Ok(serde_json::to_string_pretty(&answer).expect("serialises") + "\n");
    }
    Ok(text(a, &setup, &p, mmk))
}

/// The closed form's p50 and p99 (µs) where `s` is an M/M/k system: Poisson arrivals straight
/// to one shared queue (or one worker), one class of exponential work that no CPU limit or cap
/// bends.
fn mmk_case(s: &Setup) -> Option<(f64, f64)> {
    let Arrivals::Open { rate, poisson: true } = s.arrivals else {
        return None;
    };
    if s.connections.is_some() || s.discipline != Discipline::Shared || s.classes.len() != 1 {
        return None;
    }
    let c = &s.classes[0];
    let mean = match (&c.work.cpu, &c.work.sleep) {
        (None, Some(Dist::Exp(m))) => *m,
        (Some(Dist::Exp(m)), None) if s.cpus >= s.workers => *m,
        _ => return None,
    };
    if c.cap.as_nanos() as f64 <= mean * 20.0 {
        return None;
    }
    let mu = 1e9 / mean;
    let q = |p| mmk_sojourn_quantile(s.workers, rate, mu, p) * 1e6;
    Some((q(0.5), q(0.99)))
}

fn text(a: &PredictArgs, s: &Setup, p: &Prediction, mmk: Option<(f64, f64)>) -> String {
    let us = |v: Option<f64>| v.map_or("–".to_string(), crate::units::fmt_us);
    let load = match s.arrivals {
        Arrivals::Open { rate, poisson } => format!(
            "open loop at {} req/s ({}), {:.0}% of capacity",
            thousands(rate.round() as u64),
            if poisson { "poisson" } else { "uniform" },
            rate / p.capacity_rps * 100.0
        ),
        Arrivals::Closed { think } if think.is_zero() => "closed loop".to_string(),
        Arrivals::Closed { think } => format!("closed loop, {} think time", format_duration(think)),
    };
    let conns = match s.connections {
        Some(n) => format!("{} client connections", thousands(n as u64)),
        None => "no client connections modelled".to_string(),
    };
    let workers = match s.discipline {
        Discipline::PerConnection => "a thread per connection".to_string(),
        _ => format!("{} worker{}", s.workers, if s.workers == 1 { "" } else { "s" }),
    };
    let mut out = format!(
        "{} ({}): {workers} on {} CPU{}, work {}; {load}, {conns}\n",
        a.model,
        s.discipline.describe(),
        s.cpus,
        if s.cpus == 1 { "" } else { "s" },
        if a.mix.is_empty() {
            a.work.clone()
        } else {
            format!("{} classes", a.mix.len())
        },
    );
    out.push_str(&format!(
        "  capacity    {} req/s (every server, or every CPU, busy)\n",
        thousands(p.capacity_rps.round() as u64)
    ));
    match p.p99_us {
        Some(_) => out.push_str(&format!(
            "  latency     p50 {}  p99 {}  (from the intended send time; {} requests simulated)\n  throughput  {} req/s\n",
            us(p.p50_us),
            us(p.p99_us),
            thousands(s.requests as u64),
            thousands(p.throughput_rps.round() as u64)
        )),
        None => out.push_str("  latency     none: the offered rate is past capacity, the queue grows for as long as the run lasts\n"),
    }
    for k in &p.classes {
        out.push_str(&format!(
            "  class {:<6} p50 {}  p99 {}\n",
            k.name,
            us(k.p50_us),
            us(k.p99_us)
        ));
    }
    if let Some((p50, p99)) = mmk {
        out.push_str(&format!(
            "  M/M/{}       p50 {}  p99 {}  (the closed form of this case)\n",
            s.workers,
            us(Some(p50)),
            us(Some(p99))
        ));
    }
    out.push_str(&match p.slice_us {
        Some(slice) => format!(
            "  CPUs        shared in slices of {} (round robin, no wake-up preemption)\n",
            us(Some(slice))
        ),
        None => "  CPUs        shared ideally (processor sharing)\n".to_string(),
    });
    out + &match p.design_cpu_us {
        Some(d) => format!(
            "The prediction is the design's queueing with {} of its own CPU per request: what a server measures beyond it is not modelled.\n",
            us(Some(d))
        ),
        None => "The prediction is the design's queueing alone (no --design-cpu): what a server measures beyond it is its implementation's cost, or not modelled.\n".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Line {
        #[command(flatten)]
        a: PredictArgs,
    }

    /// `predict ARGS`: its output, or the value `run` refuses (flags clap reads).
    fn run_line(args: &str) -> Result<String, BadPrediction> {
        let line = Line::try_parse_from(std::iter::once("predict").chain(args.split_whitespace()))
            .unwrap_or_else(|e| panic!("{args}: {e}"));
        run(&line.a)
    }

    #[test]
    fn an_m_m_4_case_prints_the_simulation_beside_the_closed_form() {
        let out =
            run_line("--model queue-pool --workers 4 --work sleep:exp(1ms) --rate 2800 --arrivals poisson").unwrap();
        assert!(
            out.contains("queue-pool (one queue shared by the workers): 4 workers on 1 CPU"),
            "{out}"
        );
        assert!(
            out.contains("capacity    4,000 req/s") && out.contains("70% of capacity"),
            "{out}"
        );
        assert!(out.contains("  M/M/4       p50 "), "{out}");
        let json: serde_json::Value = serde_json::from_str(
            &run_line("--model queue-pool -w 4 --work sleep:exp(1ms) --rate 2800 --arrivals poisson --json").unwrap(),
        )
        .unwrap();
        let (sim, exact) = (json["p99_us"].as_f64().unwrap(), json["mmk"][1].as_f64().unwrap());
        assert!((sim / exact - 1.0).abs() < 0.05, "{sim} {exact}");
    }

    #[test]
    fn bad_or_unmodelled_input_is_one_line() {
        type Is = fn(&BadPrediction) -> bool;
        let cases: [(&str, Is, &str); 7] = [
            (
                "--model nope --work cpu:1ms --rate 10",
                |e| matches!(e, BadPrediction::UnknownModel { given, flag: "--model" } if given == "nope"),
                "unknown model 'nope'",
            ),
            (
                "--model reactor --work cpu:1ms",
                |e| matches!(e, BadPrediction::ClosedWithoutConnections),
                "a closed loop needs -c",
            ),
            (
                "--model reactor --rate 100",
                |e| matches!(e, BadPrediction::NoWork),
                "no work to predict",
            ),
            (
                "--model tokio --work cpu:1ms --rate 100",
                |e| matches!(e, BadPrediction::NotModelled { model: "tokio", .. }),
                "not modelled",
            ),
            (
                "--model reactor --work cpu:1ms --rate 100 --think 1ms",
                |e| matches!(e, BadPrediction::RateAndThink),
                "give one",
            ),
            (
                "--model reactor --work gpu:1ms --rate 100",
                |e| matches!(e, BadPrediction::Work { .. }),
                "'gpu' is not cpu or sleep",
            ),
            (
                "--model reactor -w 4 --work cpu:1ms --rate 100",
                |e| {
                    matches!(
                        e,
                        BadPrediction::NoWorkers {
                            model: "reactor",
                            workers: 4
                        }
                    )
                },
                "has no workers",
            ),
        ];
        for (args, is, says) in cases {
            let e = run_line(args).unwrap_err();
            let words = e.to_string();
            assert!(is(&e), "{args}: {e:?}");
            assert!(words.contains(says) && words.lines().count() == 1, "{args}: {words}");
            assert!(e.is_usage(), "{args}");
        }
        let over = run_line("--model reactor --work sleep:2ms --rate 1000").unwrap();
        assert!(over.contains("past capacity"), "{over}");
    }
}
