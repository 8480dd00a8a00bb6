//! The exposition formats a scraper reads: Prometheus's text format (0.0.4) and OpenMetrics
//! 1.0 (what Prometheus asks for first). One writer for both: a family at a time, its help,
//! type (and, in OpenMetrics, unit), then its samples.

use std::borrow::Borrow;
use std::fmt::Write;

use super::buckets::{le, SLOTS};

/// Which format a scrape gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `text/plain; version=0.0.4`: what `promtool check metrics` reads, and the default.
    Text,
    /// `application/openmetrics-text; version=1.0.0`: given when the scraper's `Accept`
    /// names it (Prometheus does).
    OpenMetrics,
}

impl Format {
    /// The format an `Accept` header asks for: OpenMetrics where it is named, else text.
    pub fn from_accept(accept: Option<&str>) -> Format {
        match accept {
            Some(a) if a.to_ascii_lowercase().contains("application/openmetrics-text") => Format::OpenMetrics,
            _ => Format::Text,
        }
    }

    pub fn content_type(self) -> &'static str {
        match self {
            Format::Text => "text/plain; version=0.0.4; charset=utf-8",
            Format::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
        }
    }
}

/// A sample's labels: names and values.
pub type Labels = Vec<(&'static str, String)>;

/// A scrape's body, written a family at a time.
pub struct Exposition {
    format: Format,
    out: String,
}

impl Exposition {
    pub fn new(format: Format) -> Exposition {
        Exposition {
            format,
            out: String::with_capacity(16 * 1024),
        }
    }

    /// A counter family `name` (without `_total`, which its samples get).
    pub fn counter<L: Borrow<Labels>>(&mut self, name: &str, help: &str, samples: impl IntoIterator<Item = (L, f64)>) {
        let total = format!("{name}_total");
        let family = match self.format {
            Format::Text => &total,
            Format::OpenMetrics => name,
        };
        self.head(family, "counter", help);
        for (labels, v) in samples {
            self.sample(&total, labels.borrow(), None, v);
        }
    }

    /// A gauge family: a value now.
    pub fn gauge<L: Borrow<Labels>>(&mut self, name: &str, help: &str, samples: impl IntoIterator<Item = (L, f64)>) {
        self.head(name, "gauge", help);
        for (labels, v) in samples {
            self.sample(name, labels.borrow(), None, v);
        }
    }

    /// A histogram family: each series' counts per bucket (not cumulative; see
    /// [`super::buckets`]) and the sum of what it counted, in seconds.
    pub fn histogram<'a, L: Borrow<Labels>>(
        &mut self,
        name: &str,
        help: &str,
        series: impl IntoIterator<Item = (L, &'a [u64; SLOTS], f64)>,
    ) {
        self.head(name, "histogram", help);
        let (bucket, count, total) = (format!("{name}_bucket"), format!("{name}_count"), format!("{name}_sum"));
        let les = les();
        for (labels, counts, sum) in series {
            let mut cumulative = 0u64;
            for (c, le) in counts.iter().zip(les) {
                cumulative += c;
                self.sample(&bucket, labels.borrow(), Some(le), cumulative as f64);
            }
            self.sample(&count, labels.borrow(), None, cumulative as f64);
            self.sample(&total, labels.borrow(), None, sum);
        }
    }

    /// The body, ended as its format requires.
    pub fn finish(mut self) -> String {
        if self.format == Format::OpenMetrics {
            self.out.push_str("# EOF\n");
        }
        self.out
    }

    fn head(&mut self, family: &str, kind: &str, help: &str) {
        // OpenMetrics escapes a double quote in help too.
        let quote = self.format == Format::OpenMetrics;
        let help: std::borrow::Cow<str> = match help.contains(['\\', '\n']) || (quote && help.contains('"')) {
            true => {
                let h = help.replace('\\', "\\\\").replace('\n', "\\n");
                match quote {
                    true => h.replace('"', "\\\"").into(),
                    false => h.into(),
                }
            }
            false => help.into(),
        };
        match self.format {
            Format::Text => {
                let _ = writeln!(self.out, "# HELP {family} {help}\n# TYPE {family} {kind}");
            }
            Format::OpenMetrics => {
                let _ = writeln!(self.out, "# TYPE {family} {kind}");
                if family.ends_with("_seconds") {
                    let _ = writeln!(self.out, "# UNIT {family} seconds");
                }
                let _ = writeln!(self.out, "# HELP {family} {help}");
            }
        }
    }

    /// One sample's line, written in place (a scrape writes thousands).
    fn sample(&mut self, name: &str, labels: &Labels, le: Option<&str>, v: f64) {
        let out = &mut self.out;
        out.push_str(name);
        let all = labels
            .iter()
            .map(|(k, v)| (*k, v.as_str()))
            .chain(le.map(|l| ("le", l)));
        for (i, (k, v)) in all.enumerate() {
            out.push(if i == 0 { '{' } else { ',' });
            out.push_str(k);
            out.push_str("=\"");
            escaped(out, v);
            out.push('"');
        }
        if !labels.is_empty() || le.is_some() {
            out.push('}');
        }
        out.push(' ');
        number(out, v);
        out.push('\n');
    }
}

/// A label's value, escaped as both formats read it.
fn escaped(out: &mut String, v: &str) {
    if !v.contains(['\\', '"', '\n']) {
        out.push_str(v);
        return;
    }
    for c in v.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
}

/// The buckets' `le` labels, made once.
fn les() -> &'static [String] {
    static LES: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    LES.get_or_init(|| (0..SLOTS).map(le).collect())
}

/// A value as both formats read it: whole numbers without a fraction.
fn number(out: &mut String, v: f64) {
    if v.is_nan() {
        out.push_str("NaN");
    } else if v.is_infinite() {
        out.push_str(if v > 0.0 { "+Inf" } else { "-Inf" });
    } else if v.fract() == 0.0 && v.abs() < 9.0e15 {
        let _ = write!(out, "{}", v as i64);
    } else {
        let _ = write!(out, "{v}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(w: usize) -> Labels {
        vec![("worker", w.to_string())]
    }

    #[test]
    fn a_counter_is_named_with_total_in_text_and_without_it_as_an_openmetrics_family() {
        let mut t = Exposition::new(Format::Text);
        t.counter("muxlab_requests", "Requests.", [(labels(0), 3.0)]);
        let t = t.finish();
        assert!(t.contains("# TYPE muxlab_requests_total counter\n"), "{t}");
        assert!(t.contains("muxlab_requests_total{worker=\"0\"} 3\n"), "{t}");
        assert!(!t.contains("# EOF"));
        let mut o = Exposition::new(Format::OpenMetrics);
        o.counter("muxlab_requests", "Requests.", [(labels(0), 3.0)]);
        let o = o.finish();
        assert!(o.contains("# TYPE muxlab_requests counter\n"), "{o}");
        assert!(o.contains("muxlab_requests_total{worker=\"0\"} 3\n"), "{o}");
        assert!(o.ends_with("# EOF\n"), "{o}");
    }

    #[test]
    fn histogram_buckets_are_cumulative_and_end_with_inf_count_and_sum() {
        let mut c = [0u64; SLOTS];
        c[0] = 2;
        c[3] = 5;
        c[SLOTS - 1] = 1;
        let mut e = Exposition::new(Format::OpenMetrics);
        e.histogram("x_seconds", "X.", [(Labels::new(), &c, 1.5)]);
        let e = e.finish();
        assert!(e.contains("# UNIT x_seconds seconds\n"), "{e}");
        assert!(e.contains("x_seconds_bucket{le=\"0.000001\"} 2\n"), "{e}");
        assert!(e.contains("x_seconds_bucket{le=\"0.000003\"} 7\n"), "{e}");
        assert!(e.contains("x_seconds_bucket{le=\"10\"} 7\n"), "{e}");
        assert!(e.contains("x_seconds_bucket{le=\"+Inf\"} 8\n"), "{e}");
        assert!(e.contains("x_seconds_count 8\nx_seconds_sum 1.5\n"), "{e}");
    }

    #[test]
    fn label_values_and_help_are_escaped() {
        let mut e = Exposition::new(Format::Text);
        e.gauge("g", "a\\b\nc", [(vec![("k", "q\"\\\n".to_string())], 1.25)]);
        let e = e.finish();
        assert!(e.contains("# HELP g a\\\\b\\nc\n"), "{e}");
        assert!(e.contains("g{k=\"q\\\"\\\\\\n\"} 1.25\n"), "{e}");
    }

    #[test]
    fn infinities_are_written_as_both_formats_read_them_and_openmetrics_help_escapes_quotes() {
        let mut e = Exposition::new(Format::OpenMetrics);
        e.gauge(
            "g",
            "say \"x\"",
            [
                (Labels::new(), f64::INFINITY),
                (vec![("k", "n".into())], f64::NEG_INFINITY),
            ],
        );
        let e = e.finish();
        assert!(e.contains("\ng +Inf\n") && e.contains("\ng{k=\"n\"} -Inf\n"), "{e}");
        assert!(e.contains("# HELP g say \\\"x\\\"\n"), "{e}");
    }

    #[test]
    fn openmetrics_is_chosen_only_when_the_scraper_names_it() {
        let prometheus = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
        assert_eq!(Format::from_accept(Some(prometheus)), Format::OpenMetrics);
        assert_eq!(Format::from_accept(Some("text/plain")), Format::Text);
        assert_eq!(Format::from_accept(None), Format::Text);
    }
}
