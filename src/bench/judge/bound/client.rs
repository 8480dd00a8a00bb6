//! Whether the client set the pace of a cell ([`client_limit`]): the one definition
//! (`load::limit`) read from the cell's figures.

use crate::bench::record::Cell;

/// Whether the client set the pace of `c` (the one definition: `load::limit`): its CPUs were
/// busy, or, in a closed loop without think time, its own turnaround took at least half of
/// each request's cycle (Little's law; not for event streams, whose time is the server's
/// schedule).
pub fn client_limit(c: &Cell) -> Option<crate::load::limit::ClientLimit> {
    use crate::load::limit::ClientLimit;
    let f = &c.figures;
    if f.client_bound {
        return Some(ClientLimit::Busy(f.client_cpu_util));
    }
    let w = f.why.as_ref()?;
    if !w.closed_no_think || f.streams.is_some() {
        return None;
    }
    ClientLimit::turnaround(w.connections, f.throughput_rps, w.latency_mean_us?)
}
