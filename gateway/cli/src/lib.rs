//! The `hookgate` command line over the `hookgate-server` library, its
//! subcommands grouped by who uses them:
//! - [`client`]: tenants' and operators' calls to a running gateway's API;
//! - [`ops`]: tools that need no gateway (admin, plugin-check, plugin new, policy,
//!   transform try);
//! - [`lab`]: a gateway put to work for demos, drills, chaos and benchmarks.

pub mod client;
pub mod lab;
pub mod ops;

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
        command: ops::admin::AdminCommand,
    },
    /// Bring a PostgreSQL database's schema up to this build's, without serving.
    Migrate(ops::migrate::MigrateArgs),
    /// Retry policies: simulate a policy against an outage.
    Policy {
        #[command(subcommand)]
        command: ops::policy::PolicyCommand,
    },
    /// A webhook receiver for fault drills: weighted statuses, latency, hangs,
    /// resets, refusals, signature checks.
    #[command(name = "chaos-receiver")]
    Chaos(lab::chaos::ChaosArgs),
    /// See hookgate at work in one terminal: a gateway, a flaky receiver, a burst of
    /// events, retries in waves, everything delivered.
    Demo(lab::demo::DemoArgs),
    /// Benchmarks: throughput, latency and footprint against same-run references.
    Bench {
        #[command(subcommand)]
        command: lab::bench::BenchCommand,
    },
    /// Payload transforms: run one on an event and see the request it would
    /// send (no gateway needed).
    Transform {
        #[command(subcommand)]
        command: ops::transform_try::TransformCommand,
    },
    /// Run a plugin through upload checks 1-9 locally and report its fuel and
    /// memory against the gateway's limits; with --event, then run a transform
    /// on that event (no gateway needed).
    #[command(name = "plugin-check")]
    PluginCheck(ops::plugin_check::PluginCheckArgs),
    /// Drills that show the promises hold under stress: crash (nothing is lost
    /// to SIGKILLs under ingest), cluster (nor to killed nodes), herd (a
    /// recovering receiver is not flooded), fault (every fault ends right),
    /// fairness (a backlog stalls no other endpoint), tenants (a hostile tenant
    /// stalls no other tenant), disk-full (a full disk is reported, storms no
    /// receiver and is recovered from without a restart).
    Drill {
        #[command(subcommand)]
        command: lab::drill::DrillCommand,
    },
    /// Print the API's OpenAPI 3.1 document (what a gateway serves at
    /// /v1/openapi.json) without running one.
    Openapi {
        /// The Svix-compatible face's document instead (served at
        /// /api/v1/openapi.json).
        #[arg(long)]
        svix: bool,
    },
    #[command(flatten)]
    Client(client::ClientCommand),
}
