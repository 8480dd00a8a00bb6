use clap::Parser;

/// Small over-aligned blocks (tokio's tasks and registrations) from size classes, the rest
/// from the system's allocator: see `sys::classes`.
#[global_allocator]
static ALLOCATOR: muxlab::sys::classes::Classes = muxlab::sys::classes::Classes;

fn main() {
    muxlab::sys::classes::Classes::prepare();
    quiet_on_a_closed_stdout();
    let cli = muxlab::cli::Cli::parse();
    if let Err(e) = muxlab::cli::main(cli) {
        eprintln!("muxlab: {e}");
        std::process::exit(muxlab::cli::exit_code(&e));
    }
}

/// A reader that stopped reading (`muxlab load … --json | head -c 100`) is not a crash: SIGPIPE
/// is ignored (the sockets want EPIPE), so printing to a closed pipe panics; that panic says
/// nothing and unwinds as any other (what the run started is stopped on the way out).
fn quiet_on_a_closed_stdout() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let msg = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("");
        if !(msg.starts_with("failed printing to stdout") && msg.contains("Broken pipe")) {
            default(info);
        }
    }));
}
