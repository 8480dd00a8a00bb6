//! `muxlab models` run: every registered model, as a table or as JSON.

use std::io::Write;

use crate::models;

pub(super) fn print_models(json: bool) {
    let mut out = std::io::stdout().lock();
    if json {
        let settings = crate::sys::settings::Settings::read();
        let cpus = crate::sys::affinity::get().map(|c| c.len()).unwrap_or(1);
        let list: Vec<_> = models::ALL
            .iter()
            .map(|m| {
                // What one process of it holds here with its default workers, and what stops it
                // (null: one connection at a time per worker).
                let workers = m.worker_count(None, cpus) + m.extra_threads;
                let ceiling = crate::server::ceiling(m, 1, workers, &settings)
                    .map(|(n, bound)| serde_json::json!({"connections": n, "bound": bound.to_string()}));
                serde_json::json!({"name": m.name, "family": m.family.name(), "mechanism": m.mechanism,
                    "product": m.product, "seed": m.seed, "one_conn_per_worker": m.one_conn_per_worker,
                    "streams": m.streams.says(), "store": m.data.says(), "sharded": m.shards,
                    "flags": m.flags.iter().map(|f| f.name()).collect::<Vec<_>>(),
                    "groups": crate::server::forms_group(m).is_ok(), "ceiling": ceiling})
            })
            .collect();
        let _ = writeln!(out, "{}", serde_json::Value::Array(list));
        return;
    }
    let _ = writeln!(
        out,
        "{:<15} {:<19} {:<40} {:<12} MECHANISM",
        "MODEL", "FAMILY", "PRODUCT", "SEED"
    );
    for m in models::ALL {
        let mut notes: Vec<String> = m.flags.iter().map(|f| format!("{} honoured", f.name())).collect();
        if m.one_conn_per_worker {
            notes.push("one connection at a time per worker".into());
        }
        if m.streams != crate::server::Streams::Timers {
            notes.push(m.streams.says().into());
        }
        if crate::server::forms_group(m).is_ok() {
            notes.push("forms process groups: --procs".into());
        }
        notes.push(match (m.shards, m.extra_threads > 0) {
            (true, _) => format!("store: {}; or sharded (a table per worker loop)", m.data.says()),
            (_, true) => "store: owned by the executor thread (it runs every command)".into(),
            _ => format!("store: {}", m.data.says()),
        });
        let notes = if notes.is_empty() {
            String::new()
        } else {
            format!(" ({})", notes.join("; "))
        };
        let _ = writeln!(
            out,
            "{:<15} {:<19} {:<40} {:<12} {}{notes}",
            m.name,
            m.family.name(),
            m.product,
            m.seed,
            m.mechanism
        );
    }
    print_ceilings(&mut out);
}

/// Each design's ceiling of held connections on this machine, from its settings as read now.
fn print_ceilings(out: &mut impl Write) {
    let settings = crate::sys::settings::Settings::read();
    let cpus = crate::sys::affinity::get().map(|c| c.len()).unwrap_or(1);
    let _ = writeln!(
        out,
        "\nCONNECTIONS ONE SERVER HOLDS ON THIS MACHINE (default workers, one process; settings as read now)"
    );
    for m in models::ALL {
        let workers = m.worker_count(None, cpus) + m.extra_threads;
        let line = match crate::server::ceiling(m, 1, workers, &settings) {
            Some((most, bound)) => format!("{:>10}  {bound}", crate::units::thousands(most)),
            None => format!(
                "{:>10}  one connection at a time per worker (the backlog holds the rest)",
                "-"
            ),
        };
        let _ = writeln!(out, "{:<15} {line}", m.name);
    }
    let _ = writeln!(
        out,
        "A group of N processes (--procs N) holds N times one process's descriptors, up to memory."
    );
}
