//! Checking a command line and completing it into the plan of a run:
//! [`resolve`] and its rules (pacing, the body, the length, HTTP/2, connections,
//! keyed targets, request classes). An error names the key it is about and says in one line
//! what to change.

use std::time::Duration;

use super::keyed::CLASSES as KEYED_CLASSES;
use super::workload::{message_size, read_mix_file, MAX_STREAMS};
use super::{keyed, tls, unix_ms, Class, Error, Kind, LoadArgs, Pacing, Payload, Shard, Spec};

/// Checks a command line's arguments and completes them (pacing, the default duration, the
/// method's case, the body, TLS) into the plan of a run. An error names the key it is about and
/// says in one line what to change.
pub fn resolve(args: LoadArgs) -> Result<Spec, Error> {
    let a = &args;
    let w = &a.workload;
    let http = a.target.kind == Kind::Http;
    if a.connections == 0 {
        return Err(Error::invalid("connections", "-c must be at least 1"));
    }
    if a.threads == Some(0) {
        return Err(Error::invalid("threads", "-t must be at least 1"));
    }
    if a.interval.is_some_and(|d| d < std::time::Duration::from_millis(1)) {
        return Err(Error::invalid("interval", "--interval must be at least 1ms"));
    }
    let window = w.duration.or(w.rate.filter(|r| r.is_ramp()).map(|r| r.length()));
    if let (Some(i), Some(d)) = (a.interval, window) {
        if d.as_secs_f64() / i.as_secs_f64() > 100_000.0 {
            return Err(Error::invalid(
                "interval",
                "--interval makes over 100,000 intervals of the window: make it longer",
            ));
        }
    }
    let pacing = pacing(a)?;
    if (http || a.target.kind.keyed().is_some()) && w.size != message_size() {
        return Err(Error::invalid(
            "size",
            "--size applies to echo:// and packet:// targets (a keyed store's values have --value-size)",
        ));
    }
    let keyed = keyed(a)?;
    let payload = payload(a, http)?;
    let method = match w.method.as_str() {
        "" if payload != Payload::None => "POST".into(),
        "" => "GET".into(),
        m => m.to_ascii_uppercase(),
    };
    check_slo(a)?;
    let (duration, requests) = length(a)?;
    check_connections(a, http)?;
    check_rest(a, http)?;
    let h2 = check_h2(a, http)?;
    let tls = match (a.target.tls, w.insecure || w.cacert.is_some() || w.tls_resume) {
        (true, _) => Some(tls::client_config(w.insecure, w.cacert.as_deref(), w.tls_resume, h2)?),
        (false, true) => {
            return Err(Error::invalid(
                "insecure",
                "--insecure, --cacert and --tls-resume apply to https:// targets",
            ))
        }
        (false, false) => None,
    };
    let classes = classes(a, &method, &payload)?;
    let spec = Spec {
        duration,
        requests,
        pacing,
        payload,
        method,
        tls,
        classes,
        h2,
        keyed,
        args,
    };
    if h2 && !super::h2::fits_one_frame(&super::h2::H2Plan::of(&spec).classes) {
        return Err(Error::invalid(
            "header",
            "the request's headers (-H, the path) take more than one HTTP/2 frame (16 KiB): shorten them",
        ));
    }
    Ok(spec)
}

/// The highest `--rate` a run may ask for (a ramp's peak included): every request costs the
/// client a system call or a share of one, about a microsecond of a CPU, so no client of a
/// machine of a few cores sends ten million a second; a schedule denser than that would only
/// fall behind from its first instant (before: 1e9 queued sends without bound until the kernel
/// killed the process).
pub const MAX_RATE: f64 = 10_000_000.0;

/// The pacing `--rate` or `--think` asks for (a closed loop without either).
fn pacing(a: &LoadArgs) -> Result<Pacing, Error> {
    let w = &a.workload;
    let bad = |message: &str| Err(Error::invalid("rate", message));
    match (w.rate, w.think) {
        (Some(_), Some(_)) => bad("--rate (open loop) and --think (closed loop) exclude each other"),
        (Some(r), None) if !(r.per_s() > 0.0 && r.per_s().is_finite()) => bad("--rate must be a positive number"),
        (Some(r), None) if r.peak() > MAX_RATE => bad(&format!(
            "--rate {r} is over {} requests a second, which no client of this machine sends (each request costs it about a microsecond of a CPU): a schedule that dense only falls behind",
            crate::units::thousands(MAX_RATE as u64)
        )),
        (Some(r), None) if r.is_ramp() && w.requests.is_some() => {
            bad("a ramp runs for a time: give -d (or nothing: its length), not -n")
        }
        (Some(r), None) if r.is_ramp() && w.slo.is_some() => {
            bad("--slo searches fixed rates: give --rate as one number (the first probe's)")
        }
        // A ramp offers its mean over the window it runs (a shorter -d cuts it).
        (Some(r), None) => Ok(Pacing::Rate(r.mean_over(w.duration.unwrap_or(r.length())))),
        (None, Some(t)) => Ok(Pacing::Think(t)),
        (None, None) => Ok(Pacing::Closed),
    }
}

/// What each request carries after its head: `--body` (a string or @FILE), `--body-size`
/// generated bytes, or nothing.
fn payload(a: &LoadArgs, http: bool) -> Result<Payload, Error> {
    let w = &a.workload;
    let bad = |key: &'static str, message: &str| Error::invalid(key, message);
    let payload = match (&w.body, w.body_size) {
        (Some(_), Some(_)) => return Err(bad("body", "give --body or --body-size, not both")),
        (Some(b), None) => match b.strip_prefix('@') {
            Some(path) => Payload::Fixed(
                std::fs::read(path).map_err(|e| bad("body", &format!("cannot read --body @{path}: {e}")))?,
            ),
            None => Payload::Fixed(b.clone().into_bytes()),
        },
        (None, Some(n)) => Payload::Generated(n),
        (None, None) => Payload::None,
    };
    if payload != Payload::None && !http {
        let key = if w.body.is_some() { "body" } else { "body_size" };
        return Err(bad(key, "--body and --body-size apply to http:// targets"));
    }
    if w.chunked && payload == Payload::None {
        return Err(bad("chunked", "--chunked sends a body: give --body or --body-size"));
    }
    Ok(payload)
}

/// The rules of a capacity search (`--slo`): probes of a time each, open loop, classes
/// that exist.
fn check_slo(a: &LoadArgs) -> Result<(), Error> {
    let w = &a.workload;
    let bad = |key: &'static str, message: &str| Err(Error::invalid(key, message));
    let Some(slo) = &w.slo else { return Ok(()) };
    if w.requests.is_some() {
        return bad("requests", "--slo probes rates for a time each (-d): drop -n");
    }
    if w.think.is_some() {
        return bad("think", "--slo probes open-loop rates: drop --think");
    }
    if w.slo_time.is_zero() {
        return bad("slo_time", "--slo-time must be more than zero");
    }
    let names: Vec<&str> = mix_names(a);
    match slo.classes().find(|c| w.mix_file.is_none() && !names.contains(c)) {
        Some(c) => bad("slo", &format!("--slo names the class '{c}', which no --mix gives")),
        None => Ok(()),
    }
}

/// How long the run lasts: `-d` or `-n` (10 s without either; a capacity search's probe
/// length with `--slo`).
fn length(a: &LoadArgs) -> Result<(Option<Duration>, Option<u64>), Error> {
    let w = &a.workload;
    let bad = |key: &'static str, message: &str| Err(Error::invalid(key, message));
    match (w.duration, w.requests) {
        (Some(_), Some(_)) => bad("duration", "give either -d (duration) or -n (requests), not both"),
        (Some(d), _) if d.is_zero() => bad("duration", "-n and -d must be more than zero"),
        (_, Some(0)) => bad("requests", "-n and -d must be more than zero"),
        (None, None) if w.slo.is_some() => Ok((Some(super::slo::PROBE), None)),
        // A ramp runs its length.
        (None, None) if w.rate.is_some_and(|r| r.is_ramp()) => Ok((w.rate.map(|r| r.length()), None)),
        (None, None) => Ok((Some(Duration::from_secs(10)), None)),
        (d, n) => Ok((d, n)),
    }
}

/// The rules of HTTP/2 (`h2c://`, or `--h2`): whether the run speaks it.
fn check_h2(a: &LoadArgs, http: bool) -> Result<bool, Error> {
    let w = &a.workload;
    let bad = |key: &'static str, message: &str| Err(Error::invalid(key, message));
    let h2 = a.target.h2c || w.h2;
    if h2 && !http {
        return bad("h2", "--h2 applies to http:// and https:// targets");
    }
    if h2 && w.chunked {
        return bad("chunked", "--chunked is HTTP/1.1's: HTTP/2 frames the body itself");
    }
    if h2 && w.pipeline > 1 {
        return bad(
            "pipeline",
            "--pipeline is HTTP/1.1's: HTTP/2 keeps --streams requests in flight per connection",
        );
    }
    if w.streams == 0 {
        return bad("streams", "--streams must be at least 1");
    }
    if w.streams > MAX_STREAMS {
        return bad("streams", &format!("--streams is at most {MAX_STREAMS}"));
    }
    if !h2 && w.streams > 1 {
        return bad(
            "streams",
            "--streams is HTTP/2's: give an h2c:// target, or https:// with --h2 (HTTP/1.1 has --pipeline)",
        );
    }
    Ok(h2)
}

/// The rules about connections: how requests share them.
fn check_connections(a: &LoadArgs, http: bool) -> Result<(), Error> {
    let w = &a.workload;
    let bad = |key: &'static str, message: &str| Err(Error::invalid(key, message));
    if w.pipeline == 0 {
        return bad("pipeline", "--pipeline must be at least 1");
    }
    if w.close && w.pipeline > 1 {
        return bad("pipeline", "--pipeline needs keep-alive connections: drop --close");
    }
    if w.close && !http {
        return bad("close", "--close applies to http:// targets");
    }
    if w.close && w.requests_per_conn.is_some() {
        return bad(
            "requests_per_conn",
            "--close already means one request per connection: drop --requests-per-conn",
        );
    }
    if w.requests_per_conn == Some(0) {
        return bad("requests_per_conn", "--requests-per-conn must be at least 1");
    }
    if w.connect_rate.is_some_and(|r| !(r > 0.0 && r.is_finite())) {
        return bad("connect_rate", "--connect-rate must be a positive number");
    }
    if let Some(Shard(_, n)) = a.shard {
        if n > a.connections {
            return Err(Error::invalid(
                "shard",
                &format!(
                    "-c {} cannot be split into {n} shares: every share needs a connection",
                    a.connections
                ),
            ));
        }
    }
    Ok(())
}

/// The rules about everything else: sizes, sources, timeouts, headers, the start.
fn check_rest(a: &LoadArgs, http: bool) -> Result<(), Error> {
    let w = &a.workload;
    if !http && w.size == 0 {
        return Err(Error::invalid("size", "--size must be at least 1 byte"));
    }
    if w.bind.is_some() && !a.target.addr.is_ipv4() {
        return Err(Error::invalid(
            "bind",
            "--bind takes IPv4 addresses, the target is IPv6",
        ));
    }
    if w.timeout.is_zero() {
        return Err(Error::invalid("timeout", "--timeout must be more than zero"));
    }
    if w.sse && !http {
        return Err(Error::invalid(
            "sse",
            "--sse reads HTTP responses as event streams: give an http://, https:// or h2c:// target",
        ));
    }
    for h in &w.headers {
        let name = h.split_once(':').map(|(n, _)| n);
        let token = |n: &str| {
            !n.is_empty()
                && n.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
        };
        if !name.is_some_and(token) || h.contains(['\r', '\n']) {
            return Err(Error::invalid(
                "header",
                &format!("-H '{h}' is not a header: give 'Name: value' (a name of letters, digits and -, one line)"),
            ));
        }
    }
    if let Some(at) = a.start_at {
        let ahead = at.saturating_sub(unix_ms()) / 1000;
        if ahead > 3600 {
            return Err(Error::invalid(
                "start_at",
                &format!(
                    "--start-at {at} is {ahead} s away (more than an hour): give milliseconds since the epoch, e.g. $(date -d '+20 sec' +%s%3N)"
                ),
            ));
        }
    }
    Ok(())
}

/// The names of the `--mix` classes (a keyed target's: its commands).
fn mix_names(a: &LoadArgs) -> Vec<&str> {
    if a.target.kind.keyed().is_some() {
        return KEYED_CLASSES.to_vec();
    }
    a.workload.mix.iter().map(|m| m.name.as_str()).collect()
}

/// The rules of keyed targets (resp://, memcache://) and their plan.
fn keyed(a: &LoadArgs) -> Result<Option<keyed::Plan>, Error> {
    keyed::Plan::of(&a.target, a.connections, &a.workload)
}

/// The classes of `--mix` (with the run's method and body) and of `--mix-file` (each with
/// its own); names unique, http only, at most 255.
fn classes(a: &LoadArgs, method: &str, payload: &Payload) -> Result<Vec<Class>, Error> {
    let w = &a.workload;
    if a.target.kind.keyed().is_some() {
        if !w.mix.is_empty() || w.mix_file.is_some() {
            let key = if w.mix.is_empty() { "mix_file" } else { "mix" };
            return Err(Error::invalid(
                key,
                "a keyed target's request classes are its commands, set and get, weighted by --ratio (--slo get:p99<=1ms names one)",
            ));
        }
        let ratio = w.ratio.unwrap_or_default();
        return Ok([ratio.set, ratio.get]
            .iter()
            .zip(KEYED_CLASSES)
            .map(|(&weight, name)| Class {
                name: name.to_string(),
                weight,
                method: name.to_ascii_uppercase(),
                path: String::new(),
                payload: Payload::None,
            })
            .collect());
    }
    let mut classes: Vec<Class> = w
        .mix
        .iter()
        .map(|m| Class {
            name: m.name.clone(),
            weight: m.weight,
            method: method.to_string(),
            path: m.path.clone(),
            payload: payload.clone(),
        })
        .collect();
    if let Some(path) = &w.mix_file {
        classes.extend(read_mix_file(path, payload)?);
    }
    if classes.is_empty() {
        return Ok(classes);
    }
    let key = if w.mix.is_empty() { "mix_file" } else { "mix" };
    if a.target.kind != Kind::Http {
        return Err(Error::invalid(key, "--mix and --mix-file apply to http:// targets"));
    }
    if classes.len() > 255 {
        return Err(Error::invalid(key, "a mix holds at most 255 classes"));
    }
    for (i, c) in classes.iter().enumerate() {
        if classes[..i].iter().any(|o| o.name == c.name) {
            return Err(Error::invalid(
                key,
                &format!("the class name '{}' is given twice", c.name),
            ));
        }
        if c.method == "HEAD" {
            return Err(Error::invalid(
                key,
                "a mix cannot hold HEAD requests (their responses carry no body)",
            ));
        }
    }
    Ok(classes)
}

#[cfg(test)]
mod tests {
    use crate::load::{LoadArgs, Target, Workload};

    #[test]
    fn every_check_names_the_key_it_is_about() {
        let target = || Target::parse("http://127.0.0.1:1/").unwrap();
        for (toml, key) in [
            ("rate = 0.0", "rate"),
            ("pipeline = 0", "pipeline"),
            ("close = true\npipeline = 2", "pipeline"),
            ("timeout = \"0s\"", "timeout"),
            ("connect_rate = -1.0", "connect_rate"),
            ("size = 64", "size"),
            ("chunked = true", "chunked"),
            ("header = [\"no colon\"]", "header"),
            ("duration = \"1s\"\nrequests = 3", "duration"),
            ("insecure = true", "insecure"),
        ] {
            let w: Workload = toml::from_str(toml).unwrap();
            let e = super::resolve(LoadArgs::new(target(), 1, w)).unwrap_err();
            assert_eq!(e.key(), Some(key), "{toml}: {e}");
        }
    }
}
