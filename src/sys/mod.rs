//! `sys`: thin safe wrappers over the system calls the models are about.
//!
//! Every `unsafe` block of the crate lives in this layer, each with a `// SAFETY:` line.
//! Each wrapper counts itself in a per-thread syscall counter ([`take_syscalls`]), so the
//! server can report "syscalls issued by the model" without the models counting by hand.

pub mod affinity;
pub mod alloc;
pub(crate) mod cgroup;
pub mod classes;
pub mod clock;
pub mod cpuidle;
pub(crate) mod epoll;
pub(crate) mod error;
pub(crate) mod eventfd;
pub mod fd;
pub(crate) mod green;
pub mod host;
pub mod machine;
pub mod mem;
pub mod netns;
pub(crate) mod poll;
pub mod process;
pub mod procfs;
pub mod raised;
pub mod rlimit;
pub(crate) mod select;
pub mod settings;
pub(crate) mod shm;
pub mod signal;
pub mod socket;
pub(crate) mod stack;
pub mod sysctl;
pub(crate) mod uring;

mod call;
#[cfg(test)]
mod cpu_time_tests;
#[cfg(test)]
mod peer_gone_tests;
#[cfg(test)]
mod uring_tests;

use call::{count, cvt, cvt_size, map_anonymous, socket_io};
pub use call::{forbid_socket_io, take_syscalls};
