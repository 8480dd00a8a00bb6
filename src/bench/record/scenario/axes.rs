//! Keys a scenario may give as a list to sweep, besides `connections`: each value becomes an
//! experiment of its own, before the file is read into a [`Scenario`](super::Scenario).
//! The axes are `streams`, `pipeline`, `key_dist` and `ratio`; an experiment that lists
//! several becomes one per combination (in that order of keys), its name suffixed for each
//! (`-10streams`, `-p16`, `-zipf0.99`, `-get90` for `ratio = "1:9"`). An experiment whose
//! `rate_of` names another expanded on the same axes takes its rate from the sibling of the
//! same values (`rate_of = "50% of sat"` in `at50-p16` reads `sat-p16`), and so does its
//! `calibrate_by`.

/// The axis keys, in the order their suffixes are added.
const AXES: &[&str] = &["streams", "pipeline", "key_dist", "ratio"];

/// An axis list refused: its key, the value at fault (none for an empty list), and why.
#[derive(Debug, Clone, PartialEq)]
pub struct BadAxis {
    pub key: &'static str,
    pub value: Option<toml::Value>,
    pub why: AxisFault,
}

/// Why an axis list is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AxisFault {
    /// `key = []`.
    Empty,
    /// A count axis's value that is not a whole number from 1.
    NotWhole,
    /// A text axis's value that is not a string.
    NotText,
}

impl std::error::Error for BadAxis {}

impl std::fmt::Display for BadAxis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let key = self.key;
        let v = self.value.as_ref().map_or(String::new(), |v| v.to_string());
        match self.why {
            AxisFault::Empty => write!(f, "{key} = [] gives no value: list one or more, or give one value"),
            AxisFault::NotWhole => write!(f, "{key} holds {v}: each must be a whole number, at least 1"),
            AxisFault::NotText => write!(f, "{key} holds {v}: each must be a string"),
        }
    }
}

/// What one value of `key` adds to an experiment's name, or why it cannot be a value there.
fn suffix(key: &'static str, v: &toml::Value) -> Result<String, BadAxis> {
    let bad = |why| BadAxis {
        key,
        value: Some(v.clone()),
        why,
    };
    match key {
        "streams" | "pipeline" => match v.as_integer().filter(|n| *n >= 1) {
            Some(n) if key == "streams" => Ok(format!("-{n}streams")),
            Some(n) => Ok(format!("-p{n}")),
            None => Err(bad(AxisFault::NotWhole)),
        },
        _ => {
            let text = v.as_str().ok_or_else(|| bad(AxisFault::NotText))?;
            if key == "ratio" {
                if let Some((set, get)) = text.split_once(':') {
                    if let (Ok(s), Ok(g)) = (set.trim().parse::<f64>(), get.trim().parse::<f64>()) {
                        if s + g > 0.0 {
                            return Ok(format!("-get{:.0}", g / (s + g) * 100.0));
                        }
                    }
                }
            }
            Ok(format!("-{}", text.replace(':', "")))
        }
    }
}

/// Expands every axis of every experiment of `raw`. Returns whether any was expanded; an
/// error names the experiment and the key.
pub(super) fn expand(raw: &mut toml::Table) -> Result<bool, (String, BadAxis)> {
    let Some(toml::Value::Array(xs)) = raw.get_mut("experiment") else {
        return Ok(false);
    };
    // Each expanded experiment's name and the axis keys it was expanded on.
    let mut swept: Vec<(String, Vec<&'static str>)> = Vec::new();
    let mut out = Vec::new();
    for x in xs.drain(..) {
        let name = x.get("name").and_then(|n| n.as_str()).unwrap_or("").to_string();
        let mut variants: Vec<(toml::Value, String)> = vec![(x.clone(), String::new())];
        let mut keys: Vec<&'static str> = Vec::new();
        for &key in AXES {
            let Some(toml::Value::Array(list)) = x.get(key) else {
                continue;
            };
            if list.is_empty() {
                return Err((
                    name,
                    BadAxis {
                        key,
                        value: None,
                        why: AxisFault::Empty,
                    },
                ));
            }
            keys.push(key);
            let mut next = Vec::new();
            for (one, sfx) in &variants {
                for v in list {
                    let s = suffix(key, v).map_err(|e| (name.clone(), e))?;
                    let mut t = one.clone();
                    if let Some(t) = t.as_table_mut() {
                        t.insert(key.into(), v.clone());
                    }
                    next.push((t, format!("{sfx}{s}")));
                }
            }
            variants = next;
        }
        if keys.is_empty() {
            out.push(x);
            continue;
        }
        for (mut one, sfx) in variants {
            if let Some(t) = one.as_table_mut() {
                t.insert("name".into(), toml::Value::String(format!("{name}{sfx}")));
                // A rate (or a calibration) taken from an experiment swept on the same axes:
                // from its sibling.
                let sibling = |of: &str| swept.iter().any(|(n, k)| n == of.trim() && *k == keys);
                let of = t.get("rate_of").and_then(|r| r.as_str()).map(String::from);
                if let Some((share, of)) = of.as_deref().and_then(|r| r.split_once(" of ")) {
                    if sibling(of) {
                        let rate_of = format!("{share} of {}{sfx}", of.trim());
                        t.insert("rate_of".into(), toml::Value::String(rate_of));
                    }
                }
                let by = t.get("calibrate_by").and_then(|r| r.as_str()).map(String::from);
                if let Some(by) = by.filter(|b| sibling(b)) {
                    t.insert(
                        "calibrate_by".into(),
                        toml::Value::String(format!("{}{sfx}", by.trim())),
                    );
                }
            }
            out.push(one);
        }
        swept.push((name, keys));
    }
    *xs = out;
    Ok(!swept.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str) -> Vec<(String, Option<String>)> {
        let mut raw: toml::Table = toml::from_str(text).unwrap();
        assert!(expand(&mut raw).unwrap());
        raw["experiment"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| {
                (
                    x["name"].as_str().unwrap().to_string(),
                    x.get("rate_of")
                        .or(x.get("calibrate_by"))
                        .map(|r| r.as_str().unwrap().to_string()),
                )
            })
            .collect()
    }

    #[test]
    fn axes_cross_into_named_experiments_and_a_rate_of_or_calibration_follows_its_sibling() {
        let got = names(
            "[[experiment]]\nname = \"sat\"\npipeline = [1, 16]\nkey_dist = [\"uniform\", \"zipf:0.99\"]\nratio = \"1:9\"\n\
             [[experiment]]\nname = \"at50\"\nrate_of = \"50% of sat\"\npipeline = [1, 16]\nkey_dist = [\"uniform\", \"zipf:0.99\"]\n\
             [[experiment]]\nname = \"at80\"\ncalibrate_by = \"at50\"\npipeline = [1, 16]\nkey_dist = [\"uniform\", \"zipf:0.99\"]\n\
             [[experiment]]\nname = \"other\"\nrate_of = \"50% of sat\"\nratio = [\"1:1\"]\n",
        );
        let want = [
            ("sat-p1-uniform", None),
            ("sat-p1-zipf0.99", None),
            ("sat-p16-uniform", None),
            ("sat-p16-zipf0.99", None),
            ("at50-p1-uniform", Some("50% of sat-p1-uniform")),
            ("at50-p1-zipf0.99", Some("50% of sat-p1-zipf0.99")),
            ("at50-p16-uniform", Some("50% of sat-p16-uniform")),
            ("at50-p16-zipf0.99", Some("50% of sat-p16-zipf0.99")),
            ("at80-p1-uniform", Some("at50-p1-uniform")),
            ("at80-p1-zipf0.99", Some("at50-p1-zipf0.99")),
            ("at80-p16-uniform", Some("at50-p16-uniform")),
            ("at80-p16-zipf0.99", Some("at50-p16-zipf0.99")),
            // Swept on other axes: its rate_of is left as written (and checked as such).
            ("other-get50", Some("50% of sat")),
        ];
        let want: Vec<(String, Option<String>)> =
            want.iter().map(|(n, r)| (n.to_string(), r.map(String::from))).collect();
        assert_eq!(got, want);
        let streams = names("[[experiment]]\nname = \"e\"\nstreams = [1, 10]\n");
        assert_eq!(streams[1].0, "e-10streams");
        let mut bad: toml::Table = toml::from_str("[[experiment]]\nname = \"e\"\npipeline = [0]\n").unwrap();
        let (name, e) = expand(&mut bad).unwrap_err();
        assert_eq!((name.as_str(), e.key, e.why), ("e", "pipeline", AxisFault::NotWhole));
        assert!(e.to_string().contains("at least 1"), "{e}");
        let mut empty: toml::Table = toml::from_str("[[experiment]]\nname = \"e\"\nstreams = []\n").unwrap();
        assert_eq!(expand(&mut empty).unwrap_err().1.why, AxisFault::Empty);
        let mut text: toml::Table = toml::from_str("[[experiment]]\nname = \"e\"\nkey_dist = [1]\n").unwrap();
        assert_eq!(expand(&mut text).unwrap_err().1.why, AxisFault::NotText);
    }
}
