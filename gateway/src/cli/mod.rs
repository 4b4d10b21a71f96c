//! The command line: `serve`, operator tasks, the policy simulator, and the API client.

pub mod bench;
pub mod chaos;
pub mod client;
pub mod demo;
pub mod drill;
mod gateway_api;
pub mod plugin_check;
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
    /// A webhook receiver for fault drills: weighted statuses, latency, hangs,
    /// resets, refusals, signature checks.
    #[command(name = "chaos-receiver")]
    Chaos(chaos::ChaosArgs),
    /// See hookgate at work in one terminal: a gateway, a flaky receiver, a burst of
    /// events, retries in waves, everything delivered.
    Demo(demo::DemoArgs),
    /// Benchmarks: throughput, latency and footprint against same-run references.
    Bench {
        #[command(subcommand)]
        command: bench::BenchCommand,
    },
    /// Run a plugin through upload checks 1-9 locally and report its fuel and
    /// memory against the gateway's limits (no gateway needed).
    #[command(name = "plugin-check")]
    PluginCheck(plugin_check::PluginCheckArgs),
    /// Drills that prove nothing is lost: crash (SIGKILLs under ingest), herd (a
    /// recovering receiver is not flooded), fault (every fault ends right).
    Drill {
        #[command(subcommand)]
        command: drill::DrillCommand,
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
