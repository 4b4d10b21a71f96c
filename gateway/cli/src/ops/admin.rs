//! `hookgate admin`: operator tasks on a stopped gateway's data dir, or on the
//! database the gateways share.

use std::path::PathBuf;

use clap::Subcommand;
use hookgate_server::RunError;
use hookgate_server::{StoreBackend, StoreConfig};

/// Operator tasks.
#[derive(Subcommand)]
pub enum AdminCommand {
    /// Replace the admin token; the new one is printed once. On PostgreSQL
    /// (`--store-url`), restart every gateway afterwards: each reads the token
    /// at start.
    ResetToken {
        #[arg(long, default_value = "./hookgate-data")]
        data_dir: PathBuf,
        /// The PostgreSQL database the gateways share, instead of a data dir.
        #[arg(long, env = "HOOKGATE_STORE__URL", hide_env_values = true)]
        store_url: Option<String>,
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
            AdminCommand::ResetToken {
                data_dir,
                store_url,
            } => {
                let backend = match store_url {
                    Some(_) => StoreBackend::Postgres,
                    None => StoreBackend::Sled,
                };
                let config = StoreConfig {
                    backend,
                    data_dir,
                    cache_capacity: 8 << 20,
                    min_free_disk: 0,
                    url: store_url,
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
