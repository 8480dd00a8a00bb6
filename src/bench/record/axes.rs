//! Keys a scenario may give as a list to sweep, besides `connections`: each value becomes an
//! experiment of its own, before the file is read into a [`Scenario`](super::scenario::Scenario).

/// `streams = [1, 10, 100]` (an axis, like `connections`): the experiment becomes one per
/// value, named `NAME-Nstreams`, each with `streams = N`. Returns whether any was expanded;
/// an error names the experiment.
pub(super) fn streams_axis(raw: &mut toml::Table) -> Result<bool, (String, String)> {
    let Some(toml::Value::Array(xs)) = raw.get_mut("experiment") else {
        return Ok(false);
    };
    let mut out = Vec::new();
    let mut expanded = false;
    for x in xs.drain(..) {
        let list = match x.get("streams") {
            Some(toml::Value::Array(l)) => l.clone(),
            _ => {
                out.push(x);
                continue;
            }
        };
        let name = x.get("name").and_then(|n| n.as_str()).unwrap_or("").to_string();
        if list.is_empty() {
            return Err((
                name,
                "streams = [] gives no value: list one or more (streams = [1, 10, 100])".into(),
            ));
        }
        for v in list {
            let Some(n) = v.as_integer().filter(|n| *n >= 1) else {
                return Err((
                    name,
                    format!("streams holds {v}: each must be a whole number, at least 1"),
                ));
            };
            let mut one = x.clone();
            if let Some(t) = one.as_table_mut() {
                t.insert("streams".into(), toml::Value::Integer(n));
                t.insert("name".into(), toml::Value::String(format!("{name}-{n}streams")));
            }
            out.push(one);
        }
        expanded = true;
    }
    *xs = out;
    Ok(expanded)
}
