//! The API client subcommands (`hookgate tenants ...`, `endpoints ...`, `verify`).

use clap::Subcommand;

/// Client subcommands.
#[derive(Subcommand)]
pub enum ClientCommand {}

/// Runs a client subcommand; returns the process exit code.
pub fn run(command: ClientCommand) -> i32 {
    match command {}
}
