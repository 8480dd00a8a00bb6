use clap::Parser;

fn main() {
    let cli = muxlab::cli::Cli::parse();
    if let Err(e) = muxlab::cli::main(cli) {
        eprintln!("muxlab: {e}");
        std::process::exit(muxlab::cli::exit_code(&e));
    }
}
