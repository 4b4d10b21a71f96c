//! The tenant fairness drill: a tenant whose receivers are slow and whose
//! backlog is large never takes a node's delivery places from another tenant.
//!
//! The hostile tenant has several endpoints, each allowed the tenant's whole
//! cap (`max_in_flight` = `cluster.tenant_max_in_flight`, `timeout_ms` 300 000),
//! pointed at a receiver that holds every request for `--hold` before answering
//! 200, and a backlog sent at once, so that it wants more places than a node
//! has. Once its requests are held, the victim tenant, whose one endpoint is
//! answered at once, sends an event every `--every` for `--trickle-for`; its
//! receiver notes each event's lateness (arrival less the send time the payload
//! carries).
//!
//! Each run is made twice, the victim alone and beside the hostile tenant, on
//! one node on sled and, with `--store-url`, on several nodes sharing a fresh
//! scratch PostgreSQL database.
//!
//! Checks: every victim event is acknowledged and arrives; beside the hostile
//! tenant no victim event is late by half the hold or more, which it would be
//! only if it had waited for a hostile request to finish (why half: the
//! report's `violations`).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::Args;

use super::crash_store::CrashStore;
use super::nodes::DrillNodes;
use super::tenants_run::trickle_run;
use super::{DrillArgs, DrillError, WorkDir, drill_gateway, secs};
use crate::lab::child_gateway::GatewaySpec;

pub use super::tenants_report::{Company, StoreRuns, TenantsReport, TenantsRun};

/// The longest hold: well within the hostile endpoints' timeout (300 s), so
/// that the gateway waits for every answer.
const MAX_HOLD: Duration = Duration::from_secs(240);

/// Options of `hookgate drill tenants`.
#[derive(Args, Debug)]
pub struct TenantsArgs {
    /// Also run on several nodes sharing a scratch database made on this
    /// PostgreSQL server (a URL of any database on it).
    #[arg(long, value_name = "URL")]
    store_url: Option<String>,
    /// Nodes in the PostgreSQL runs.
    #[arg(long, default_value_t = 3)]
    #[arg(value_parser = clap::value_parser!(u64).range(2..=5))]
    nodes: u64,
    /// The hostile tenant's endpoints, each allowed the whole tenant cap.
    #[arg(long, default_value_t = 4)]
    #[arg(value_parser = clap::value_parser!(u64).range(1..=16))]
    hostile_endpoints: u64,
    /// The hostile tenant's backlog, in events (one delivery per endpoint each).
    #[arg(long, default_value_t = 400)]
    #[arg(value_parser = clap::value_parser!(u64).range(1..=100_000))]
    backlog: u64,
    /// How long the hostile tenant's receiver holds each request before it
    /// answers 200 (1 s to 4 min).
    #[arg(long, default_value = "20s", value_parser = parse_hold)]
    hold: Duration,
    /// How often the victim sends an event.
    #[arg(long, default_value = "500ms", value_parser = parse_every)]
    every: Duration,
    /// How long the victim keeps sending.
    #[arg(long, default_value = "30s", value_parser = parse_trickle_for)]
    trickle_for: Duration,
    /// `cluster.node_max_in_flight` of each gateway.
    #[arg(long, default_value_t = 256)]
    #[arg(value_parser = clap::value_parser!(u64).range(1..=4096))]
    node_places: u64,
    /// `cluster.tenant_max_in_flight` of each gateway, and each hostile
    /// endpoint's `max_in_flight`.
    #[arg(long, default_value_t = 128)]
    #[arg(value_parser = clap::value_parser!(u64).range(1..=1024))]
    tenant_places: u64,
    /// How long to wait, once the trickle ends, for the victim's last events.
    #[arg(long, default_value = "2m", value_parser = humantime::parse_duration)]
    settle: Duration,
    /// Serve this executable instead of this one, to compare with another build.
    /// It is not given `cluster.tenant_max_in_flight`, which builds from before
    /// tenant fairness refuse as unknown: it keeps its own.
    #[arg(long, value_name = "PATH")]
    gateway: Option<PathBuf>,
}

impl TenantsArgs {
    /// The drill these options describe, serving `gateway` unless `--gateway`
    /// names another.
    pub fn drill(&self, gateway: PathBuf) -> TenantsDrill {
        let count = |n: u64, default: usize| usize::try_from(n).unwrap_or(default);
        TenantsDrill {
            gateway: self.gateway.clone().unwrap_or(gateway),
            set_tenant_places: self.gateway.is_none(),
            server: self.store_url.clone(),
            nodes: count(self.nodes, 3),
            hostile_endpoints: count(self.hostile_endpoints, 4),
            backlog: count(self.backlog, 400),
            hold: self.hold,
            node_places: count(self.node_places, 256),
            tenant_places: count(self.tenant_places, 128),
            trickle_for: self.trickle_for,
            every: self.every,
            settle: self.settle,
        }
    }
}

impl DrillArgs for TenantsArgs {
    type Report = TenantsReport;

    fn describe(&self) -> String {
        let cluster = match self.store_url {
            Some(_) => format!(", then on {} nodes on PostgreSQL", self.nodes),
            None => String::new(),
        };
        let served = match &self.gateway {
            Some(path) => format!(" (serving {})", path.display()),
            None => String::new(),
        };
        format!(
            "tenant fairness drill: a victim's trickle alone, then beside a hostile tenant's {} events on {} endpoints held {} each, on sled{cluster}{served}",
            self.backlog,
            self.hostile_endpoints,
            secs(self.hold)
        )
    }

    async fn run(&self, gateway: PathBuf) -> Result<TenantsReport, DrillError> {
        run(&self.drill(gateway)).await
    }
}

/// The tenant fairness drill's parameters.
#[derive(Debug, Clone)]
pub struct TenantsDrill {
    pub gateway: PathBuf,
    /// Whether the gateways are given `cluster.tenant_max_in_flight` (a build
    /// from before tenant fairness refuses the key).
    pub set_tenant_places: bool,
    /// The PostgreSQL server of the cluster runs (`None`: sled only).
    pub server: Option<String>,
    pub nodes: usize,
    pub hostile_endpoints: usize,
    /// The hostile backlog, in events.
    pub backlog: usize,
    /// How long each hostile request is held.
    pub hold: Duration,
    pub node_places: usize,
    pub tenant_places: usize,
    pub trickle_for: Duration,
    /// How often the victim sends an event.
    pub every: Duration,
    pub settle: Duration,
}

impl TenantsDrill {
    /// The short form: 3 hostile endpoints, 60 events held 8 s each (so a
    /// victim event fails the check only 4 s late), beside a victim sending
    /// every 250 ms for 3 s; 16 places a node, 8 a tenant; on sled, then on 2
    /// nodes on `server`.
    pub fn short(gateway: PathBuf, server: String) -> Self {
        Self {
            gateway,
            set_tenant_places: true,
            server: Some(server),
            nodes: 2,
            hostile_endpoints: 3,
            backlog: 60,
            hold: Duration::from_secs(8),
            node_places: 16,
            tenant_places: 8,
            trickle_for: Duration::from_secs(3),
            every: Duration::from_millis(250),
            settle: Duration::from_secs(60),
        }
    }
}

/// Runs the drill on sled, then, with a server, on `drill.nodes` nodes on
/// PostgreSQL: each time alone, then beside the hostile tenant.
///
/// # Errors
/// When the drill cannot run: no scratch database, a gateway does not start.
pub async fn run(drill: &TenantsDrill) -> Result<TenantsReport, DrillError> {
    let mut stores = vec![run_on(drill, &CrashStore::Sled, 1).await?];
    if let Some(server) = &drill.server {
        let store = CrashStore::Postgres {
            server: server.clone(),
            restart_database: false,
        };
        stores.push(run_on(drill, &store, drill.nodes).await?);
    }
    let violations = super::tenants_report::violations(&stores, drill.hold);
    Ok(TenantsReport {
        hold: drill.hold,
        node_places: drill.node_places,
        tenant_places: drill.tenant_places,
        tenant_places_set: drill.set_tenant_places,
        hostile_endpoints: drill.hostile_endpoints,
        backlog: drill.backlog,
        stores,
        violations,
    })
}

/// Both runs on one store.
async fn run_on(
    drill: &TenantsDrill,
    store: &CrashStore,
    nodes: usize,
) -> Result<StoreRuns, DrillError> {
    Ok(StoreRuns {
        postgres: matches!(store, CrashStore::Postgres { .. }),
        nodes,
        alone: run_once(drill, store, nodes, Company::Alone).await?,
        beside_hostile: run_once(drill, store, nodes, Company::BesideHostile).await?,
    })
}

/// One run on `nodes` fresh gateways (and a fresh scratch database on
/// PostgreSQL): the victim's trickle, in `company`.
async fn run_once(
    drill: &TenantsDrill,
    store: &CrashStore,
    nodes: usize,
    company: Company,
) -> Result<TenantsRun, DrillError> {
    let started = Instant::now();
    let work = WorkDir::new(None, "tenants")?;
    let spec = gateway_spec(drill, &work);
    let mut cluster = DrillNodes::start(spec, nodes, store, 0, &work.path).await?;
    let outcome = trickle_run(drill, &cluster, company, started).await;
    // The receivers are gone by now, and with them every held request.
    cluster.terminate().await;
    outcome
}

/// The drills' usual gateway, with the node's and the tenant's places.
fn gateway_spec(drill: &TenantsDrill, work: &WorkDir) -> GatewaySpec {
    let mut spec = drill_gateway(drill.gateway.clone(), work.data_dir());
    spec.set(
        "HOOKGATE_CLUSTER__NODE_MAX_IN_FLIGHT",
        &drill.node_places.to_string(),
    );
    if drill.set_tenant_places {
        spec.set(
            "HOOKGATE_CLUSTER__TENANT_MAX_IN_FLIGHT",
            &drill.tenant_places.to_string(),
        );
    }
    spec
}

/// `--hold`: from 1 s to [`MAX_HOLD`], within the hostile endpoints' timeout.
fn parse_hold(s: &str) -> Result<Duration, String> {
    duration_within(s, Duration::from_secs(1), MAX_HOLD)
}

/// `--every`: at least 10 ms (a timer needs a period).
fn parse_every(s: &str) -> Result<Duration, String> {
    duration_within(s, Duration::from_millis(10), Duration::from_secs(60))
}

/// `--trickle-for`: from 1 s to an hour.
fn parse_trickle_for(s: &str) -> Result<Duration, String> {
    duration_within(s, Duration::from_secs(1), Duration::from_secs(3600))
}

fn duration_within(s: &str, min: Duration, max: Duration) -> Result<Duration, String> {
    let d = humantime::parse_duration(s).map_err(|e| e.to_string())?;
    if (min..=max).contains(&d) {
        Ok(d)
    } else {
        Err(format!(
            "must be from {} to {}",
            humantime::format_duration(min),
            humantime::format_duration(max)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hold_stays_within_the_timeout_and_the_period_is_never_zero() {
        assert_eq!(parse_hold("20s"), Ok(Duration::from_secs(20)));
        assert!(parse_hold("5m").is_err());
        assert!(parse_hold("0s").is_err());
        assert!(parse_every("0ms").is_err());
        assert_eq!(parse_every("500ms"), Ok(Duration::from_millis(500)));
        assert!(parse_trickle_for("2h").is_err());
    }
}
