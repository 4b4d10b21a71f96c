//! The command line: `serve`, operator tasks, the policy simulator, and the API client.

pub mod client;
pub mod policy;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

/// hookgate: a webhook delivery gateway in one binary.
#[derive(Parser)]
#[command(name = "hookgate", version, about, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// Every subcommand.
#[derive(Subcommand)]
pub enum Command {
    /// Run the gateway.
    Serve {
        /// TOML config file (defaults < file < HOOKGATE_* environment).
        #[arg(long)]
        config: Option<PathBuf>,
    },
    /// Operator tasks on a stopped gateway's data dir.
    Admin {
        #[command(subcommand)]
        command: AdminCommand,
    },
    /// Retry policies: simulate a policy against an outage.
    Policy {
        #[command(subcommand)]
        command: policy::PolicyCommand,
    },
    #[command(flatten)]
    Client(client::ClientCommand),
}

/// Operator tasks.
#[derive(Subcommand)]
pub enum AdminCommand {
    /// Replace the admin token; the new one is printed once.
    ResetToken {
        #[arg(long, default_value = "./hookgate-data")]
        data_dir: PathBuf,
    },
}
