//! `hookgate drill crash|cluster|herd|fault|fairness|tenants|disk-full`: the drills that
//! show, under stress, that the product keeps its promises.
//!
//! - [`crash`]: under continuous ingest against a flaky receiver the gateway is
//!   SIGKILLed at random moments and restarted; once the receiver heals, every
//!   acknowledged event has been delivered at least once. Duplicates are counted.
//! - [`cluster`]: three gateways share one PostgreSQL database; a random one is
//!   SIGKILLed while it holds leases and restarted, again and again; nothing
//!   acknowledged is lost, every node's API agrees, and what the killed node had
//!   claimed is attempted again once its lease expires.
//! - [`herd`]: many deliveries fail together against a receiver that recovers after a
//!   set time; the receiver never sees more than `max_in_flight` requests at once nor
//!   more than `rate_limit_per_s` in any second, and everything is delivered.
//! - [`fault`]: a receiver that answers every kind of fault (5xx, 429 with
//!   `Retry-After`, hangs past the timeout, resets, slow and oversized bodies,
//!   permanent 4xx) per a plan carried in each event; every event ends delivered or,
//!   for a permanent answer, dead with the right reason, and the gateway's RSS stays
//!   within a bound.
//! - [`fairness`]: one endpoint's backlog beside trickling endpoints, on one node
//!   and then on several sharing PostgreSQL: every trickle event arrives, and each
//!   node does an even share of the attempts.
//! - [`disk_full`]: the disk under a gateway on sled fills up (a small tmpfs,
//!   the low-disk guard off) and is freed again: ingest refuses and `/healthz`
//!   says so while it is full, the receiver sees no storm, the same process
//!   recovers by itself, and every acknowledged event is delivered.
//! - [`tenants`]: a hostile tenant whose slow receivers hold every request and
//!   whose backlog wants more places than a node has, beside a victim tenant's
//!   trickle, on one node (sled) and on several (PostgreSQL): every victim event
//!   arrives, and none waits for a hostile request to finish.
//!
//! Each drill runs the real `hookgate serve` as a child process (the current
//! executable here, `CARGO_BIN_EXE_hookgate` in the test suite, which runs the short
//! forms), on a scratch data dir (the crash drill optionally, and the cluster drill
//! always, on a scratch PostgreSQL database, see [`crash_store`]), with its own
//! receiver on loopback. Every loop is bounded in count and in time, and the drills
//! check correctness, never speed.

mod broker_receiver;
pub mod cluster;
pub mod crash;
pub mod crash_store;
pub mod disk_full;
mod disk_full_disk;
mod disk_full_load;
mod disk_full_report;
mod disk_full_watch;
pub mod fairness;
mod fairness_report;
pub mod fault;
pub mod herd;
mod herd_report;
pub mod tenants;
mod tenants_report;
mod tenants_run;

mod api;
mod cluster_kill;
mod cluster_node;
mod cluster_report;
mod crash_pg;
mod crash_report;
mod ingest_load;
mod nodes;
mod receiver;
mod settle;
mod tally;

pub use receiver::PerSecond;

use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Subcommand;

use crate::lab::child_gateway::{GatewaySpec, SpawnError};

/// The drills.
#[derive(Subcommand, Debug)]
pub enum DrillCommand {
    /// SIGKILL the gateway at random moments under continuous ingest and restart it;
    /// nothing acknowledged may be lost.
    Crash(crash::CrashArgs),
    /// Three gateways on one PostgreSQL database; SIGKILL a random one while it
    /// holds leases and restart it: nothing acknowledged may be lost, and its
    /// claimed work must come back.
    Cluster(cluster::ClusterArgs),
    /// Deliveries fail together, then the receiver recovers: the in-flight cap and
    /// the rate limit must hold, and everything must be delivered.
    Herd(herd::HerdArgs),
    /// Every fault a receiver can produce: each event must end delivered or dead with
    /// the right reason, and the gateway's memory must stay bounded.
    Fault(fault::FaultArgs),
    /// One endpoint's backlog beside trickling endpoints, on one node then on
    /// several (PostgreSQL): the trickle's lateness, and each node's share.
    Fairness(fairness::FairnessArgs),
    /// A hostile tenant's held backlog beside a victim tenant's trickle, on one
    /// node then on several (PostgreSQL): the victim's lateness alone and
    /// beside it, which must stay below half the hold.
    Tenants(tenants::TenantsArgs),
    /// The disk under a gateway on sled fills up (a tmpfs the drill mounts, as
    /// root) and is freed: ingest and /healthz must refuse while it is full,
    /// the receiver must see no storm, and the same process must recover by
    /// itself and deliver everything it acknowledged.
    DiskFull(disk_full::DiskFullArgs),
}

/// Exit code: the drill ran and every check held.
pub const EXIT_PASSED: i32 = 0;
/// Exit code: the drill ran and a check failed.
pub const EXIT_VIOLATED: i32 = 1;
/// Exit code: the drill could not run (the gateway did not start, an API call failed).
pub const EXIT_ERROR: i32 = 2;

/// Why a drill could not run (as opposed to a check that failed, which is a
/// violation in the drill's report).
#[derive(Debug, thiserror::Error)]
pub enum DrillError {
    /// A socket, a file or the runtime failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The gateway did not start, or stopped.
    #[error("the gateway: {0}")]
    Gateway(String),
    /// An API call failed or answered something unexpected.
    #[error("API call {0}")]
    Api(String),
    /// The PostgreSQL server: no scratch database, or its restart failed.
    #[error("{0}")]
    Database(String),
    /// The drill's own set-up: the disk-full drill's tmpfs could not be mounted
    /// (not root), filled or freed.
    #[error("{0}")]
    Setup(String),
}

impl From<SpawnError> for DrillError {
    fn from(e: SpawnError) -> Self {
        Self::Gateway(e.0)
    }
}

/// The gateway under drill: its breaker stays out of the way (the drills are about
/// retries and caps, and an open breaker would only make them slower), its grace is
/// short, and it logs only what matters (one line per attempt would be noise).
fn drill_gateway(bin: PathBuf, data_dir: PathBuf) -> GatewaySpec {
    let mut spec = GatewaySpec::new(bin, data_dir);
    spec.set("HOOKGATE_BREAKER__FAILURE_THRESHOLD", "1000000")
        .set("HOOKGATE_SHUTDOWN_GRACE_MS", "2s")
        .set(
            "HOOKGATE_LOG",
            "warn,hookgate=info,hookgate_server::delivery=warn",
        );
    spec
}

/// A finished drill: what it found, and whether every check held.
pub trait DrillReport: std::fmt::Display {
    /// The checks that failed, one line each; empty when the drill passed.
    fn violations(&self) -> &[String];
}

/// A drill subcommand's options: what it says it will do, and the run.
pub trait DrillArgs {
    type Report: DrillReport;
    /// One line on what is about to happen.
    fn describe(&self) -> String;
    /// Runs the drill against the `gateway` executable.
    fn run(&self, gateway: PathBuf) -> impl Future<Output = Result<Self::Report, DrillError>>;
}

/// The options the drills that inject faults share, flattened into each
/// subcommand's (the fairness drill, which injects none, has only `--settle`).
#[derive(clap::Args, Debug, Clone)]
pub struct DrillOptions {
    /// How long to wait, once the fault ends, for every delivery.
    #[arg(long, default_value = "5m", value_parser = humantime::parse_duration)]
    pub settle: Duration,
    /// Seed of the drill's random choices (kill moments, the receiver's faults)
    /// [default: from the clock].
    #[arg(long)]
    pub seed: Option<u64>,
    /// Keep the data dir here instead of a scratch dir that is removed afterwards.
    #[arg(long)]
    pub work_dir: Option<PathBuf>,
}

impl DrillOptions {
    /// The seed given, or a fresh one.
    fn seed(&self) -> u64 {
        self.seed.unwrap_or_else(fresh_seed)
    }
}

/// Runs a drill subcommand with this executable as the gateway; prints the summary
/// and returns the exit code ([`EXIT_PASSED`], [`EXIT_VIOLATED`] or [`EXIT_ERROR`]).
pub fn run(command: DrillCommand) -> i32 {
    let gateway = match std::env::current_exe() {
        Ok(path) => path,
        Err(e) => {
            eprintln!("error: cannot find the hookgate executable: {e}");
            return EXIT_ERROR;
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            return EXIT_ERROR;
        }
    };
    let outcome = runtime.block_on(async {
        match command {
            DrillCommand::Crash(args) => drill(&args, gateway).await,
            DrillCommand::Cluster(args) => drill(&args, gateway).await,
            DrillCommand::Herd(args) => drill(&args, gateway).await,
            DrillCommand::Fault(args) => drill(&args, gateway).await,
            DrillCommand::Fairness(args) => drill(&args, gateway).await,
            DrillCommand::Tenants(args) => drill(&args, gateway).await,
            DrillCommand::DiskFull(args) => drill(&args, gateway).await,
        }
    });
    runtime.shutdown_timeout(Duration::from_secs(5));
    outcome
}

/// Says what is about to happen, runs the drill and reports it.
async fn drill(args: &impl DrillArgs, gateway: PathBuf) -> i32 {
    println!("{}", args.describe());
    report(args.run(gateway).await)
}

fn report<R: DrillReport>(result: Result<R, DrillError>) -> i32 {
    match result {
        Ok(r) => {
            print!("{r}");
            if r.violations().is_empty() {
                println!("PASSED");
                EXIT_PASSED
            } else {
                println!("FAILED");
                for v in r.violations() {
                    println!("  - {v}");
                }
                EXIT_VIOLATED
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            EXIT_ERROR
        }
    }
}

/// A scratch directory for one drill, removed when dropped (unless it was given).
struct WorkDir {
    path: PathBuf,
    remove: bool,
}

impl WorkDir {
    fn new(given: Option<&Path>, drill: &str) -> Result<Self, DrillError> {
        let (path, remove) = match given {
            Some(p) => (p.to_path_buf(), false),
            None => {
                let nanos = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.subsec_nanos());
                let name = format!("hookgate-drill-{drill}-{}-{nanos}", std::process::id());
                (std::env::temp_dir().join(name), true)
            }
        };
        std::fs::create_dir_all(&path)?;
        Ok(Self { path, remove })
    }

    fn data_dir(&self) -> PathBuf {
        self.path.join("data")
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        if self.remove {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

/// A seed from the clock, for runs that did not name one.
fn fresh_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64)
}

/// `d` as seconds with one decimal.
fn secs(d: Duration) -> String {
    format!("{:.1} s", d.as_secs_f64())
}
