//! `muxlab report RUN.json` for a load document (`load --json`) that kept a time series
//! (`--timeseries` or `--interval`): the run drawn interval by interval, rates sent and
//! completed, and p50 / p99 of each interval's own histogram, as `RUN.series.html`, with the
//! same series as a terminal table.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::charts::{xy_chart, Unit};
use super::Error;
use crate::load::series::{lines, Line};
use crate::load::Document;
use crate::units::{format_duration, thousands};

/// The document at `path`, if it is a load document (not a bench's results).
pub fn document(path: &Path) -> Option<Document> {
    let text = std::fs::read_to_string(path).ok().filter(|_| path.is_file())?;
    Document::read(&path.display().to_string(), &text).ok()
}

/// Writes the series page beside `path`; returns it and the terminal table.
pub fn draw(path: &Path, doc: &Document) -> Result<(PathBuf, String), Error> {
    let o = doc.outcome();
    let Some(us) = o.tally.series_every_us.filter(|_| !o.tally.series.is_empty()) else {
        return Err(Error::NoSeries {
            path: path.to_path_buf(),
        });
    };
    let ls = lines(&o.tally.series, Duration::from_micros(us), o.elapsed);
    let pts = |f: &dyn Fn(&Line) -> Option<f64>| -> Vec<(f64, f64)> {
        ls.iter().filter_map(|l| f(l).map(|v| (l.t_s, v))).collect()
    };
    let rates = vec![
        ("sent".to_string(), pts(&|l| Some(l.sent_rps))),
        ("completed".to_string(), pts(&|l| Some(l.completed_rps))),
    ];
    let latency = vec![
        ("p50".to_string(), pts(&|l| l.latency_us.p50)),
        ("p99".to_string(), pts(&|l| l.latency_us.p99)),
    ];
    let mut h = format!(
        "<!doctype html><meta charset=\"utf-8\"><title>{}</title><h1>{}</h1><p>{}, {} intervals of {}</p>",
        esc(&doc.target),
        esc(&doc.target),
        esc(&doc.config.pacing),
        ls.len(),
        format_duration(Duration::from_micros(us))
    );
    for (title, unit, series) in [
        ("requests per second", Unit::Count, &rates),
        ("latency of each interval's requests", Unit::Micros, &latency),
    ] {
        match xy_chart(
            title,
            ("seconds into the window", Unit::Plain),
            ("", unit),
            series,
            None,
        ) {
            Ok(svg) => h.push_str(&format!("<div class=\"chart\">{svg}</div>\n")),
            Err(e) => h.push_str(&format!("<p>chart failed: {}</p>\n", esc(&e.to_string()))),
        }
    }
    let page = path.with_extension("series.html");
    std::fs::write(&page, h).map_err(Error::write(&page))?;
    let mut table = format!(
        "{:>8} {:>10} {:>10} {:>10} {:>10} {:>8} {:>6}\n",
        "t", "sent/s", "done/s", "p50", "p99", "errors", "open"
    );
    let us = |v: Option<f64>| v.map_or("–".to_string(), |v| format_duration(Duration::from_secs_f64(v / 1e6)));
    for l in &ls {
        table.push_str(&format!(
            "{:>7.1}s {:>10} {:>10} {:>10} {:>10} {:>8} {:>6}\n",
            l.t_s,
            thousands(l.sent_rps.round() as u64),
            thousands(l.completed_rps.round() as u64),
            us(l.latency_us.p50),
            us(l.latency_us.p99),
            l.errors.values().sum::<u64>(),
            l.open_connections
        ));
    }
    Ok((page, table))
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}
