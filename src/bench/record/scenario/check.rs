//! Reading a scenario: TOML into [`Scenario`], then every value checked before anything runs,
//! by the scenario's own rules and by the command line's (a model entry through `muxlab
//! serve`'s flags and checks, a workload through `muxlab load`'s). An error is one line naming
//! the file, the line and the field. Loading one by name or path (`load`).

use std::path::Path;

use serde::Deserialize;

use super::entry::{BadEntry, EntryFault};
use super::error::{ScenarioError, ScenarioFault as F};
use super::experiment::{model_name, Experiment, Protocol};
use super::file::{Scenario, BUILTIN};
use super::origin::{line_in, Origin};
use crate::load::Workload;

/// `muxlab serve`'s flags, as the command line reads them.
#[derive(clap::Parser)]
#[command(no_binary_name = true)]
struct ServeLine {
    #[arg(long)]
    model: String,
    #[command(flatten)]
    config: crate::server::ServeArgs,
}

/// Checks a model entry with `muxlab serve`'s own rules: the flags it gives must be ones the
/// model honours, with values serve accepts (`"poll --trigger edge"` is refused here, before
/// any cell runs, as `muxlab serve --model poll --trigger edge` is).
fn check_model_entry(entry: &str, x: &Experiment, addr: &str) -> Result<(), BadEntry> {
    let (model, args) = serve_line(entry, x, addr, "0")?;
    let idle = args.idle_timeout;
    let refused = |e| BadEntry {
        entry: entry.to_string(),
        fault: EntryFault::Refused(e),
    };
    let cfg = args.validate(model.name, model.workers, model.flags).map_err(refused)?;
    crate::server::check_group(model, &cfg).map_err(refused)?;
    if x.load.active.is_some() && !idle.is_zero() && idle < x.hold() {
        return Err(BadEntry {
            entry: entry.to_string(),
            fault: EntryFault::IdleUnderHold { idle, hold: x.hold() },
        });
    }
    Ok(())
}

/// The model a model entry serves and its `muxlab serve` flags, as the command line reads them
/// (not yet checked against the model).
pub(in crate::bench) fn serve_line(
    entry: &str,
    x: &Experiment,
    addr: &str,
    cpus: &str,
) -> Result<(&'static crate::server::Model, crate::server::ServeArgs), BadEntry> {
    let args = x.serve_args(entry, addr, cpus)?;
    let bad = |fault| BadEntry {
        entry: entry.to_string(),
        fault,
    };
    let line = <ServeLine as clap::Parser>::try_parse_from(&args[1..]).map_err(|e| bad(EntryFault::Flags(e)))?;
    let model = crate::models::find(&line.model).ok_or_else(|| {
        bad(EntryFault::UnknownModel {
            model: line.model.clone(),
        })
    })?;
    Ok((model, line.config))
}

/// Checks an experiment's workload with `muxlab load`'s own rules, at every connection count;
/// the error names the key it is about.
fn check_workload(x: &Experiment, addr: std::net::IpAddr) -> Result<(), crate::load::Error> {
    for &conns in &x.connections {
        crate::load::resolve(x.load_args(std::net::SocketAddr::new(addr, 1), conns))?;
    }
    Ok(())
}

/// The first workload key of an experiment table whose value the workload cannot read: the
/// key and what is wrong with it (serde's errors inside a flattened table do not say where).
fn bad_workload_value(table: &toml::Table) -> Option<(String, toml::de::Error)> {
    let keys = Workload::keys();
    table
        .iter()
        .filter(|(k, _)| keys.contains(&k.as_str()) || k.as_str() == "headers")
        .find_map(|(k, v)| {
            let mut one = toml::Table::new();
            one.insert(k.clone(), v.clone());
            Workload::deserialize(one).err().map(|e| (k.clone(), e))
        })
}

/// Whether a host name could be read as an option by ssh.
fn bad_host(h: &str) -> bool {
    h.is_empty() || h.starts_with('-') || h.chars().any(|c| c.is_whitespace() || c.is_control())
}

/// Parses and checks a scenario; errors name `origin`, the line and the field.
pub fn parse(text: &str, origin: &str) -> Result<Scenario, ScenarioError> {
    let o = Origin { name: origin, text };
    let mut raw: toml::Table = toml::from_str(text).map_err(|e| o.toml(e))?;
    let axis = super::axes::expand(&mut raw).map_err(|(name, e)| {
        let l = line_in(text, &format!("name = \"{name}\""), e.key);
        o.line(l, e.key, Some(&name), F::Axis(e))
    })?;
    // A workload value that does not read is named by its key before the whole file is read
    // (inside an experiment's table serde cannot say which key it was).
    let tables = raw.get("experiment").and_then(|v| v.as_array()).into_iter().flatten();
    for t in tables.filter_map(|t| t.as_table()) {
        if let Some((key, e)) = bad_workload_value(t) {
            let name = t.get("name").and_then(|n| n.as_str()).unwrap_or("");
            let l = line_in(text, &format!("name = \"{name}\""), &key);
            return Err(o.line(l, &key, Some(name), F::Value(e)));
        }
    }
    let mut s: Scenario = match axis {
        // The file as written (serde's errors then point into it).
        false => toml::from_str(text).map_err(|e| o.toml(e))?,
        true => toml::Value::Table(raw).try_into().map_err(|e| o.toml(e))?,
    };
    check_scenario(&s, &o)?;
    let mut notes = Vec::new();
    for i in 0..s.experiments.len() {
        let x = &mut s.experiments[i];
        if std::mem::take(&mut x.tls) {
            // The old key: what it meant is `proto = "https"` now.
            if x.proto != Protocol::Http {
                return Err(o.key(x, "tls", F::TlsNotHttp));
            }
            notes.push(format!(
                "{origin}: experiment '{}': tls = true is read as proto = \"https\" (write that instead)",
                x.name
            ));
            x.proto = Protocol::Https;
        }
        if x.proto.is_http() && x.load.size != Workload::default().size {
            // Read and ignored before the workload was load's own flags; load refuses it.
            notes.push(format!(
                "{origin}: experiment '{}': size applies to echo and packet; ignored for {} (drop it)",
                x.name, x.proto
            ));
            x.load.size = Workload::default().size;
        }
        check_experiment(&s.experiments[i], &s, &o)?;
    }
    s.notes = notes;
    Ok(s)
}

/// Checks a scenario a program made (not read from a file) by the rules a file's is read by;
/// errors name `origin` and the field.
pub fn check(s: Scenario, origin: &str) -> Result<Scenario, ScenarioError> {
    let o = Origin { name: origin, text: "" };
    check_scenario(&s, &o)?;
    for x in &s.experiments {
        check_experiment(x, &s, &o)?;
    }
    Ok(s)
}

/// The scenario's own keys: addresses, hosts, repeats, CPUs.
fn check_scenario(s: &Scenario, o: &Origin) -> Result<(), ScenarioError> {
    if s.experiments.is_empty() {
        return Err(o.whole(F::NoExperiments));
    }
    for (i, x) in s.experiments.iter().enumerate() {
        if s.experiments[..i].iter().any(|e| e.name == x.name) {
            return Err(o.key(x, "name", F::SameName { name: x.name.clone() }));
        }
    }
    if let Some(a) = &s.server_addr {
        a.parse::<std::net::IpAddr>().map_err(|source| {
            o.at(
                a,
                "server_addr",
                None,
                F::NotAnIp {
                    given: a.clone(),
                    source,
                },
            )
        })?;
    }
    if !s.client_hosts.is_empty() && s.server_host.is_none() && s.server_addr.is_none() {
        return Err(o.at("client_hosts", "client_hosts", None, F::NoServerForClients));
    }
    if s.repeats == 0 {
        return Err(o.at("repeats", "repeats", None, F::ZeroRepeats));
    }
    let hosts = s.server_host.iter().map(|h| ("server_host", h));
    for (field, h) in hosts.chain(s.client_hosts.iter().map(|h| ("client_hosts", h))) {
        if bad_host(h) {
            return Err(o.at(&format!("\"{h}\""), field, None, F::NotAHost { given: h.clone() }));
        }
    }
    if s.prometheus && (s.server_host.is_some() || !s.client_hosts.is_empty()) {
        return Err(o.at("prometheus", "prometheus", None, F::PrometheusWithHosts));
    }
    if s.steer_rx {
        s.steerable()
            .map_err(|why| o.at("steer_rx", "steer_rx", None, F::Steer(why)))?;
    }
    for cpus in [&s.server_cpus, &s.client_cpus].into_iter().flatten() {
        crate::units::parse_cpus(cpus).map_err(|e| o.at(cpus, "server_cpus / client_cpus", None, F::Cpus(e)))?;
    }
    if let Some(cpus) = s.threaded_cpus.as_deref().filter(|c| *c != "all") {
        crate::units::parse_cpus(cpus).map_err(|e| o.at(cpus, "threaded_cpus", None, F::ThreadedCpus(e)))?;
    }
    Ok(())
}

/// One experiment: its keys, its targets by serve's rules, its workload by load's.
fn check_experiment(x: &Experiment, s: &Scenario, o: &Origin) -> Result<(), ScenarioError> {
    if let Some(key) = x.unknown.keys().next() {
        return Err(o.key(x, key, F::UnknownKey { key: key.clone() }));
    }
    if x.models.is_empty() && x.peers.is_empty() {
        return Err(o.key(x, "models", F::NoTargets));
    }
    check_targets(x, o)?;
    if x.repeats == Some(0) {
        return Err(o.key(x, "repeats", F::ZeroRepeats));
    }
    if x.connections.is_empty() || x.connections.contains(&0) {
        return Err(o.key(x, "connections", F::NoConnections));
    }
    if x.load.duration.is_none() && x.load.requests.is_none() && x.load.slo.is_none() {
        return Err(o.key(x, "duration", F::NoEnd));
    }
    if let Some(w) = &x.work {
        w.parse::<crate::server::Work>()
            .map_err(|e| o.at(&format!("\"{w}\""), "work", None, F::Work(e)))?;
    }
    super::expect::check_keys(x).map_err(|e| o.key(x, "expect", F::Expect(e)))?;
    for w in &x.choose_by {
        if super::expect::Measure::of(w).is_none() {
            return Err(o.key(x, "choose_by", F::NotAMetric { given: w.clone() }));
        }
    }
    check_queries(x).map_err(|e| o.key(x, "mix", e))?;
    if x.rotate_sources && x.load.bind.is_some() {
        return Err(o.key(x, "rotate_sources", F::RotateWithBind));
    }
    // The model entries and the workload, by serve's and load's own rules: what the command
    // line would refuse is refused here, before anything runs.
    let addr = s.server_addr.as_deref().unwrap_or("127.0.0.1");
    for m in &x.models {
        check_model_entry(m, x, addr).map_err(|e| o.at(&format!("\"{m}\""), "models", Some(&x.name), F::Entry(e)))?;
    }
    let ip = addr.parse().unwrap_or(std::net::Ipv4Addr::LOCALHOST.into());
    check_workload(x, ip).map_err(|e| o.key(x, e.key().unwrap_or("experiment"), F::Load(e)))?;
    check_sources(x, s, o)?;
    if x.paired && x.load.slo.is_some() {
        return Err(o.key(x, "slo", F::PairedSlo));
    }
    if x.paired && s.server_host.is_some() {
        return Err(o.key(x, "paired", F::PairedRemote));
    }
    Ok(())
}

/// What an experiment takes from an earlier one: its rate (`rate_of`) and its calibration
/// (`calibrate_by`), each from an experiment before it that can give it.
fn check_sources(x: &Experiment, s: &Scenario, o: &Origin) -> Result<(), ScenarioError> {
    if x.load.fail_if.is_some() && x.load.slo.is_some() {
        return Err(o.key(x, "fail_if", F::FailIfSlo));
    }
    if let Some(g) = &x.load.fail_if {
        let names: Vec<&str> = x.load.mix.iter().map(|m| m.name.as_str()).collect();
        // A mix file's classes are read when the load runs: its gates are checked then.
        if x.load.mix_file.is_none() {
            g.check_classes(&names).map_err(|e| o.key(x, "fail_if", F::Gate(e)))?;
        }
    }
    let before: Vec<&Experiment> = s.experiments.iter().take_while(|e| e.name != x.name).collect();
    if x.rate_of.is_some() && x.busy_of.is_some() {
        return Err(o.key(x, "busy_of", F::TwoRates));
    }
    let blocks = x
        .work
        .as_deref()
        .and_then(|w| w.parse::<crate::server::Work>().ok())
        .is_some_and(|w| w.mean() > w.cpu_mean());
    if x.busy_of.is_some() && blocks {
        return Err(o.key(x, "busy_of", F::BusyOfCalls));
    }
    for (key, given) in [("rate_of", &x.rate_of), ("busy_of", &x.busy_of)] {
        let Some(r) = given else { continue };
        let (_, of) = super::experiment::rate_of(r).map_err(|e| o.key(x, key, F::RateOf(e)))?;
        let Some(source) = before.iter().find(|e| e.name == of) else {
            return Err(o.key(x, key, F::NotBefore { name: of.to_string() }));
        };
        if x.load.rate.is_some() || x.load.slo.is_some() {
            return Err(o.key(x, key, F::RateGiven));
        }
        if let Some(n) = x.connections.iter().find(|n| !source.connections.contains(n)) {
            return Err(o.key(
                x,
                key,
                F::NoCellsAt {
                    of: of.to_string(),
                    conns: *n,
                },
            ));
        }
    }
    if let Some(by) = &x.calibrate_by {
        let Some(source) = before.iter().find(|e| e.name == *by) else {
            return Err(o.key(x, "calibrate_by", F::NotBefore { name: by.clone() }));
        };
        if source.models != x.models || source.proto != x.proto {
            return Err(o.key(x, "calibrate_by", F::NotSameServers { by: by.clone() }));
        }
    }
    Ok(())
}

/// The names of an experiment's models, peers and reference.
fn check_targets(x: &Experiment, o: &Origin) -> Result<(), ScenarioError> {
    for m in &x.models {
        let name = model_name(m);
        if crate::models::find(name).is_none() {
            let unknown = F::UnknownModel { name: name.to_string() };
            return Err(o.at(&format!("\"{m}\""), "models", None, unknown));
        }
    }
    for p in &x.peers {
        let at = format!("\"{p}\"");
        let peer = super::peer::Peer::parse(p).map_err(|e| o.at(&at, "peers", None, F::Peer(e)))?;
        if !peer.speaks(x.proto) {
            let speaks = F::Speaks { peer, proto: x.proto };
            return Err(o.at(&at, "peers", Some(&x.name), speaks));
        }
        if peer.does_work() {
            peer.serves_work(x, p)
                .map_err(|e| o.at(&at, "peers", Some(&x.name), F::PeerWork(e)))?;
        }
    }
    if let Some(r) = &x.reference {
        if !x.models.contains(r) && !x.peers.contains(r) {
            let not = F::NotATarget { given: r.clone() };
            return Err(o.at(&format!("\"{r}\""), "reference", Some(&x.name), not));
        }
    }
    Ok(())
}

/// Checks the queries of `x`'s request classes as its models will read them: a class whose
/// work the server would refuse (400) is an error when the scenario is read, not a class of
/// refusals measured as if served.
fn check_queries(x: &Experiment) -> Result<(), F> {
    if !x.work_from_request {
        return Ok(());
    }
    let max = x.max_work();
    x.load.mix.iter().try_for_each(|m| {
        crate::server::query_work(&m.path, max)
            .map(drop)
            .map_err(|source| F::Query {
                class: m.name.clone(),
                source,
            })
    })
}

/// Loads a built-in scenario by name, or a TOML file by path.
pub fn load(name_or_path: &str) -> Result<Scenario, ScenarioError> {
    if let Some((_, text)) = BUILTIN.iter().find(|(n, _)| *n == name_or_path) {
        return parse(text, &format!("built-in scenario '{name_or_path}'"));
    }
    let path = Path::new(name_or_path);
    if path.extension().is_some_and(|e| e == "toml") || path.exists() {
        let text = std::fs::read_to_string(path).map_err(|source| ScenarioError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        return parse(&text, &path.display().to_string());
    }
    Err(ScenarioError::NotFound {
        given: name_or_path.to_string(),
        builtin: BUILTIN,
    })
}

/// An HTTP experiment `e` of 1 s over `models` (TOML list items) at `connections`, with `keys`
/// (TOML lines) added, read as a scenario file is: what the unit tests build theirs from.
#[cfg(test)]
pub(crate) fn experiment_of(models: &str, connections: &str, keys: &str) -> Result<Experiment, ScenarioError> {
    let text = format!(
        "name = \"s\"\ndescription = \"d\"\n[[experiment]]\nname = \"e\"\nproto = \"http\"\n\
         models = [{models}]\nconnections = [{connections}]\nduration = \"1s\"\n{keys}"
    );
    parse(&text, "test").map(|mut s| s.experiments.remove(0))
}

/// An experiment over reactor, thread and dispatch with a short and a long class and these
/// `expect` entries (TOML list items), as the tests of expectations build theirs.
#[cfg(test)]
pub(crate) fn experiment_expecting(expect: &str) -> Result<Experiment, ScenarioError> {
    experiment_of(
        "\"reactor\", \"thread\", \"dispatch --workers 2\"",
        "10",
        &format!(
            "mix = [\"short=99:/?cpu=20us\", \"long=1:/?cpu=5ms\"]\nwork_from_request = true\nexpect = [{expect}]\n"
        ),
    )
}
