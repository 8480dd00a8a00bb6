//! The processes bench starts and owns: a model's server started, waited for and stopped, here
//! or on the server's host, and ended when dropped (`server`); any process tree it started
//! ended whole, never a reused pid (`own`).

mod own;
mod server;

pub(in crate::bench) use own::Owned;
pub(in crate::bench) use server::{exe, line_reader, start_model, stop, Server};
