//! `hookgate bench <scenario>`: measured throughput, latency and footprint, each
//! against a same-run reference where one exists. Every scenario runs in this
//! process on loopback, prints one table row per run and a median row.

mod cluster;
mod cluster_measure;
mod compare;
mod decision;
mod destination;
mod e2e;
mod e2e_host;
mod e2e_load;
mod harness;
mod ingest;
mod on_postgres;
mod plugin;
mod schedule;
mod traced;
mod transform;

use clap::{Args, Subcommand};
pub use cluster::ClusterOptions;
pub use compare::CompareOptions;
pub use decision::DecisionPath;
pub use destination::BenchDestination;
pub use e2e::E2eOptions;

/// Options every scenario takes.
#[derive(Args, Debug, Clone)]
pub struct Common {
    /// Runs to take the median of.
    #[arg(long, default_value_t = 3)]
    pub runs: usize,
    /// A tiny run that only shows the scenario works (for CI smoke tests).
    #[arg(long)]
    pub smoke: bool,
    /// Run on PostgreSQL: each run gets a scratch database on this server (and
    /// the reference one of its own). `ingest` and `deliver`; `cluster` needs it.
    #[arg(long)]
    pub store_url: Option<String>,
    /// `ingest` and `deliver`: each run twice, with OpenTelemetry traces exported
    /// to a local sink and without, alternately: the ratio traced ÷ untraced.
    #[arg(long)]
    pub traced: bool,
    /// `ingest`: each run twice, with the event's type validated against a
    /// JSON Schema from the catalog and without: the ratio validated ÷ not.
    #[arg(long, conflicts_with = "traced")]
    pub validated: bool,
    /// `deliver`: publish into the local broker of this kind instead of
    /// posting to a receiver. Reference: the bare client publishing the same
    /// messages with the same confirmation.
    #[arg(long, value_enum, conflicts_with_all = ["traced", "store_url"])]
    pub destination: Option<BenchDestination>,
    /// `deliver`: each run twice, with this transform (a `.wasm`) bound to the
    /// endpoint and without, alternately: the ratio with ÷ without.
    #[arg(long, conflicts_with_all = ["traced", "store_url", "destination"])]
    pub transform: Option<std::path::PathBuf>,
}

/// The scenarios.
#[derive(Subcommand, Debug)]
pub enum BenchCommand {
    /// Concurrent clients post 1 KiB events; every ack is durable. Reference: raw
    /// sled, or with --store-url the backend's statements through tokio-postgres.
    Ingest(Common),
    /// A backlog goes to a local receiver at max_in_flight 64. Reference: a bare
    /// hyper client, or with --store-url the backend's claim and outcome
    /// statements through tokio-postgres; with --destination, into a local
    /// broker against its bare client.
    Deliver(Common),
    /// Deliveries pending far in the future, plus a stream due now: lateness p50/p99.
    Schedule {
        #[command(flatten)]
        common: Common,
        /// Deliveries pending far in the future.
        #[arg(long, default_value_t = 100_000)]
        pending: usize,
    },
    /// Delivery with a plugin bound against the same run without it (503, then 200).
    Plugin {
        #[command(flatten)]
        common: Common,
        /// The plugin to bind: a `.wasm` core module or component.
        #[arg(long)]
        plugin: std::path::PathBuf,
    },
    /// One retry decision with a plugin, through the whole chain, against the built-in alone.
    Decision {
        #[command(flatten)]
        common: Common,
        /// The plugin: a `.wasm` core module or component.
        #[arg(long)]
        plugin: std::path::PathBuf,
        /// Which way to run the plugin: as the gateway does (inline first), straight
        /// on the decision pool, or both, one after the other in each run. One way
        /// alone lets `strace` or `perf stat` count what that way costs.
        #[arg(long, value_enum, default_value = "both")]
        path: DecisionPath,
    },
    /// One transform run of a 1 KiB JSON event through the host, against one
    /// decision of a policy plugin in the same host and run.
    Transform {
        #[command(flatten)]
        common: Common,
        /// The transform: a `.wasm` core module or component.
        #[arg(long)]
        plugin: std::path::PathBuf,
        /// The retry-policy plugin whose decision is the reference.
        #[arg(long)]
        policy: std::path::PathBuf,
    },
    /// Deliveries/s with 1, 2 and 3 gateways on one PostgreSQL database (needs
    /// --store-url): latency-bound by each node's in-flight cap, then CPU-bound.
    Cluster {
        #[command(flatten)]
        common: Common,
        #[command(flatten)]
        options: ClusterOptions,
    },
    /// The whole path under sustained load: closed-loop clients at each concurrency
    /// for a fixed time, then kept up, seconds until all delivered, CPU per message,
    /// PostgreSQL's dead tuples and create→receipt p50/p99 at a fixed rate;
    /// `--rounds` repeats it on the same gateway and database.
    E2e(E2eOptions),
    /// Two builds (`--old-bin`, `--new-bin`), each served as a child, alternately
    /// under the same ingest, deliver and e2e loads: the median ratio new ÷ old
    /// per load, on sled and, with --store-url, PostgreSQL.
    Compare(CompareOptions),
    /// RSS and data-dir size with many deliveries pending, and restart to first delivery.
    Footprint {
        #[command(flatten)]
        common: Common,
        /// Deliveries pending far in the future.
        #[arg(long, default_value_t = 100_000)]
        pending: usize,
    },
}

/// Runs a scenario; returns the exit code.
pub fn run(command: BenchCommand) -> i32 {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("hookgate bench: cannot start a runtime: {e}");
            return 1;
        }
    };
    let result = runtime.block_on(async move {
        match command {
            BenchCommand::Ingest(c) if c.traced => {
                traced::ingest(&c, traced::Feature::Tracing).await
            }
            BenchCommand::Ingest(c) if c.validated => {
                traced::ingest(&c, traced::Feature::Validation).await
            }
            BenchCommand::Deliver(c) if c.traced => traced::deliver(&c).await,
            BenchCommand::Ingest(c) => ingest::ingest(&c).await,
            BenchCommand::Deliver(c) => match (c.destination, &c.transform) {
                (Some(kind), _) => destination::deliver(&c, kind).await,
                (None, Some(file)) => transform::deliver(&c, file).await,
                (None, None) => ingest::deliver(&c).await,
            },
            BenchCommand::Schedule { common, pending } => {
                schedule::lateness(&common, pending).await
            }
            BenchCommand::Plugin { common, plugin } => plugin::plugin(&common, &plugin).await,
            BenchCommand::Decision {
                common,
                plugin,
                path,
            } => decision::decision(&common, &plugin, path).await,
            BenchCommand::Transform {
                common,
                plugin,
                policy,
            } => transform::latency(&common, &plugin, &policy).await,
            BenchCommand::Cluster { common, options } => cluster::cluster(&common, &options).await,
            BenchCommand::E2e(options) => e2e::e2e(&options).await,
            BenchCommand::Compare(options) => compare::compare(&options).await,
            BenchCommand::Footprint { common, pending } => {
                schedule::footprint(&common, pending).await
            }
        }
    });
    match result {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("hookgate bench: {e:#}");
            1
        }
    }
}

/// Runs `measure` with the feature (`true`) and without it in each of
/// `c.runs` runs, alternating which goes first so drift on a shared machine
/// favours neither, and prints each run's deliveries/s and their ratio, and the
/// median ratio. `what` names the run size's column (`backlog`, `events`),
/// `feature` the thing measured.
pub(crate) async fn with_and_without<F, Fut>(
    c: &Common,
    n: usize,
    what: &str,
    feature: &str,
    measure: F,
) -> anyhow::Result<()>
where
    F: Fn(bool) -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<f64>>,
{
    println!("| run | {what} | with {feature} deliveries/s | without deliveries/s | ratio |");
    println!("|---|---|---|---|---|");
    let mut ratios = Vec::new();
    for run in 1..=c.runs {
        let (with, without) = if run % 2 == 1 {
            let with = measure(true).await?;
            (with, measure(false).await?)
        } else {
            let without = measure(false).await?;
            (measure(true).await?, without)
        };
        println!(
            "| {run} | {n} | {with:.0} | {without:.0} | {:.2} |",
            with / without
        );
        ratios.push(with / without);
    }
    println!("| median | {n} | | | {:.2} |", median(ratios));
    Ok(())
}

/// The median of some figures.
pub(crate) fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    if v.is_empty() { 0.0 } else { v[v.len() / 2] }
}

/// The `q` quantile of sorted figures.
pub(crate) fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 - 1.0) * q).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}
