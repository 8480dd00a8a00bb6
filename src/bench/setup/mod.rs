//! Where a run runs and what it holds: the placement of the server and the client
//! (`placement`), the other hosts over ssh and the sampling of the server's tree there or here
//! (`hosts`), loopback steered (`steer`), idle CPUs polling and the machine as the results
//! record it (`hold`), and the unit costs of a syscall and a switch measured on the server's
//! CPU (`unit_costs`), and the kernel settings a run needs, raised for it and put back
//! (`settings`), and the run's Prometheus (`prometheus`).

mod hold;
mod hosts;
mod placement;
pub mod prometheus;
pub mod settings;
pub mod steer;
mod unit_costs;

pub(in crate::bench) use hold::{environment, hold};
pub use hosts::{Hosts, Sampler};
pub use placement::{default_server_cpus, default_split, Placement};
pub(in crate::bench) use placement::{placement, placement_text};
pub use prometheus::Watch;
