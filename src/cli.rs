//! Command-line definitions (clap) and their dispatch; `main.rs` only calls [`main`].

use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use clap::{Parser, Subcommand};

use crate::models;
use crate::proto::Proto;
use crate::server::{self, AcceptGuard, Config, Trigger, Work};
use crate::units;

#[derive(Parser, Debug)]
#[command(
    name = "muxlab",
    version,
    about = "A laboratory for TCP server concurrency models",
    long_about = "\
muxlab implements every classic TCP server architecture over the same protocol code, a load \
generator that measures them honestly, and a bench harness that compares them.\n\n\
  muxlab models                                         list the server models\n\
  muxlab serve --model epoll --proto http --port 8080   run one model\n\
  muxlab bench                                          run the default comparison"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// List every server model: name, family, mechanism, product, seed.
    Models {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Run one server model until SIGTERM / SIGINT.
    ///
    /// Prints {"event":"listening",...} on stdout once it accepts, and {"event":"stats",...}
    /// with every counter when it stops.
    Serve(ServeArgs),
    /// Run a benchmark scenario (starts servers, drives load, prints a comparison).
    Bench(BenchArgs),
}

#[derive(clap::Args, Debug)]
pub struct ServeArgs {
    /// Server model (see `muxlab models`).
    #[arg(long, short = 'm', value_parser = model_names())]
    pub model: String,
    /// Protocol: http, echo or packet.
    #[arg(long, short = 'P', default_value = "http", value_parser = ["http", "echo", "packet"])]
    pub proto: String,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    pub addr: IpAddr,
    /// Port to listen on; 0 picks any free port (the listening line says which).
    #[arg(long, short = 'p', default_value_t = 8080)]
    pub port: u16,
    /// Worker threads or processes, for models that have workers [default: CPUs available].
    #[arg(long, short = 'w')]
    pub workers: Option<usize>,
    /// listen() backlog.
    #[arg(long, default_value_t = 1024)]
    pub backlog: i32,
    /// Most connections open at once; more are accepted and closed at once (counted as
    /// rejected) [default: 90 % of the descriptor limit; 1,000 for fork].
    #[arg(long)]
    pub max_conns: Option<usize>,
    /// Close connections silent for this long; 0 disables.
    #[arg(long, default_value = "60s", value_parser = units::parse_duration)]
    pub idle_timeout: Duration,
    /// Frame size of the packet protocol, in bytes.
    #[arg(long, default_value_t = 100)]
    pub packet_size: usize,
    /// Work per request: cpu:<dur> spins, sleep:<dur> blocks the handling thread.
    #[arg(long, default_value = "none")]
    pub work: Work,
    /// epoll trigger mode (model epoll).
    #[arg(long, value_enum, default_value = "level")]
    pub trigger: Trigger,
    /// Accept guard (model procs-accept).
    #[arg(long, value_enum, default_value = "exclusive")]
    pub accept: AcceptGuard,
    /// Lower the open-file limit to this many descriptors (to reproduce EMFILE).
    #[arg(long)]
    pub nofile: Option<u64>,
    /// Pin the server to these CPUs, e.g. 0 or 0,2-3.
    #[arg(long)]
    pub cpus: Option<units::CpuList>,
}

#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// Scenario name or TOML file [default: quick].
    pub scenario: Option<String>,
}

fn model_names() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(models::ALL.iter().map(|m| m.name))
}

impl ServeArgs {
    /// The server configuration these flags describe.
    pub fn config(&self) -> Result<Config, String> {
        let proto = Proto::parse(&self.proto, self.packet_size)?;
        let mut cfg = Config::new(proto, SocketAddr::new(self.addr, self.port));
        cfg.backlog = self.backlog;
        cfg.max_conns = self.max_conns;
        cfg.idle_timeout = (!self.idle_timeout.is_zero()).then_some(self.idle_timeout);
        cfg.work = self.work;
        cfg.trigger = self.trigger;
        cfg.accept = self.accept;
        cfg.nofile = self.nofile;
        cfg.cpus = self.cpus.as_ref().map(|c| c.0.clone());
        Ok(cfg)
    }
}

/// An error with the exit code it should produce (2: the user's input, 1: the system).
pub struct Failure {
    pub code: i32,
    pub message: String,
}

fn usage(message: impl Into<String>) -> Failure {
    Failure {
        code: 2,
        message: message.into(),
    }
}

/// Runs the command line; returns the failure to report, if any.
pub fn main(cli: Cli) -> Result<(), Failure> {
    match cli.command {
        Command::Models { json } => {
            print_models(json);
            Ok(())
        }
        Command::Serve(args) => {
            let model = models::find(&args.model)
                .ok_or_else(|| usage(format!("unknown model '{}'", args.model)))?;
            let cfg = args.config().map_err(usage)?;
            let mut out = std::io::stdout();
            server::serve(model, cfg, args.workers, &mut out).map_err(|e| Failure {
                code: if e.is_usage() { 2 } else { 1 },
                message: e.to_string(),
            })
        }
        Command::Bench(args) => bench_placeholder(args),
    }
}

fn print_models(json: bool) {
    let mut out = std::io::stdout().lock();
    if json {
        let list: Vec<_> = models::ALL
            .iter()
            .map(|m| {
                serde_json::json!({"name": m.name, "family": m.family.name(), "mechanism": m.mechanism,
                    "product": m.product, "seed": m.seed})
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
        let _ = writeln!(
            out,
            "{:<15} {:<19} {:<40} {:<12} {}",
            m.name,
            m.family.name(),
            m.product,
            m.seed,
            m.mechanism
        );
    }
}

fn bench_placeholder(args: BenchArgs) -> Result<(), Failure> {
    let _ = args;
    Err(usage("bench is not built yet"))
}
