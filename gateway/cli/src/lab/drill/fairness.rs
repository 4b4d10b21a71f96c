//! The fairness drill: one endpoint's backlog never starves the others, on any
//! node, and the nodes of a cluster share the work.
//!
//! One endpoint gets a large backlog (sent to every node in turn); once it is
//! in, a number of other endpoints each get a slow trickle of events while the
//! backlog drains. The receiver answers at once and notes, for each trickle
//! event, how late it arrived (from the moment it was sent). The whole run is
//! made twice, on one node and on several, each on a fresh scratch database,
//! and the report sets the two side by side with each node's share of attempts.
//!
//! Checks: every trickle event arrives; on several nodes, each node's share of
//! the attempts is within ±25 % of an even share.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::Args;
use http::{Method, StatusCode};
use serde_json::{Value, json};

use super::api::{GatewayApi, TENANT, ingest_all};
use super::crash_store::CrashStore;
use super::nodes::{DrillNodes, shares};
use super::receiver::{Behavior, Receiver, Reply};
use super::{DrillArgs, DrillError, WorkDir, drill_gateway};

pub use super::fairness_report::{FairnessReport, FairnessRun};

/// Events sent at once while loading the backlog.
const SEND_CONCURRENCY: usize = 32;
/// How far each node's share may be from an even one, as a fraction of it.
const SHARE_TOLERANCE: f64 = 0.25;

/// Options of `hookgate drill fairness`.
#[derive(Args, Debug)]
pub struct FairnessArgs {
    /// The PostgreSQL server to make the scratch databases on (a URL of any
    /// database on it).
    #[arg(long, value_name = "URL")]
    store_url: String,
    /// Nodes in the cluster run (compared with a run on one).
    #[arg(long, default_value_t = 3)]
    #[arg(value_parser = clap::value_parser!(u64).range(2..=5))]
    nodes: u64,
    /// Deliveries queued for the one busy endpoint.
    #[arg(long, default_value_t = 100_000)]
    #[arg(value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    backlog: u64,
    /// Endpoints that each get a slow trickle of events.
    #[arg(long, default_value_t = 20)]
    #[arg(value_parser = clap::value_parser!(u64).range(1..=200))]
    trickle: u64,
    /// How long the trickle lasts.
    #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
    trickle_for: Duration,
    /// How long to wait for the trickle's last events.
    #[arg(long, default_value = "2m", value_parser = humantime::parse_duration)]
    settle: Duration,
}

impl FairnessArgs {
    /// The drill these options describe, run against the `gateway` executable.
    pub fn drill(&self, gateway: PathBuf) -> FairnessDrill {
        FairnessDrill {
            gateway,
            server: self.store_url.clone(),
            nodes: usize::try_from(self.nodes).unwrap_or(3),
            backlog: usize::try_from(self.backlog).unwrap_or(100_000),
            trickle: usize::try_from(self.trickle).unwrap_or(20),
            trickle_for: self.trickle_for,
            every: Duration::from_secs(1),
            settle: self.settle,
        }
    }
}

impl DrillArgs for FairnessArgs {
    type Report = FairnessReport;

    fn describe(&self) -> String {
        format!(
            "fairness drill: a backlog of {} on one endpoint beside {} trickling endpoints, on 1 node then {}",
            self.backlog, self.trickle, self.nodes
        )
    }

    async fn run(&self, gateway: PathBuf) -> Result<FairnessReport, DrillError> {
        run(&self.drill(gateway)).await
    }
}

/// The fairness drill's parameters.
#[derive(Debug, Clone)]
pub struct FairnessDrill {
    pub gateway: PathBuf,
    /// The PostgreSQL server the scratch databases are made on.
    pub server: String,
    pub nodes: usize,
    pub backlog: usize,
    pub trickle: usize,
    pub trickle_for: Duration,
    /// How often each trickling endpoint gets an event.
    pub every: Duration,
    pub settle: Duration,
}

impl FairnessDrill {
    /// The short form: a backlog of 2 000 beside 4 trickling endpoints for 4 s,
    /// on 1 node then 2.
    pub fn short(gateway: PathBuf, server: String) -> Self {
        Self {
            gateway,
            server,
            nodes: 2,
            backlog: 2_000,
            trickle: 4,
            trickle_for: Duration::from_secs(4),
            every: Duration::from_millis(500),
            settle: Duration::from_secs(60),
        }
    }
}

/// Runs the drill on one node, then on `drill.nodes`.
///
/// # Errors
/// When the drill cannot run: no scratch database, a gateway does not start.
pub async fn run(drill: &FairnessDrill) -> Result<FairnessReport, DrillError> {
    let single = run_on(drill, 1).await?;
    let cluster = run_on(drill, drill.nodes).await?;
    let mut violations = Vec::new();
    for run in [&single, &cluster] {
        if run.trickle_delivered < run.trickle_sent {
            violations.push(format!(
                "on {} node(s), {} of {} trickle events never arrived",
                run.nodes,
                run.trickle_sent - run.trickle_delivered,
                run.trickle_sent
            ));
        }
    }
    let even = 100.0 / cluster.nodes as f64;
    for (n, share) in shares(&cluster.attempts_per_node).iter().enumerate() {
        if (share - even).abs() > even * SHARE_TOLERANCE {
            violations.push(format!(
                "node {n} made {share:.0} % of the attempts; an even share is {even:.0} %"
            ));
        }
    }
    Ok(FairnessReport {
        single,
        cluster,
        violations,
    })
}

/// One run on `nodes` gateways sharing a fresh scratch database.
async fn run_on(drill: &FairnessDrill, nodes: usize) -> Result<FairnessRun, DrillError> {
    let started = Instant::now();
    let work = WorkDir::new(None, "fairness")?;
    let spec = drill_gateway(drill.gateway.clone(), work.data_dir());
    let store = CrashStore::Postgres {
        server: drill.server.clone(),
        restart_database: false,
    };
    let mut cluster = DrillNodes::start(spec, nodes, &store, 0, &work.path).await?;
    let lateness = Arc::new(Mutex::new(Vec::<u64>::new()));
    let receiver = Receiver::start(note_lateness(Arc::clone(&lateness))).await?;
    let backlog = json!({"url": receiver.url, "event_types": ["backlog"], "max_in_flight": 64});
    let api = cluster.admin()?.setup(&backlog).await?;
    for k in 0..drill.trickle {
        let body = json!({"url": receiver.url, "event_types": [format!("trickle.{k}")]});
        let path = format!("/v1/tenants/{TENANT}/endpoints");
        api.expect(Method::POST, &path, Some(&body), StatusCode::CREATED)
            .await?;
    }
    let apis = cluster.apis(api.token())?;
    // The trickle runs while the backlog is loaded and drains.
    let trickling = {
        let (drill, apis) = (drill.clone(), apis.clone());
        tokio::spawn(async move { trickle(&drill, &apis).await })
    };
    let share = drill.backlog.div_ceil(apis.len());
    for (n, node) in apis.iter().enumerate() {
        let range = (n * share)..((n + 1) * share).min(drill.backlog);
        let payloads: Vec<Value> = range.map(|i| json!({"i": i})).collect();
        ingest_all(node, "backlog", payloads, SEND_CONCURRENCY).await?;
    }
    let (trickle_sent, mut ack_ms) = trickling
        .await
        .map_err(|e| DrillError::Api(format!("the trickle: {e}")))??;
    ack_ms.sort_unstable();
    let during = receiver
        .tally
        .delivered()
        .len()
        .saturating_sub(trickle_sent);
    let deadline = Instant::now() + drill.settle;
    while lateness.lock().map_or(0, |l| l.len()) < trickle_sent && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let attempts_per_node = cluster.attempts_per_node().await?;
    let backlog_delivered = receiver.tally.delivered().len();
    cluster.terminate().await;
    let mut late = lateness.lock().map(|l| l.clone()).unwrap_or_default();
    late.sort_unstable();
    Ok(FairnessRun {
        nodes,
        trickle_sent,
        trickle_delivered: late.len(),
        lateness_ms: late,
        ack_ms,
        backlog_delivered: backlog_delivered.saturating_sub(trickle_sent),
        backlog_during_trickle: during,
        backlog: drill.backlog,
        attempts_per_node,
        elapsed: started.elapsed(),
    })
}

/// Sends each trickling endpoint an event every `drill.every` for
/// `drill.trickle_for`, over the nodes in turn; returns how many were
/// acknowledged, and how long each acknowledgement took (ms), which tells the
/// ingest's share of the lateness from the delivery's.
async fn trickle(
    drill: &FairnessDrill,
    apis: &[GatewayApi],
) -> Result<(usize, Vec<u64>), DrillError> {
    let until = Instant::now() + drill.trickle_for;
    let mut tick = tokio::time::interval(drill.every);
    let mut acks = Vec::new();
    while Instant::now() < until {
        tick.tick().await;
        for k in 0..drill.trickle {
            let sent_ms = now_ms();
            let payload = json!({"trickle": k, "sent_ms": sent_ms});
            let node = &apis[acks.len() % apis.len()];
            let event_type = format!("trickle.{k}");
            if node.send_event(&event_type, payload).await?.is_some() {
                acks.push(now_ms().saturating_sub(sent_ms));
            }
        }
    }
    Ok((acks.len(), acks))
}

/// 200 at once; a trickle event's lateness (arrival less `sent_ms`) is noted.
pub(super) fn note_lateness(lateness: Arc<Mutex<Vec<u64>>>) -> Behavior {
    Arc::new(move |arrival| {
        if arrival.attempt == 0
            && let Ok(body) = serde_json::from_slice::<Value>(arrival.body)
            && let Some(sent) = body["sent_ms"].as_u64()
            && let Ok(mut l) = lateness.lock()
        {
            l.push(now_ms().saturating_sub(sent));
        }
        Reply::status(200)
    })
}

/// Milliseconds since the Unix epoch: what a payload's `sent_ms` carries.
pub(super) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}
