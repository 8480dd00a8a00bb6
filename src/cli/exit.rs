//! How the program ends: a [`Failure`] with its code, and the exit code of any error `main`
//! returned.

use crate::load;
use crate::server;
use crate::units::BadValue;

/// An outcome that ends the program with `code` (1: the run found errors, 130: interrupted).
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct Failure {
    pub code: i32,
    pub message: String,
}

/// The exit code for an error `main` returned: 2 for what the user typed, the code a
/// [`Failure`] carries, 1 for everything else.
pub fn exit_code(e: &anyhow::Error) -> i32 {
    if let Some(f) = e.downcast_ref::<Failure>() {
        f.code
    } else if e.downcast_ref::<BadValue>().is_some()
        || e.downcast_ref::<server::Error>().is_some_and(server::Error::is_usage)
        || e.downcast_ref::<load::Error>().is_some_and(load::Error::is_usage)
        || e.downcast_ref::<crate::bench::Error>()
            .is_some_and(crate::bench::Error::is_usage)
    {
        2
    } else {
        1
    }
}
