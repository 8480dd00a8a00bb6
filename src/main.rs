use clap::Parser;

fn main() {
    let cli = muxlab::cli::Cli::parse();
    if let Err(f) = muxlab::cli::main(cli) {
        eprintln!("muxlab: {}", f.message);
        std::process::exit(f.code);
    }
}
