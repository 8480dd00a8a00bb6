//! Request classes: what a class is ([`Class`]), and how a person writes them: `--mix
//! NAME=WEIGHT:PATH` entries and the lines of a `--mix-file` (`NAME WEIGHT METHOD PATH
//! [@BODYFILE]`).

use crate::load::{Error, Payload};

/// A request class: what its requests are, and how often they are picked.
#[derive(Debug, Clone, PartialEq)]
pub struct Class {
    pub name: String,
    pub weight: f64,
    pub method: String,
    /// The request target: path and query.
    pub path: String,
    pub payload: Payload,
}

/// The largest weight a class may have (weights add up in floating point: a sum that overflows
/// would send every request to one class).
const MAX_WEIGHT: f64 = 1e9;

/// One `--mix NAME=WEIGHT:PATH`.
#[derive(Debug, Clone, PartialEq)]
pub struct MixEntry {
    pub name: String,
    pub weight: f64,
    pub path: String,
}

impl std::str::FromStr for MixEntry {
    type Err = crate::units::BadValue;
    fn from_str(s: &str) -> Result<MixEntry, Self::Err> {
        let bad = || {
            crate::units::BadValue(format!(
                "--mix '{s}' is not NAME=WEIGHT:PATH (e.g. short=995:/?cpu=20us)"
            ))
        };
        let (name, rest) = s.split_once('=').ok_or_else(bad)?;
        let (weight, path) = rest.split_once(':').ok_or_else(bad)?;
        let weight: f64 = weight.trim().parse().map_err(|_| bad())?;
        if name.is_empty() || name.contains(char::is_whitespace) || !(weight > 0.0 && weight <= MAX_WEIGHT) {
            return Err(bad());
        }
        if path.contains(|c: char| c.is_whitespace() || c.is_control()) {
            return Err(crate::units::BadValue(format!(
                "--mix '{s}': the path holds a space or a control character (encode it: %20)"
            )));
        }
        if !path.starts_with('/') {
            return Err(crate::units::BadValue(format!(
                "--mix '{s}': the path must start with /"
            )));
        }
        Ok(MixEntry {
            name: name.into(),
            weight,
            path: path.into(),
        })
    }
}

impl std::fmt::Display for MixEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}={}:{}", self.name, self.weight, self.path)
    }
}

/// The classes of a `--mix-file`: `NAME WEIGHT METHOD PATH [@BODYFILE]` per line. A class
/// with a body file sends its bytes; one without sends the run's body (`payload`).
pub(in crate::load) fn read_mix_file(path: &std::path::Path, payload: &Payload) -> Result<Vec<Class>, Error> {
    let name = path.display();
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::invalid("mix_file", &format!("cannot read --mix-file {name}: {e}")))?;
    let mut classes = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let bad = |why: &str| Error::invalid("mix_file", &format!("--mix-file {name}, line {}: {why}", n + 1));
        let words: Vec<&str> = line.split_whitespace().collect();
        let [class, weight, method, target, rest @ ..] = words.as_slice() else {
            return Err(bad("write NAME WEIGHT METHOD PATH [@BODYFILE]"));
        };
        let weight: f64 = weight
            .parse()
            .ok()
            .filter(|w: &f64| *w > 0.0 && *w <= MAX_WEIGHT)
            .ok_or_else(|| {
                bad(&format!(
                    "the weight '{weight}' is not a number above 0 and at most 1e9"
                ))
            })?;
        if !target.starts_with('/') {
            return Err(bad(&format!("the path '{target}' must start with /")));
        }
        let body = match rest {
            [] => payload.clone(),
            [file] => {
                let file = file
                    .strip_prefix('@')
                    .ok_or_else(|| bad(&format!("'{file}': a body file is written @FILE")))?;
                if matches!(payload, Payload::Generated(_)) {
                    return Err(bad(
                        "a class's body file cannot go with --body-size (whose echoes are verified)",
                    ));
                }
                Payload::Fixed(std::fs::read(file).map_err(|e| bad(&format!("cannot read @{file}: {e}")))?)
            }
            _ => return Err(bad("too many words: NAME WEIGHT METHOD PATH [@BODYFILE]")),
        };
        classes.push(Class {
            name: class.to_string(),
            weight,
            method: method.to_ascii_uppercase(),
            path: target.to_string(),
            payload: body,
        });
    }
    Ok(classes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mix_entry_has_a_name_a_bounded_weight_and_a_plain_path() {
        let m: MixEntry = "short=995:/?cpu=20us".parse().unwrap();
        assert_eq!(
            (m.name.as_str(), m.weight, m.path.as_str()),
            ("short", 995.0, "/?cpu=20us")
        );
        for bad in [
            "x=1e300:/",
            "x=0:/",
            "x=-1:/",
            "x=nan:/",
            "=1:/",
            "x=1:/a b",
            "x=1:/a\tb",
            "x=1:a",
            "x:/",
        ] {
            assert!(bad.parse::<MixEntry>().is_err(), "{bad}");
        }
        assert!("x=1e9:/".parse::<MixEntry>().is_ok());
    }
}
