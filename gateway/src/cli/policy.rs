//! `hookgate policy ...`: the herd simulator.

use clap::Subcommand;

/// Policy subcommands.
#[derive(Subcommand)]
pub enum PolicyCommand {}

/// Runs a policy subcommand; returns the process exit code.
pub fn run(command: PolicyCommand) -> i32 {
    match command {}
}
