//! `hookgate admin`: operator tasks on a stopped gateway's data dir.

use std::path::PathBuf;

use clap::Subcommand;
use hookgate_server::RunError;
use hookgate_server::config::StoreConfig;

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
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        match command {
            AdminCommand::ResetToken { data_dir } => {
                let config = StoreConfig {
                    data_dir,
                    cache_capacity: 8 << 20,
                    min_free_disk: 0,
                    ..StoreConfig::default()
                };
                let store = hookgate_server::open_store(&config).await?;
                let reset = hookgate_server::reset_admin_token(&store).await;
                store.close().await;
                reset?;
            }
        }
        Ok(())
    })
}
