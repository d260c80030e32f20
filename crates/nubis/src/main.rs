//! `nubis`: one binary that serves the cloud API (`nubis serve`) and gives operators direct access
//! to the same database (`nubis admin ...`).

mod admin;
mod admin_billing;
mod cli;
mod config;
mod controls;
mod dataplane;
mod dataplane_role;
mod logging;
mod refusal;
mod serve;

use clap::Parser;

/// mimalloc: per-thread free lists instead of glibc's arena locks, which the API's and the data
/// plane's many short-lived allocations contend on (see docs/performance.md).
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A refusal or a failure is printed as lines of text on stderr (its causes after colons), never as
/// a debug structure, and the exit status is 1.
fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> anyhow::Result<()> {
    let cli = cli::Cli::parse();
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    match cli.command {
        cli::Command::Serve(args) => runtime.block_on(serve::run(args)),
        cli::Command::Admin(args) => runtime.block_on(admin::run(args)),
    }
}
