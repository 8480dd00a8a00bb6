//! `muxlab models` run: every registered model, as a table or as JSON.

use std::io::Write;

use crate::models;

pub(super) fn print_models(json: bool) {
    let mut out = std::io::stdout().lock();
    if json {
        let list: Vec<_> = models::ALL
            .iter()
            .map(|m| {
                serde_json::json!({"name": m.name, "family": m.family.name(), "mechanism": m.mechanism,
                    "product": m.product, "seed": m.seed, "one_conn_per_worker": m.one_conn_per_worker,
                    "streams": m.streams.says(), "store": m.data.says(), "sharded": m.shards,
                    "flags": m.flags.iter().map(|f| f.name()).collect::<Vec<_>>()})
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
}
