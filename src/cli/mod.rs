//! Command-line definitions (clap) and their dispatch; `main.rs` only calls [`main`].
//!
//! The flags (`args`), the dispatch (`dispatch`), each command's runner (`bench`, `load_run`,
//! `docs`, `models`), and how the program ends (`exit`).

mod args;
mod bench;
mod dispatch;
mod docs;
mod exit;
mod limits;
mod load_run;
mod models;

pub use args::{BenchArgs, Cli, Command, LoadCommand, ServeCommand};
pub use dispatch::main;
pub use exit::{exit_code, Exit, Failure};
