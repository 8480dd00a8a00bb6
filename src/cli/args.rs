//! The command line as clap reads it: [`Cli`], its [`Command`]s and their flags.

use clap::{Parser, Subcommand};

use crate::load::LoadArgs;
use crate::models;
use crate::server::ServeArgs;

#[derive(Parser, Debug)]
#[command(
    name = "muxlab",
    version = crate::origin::VERSION,
    about = "A laboratory for TCP server concurrency models",
    long_about = "\
muxlab implements every classic TCP server architecture over the same protocol code, a load \
generator that measures them honestly, and a bench harness that compares them.\n\n\
  muxlab models                                         list the server models\n\
  muxlab serve --model epoll --proto http --port 8080   run one model\n\
  muxlab bench                                          run the default comparison",
    after_help = super::exit::EXIT_CODES
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// What a scenario needs of this machine, run nothing: each kernel setting it needs (and
    /// whether it falls short now: bench raises those as root for the run and puts them back),
    /// and each model's ceiling of connections against the counts it is asked to hold.
    #[command(after_help = super::exit::EXIT_CODES)]
    Limits {
        /// Scenario name (see `bench --list`) or a TOML file.
        scenario: String,
    },
    /// List every server model: name, family, mechanism, product, seed.
    #[command(after_help = super::exit::EXIT_CODES)]
    Models {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Run one server model until SIGTERM / SIGINT.
    ///
    /// Prints {"event":"listening",...} on stdout once it accepts, and {"event":"stats",...}
    /// with every counter when it stops.
    #[command(after_help = super::exit::EXIT_CODES)]
    Serve(Box<ServeCommand>),
    /// Drive load at a server and measure it (HTTP like ab / wrk, echo, packet).
    ///
    /// Examples:
    ///   muxlab load http://127.0.0.1:8080/ -c 100 -d 10s            keep-alive, like wrk
    ///   muxlab load http://127.0.0.1:8080/ --close -c 10 -n 100000  one request per connection, like ab
    ///   muxlab load http://127.0.0.1:8080/ -c 50 --rate 20000       open loop, corrected latency
    ///   muxlab load echo://127.0.0.1:9000 --size 128 -c 150 -d 10s  echo, every byte verified
    ///   muxlab load https://example.test/ -c 20 -d 10s --cacert ca.pem  HTTPS (rustls); -k for any certificate
    ///   muxlab load http://10.0.0.1:8080/ -c 400 -d 30s --hosts a,b    from other hosts over ssh, merged
    ///
    /// Exit code: 0 when no error occurred, 1 when any request failed (without --fail-if, whose
    /// gates alone then judge the requests; refused, timeout, reset, bad response, TLS,
    /// unanswered by --timeout after the window; a 4xx or 5xx is counted by status class and
    /// warned about, like wrk), when a host of --hosts failed, or when the run was interrupted
    /// before it was done; 2 for bad flags, 3 for a failed --fail-if gate.
    #[command(verbatim_doc_comment)]
    #[command(after_help = super::exit::EXIT_CODES)]
    Load(Box<LoadCommand>),
    /// Run a benchmark scenario: start servers pinned to one CPU, drive load from another,
    /// print a table as cells finish, write results/<scenario>-<time>/ (JSON, CSV, HTML report).
    #[command(after_help = super::exit::EXIT_CODES)]
    Bench(BenchArgs),
    /// Add up `muxlab load --json` documents (shares of one run, or separate runs) into one,
    /// losslessly: counts and histograms add, per-second series align by wall-clock second.
    ///
    /// Example, a run split in four anywhere (other hosts, a Kubernetes Indexed Job):
    ///   for i in 0 1 2 3; do muxlab load http://10.0.0.1:8080/ -c 400 -n 1000000 --shard $i/4 --json > part$i.json & done; wait
    ///   muxlab merge part*.json > run.json
    #[command(verbatim_doc_comment)]
    #[command(after_help = super::exit::EXIT_CODES)]
    Merge {
        /// Documents written by muxlab load --json (or by merge).
        #[arg(required = true)]
        files: Vec<std::path::PathBuf>,
        /// Print the summary a person reads instead of the JSON document.
        #[arg(long)]
        human: bool,
        /// Write the merged time series (of pieces run with --interval or --timeseries) to
        /// FILE as NDJSON, a line per interval.
        #[arg(long, value_name = "FILE")]
        timeseries: Option<std::path::PathBuf>,
    },
    /// Internal (used over ssh): run a command, stop it when this program's stdin closes or
    /// stays silent too long (the controlling muxlab writes a heartbeat), then remove --remove.
    #[command(hide = true)]
    Guard(crate::remote::guard::GuardArgs),
    /// Internal (used over ssh by bench): answer questions about this host and a process tree,
    /// one line per question read from stdin ("machine", "tree PID", "all PID", "leftovers PID").
    #[command(hide = true)]
    Sample,
    /// Predict what a design's queueing alone implies for a workload, without a server: latency
    /// from the intended send time and capacity, from a seeded simulation of its queues (and the
    /// M/M/k closed form where the case is one).
    ///
    /// Examples:
    ///   muxlab predict --model queue-pool --workers 4 --work 'sleep:exp(1ms)' --rate 2800 --arrivals poisson
    ///   muxlab predict --model dispatch --workers 4 --work 'sleep:exp(1ms)' --rate 2800 -c 500
    ///   muxlab predict --model reactor --work 'cpu:exp(50us)' -c 100        closed loop over 100 connections
    #[command(verbatim_doc_comment)]
    #[command(after_help = super::exit::EXIT_CODES)]
    Predict(crate::queueing::command::PredictArgs),
    /// Which design should my server use? Give the work a request does and the latency target;
    /// advise runs every design against them (a capacity search each, within --time) and answers:
    /// which meet the target, their capacity and what their queueing predicts, the runner-up and
    /// why, what the answer depends on, and where the full results are.
    ///
    /// Examples:
    ///   muxlab advise --work 'sleep:exp(1ms)' --slo 'p99<=10ms' -c 500 --rate 2800
    ///   muxlab advise --work 'cpu:exp(100us)' --slo 'p99<=5ms' --models reactor,thread,queue-pool --time 2m
    ///   muxlab advise --work 'cpu:hist:measured.hgrm' --print-scenario > mine.toml
    #[command(verbatim_doc_comment)]
    #[command(after_help = super::exit::EXIT_CODES)]
    Advise(crate::advise::AdviseArgs),
    /// Where each cell's time went: what bound it (client, server-cpu, server-kernel,
    /// server-waiting, interference, offered or unclear, with the figures that decided it) and
    /// its mean latency in named parts per request (the work's CPU and waiting, the design's
    /// own CPU, run-queue wait, waiting inside the server, outside it, and what is left),
    /// beside its prediction. Worked out from DIR/results.json alone.
    ///
    /// Examples:
    ///   muxlab explain results/head-of-line-20261125-224319
    ///   muxlab explain results/quick-20261125-120000 --json
    #[command(verbatim_doc_comment)]
    #[command(after_help = super::exit::EXIT_CODES)]
    Explain {
        /// A directory written by muxlab bench (holding results.json), or a results file
        /// (a kept one: docs/results/NAME.json).
        dir: std::path::PathBuf,
        /// Print the cards as JSON (one array).
        #[arg(long)]
        json: bool,
    },
    /// Render every table and measured figure of README.md and docs/*.md from the committed
    /// results (docs/results/*), between marked lines, the verdicts by this binary's judge.
    ///
    /// A block is `<!-- muxlab KIND` (a TOML spec: which result, which rows, which figures)
    /// `-->`, its rendered text, then `<!-- /muxlab -->`. Kinds: run, cells, verdict, glance,
    /// screen (from a kept bench run), peers, advise, h2cost, h2client (from a script's file).
    /// Outside blocks, code and paragraphs marked `<!-- cited -->`, a number with a unit (µs,
    /// ms, s, KiB, MiB, GB, req/s, %, ×) is listed as unmarked, unless its paragraph's
    /// `<!-- analytic: ... -->` mark names it (a setting or a derivation, not a measurement).
    ///
    /// Examples:
    ///   muxlab docs            rewrites the blocks that changed
    ///   muxlab docs --check    changes nothing; exits 1 naming each block that differs
    #[command(verbatim_doc_comment)]
    #[command(after_help = super::exit::EXIT_CODES)]
    Docs {
        /// Change nothing: name each block whose text differs from what the results render,
        /// and exit 1 if any does (or a number stands unmarked).
        #[arg(long)]
        check: bool,
        /// The repository's root (holding README.md, docs/ and docs/results/).
        #[arg(long, default_value = ".")]
        root: std::path::PathBuf,
        /// Only these files (relative to the root); default README.md and docs/*.md.
        files: Vec<std::path::PathBuf>,
    },
    /// Rebuild report.html from a results directory or file; with two, compare them.
    ///
    /// muxlab report DIR       rebuilds DIR/report.html (and, for a run with --baseline, compare.html)
    /// muxlab report FILE      a results file (docs/results/NAME.json): NAME.report.html beside it
    /// muxlab report A B       B against A: a terminal table and B/compare.html with the ratios
    ///                         of throughput, p99 and CPU per request per cell, their spreads,
    ///                         and the changes that go beyond the noise
    #[command(verbatim_doc_comment)]
    #[command(after_help = super::exit::EXIT_CODES)]
    Report {
        /// Directories written by muxlab bench (holding results.json), or results files: one,
        /// or A and B. Or one load document (load --json) with a time series: it is drawn.
        #[arg(required = true, num_args = 1..=2)]
        dirs: Vec<std::path::PathBuf>,
    },
}

#[derive(clap::Args, Debug)]
pub struct LoadCommand {
    #[command(flatten)]
    pub args: LoadArgs,
    /// Print the JSON document instead of the summary.
    #[arg(long)]
    pub json: bool,
    /// Write the HDR latency distribution (corrected, in ms) to this file.
    #[arg(long)]
    pub hgrm: Option<std::path::PathBuf>,
    /// Internal: progress as JSON lines on stdout (what --hosts reads from each host).
    #[arg(long, hide = true)]
    pub progress_json: bool,
    /// Write the run's time series to FILE as NDJSON, a line per --interval (1s by default):
    /// sent and completed rates, latency quantiles of that interval's own histogram, errors by
    /// class, open connections and streams; the pieces of a run (--shard, --hosts) merged.
    #[arg(long, value_name = "FILE")]
    pub timeseries: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub remote: crate::remote::RemoteArgs,
}

#[derive(clap::Args, Debug)]
pub struct ServeCommand {
    /// Server model (see `muxlab models`).
    #[arg(long, short = 'm', value_parser = model_names())]
    pub model: String,
    #[command(flatten)]
    pub args: ServeArgs,
}

#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// Scenario name (see --list) or a TOML file [default: quick].
    pub scenario: Option<String>,
    /// List the built-in scenarios.
    #[arg(long)]
    pub list: bool,
    /// Benchmark this external server (HOST:PORT) with the scenario's workloads instead of its models.
    #[arg(long)]
    pub target: Option<String>,
    /// Where results directories are written.
    #[arg(long, default_value = "results")]
    pub out: std::path::PathBuf,
    /// Runs of every cell (overrides the scenario's repeats).
    #[arg(long)]
    pub repeats: Option<usize>,
    /// ssh configuration for the scenario's server_host and client_hosts (passed as -F FILE).
    #[arg(long, value_name = "FILE")]
    pub ssh_config: Option<std::path::PathBuf>,
    /// Copy this muxlab binary to the scenario's hosts for the run (removed after).
    #[arg(long)]
    pub push: bool,
    /// The muxlab binary on the scenario's hosts (without --push).
    #[arg(long, value_name = "PATH", default_value = "muxlab")]
    pub remote_bin: String,
    /// Before/after in one sitting: every model cell also runs served by this other muxlab
    /// binary (`MODEL @baseline`, right after this one's), and the run ends with a table of
    /// this binary against it (also in compare.html).
    #[arg(long, value_name = "MUXLAB")]
    pub baseline: Option<std::path::PathBuf>,
    /// Steer loopback's receive processing to the client's CPUs for the run (RPS on lo; root,
    /// machine-wide, restored at the end), so the server pays for its own side only, as behind
    /// a NIC: on loopback a send otherwise also runs the peer's receive path. Costs an IPI per
    /// packet, so compare ratios. Same as the scenario's `steer_rx = true`.
    #[arg(long)]
    pub steer_rx: bool,
    /// Let idle CPUs halt as usual. By default bench holds /dev/cpu_dma_latency at 0 for the
    /// run (root, where the CPUs have a polling idle state; as cyclictest does), so an idle CPU
    /// polls: waking it (every loopback response wakes the client) then costs the server no
    /// exit to the hypervisor, which on a VM is over 10 µs per wake-up.
    #[arg(long)]
    pub deep_idle: bool,
    /// Run a scenario estimated to take over 24 hours (its cells × (duration + warm-up +
    /// set-up)); without it such a run is refused before anything starts, the estimate said.
    #[arg(long)]
    pub yes_long: bool,
}

/// The registered names, plus the old names of [`models::ALIASES`] (accepted, not listed).
fn model_names() -> clap::builder::PossibleValuesParser {
    let old = models::ALIASES
        .iter()
        .map(|(old, _)| clap::builder::PossibleValue::new(old).hide(true));
    clap::builder::PossibleValuesParser::new(
        models::ALL
            .iter()
            .map(|m| clap::builder::PossibleValue::new(m.name))
            .chain(old),
    )
}
