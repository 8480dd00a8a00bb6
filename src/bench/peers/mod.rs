//! The peers bench launches: production servers beside the models. A peer's entry read and its
//! product started (`start`), on a free port where Debian installs it (`launch`): nginx
//! (`nginx`), redis-server and memcached (`stores`), Go's and Node's servers from `products/`
//! (`runtimes`).

mod launch;
pub mod nginx;
pub mod runtimes;
mod start;
mod stores;

pub(in crate::bench) use start::{products, start};
