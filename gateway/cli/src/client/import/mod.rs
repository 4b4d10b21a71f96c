//! `hookgate import ...`: moving a platform onto hookgate from another webhook
//! service, through the gateway's API v1 with the admin token. One source so
//! far: Svix ([`svix`]).

pub mod svix;

use clap::Subcommand;

use super::Connection;

/// Import subcommands.
#[derive(Subcommand, Debug)]
pub enum ImportCommand {
    /// Import Svix's event types, applications (as tenants) and endpoints
    /// (with their secrets and headers), from a Svix server's API or an
    /// environment export. Idempotent: a second run changes nothing.
    #[command(after_help = svix::EXIT_CODES)]
    Svix(svix::SvixArgs),
}

/// Runs an import subcommand; returns the process exit code.
pub(super) fn run(conn: Connection, command: ImportCommand) -> i32 {
    match command {
        ImportCommand::Svix(args) => svix::run(conn, args),
    }
}
