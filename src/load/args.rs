//! A whole `muxlab load` command line. The [`Workload`] (its own file) is what a scenario may
//! set too; [`LoadArgs`] adds what only a command line says (the target, the connection count,
//! where the client runs, its share of a split run). [`LoadArgs::resolve`] checks them and
//! makes the [`Spec`] a run uses; [`LoadArgs::to_args`] writes them back as argv, the one place
//! argv is made (shard processes, hosts, bench's load child).

use std::net::Ipv4Addr;
use std::time::Duration;

use super::keyed::CLASSES as KEYED_CLASSES;
use super::shard::Shard;
use super::spec::Spec;
use super::workload::{message_size, read_mix_file, Class, Workload, MAX_STREAMS};
use super::{keyed, tls, unix_ms, Error, Kind, Pacing, Payload, Target};
use crate::units::CpuList;

/// A complete `muxlab load` command line: the target, how many connections, where the client
/// runs and which share of a split run it is, and the [`Workload`].
#[derive(clap::Args, Debug, Clone)]
pub struct LoadArgs {
    /// Target: http://HOST:PORT/PATH, https://HOST:PORT/PATH, h2c://HOST:PORT/PATH (HTTP/2,
    /// prior knowledge), echo://HOST:PORT, packet://HOST:PORT, or a keyed store:
    /// resp://HOST:PORT (redis) or memcache://HOST:PORT (memcached).
    #[arg(value_parser = Target::parse)]
    pub target: Target,
    /// Connections to keep open (or, with --close, concurrent requests).
    #[arg(short = 'c', long, default_value_t = 10)]
    pub connections: usize,
    /// Engine threads [default: the CPUs this process may run on].
    #[arg(short = 't', long)]
    pub threads: Option<usize>,
    /// Pin the client to these CPUs, e.g. 1.
    #[arg(long)]
    pub cpus: Option<CpuList>,
    /// Run share I of N (counting from 0) of the connections, requests and rates; run every
    /// share (anywhere: other hosts, a Kubernetes Indexed Job) with --json and add the
    /// documents up with `muxlab merge`. Shares are exact: their totals are the flags' totals.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<Shard>,
    /// Internal: the part of this process's share it runs when the share needs more
    /// descriptors than one process may open (set by the parent process).
    #[arg(long, hide = true)]
    pub subshard: Option<Shard>,
    /// Start at this wall-clock instant, in milliseconds since the Unix epoch (e.g.
    /// $(date -d '+20 sec' +%s%3N)), so that pieces started apart (--shard by a scheduler)
    /// measure the same window; --hosts sets it itself.
    #[arg(long, value_name = "UNIX_MS")]
    pub start_at: Option<u64>,
    /// The time series' interval (`--timeseries`) [default: 1s]: a run's pieces (`--shard`,
    /// `--hosts`) keep their series in it, for the merge.
    #[arg(long, value_parser = crate::units::parse_duration)]
    pub interval: Option<std::time::Duration>,
    #[command(flatten)]
    pub workload: Workload,
}

impl LoadArgs {
    /// The arguments of a run against `target` with `connections` and `workload`, run here.
    pub fn new(target: Target, connections: usize, workload: Workload) -> LoadArgs {
        LoadArgs {
            target,
            connections,
            threads: None,
            cpus: None,
            shard: None,
            subshard: None,
            start_at: None,
            interval: None,
            workload,
        }
    }

    /// These arguments as `muxlab load`'s argv (after the word `load`).
    pub fn to_args(&self) -> Vec<String> {
        let mut a = vec![self.target.url.clone(), format!("--connections={}", self.connections)];
        if let Some(t) = self.threads {
            a.push(format!("--threads={t}"));
        }
        if let Some(c) = &self.cpus {
            a.push(format!("--cpus={c}"));
        }
        if let Some(Shard(i, n)) = self.shard {
            a.push(format!("--shard={i}/{n}"));
        }
        if let Some(Shard(i, n)) = self.subshard {
            a.push(format!("--subshard={i}/{n}"));
        }
        if let Some(at) = self.start_at {
            a.push(format!("--start-at={at}"));
        }
        if let Some(d) = self.interval {
            a.push(format!("--interval={}", crate::units::exact_duration(d)));
        }
        a.extend(self.workload.to_args());
        a
    }

    /// Checks the arguments and completes them (pacing, the default duration, the method's
    /// case, the body, TLS) into the plan of a run. An error names the key it is about and says
    /// in one line what to change.
    pub fn resolve(self) -> Result<Spec, Error> {
        let w = &self.workload;
        let http = self.target.kind == Kind::Http;
        if self.connections == 0 {
            return Err(Error::invalid("connections", "-c must be at least 1"));
        }
        if self.threads == Some(0) {
            return Err(Error::invalid("threads", "-t must be at least 1"));
        }
        if self.interval.is_some_and(|d| d < std::time::Duration::from_millis(1)) {
            return Err(Error::invalid("interval", "--interval must be at least 1ms"));
        }
        let window = w.duration.or(w.rate.filter(|r| r.is_ramp()).map(|r| r.length()));
        if let (Some(i), Some(d)) = (self.interval, window) {
            if d.as_secs_f64() / i.as_secs_f64() > 100_000.0 {
                return Err(Error::invalid(
                    "interval",
                    "--interval makes over 100,000 intervals of the window: make it longer",
                ));
            }
        }
        let pacing = self.pacing()?;
        if (http || self.target.kind.keyed().is_some()) && w.size != message_size() {
            return Err(Error::invalid(
                "size",
                "--size applies to echo:// and packet:// targets (a keyed store's values have --value-size)",
            ));
        }
        let keyed = self.keyed()?;
        let payload = self.payload(http)?;
        let method = match w.method.as_str() {
            "" if payload != Payload::None => "POST".into(),
            "" => "GET".into(),
            m => m.to_ascii_uppercase(),
        };
        self.check_slo()?;
        let (duration, requests) = self.length()?;
        self.check_connections(http)?;
        self.check_rest(http)?;
        let h2 = self.check_h2(http)?;
        let tls = match (self.target.tls, w.insecure || w.cacert.is_some() || w.tls_resume) {
            (true, _) => Some(tls::client_config(w.insecure, w.cacert.as_deref(), w.tls_resume, h2)?),
            (false, true) => {
                return Err(Error::invalid(
                    "insecure",
                    "--insecure, --cacert and --tls-resume apply to https:// targets",
                ))
            }
            (false, false) => None,
        };
        let classes = self.classes(&method, &payload)?;
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
            args: self,
        };
        if h2 && !super::h2::fits_one_frame(&super::h2::H2Plan::of(&spec).classes) {
            return Err(Error::invalid(
                "header",
                "the request's headers (-H, the path) take more than one HTTP/2 frame (16 KiB): shorten them",
            ));
        }
        Ok(spec)
    }

    /// The pacing `--rate` or `--think` asks for (a closed loop without either).
    fn pacing(&self) -> Result<Pacing, Error> {
        let w = &self.workload;
        let bad = |message: &str| Err(Error::invalid("rate", message));
        match (w.rate, w.think) {
            (Some(_), Some(_)) => bad("--rate (open loop) and --think (closed loop) exclude each other"),
            (Some(r), None) if !(r.per_s() > 0.0 && r.per_s().is_finite()) => bad("--rate must be a positive number"),
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
    fn payload(&self, http: bool) -> Result<Payload, Error> {
        let w = &self.workload;
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
    fn check_slo(&self) -> Result<(), Error> {
        let w = &self.workload;
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
        let names: Vec<&str> = self.mix_names();
        match slo.classes().find(|c| w.mix_file.is_none() && !names.contains(c)) {
            Some(c) => bad("slo", &format!("--slo names the class '{c}', which no --mix gives")),
            None => Ok(()),
        }
    }

    /// How long the run lasts: `-d` or `-n` (10 s without either; a capacity search's probe
    /// length with `--slo`).
    fn length(&self) -> Result<(Option<Duration>, Option<u64>), Error> {
        let w = &self.workload;
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
    fn check_h2(&self, http: bool) -> Result<bool, Error> {
        let w = &self.workload;
        let bad = |key: &'static str, message: &str| Err(Error::invalid(key, message));
        let h2 = self.target.h2c || w.h2;
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
    fn check_connections(&self, http: bool) -> Result<(), Error> {
        let w = &self.workload;
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
        if let Some(Shard(_, n)) = self.shard {
            if n > self.connections {
                return Err(Error::invalid(
                    "shard",
                    &format!(
                        "-c {} cannot be split into {n} shares: every share needs a connection",
                        self.connections
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The rules about everything else: sizes, sources, timeouts, headers, the start.
    fn check_rest(&self, http: bool) -> Result<(), Error> {
        let w = &self.workload;
        if !http && w.size == 0 {
            return Err(Error::invalid("size", "--size must be at least 1 byte"));
        }
        if w.bind.is_some() && !self.target.addr.is_ipv4() {
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
                    &format!(
                        "-H '{h}' is not a header: give 'Name: value' (a name of letters, digits and -, one line)"
                    ),
                ));
            }
        }
        if let Some(at) = self.start_at {
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
    fn mix_names(&self) -> Vec<&str> {
        if self.target.kind.keyed().is_some() {
            return KEYED_CLASSES.to_vec();
        }
        self.workload.mix.iter().map(|m| m.name.as_str()).collect()
    }

    /// The rules of keyed targets (resp://, memcache://) and their plan.
    fn keyed(&self) -> Result<Option<keyed::Plan>, Error> {
        keyed::Plan::of(&self.target, self.connections, &self.workload)
    }

    /// The classes of `--mix` (with the run's method and body) and of `--mix-file` (each with
    /// its own); names unique, http only, at most 255.
    fn classes(&self, method: &str, payload: &Payload) -> Result<Vec<Class>, Error> {
        let w = &self.workload;
        if self.target.kind.keyed().is_some() {
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
        if self.target.kind != Kind::Http {
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

    /// The source addresses of `--bind` (none: the kernel picks).
    pub fn sources(&self) -> &[Ipv4Addr] {
        self.workload.bind.as_ref().map_or(&[], |b| &b.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    #[command(no_binary_name = true)]
    struct Line {
        #[command(flatten)]
        args: LoadArgs,
    }

    fn parse(args: &[String]) -> LoadArgs {
        Line::try_parse_from(args)
            .unwrap_or_else(|e| panic!("{args:?}: {e}"))
            .args
    }

    #[test]
    fn an_empty_command_line_and_an_empty_experiment_mean_the_same_workload() {
        let clap = parse(&["http://127.0.0.1:1/".to_string()]).workload;
        let serde: Workload = toml::from_str("").unwrap();
        assert_eq!(clap, serde);
        assert_eq!(clap, Workload::default());
    }

    #[test]
    fn argv_made_from_a_workload_reads_back_as_the_same_workload() {
        let toml = r#"
            duration = "1.5s"
            warmup = "250ms"
            think = "3us"
            pipeline = 4
            timeout = "2s"
            connect_rate = 1500.5
            connect_first = true
            bind = "127.0.0.2-127.0.0.4,127.0.0.9"
            size = 64
            method = "put"
            body = "-starts with a dash"
            header = ["Accept: */*", "X-A: b"]
            insecure = true
            tls_resume = true
            requests_per_conn = 7
            keys = 5000
            key_dist = "zipf:0.99"
            ratio = "1:4"
            value_size = "mix(90%:64,10%:4096)"
            prefill = true
            no_verify = true
        "#;
        let w: Workload = toml::from_str(toml).unwrap();
        let args = LoadArgs::new(Target::parse("http://127.0.0.1:1/").unwrap(), 3, w.clone());
        let back = parse(&args.to_args());
        assert_eq!(back.workload, w);
        assert_eq!(back.connections, 3);
        let w: Workload = toml::from_str(
            "requests = 9\nrate = -3.0\nbody_size = \"64KiB\"\nchunked = true\nclose = true\ncacert = \"/x.pem\"",
        )
        .unwrap();
        assert_eq!(w.body_size, Some(65536));
        let args = LoadArgs::new(Target::parse("http://127.0.0.1:1/").unwrap(), 1, w.clone());
        assert_eq!(parse(&args.to_args()).workload, w);
    }

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
            let e = LoadArgs::new(target(), 1, w).resolve().unwrap_err();
            assert_eq!(e.key(), Some(key), "{toml}: {e}");
        }
    }
}
