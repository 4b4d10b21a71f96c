//! `hookgate admin`: operator tasks on a stopped gateway's data dir.

use std::path::PathBuf;

use clap::Subcommand;
use hookgate_server::RunError;

/// Operator tasks.
#[derive(Subcommand)]
pub enum AdminCommand {
    /// Replace the admin token; the new one is printed once.
    ResetToken {
        #[arg(long, default_value = "./hookgate-data")]
        data_dir: PathBuf,
    },
}

/// Runs one admin task.
///
/// # Errors
/// The data dir cannot be opened (missing, busy, newer schema) or written.
pub fn run(command: AdminCommand) -> Result<(), RunError> {
    match command {
        AdminCommand::ResetToken { data_dir } => {
            let store = hookgate_server::open_store(&data_dir, 8 << 20)?;
            hookgate_server::reset_admin_token(&store)?;
        }
    }
    Ok(())
}
