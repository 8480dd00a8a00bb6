//! The run's environment, a row per entry; a run across hosts gets a line per host.

use crate::bench::record::Environment;
use crate::report::esc;

/// The run's environment, a row per entry; a run across hosts gets a line per host.
pub(super) fn environment(env: &Environment) -> String {
    let mut h = String::from("<table><tr><th class=\"l\" colspan=\"2\">Environment</th></tr>\n");
    let mut row = |k: &str, v: String| {
        h.push_str(&format!(
            "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td></tr>\n",
            esc(k),
            esc(&v)
        ));
    };
    row("kernel", env.kernel.clone());
    row("cpu_model", env.cpu_model.clone());
    row("cores", env.cores.to_string());
    row("server_cpus", env.server_cpus.clone());
    row("client_cpus", env.client_cpus.clone());
    row("client_threads", env.client_threads.to_string());
    row("server_addr", env.server_addr.clone());
    if let Some(u) = &env.unit_costs {
        row(
            "unit_costs",
            format!(
                "a syscall {:.2} µs, a context switch {:.2} µs{}",
                u.syscall_us,
                u.context_switch_us,
                if u.measured { "" } else { " (documented, not measured)" }
            ),
        );
    }
    if let Some(hosts) = &env.hosts {
        let lines: Vec<String> = hosts
            .machines
            .iter()
            .map(|m| {
                let role = if hosts.server.as_deref() == Some(m.host.as_str()) {
                    "server"
                } else {
                    "client"
                };
                format!(
                    "{} ({role}, {}): kernel {}, {}, {} cores",
                    m.host,
                    m.address.as_deref().unwrap_or("?"),
                    m.kernel,
                    m.cpu_model,
                    m.cores.map_or("?".to_string(), |c| c.to_string())
                )
            })
            .collect();
        row("hosts", lines.join("; "));
    }
    for (k, v) in [("steer_rx", &env.steer_rx), ("cpu_idle", &env.cpu_idle)] {
        if let Some(v) = v {
            row(k, v.clone());
        }
    }
    if let (Some(us), Some(from)) = (env.sched_slice_us, &env.sched_slice_from) {
        row(
            "sched_slice",
            format!(
                "{} ({from}): predictions share the CPUs in it",
                crate::units::fmt_us(us)
            ),
        );
    }
    row("muxlab_version", env.muxlab_version.clone());
    row("git_revision", env.git_revision.clone());
    h.push_str("</table>\n");
    h
}
