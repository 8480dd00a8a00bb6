//! What a verdict is worked out against besides the cells ([`Context`]): the unit costs of a
//! syscall and a context switch, and the server's CPUs.

use crate::bench::record::costs::UnitCosts;
use crate::bench::record::Environment;

/// What a verdict is worked out against besides the cells: what a syscall and a context
/// switch cost on the server's CPU, and how many CPUs the server had (`None`: not recorded).
#[derive(Debug, Clone, Copy)]
pub struct Context {
    pub costs: UnitCosts,
    pub server_cpus: Option<usize>,
    /// The CPUs of the targets serving on several threads, where they had others.
    pub threaded_cpus: Option<usize>,
}

impl Context {
    /// The documented unit costs, the server's CPUs not known.
    pub const DOCUMENTED: Context = Context {
        costs: UnitCosts::DOCUMENTED,
        server_cpus: None,
        threaded_cpus: None,
    };

    /// What a run's environment says: the unit costs it measured and the server's CPUs.
    pub fn of(env: &Environment) -> Context {
        Context {
            costs: env.unit_costs(),
            server_cpus: env.server_cpu_count(),
            threaded_cpus: env.threaded_cpu_count(),
        }
    }
}
