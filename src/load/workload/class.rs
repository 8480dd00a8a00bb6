//! Request classes: what a class is ([`Class`]), and how a person writes them: `--mix
//! NAME=WEIGHT:PATH` entries and the lines of a `--mix-file` (`NAME WEIGHT METHOD PATH
//! [@BODYFILE]`).

use std::fmt;
use std::path::{Path, PathBuf};

use super::bad_mix_file::{BadMixFile, LineFault};
use crate::load::Payload;

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
    type Err = BadMixEntry;
    fn from_str(s: &str) -> Result<MixEntry, Self::Err> {
        let bad = |fault| BadMixEntry {
            given: s.to_string(),
            fault,
        };
        let form = || bad(MixEntryFault::NotNameWeightPath);
        let (name, rest) = s.split_once('=').ok_or_else(form)?;
        let (weight, path) = rest.split_once(':').ok_or_else(form)?;
        let weight: f64 = weight.trim().parse().map_err(|_| form())?;
        if name.is_empty() || name.contains(char::is_whitespace) || !(weight > 0.0 && weight <= MAX_WEIGHT) {
            return Err(form());
        }
        if path.contains(|c: char| c.is_whitespace() || c.is_control()) {
            return Err(bad(MixEntryFault::PathNotPlain));
        }
        if !path.starts_with('/') {
            return Err(bad(MixEntryFault::PathNotRooted));
        }
        Ok(MixEntry {
            name: name.into(),
            weight,
            path: path.into(),
        })
    }
}

/// A `--mix` entry refused: as given, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadMixEntry {
    pub given: String,
    pub fault: MixEntryFault,
}

/// Why a `--mix` entry is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MixEntryFault {
    /// Not NAME=WEIGHT:PATH, a name without spaces and a weight above 0 and at most 1e9.
    NotNameWeightPath,
    /// A path holding a space or a control character.
    PathNotPlain,
    /// A path not starting with `/`.
    PathNotRooted,
}

impl fmt::Display for BadMixEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = &self.given;
        match self.fault {
            MixEntryFault::NotNameWeightPath => {
                write!(f, "--mix '{s}' is not NAME=WEIGHT:PATH (e.g. short=995:/?cpu=20us)")
            }
            MixEntryFault::PathNotPlain => write!(
                f,
                "--mix '{s}': the path holds a space or a control character (encode it: %20)"
            ),
            MixEntryFault::PathNotRooted => write!(f, "--mix '{s}': the path must start with /"),
        }
    }
}

impl std::error::Error for BadMixEntry {}

impl std::fmt::Display for MixEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}={}:{}", self.name, self.weight, self.path)
    }
}

/// The classes of a `--mix-file`: `NAME WEIGHT METHOD PATH [@BODYFILE]` per line. A class
/// with a body file sends its bytes; one without sends the run's body (`payload`).
pub(in crate::load) fn read_mix_file(path: &Path, payload: &Payload) -> Result<Vec<Class>, BadMixFile> {
    let text = std::fs::read_to_string(path).map_err(|source| BadMixFile::Unreadable {
        path: path.to_path_buf(),
        source,
    })?;
    let mut classes = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let bad = |fault| BadMixFile::Line {
            path: path.to_path_buf(),
            line: n + 1,
            given: line.to_string(),
            fault,
        };
        let words: Vec<&str> = line.split_whitespace().collect();
        let [class, weight, method, target, rest @ ..] = words.as_slice() else {
            return Err(bad(LineFault::TooFewWords));
        };
        let weight: f64 = weight
            .parse()
            .map_err(|source| bad(LineFault::WeightNotANumber { source }))?;
        if !(weight > 0.0 && weight <= MAX_WEIGHT) {
            return Err(bad(LineFault::WeightOutOfRange { weight }));
        }
        if !target.starts_with('/') {
            return Err(bad(LineFault::PathNotRooted));
        }
        let body = match rest {
            [] => payload.clone(),
            [file] => {
                let file = file.strip_prefix('@').ok_or_else(|| bad(LineFault::NotABodyFile))?;
                if matches!(payload, Payload::Generated(_)) {
                    return Err(bad(LineFault::BodyFileWithBodySize));
                }
                Payload::Fixed(std::fs::read(file).map_err(|source| {
                    bad(LineFault::BodyUnreadable {
                        file: PathBuf::from(file),
                        source,
                    })
                })?)
            }
            _ => return Err(bad(LineFault::TooManyWords)),
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
            let e = bad.parse::<MixEntry>().unwrap_err();
            let fault = match bad {
                "x=1:/a b" | "x=1:/a\tb" => MixEntryFault::PathNotPlain,
                "x=1:a" => MixEntryFault::PathNotRooted,
                _ => MixEntryFault::NotNameWeightPath,
            };
            assert_eq!(e.fault, fault, "{bad}");
            assert!(e.to_string().starts_with(&format!("--mix '{bad}'")), "{e}");
        }
        assert!("x=1e9:/".parse::<MixEntry>().is_ok());
    }

    #[test]
    fn a_bad_mix_file_line_names_its_word_at_fault() {
        let file = std::env::temp_dir().join(format!("muxlab-mix-file-{}", std::process::id()));
        type Is = fn(&LineFault) -> bool;
        let cases: [(&str, Is, &str); 7] = [
            ("a 1 GET", |f| matches!(f, LineFault::TooFewWords), "write NAME WEIGHT"),
            (
                "a x GET /",
                |f| matches!(f, LineFault::WeightNotANumber { .. }),
                "the weight 'x' is not a number above 0 and at most 1e9",
            ),
            (
                "a 1e300 GET /  # big",
                |f| matches!(f, LineFault::WeightOutOfRange { weight } if *weight == 1e300),
                "the weight '1e300' is not a number above 0 and at most 1e9",
            ),
            (
                "a 1 GET x",
                |f| matches!(f, LineFault::PathNotRooted),
                "the path 'x' must start with /",
            ),
            (
                "a 1 POST / body",
                |f| matches!(f, LineFault::NotABodyFile),
                "'body': a body file is written @FILE",
            ),
            (
                "a 1 POST / @/no/such/muxlab/body",
                |f| matches!(f, LineFault::BodyUnreadable { file, .. } if file == Path::new("/no/such/muxlab/body")),
                "cannot read @/no/such/muxlab/body: ",
            ),
            (
                "a 1 GET / @b c",
                |f| matches!(f, LineFault::TooManyWords),
                "too many words",
            ),
        ];
        for (line, is, says) in cases {
            std::fs::write(&file, format!("# classes\n\n{line}\n")).unwrap();
            let e = read_mix_file(&file, &Payload::None).unwrap_err();
            let BadMixFile::Line { line: 3, fault, .. } = &e else {
                panic!("{line}: {e:?}");
            };
            assert!(is(fault), "{line}: {e:?}");
            let head = format!("--mix-file {}, line 3: {says}", file.display());
            assert!(e.to_string().starts_with(&head), "{line}: {e}");
        }
        let _ = std::fs::remove_file(&file);
    }
}
