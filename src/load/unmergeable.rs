//! [`Unmergeable`]: documents that `muxlab merge` cannot add up.

use std::fmt;

/// Why documents do not add up.
#[derive(Debug, Clone, PartialEq)]
pub enum Unmergeable {
    /// No document at all.
    Nothing,
    /// The document `name` differs from the first, `first`.
    Differ {
        name: String,
        first: String,
        difference: Difference,
    },
}

/// How a document differs from the first one (its value, then the first's).
#[derive(Debug, Clone, PartialEq)]
pub enum Difference {
    /// Loads of other kinds (`http`, `echo`, ...).
    Kind { kind: String, first: String },
    /// Other request classes, by name.
    Classes { classes: Vec<String>, first: Vec<String> },
    /// Another series interval, in µs (`None`: no series).
    Series { every_us: Option<u64>, first: Option<u64> },
}

impl fmt::Display for Unmergeable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (name, first_name, difference) = match self {
            Unmergeable::Nothing => return f.write_str("merge needs at least one file"),
            Unmergeable::Differ {
                name,
                first,
                difference,
            } => (name, first, difference),
        };
        match difference {
            Difference::Kind { kind, first } => write!(
                f,
                "{name} is a {kind} load and {first_name} a {first} load: they do not add up"
            ),
            Difference::Classes { classes, first } => write!(
                f,
                "{name} has request classes [{}] and {first_name} [{}]: they do not add up",
                classes.join(", "),
                first.join(", ")
            ),
            Difference::Series { every_us, first } => {
                let said = |every: &Option<u64>| {
                    every.map_or("no time series".to_string(), |us| {
                        format!("a series in {us} us intervals")
                    })
                };
                write!(
                    f,
                    "{name} has {} and {first_name} {}: run every piece with the same --interval",
                    said(every_us),
                    said(first)
                )
            }
        }
    }
}

impl std::error::Error for Unmergeable {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_that_do_not_add_up_say_which_and_how() {
        let differ = |difference| Unmergeable::Differ {
            name: "b.json".into(),
            first: "a.json".into(),
            difference,
        };
        for (e, says) in [
            (Unmergeable::Nothing, "merge needs at least one file"),
            (
                differ(Difference::Kind {
                    kind: "echo".into(),
                    first: "http".into(),
                }),
                "b.json is a echo load and a.json a http load: they do not add up",
            ),
            (
                differ(Difference::Classes {
                    classes: vec!["x".into(), "y".into()],
                    first: vec![],
                }),
                "b.json has request classes [x, y] and a.json []: they do not add up",
            ),
            (
                differ(Difference::Series {
                    every_us: Some(1000),
                    first: None,
                }),
                "b.json has a series in 1000 us intervals and a.json no time series: run every piece with the same --interval",
            ),
        ] {
            assert_eq!(e.to_string(), says);
        }
    }
}
