//! The answers first: each verdict (its headline, its table, the fidelity table, the prose),
//! and every target against an experiment's reference.

use crate::bench::Results;
use crate::report::esc;

/// The answers first: one verdict per experiment, worked out from the results.
pub(super) fn verdicts(d: &Results) -> String {
    let mut h = String::from("<section class=\"verdicts\"><h2>Verdicts</h2>\n");
    for v in &d.verdicts {
        h.push_str(&format!("<div class=\"verdict\"><h3>{}</h3>\n", esc(&v.experiment)));
        if !v.headline.is_empty() {
            h.push_str(&format!("<p class=\"headline\">{}</p>\n", esc(&v.headline)));
        }
        h.push_str(&verdict_table(&v.table));
        h.push_str(&fidelity_table(&v.fidelity));
        // The prose, for those who want it; a verdict across experiments puts each target on
        // a line of its own.
        h.push_str(&format!(
            "<details><summary>The whole verdict</summary><p>{}</p></details></div>\n",
            esc(&v.text).replace('\n', "<br>")
        ));
    }
    h.push_str(
        "<p class=\"how\"><b>How to read this.</b> Each verdict compares the best target with the \
         runner-up round by round (the geometric mean of their ratios over the connection counts both \
         ran); a gap is clear where the interval of its rounds' ratios, widened to the A/A twin's noise, lies \
         past 5 %, and one round is not judged. When the client was the limit (marked client-bound, drawn hollow), throughput and \
         latency say as much about the client as about the server; server CPU per request still \
         compares servers. A latency from a cell that starved connections covers only the connections it \
         served: it is drawn hollow, never marked best, and not ranked. The reasons come from the servers' own \
         counters.</p></section>\n",
    );
    h
}

/// A verdict's table: a row per ranked metric.
fn verdict_table(rows: &[crate::bench::judge::headline::Row]) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let mut h = String::from(
        "<table class=\"vt\"><tr><th>metric</th><th>best</th><th>runner-up</th><th>ratio</th>\
         <th>confidence</th><th>reason</th><th>fell behind</th><th>bound by</th></tr>\n",
    );
    for r in rows {
        h.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{:.2}×</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
            esc(&r.metric),
            esc(&r.best),
            esc(&r.runner_up),
            r.ratio,
            esc(&r.confidence),
            esc(&r.reason),
            esc(r.behind.as_deref().unwrap_or("–")),
            esc(r.bound_by.as_deref().unwrap_or("–"))
        ));
    }
    h.push_str("</table>\n");
    h
}

/// The fidelity verdict's table: a row per product beside its model.
fn fidelity_table(rows: &[crate::bench::judge::fidelity::Row]) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let mut h = String::from("<div class=\"tw\"><table class=\"vt\"><tr>");
    for c in crate::bench::judge::fidelity::COLUMNS {
        h.push_str(&format!("<th>{}</th>", esc(c)));
    }
    h.push_str("</tr>\n");
    for r in rows {
        h.push_str("<tr>");
        for (i, c) in r.cells().iter().enumerate() {
            let answer = crate::bench::judge::fidelity::COLUMNS
                .iter()
                .position(|c| *c == "answer");
            let bad = Some(i) == answer && r.answer == Some(crate::bench::judge::fidelity::Answer::Differs);
            h.push_str(&format!(
                "<td{}>{}</td>",
                if bad { " class=\"bad\"" } else { "" },
                esc(c)
            ));
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</table></div>\n");
    h
}

/// Each experiment with a `reference`: every other target against it, in words and a table.
pub(super) fn against_reference(d: &Results) -> String {
    use crate::report::compare;
    let all = compare::against_reference(d);
    if all.is_empty() {
        return String::new();
    }
    let mut h = String::from(
        "<section class=\"reference\"><h2>Against the reference</h2>\n<p class=\"how\">Each \
        cell: the ratio of the target's median to the reference's, and in brackets the lowest and highest ratio \
        (a paired experiment: of its rounds; green: better beyond the noise, red: worse: the interval of the \
        rounds' ratios past 5 %; one round is not judged). Throughput: higher is better; p99 and CPU per request: lower.</p>\n",
    );
    for a in &all {
        h.push_str(&format!(
            "<p class=\"verdict\">{}</p>\n{}",
            esc(&a.sentence()),
            compare::html_table(&format!("/ {}", a.reference), &a.rows)
        ));
    }
    h.push_str("</section>\n");
    h
}

#[cfg(test)]
mod tests {
    use crate::bench::judge::headline::Row;

    /// Who fell behind reaches the report's verdict table, and a row without one shows "–".
    #[test]
    fn the_verdict_table_shows_who_fell_behind() {
        let row = |behind: Option<&str>| Row {
            metric: "memory per connection".into(),
            best: "epoll".into(),
            runner_up: "nginx".into(),
            ratio: 1.27,
            confidence: "3 rounds, 1.27–1.27×".into(),
            reason: "under the 1 MiB the measurement resolves".into(),
            behind: behind.map(str::to_string),
            bound_by: None,
        };
        let h = super::verdict_table(&[
            row(Some("thread at least 79.59× behind (3 rounds, 27.26–232.36×)")),
            row(None),
        ]);
        assert!(h.contains("<th>fell behind</th>"), "{h}");
        assert!(
            h.contains("<td>thread at least 79.59× behind (3 rounds, 27.26–232.36×)</td>"),
            "{h}"
        );
        assert_eq!(h.matches("<td>–</td>").count(), 3, "{h}");
    }
}
