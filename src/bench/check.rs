//! Reading a scenario: TOML into [`Scenario`], then every value checked before anything runs,
//! by the scenario's own rules and by the command line's (a model entry through `muxlab
//! serve`'s flags and checks, a workload through `muxlab load`'s). An error is one line naming
//! the file, the line and the field.

use super::error::Error;
use super::scenario::{model_name, Experiment, Scenario};
use crate::units::parse_duration;

/// `muxlab load`'s workload flags, as the command line reads them.
#[derive(clap::Parser)]
#[command(no_binary_name = true)]
struct LoadLine {
    #[command(flatten)]
    config: crate::load::LoadConfig,
}

/// `muxlab serve`'s flags, as the command line reads them.
#[derive(clap::Parser)]
#[command(no_binary_name = true)]
struct ServeLine {
    #[arg(long)]
    model: String,
    #[command(flatten)]
    config: crate::server::Config,
}

/// What clap or a flag check said, in one line (clap's usage and help hints dropped).
fn first_line(e: impl std::fmt::Display) -> Error {
    let text = e.to_string();
    let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    Error::Scenario(line.trim().trim_start_matches("error: ").to_string())
}

/// Checks a model entry with `muxlab serve`'s own rules: the flags it gives must be ones the
/// model honours, with values serve accepts (`"poll --trigger edge"` is refused here, before
/// any cell runs, as `muxlab serve --model poll --trigger edge` is).
fn check_model_entry(entry: &str, x: &Experiment, addr: &str) -> Result<(), Error> {
    let args = super::process::serve_args(entry, x, addr, "0")?;
    let line = <ServeLine as clap::Parser>::try_parse_from(&args[1..]).map_err(first_line)?;
    let model =
        crate::models::find(&line.model).ok_or_else(|| Error::Scenario(format!("unknown model '{}'", line.model)))?;
    line.config
        .validate(model.name, model.workers, model.flags)
        .map(drop)
        .map_err(first_line)
}

/// Checks an experiment's workload with `muxlab load`'s own rules, at every connection count.
fn check_workload(x: &Experiment, addr: std::net::IpAddr) -> Result<(), Error> {
    for &conns in &x.connections {
        let args = super::runner::workload_args(x, std::net::SocketAddr::new(addr, 1), conns, 0);
        let line = <LoadLine as clap::Parser>::try_parse_from(&args[1..]).map_err(first_line)?;
        line.config.resolve().map_err(first_line)?;
    }
    Ok(())
}

/// The scenario key of a `muxlab load` flag a message names, if any.
fn key_of_flag(msg: &str) -> &'static str {
    const KEYS: &[(&str, &str)] = &[
        ("--pipeline", "pipeline"),
        ("--connect-rate", "connect_rate"),
        ("--rate", "rate"),
        ("--think", "think"),
        ("--close", "close"),
        ("--timeout", "timeout"),
        ("--warmup", "warmup"),
        ("--bind", "bind"),
        ("--body-size", "body_size"),
        ("--chunked", "chunked"),
        ("--size", "size"),
        ("-d", "duration"),
        ("-n", "requests"),
        ("-c", "connections"),
    ];
    KEYS.iter()
        .find(|(flag, _)| {
            msg.match_indices(flag).any(|(i, _)| {
                let after = msg[i + flag.len()..].chars().next();
                !after.is_some_and(|c| c.is_ascii_alphanumeric() || c == '-')
            })
        })
        .map_or("experiment", |(_, key)| key)
}

/// Whether a host name could be read as an option by ssh.
fn bad_host(h: &str) -> bool {
    h.is_empty() || h.starts_with('-') || h.chars().any(|c| c.is_whitespace() || c.is_control())
}

/// 1-based line of the first occurrence of `needle` in `text`.
fn line_of(text: &str, needle: &str) -> usize {
    text.find(needle).map_or(0, |i| text[..i].matches('\n').count() + 1)
}

/// 1-based line of `key = ` in the experiment whose table holds `at` (its name line), or of
/// that name line when the key is not there.
fn line_in(text: &str, at: &str, key: &str) -> usize {
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
    let pos = found
        .filter(|(_, l)| {
            l.trim_start()
                .strip_prefix(key)
                .is_some_and(|r| r.trim_start().starts_with('='))
        })
        .map(|(off, _)| table_start + off)
        .next()
        .unwrap_or(start);
    text[..pos].matches('\n').count() + 1
}

/// Parses and checks a scenario; errors name `origin`, the line and the field.
pub fn parse(text: &str, origin: &str) -> Result<Scenario, Error> {
    let s: Scenario = toml::from_str(text).map_err(|e| {
        let line = e.span().map(|sp| text[..sp.start].matches('\n').count() + 1);
        let msg = e.message().trim().to_string();
        Error::Scenario(match line {
            Some(l) => format!("{origin}, line {l}: {msg}"),
            None => format!("{origin}: {msg}"),
        })
    })?;
    let err = |needle: &str, field: &str, msg: String| {
        let l = line_of(text, needle);
        Error::Scenario(if l > 0 {
            format!("{origin}, line {l}, field '{field}': {msg}")
        } else {
            format!("{origin}, field '{field}': {msg}")
        })
    };
    if s.experiments.is_empty() {
        return Err(Error::Scenario(format!("{origin}: no [[experiment]] tables")));
    }
    if let Some(a) = &s.server_addr {
        a.parse::<std::net::IpAddr>()
            .map_err(|_| err(a, "server_addr", format!("'{a}' is not an IP address")))?;
    }
    if !s.client_hosts.is_empty() && s.server_host.is_none() && s.server_addr.is_none() {
        return Err(err(
            "client_hosts",
            "client_hosts",
            "the client hosts cannot reach a server on 127.0.0.1: give server_host, or server_addr \
             (this machine's address as they reach it)"
                .into(),
        ));
    }
    if s.repeats == 0 {
        return Err(err("repeats", "repeats", "must be at least 1".into()));
    }
    for (field, h) in s
        .server_host
        .iter()
        .map(|h| ("server_host", h))
        .chain(s.client_hosts.iter().map(|h| ("client_hosts", h)))
    {
        if bad_host(h) {
            return Err(err(
                &format!("\"{h}\""),
                field,
                format!("'{h}' is not a host name (a name must not be empty, start with '-', or hold spaces)"),
            ));
        }
    }
    if s.steer_rx {
        super::steer::applies(&s).map_err(|why| err("steer_rx", "steer_rx", why.to_string()))?;
    }
    for cpus in [&s.server_cpus, &s.client_cpus].into_iter().flatten() {
        crate::units::parse_cpus(cpus).map_err(|e| err(cpus, "server_cpus / client_cpus", e.to_string()))?;
    }
    for x in &s.experiments {
        let at = format!("name = \"{}\"", x.name);
        let field_err = |field: &str, msg: String| err(&at, field, format!("experiment '{}': {msg}", x.name));
        if !["http", "echo", "packet"].contains(&x.proto.as_str()) {
            return Err(err(
                &format!("\"{}\"", x.proto),
                "proto",
                format!("'{}' is not http, echo or packet", x.proto),
            ));
        }
        if x.models.is_empty() && x.peers.is_empty() {
            return Err(field_err("models", "lists no models and no peers".into()));
        }
        for m in &x.models {
            let name = model_name(m);
            if crate::models::find(name).is_none() {
                return Err(err(
                    &format!("\"{m}\""),
                    "models",
                    format!("unknown model '{name}' (see muxlab models)"),
                ));
            }
        }
        for p in &x.peers {
            if p != "nginx" && p != "nginx deferred" {
                return Err(err(
                    &format!("\"{p}\""),
                    "peers",
                    format!("unknown peer '{p}': the peers are nginx and \"nginx deferred\""),
                ));
            }
        }
        if x.connections.is_empty() || x.connections.contains(&0) {
            return Err(field_err(
                "connections",
                "needs one or more counts, each at least 1".into(),
            ));
        }
        match (&x.duration, x.requests) {
            (Some(_), Some(_)) => return Err(field_err("duration", "give duration or requests, not both".into())),
            (None, None) => {
                return Err(field_err(
                    "duration",
                    "give a duration (\"3s\") or a number of requests".into(),
                ))
            }
            _ => {}
        }
        for (field, v) in [
            ("duration", &x.duration),
            ("warmup", &x.warmup),
            ("think", &x.think),
            ("timeout", &x.timeout),
        ] {
            if let Some(v) = v {
                parse_duration(v).map_err(|e| err(&format!("\"{v}\""), field, e.to_string()))?;
            }
        }
        if let Some(w) = &x.work {
            w.parse::<crate::server::Work>()
                .map_err(|e| err(&format!("\"{w}\""), "work", e.to_string()))?;
        }
        if x.close && x.proto != "http" {
            return Err(field_err("close", "applies to http only".into()));
        }
        if x.tls && x.proto != "http" {
            return Err(field_err("tls", "applies to http only (https)".into()));
        }
        if let Some(b) = &x.body_size {
            if x.proto != "http" {
                return Err(field_err("body_size", "applies to http only".into()));
            }
            crate::units::parse_size(b).map_err(|e| err(b, "body_size", e.to_string()))?;
        }
        if x.chunked && x.body_size.is_none() {
            return Err(field_err("chunked", "sends a body: give body_size too".into()));
        }
        if x.rotate_sources && x.bind.is_some() {
            return Err(field_err(
                "rotate_sources",
                "picks the source addresses itself: drop bind".into(),
            ));
        }
        if let Some(b) = &x.bind {
            crate::units::parse_ipv4_range(b).map_err(|e| err(b, "bind", e.to_string()))?;
        }
        if let Some(r) = &x.reference {
            if !x.models.contains(r) && !x.peers.contains(r) {
                return Err(err(
                    &format!("\"{r}\""),
                    "reference",
                    format!("experiment '{}': \"{r}\" is not one of its models or peers", x.name),
                ));
            }
        }
        // The model entries and the workload, by serve's and load's own rules: what the
        // command line would refuse is refused here, before anything runs.
        let addr = s.server_addr.as_deref().unwrap_or("127.0.0.1");
        for m in &x.models {
            check_model_entry(m, x, addr).map_err(|e| {
                err(
                    &format!("\"{m}\""),
                    "models",
                    format!("experiment '{}': \"{m}\": {e}", x.name),
                )
            })?;
        }
        check_workload(x, addr.parse().unwrap_or(std::net::Ipv4Addr::LOCALHOST.into())).map_err(|e| {
            let key = key_of_flag(&e.to_string());
            let l = line_in(text, &at, key);
            let place = if l > 0 { format!(", line {l}") } else { String::new() };
            Error::Scenario(format!("{origin}{place}, field '{key}': experiment '{}': {e}", x.name))
        })?;
        if x.paired && s.server_host.is_some() {
            return Err(field_err(
                "paired",
                "runs every server at once on this machine: drop server_host, or paired".into(),
            ));
        }
    }
    Ok(s)
}
