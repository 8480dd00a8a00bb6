//! Where a scenario's errors point ([`Origin`]): the file (or built-in) and the line of the
//! field an error is about, found in the text as written.

use super::error::{BadScenario, ScenarioError, ScenarioFault};
use super::experiment::Experiment;

/// 1-based line of the first occurrence of `needle` in `text`.
fn line_of(text: &str, needle: &str) -> usize {
    text.find(needle).map_or(0, |i| text[..i].matches('\n').count() + 1)
}

/// 1-based line of `key = ` in the experiment whose table holds `at` (its name line), or of
/// that name line when the key is not there.
pub(super) fn line_in(text: &str, at: &str, key: &str) -> usize {
    let tables = text.find("[[experiment]]").unwrap_or(0);
    let Some(start) = text[tables..].find(at).map(|i| tables + i) else {
        return 0;
    };
    let table_start = text[..start].rfind("[[experiment]]").unwrap_or(0);
    let table_end = text[start..].find("[[experiment]]").map_or(text.len(), |i| start + i);
    let table = &text[table_start..table_end];
    let found = table.lines().scan(0, |off, l| {
        let here = *off;
        *off += l.len() + 1;
        Some((here, l))
    });
    // A key may be written under its alias (`headers` for `header`).
    let names: &[&str] = if key == "header" {
        &["header", "headers"]
    } else {
        &[key]
    };
    let pos = found
        .filter(|(_, l)| {
            names.iter().any(|k| {
                l.trim_start()
                    .strip_prefix(k)
                    .is_some_and(|r| r.trim_start().starts_with('='))
            })
        })
        .map(|(off, _)| table_start + off)
        .next()
        .unwrap_or(start);
    text[..pos].matches('\n').count() + 1
}

/// Where a scenario's errors point: the file (or built-in) and its text.
pub(super) struct Origin<'a> {
    pub(super) name: &'a str,
    pub(super) text: &'a str,
}

impl Origin<'_> {
    /// An error at the first line holding `needle`, about `field` (of experiment `x`, where
    /// the message names it).
    pub(super) fn at(&self, needle: &str, field: &str, x: Option<&str>, fault: ScenarioFault) -> ScenarioError {
        self.line(line_of(self.text, needle), field, x, fault)
    }

    /// An error at line `l` (0: unknown, as in a scenario with no text), about `field` (of
    /// experiment `x`, where the message names it).
    pub(super) fn line(&self, l: usize, field: &str, x: Option<&str>, fault: ScenarioFault) -> ScenarioError {
        BadScenario {
            origin: self.name.to_string(),
            line: (l > 0 && !self.text.is_empty()).then_some(l),
            field: Some(field.to_string()),
            experiment: x.map(str::to_string),
            fault,
        }
        .into()
    }

    /// An error about `key` of experiment `x`, at its line in that experiment's table.
    pub(super) fn key(&self, x: &Experiment, key: &str, fault: ScenarioFault) -> ScenarioError {
        let at = format!("name = \"{}\"", x.name);
        self.line(line_in(self.text, &at, key), key, Some(&x.name), fault)
    }

    /// An error about the whole scenario, at no line and no field.
    pub(super) fn whole(&self, fault: ScenarioFault) -> ScenarioError {
        self.unplaced(None, fault)
    }

    /// A TOML error at its span.
    pub(super) fn toml(&self, e: toml::de::Error) -> ScenarioError {
        let line = e.span().map(|sp| self.text[..sp.start].matches('\n').count() + 1);
        self.unplaced(line, ScenarioFault::Toml(e))
    }

    /// An error at no field (at `line`, where known).
    fn unplaced(&self, line: Option<usize>, fault: ScenarioFault) -> ScenarioError {
        BadScenario {
            origin: self.name.to_string(),
            line,
            field: None,
            experiment: None,
            fault,
        }
        .into()
    }
}
