//! A whole `muxlab load` command line. The [`Workload`] (its own file) is what a scenario may
//! set too; [`LoadArgs`] adds what only a command line says (the target, the connection count,
//! where the client runs, its share of a split run). [`LoadArgs::resolve`] (in `resolve`)
//! checks them and makes the [`Spec`](super::Spec) a run uses; [`LoadArgs::to_args`] writes
//! them back as argv, the one place argv is made (shard processes, hosts, bench's load child).

use std::net::Ipv4Addr;

use super::{Shard, Target, Workload};
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
    /// Internal: once connected, say so (a `connected` line on stdout) and start the warm-up
    /// when a line comes on stdin (or stdin closes): the parent starts its parts' windows
    /// together once every part has connected.
    #[arg(long, hide = true)]
    pub start_gate: bool,
    /// Start at this wall-clock instant, in milliseconds since the Unix epoch (e.g.
    /// $(date -d '+20 sec' +%s%3N)), so that pieces started apart (--shard by a scheduler)
    /// measure the same window; --hosts sets it itself.
    #[arg(long, value_name = "UNIX_MS")]
    pub start_at: Option<u64>,
    /// The time series' interval (`--timeseries`) [default: 1s]: a run's pieces (`--shard`,
    /// `--hosts`) keep their series in it, for the merge.
    #[arg(long, value_parser = crate::units::parse_duration)]
    pub interval: Option<std::time::Duration>,
    /// Serve the client's view live at http://ADDR/metrics (Prometheus text, or OpenMetrics
    /// where the scraper asks): requests completed and sent in the window, errors by class,
    /// connections open, the offered rate, and the duration histogram
    /// (http_client_request_duration_seconds; muxlab_client_request_duration_seconds for echo,
    /// packet, resp and memcache), from each request's intended send time (labelled
    /// schedule="open": coordinated-omission corrected). A run split over processes
    /// serves them merged. E.g. 127.0.0.1:9465.
    #[arg(long, value_name = "ADDR")]
    pub metrics: Option<std::net::SocketAddr>,
    /// With --metrics: after the run, wait until a scrape has read the final figures, at most
    /// this long [default: 5s].
    #[arg(long, value_parser = crate::units::parse_duration, value_name = "DURATION")]
    pub metrics_linger: Option<std::time::Duration>,
    /// Internal: print the live figures as `metrics` lines on stdout (a part of a split run,
    /// for its parent's --metrics).
    #[arg(long, hide = true)]
    pub metrics_lines: bool,
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
            start_gate: false,
            start_at: None,
            interval: None,
            metrics: None,
            metrics_linger: None,
            metrics_lines: false,
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
        if self.start_gate {
            a.push("--start-gate".into());
        }
        if let Some(at) = self.start_at {
            a.push(format!("--start-at={at}"));
        }
        if let Some(d) = self.interval {
            a.push(format!("--interval={}", crate::units::exact_duration(d)));
        }
        if let Some(m) = self.metrics {
            a.push(format!("--metrics={m}"));
        }
        if let Some(d) = self.metrics_linger {
            a.push(format!("--metrics-linger={}", crate::units::exact_duration(d)));
        }
        if self.metrics_lines {
            a.push("--metrics-lines".into());
        }
        a.extend(self.workload.to_args());
        a
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
}
