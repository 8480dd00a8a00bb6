//! An experiment's table: columns grouped, the header sticky, the best value of each column
//! at each connection count in bold (asked of the judge's rule, [`metric::rankable`]),
//! client-bound rows in italics.

use crate::bench::judge::metric::{self, Metric, Ranked};
use crate::bench::record::{spread, within_rounds, Cell, Summary};
use crate::report::esc;
use crate::units::si;
use crate::units::{fmt_us, or_dash, thousands};

/// A column that gets a best mark: its index, and the metric it shows.
type Best = (usize, &'static Metric);

/// The columns that get a best mark.
const MARKED: [Best; 8] = [
    (2, &metric::THROUGHPUT),
    (3, &metric::P50),
    (4, &metric::P99),
    (5, &metric::P999),
    (6, &metric::CPU),
    (8, &metric::MEMORY),
    (10, &metric::FAIRNESS),
    (13, &metric::SYSCALLS),
];

/// Which value of a table is the best of its column at its connection count. A column ranks
/// a row by its median; in paired rounds, by its median within rounds (the verdicts' ranking),
/// so the mark does not follow a round's drift. An A/A twin is the machine's noise, not a
/// target: it never takes a mark.
struct Marks<'a> {
    summary: &'a [Summary],
    ok: Vec<&'a Cell>,
    paired: bool,
}

impl Marks<'_> {
    fn ranked(c: &Cell) -> bool {
        c.ok() && c.compared()
    }

    /// What `c` is ranked by in column `col`: the metric's value where the verdicts may rank
    /// it ([`metric::rankable`], the one rule: a cell the client bound, a design that starved
    /// connections anywhere, a target doing none of the work, too few samples never take a
    /// mark), freed of its round's drift in paired rounds.
    fn rank(&self, c: &Cell, col: &Best) -> Option<Ranked> {
        let m = col.1;
        let rank = |c: &Cell| metric::rankable(m, c, &self.ok).ranked();
        let ranked = rank(c)?;
        match self.paired {
            true => within_rounds(
                &self.ok,
                &|c: &Cell| rank(c).map(Ranked::get),
                &c.label(),
                c.connections,
            )
            .map(|v| ranked.freed(v)),
            false => Some(ranked),
        }
    }

    /// The best value of column `col` at `n` among the targets placed as `like` (targets placed
    /// differently are not compared), where it stands apart from the runner-up by what the
    /// measurement resolves (memory: a mebibyte over all the connections).
    fn best_at(&self, n: usize, col: &Best, like: Ranked) -> Option<Ranked> {
        let mut values: Vec<Ranked> = self
            .summary
            .iter()
            .filter(|s| s.cell.connections == n && Self::ranked(&s.cell))
            .filter_map(|s| self.rank(&s.cell, col))
            .filter(|r| r.alike(like))
            .collect();
        let m = col.1;
        Ranked::best_first(m, &mut values);
        let best = *values.first()?;
        match values.get(1) {
            Some(second) if !metric::resolved(m, best.get(), second.get(), n) => None,
            _ => Some(best),
        }
    }

    /// Whether column `i` of `c`'s row is the best of its count, among two or more targets
    /// placed alike (a target alone where it ran is compared with nobody).
    fn best(&self, c: &Cell, i: usize) -> bool {
        Self::ranked(c)
            && MARKED.iter().find(|m| m.0 == i).is_some_and(|m| {
                let Some(r) = self.rank(c, m) else { return false };
                let alike = self
                    .summary
                    .iter()
                    .filter(|s| s.cell.connections == c.connections && Self::ranked(&s.cell))
                    .filter(|s| s.cell.placed == c.placed)
                    .count();
                alike > 1 && self.best_at(c.connections, m, r) == Some(r)
            })
    }
}

/// The experiment's table: columns grouped, the header sticky, the best value of each column
/// at each connection count in bold, client-bound rows in italics.
pub(super) fn table(summary: &[Summary], cells: &[Cell], paired: bool) -> String {
    let marks = Marks {
        summary,
        ok: cells.iter().filter(|c| c.ok()).collect(),
        paired,
    };
    let mut h = String::from(
        "<div class=\"tw\"><table class=\"cells\"><tr class=\"groups\"><th colspan=\"2\"></th><th>throughput</th>\
         <th colspan=\"3\">latency</th><th colspan=\"3\">server</th><th>client</th><th colspan=\"2\">fairness (Jain)</th>\
         <th colspan=\"4\">counters</th><th></th><th></th></tr>\n<tr><th class=\"l\">target</th><th>conns</th>\
         <th title=\"median of the repeats; below: their range\">req/s</th><th>p50</th><th>p99</th><th>p99.9</th>\
         <th title=\"server CPU per request\">µs/req</th><th>CPU</th><th>KiB/conn</th><th>CPU</th>\
         <th>conns</th><th>workers</th><th title=\"useful events / events examined\">useful</th><th>syscalls/req</th>\
         <th title=\"context switches per request\">cs/req</th>\
         <th title=\"lost accept races per accepted connection\">lost races</th>\
         <th class=\"l\" title=\"what bound the cell: muxlab explain says why\">bound by</th><th class=\"l\">notes</th></tr>\n",
    );
    for s in summary {
        let c = &s.cell;
        h.push_str(if crate::bench::judge::bound::client_limit(c).is_some() {
            "<tr class=\"bound\">"
        } else {
            "<tr>"
        });
        for (i, text) in columns(s, cells).iter().enumerate() {
            let class = match (i, marks.best(c, i)) {
                (0, _) => " class=\"l\"",
                (_, true) => " class=\"best\"",
                _ => "",
            };
            h.push_str(&format!("<td{class}>{text}</td>"));
        }
        let by = crate::bench::judge::bound::of(c);
        h.push_str(&format!(
            "<td class=\"l\" title=\"{}\">{}</td><td class=\"l{}\">{}</td></tr>\n",
            esc(by.as_ref().map_or("", |b| b.evidence.as_str())),
            by.as_ref().map_or("–", |b| b.bound.name()),
            if c.ok() { "" } else { " bad" },
            esc(&notes(c).join(", "))
        ));
    }
    h.push_str("</table></div>\n");
    h
}

/// A row's notes: its status when not ok, client-bound, steal, errors.
fn notes(c: &Cell) -> Vec<String> {
    let f = &c.figures;
    let mut notes: Vec<String> = Vec::new();
    if !c.ok() {
        notes.push(c.status.text().to_string());
    }
    if crate::bench::judge::bound::client_limit(c).is_some() {
        notes.push("client-bound".into());
    }
    if let Some(st) = f.steal_pct.filter(|s| *s > crate::report::STEAL_SHOWN) {
        notes.push(format!("steal {st:.1}%"));
    }
    if f.errors > 0 {
        notes.push(format!("{} errors", thousands(f.errors)));
    }
    notes
}

/// A row's cells but the notes: the median figures, with the throughput's and the server
/// CPU's range over the repeats under them.
fn columns(s: &Summary, cells: &[Cell]) -> [String; 16] {
    let (c, f) = (&s.cell, &s.cell.figures);
    let opt = |v: Option<f64>, digits: usize| v.map(|x| format!("{x:.digits$}")).unwrap_or_else(|| "-".into());
    let rps_spread = if s.lowest_rps.is_finite() && s.highest_rps > s.lowest_rps {
        format!("<br><small>{}–{}</small>", si(s.lowest_rps), si(s.highest_rps))
    } else {
        String::new()
    };
    let cpus: Vec<f64> = cells
        .iter()
        .filter(|x| x.ok() && x.label() == c.label() && x.connections == c.connections)
        .filter_map(|x| x.figures.cpu_per_req())
        .collect();
    let runs = cpus.len();
    let cpu_spread = match spread(cpus) {
        Some(s) if runs > 1 && s.highest > s.lowest => {
            format!("<br><small>{:.1}–{:.1}</small>", s.lowest, s.highest)
        }
        _ => String::new(),
    };
    [
        esc(&c.label()),
        c.connections.to_string(),
        // Not measured (a stream cell that completed no request) is "–", never 0.
        match metric::THROUGHPUT.value(c) {
            Some(v) => format!("{}{rps_spread}", thousands(v.round() as u64)),
            None => "–".into(),
        },
        metric::P50.value(c).map_or("–".into(), fmt_us),
        metric::P99.value(c).map_or("–".into(), fmt_us),
        metric::P999.value(c).map_or("–".into(), fmt_us),
        format!("{}{cpu_spread}", or_dash(f.cpu_per_req(), 1)),
        or_dash(f.server_cpu_cores.map(|c| c * 100.0), 0) + if f.server_cpu_cores.is_some() { "%" } else { "" },
        or_dash(f.mem_per_conn(), 1),
        format!("{:.0}%", f.client_cpu_util * 100.0),
        opt(f.jain_conns, 3),
        opt(f.jain_workers, 3),
        f.useful_ratio
            .map(|u| format!("{:.2}%", u * 100.0))
            .unwrap_or_else(|| "-".into()),
        opt(f.syscalls_per_req, 1),
        opt(f.switches_per_req(), 2),
        opt(f.lost_races_per_accept, 3),
    ]
}
