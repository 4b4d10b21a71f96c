//! One run of the tenant fairness drill on running gateways: the victim tenant
//! and its receiver, the hostile tenant loaded until its requests hold the
//! places it may take, the victim's trickle, and the wait for its last events.
//!
//! Both receivers live only as long as the run: dropping the hostile one ends
//! every hold, so no request outlives it.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;

use super::DrillError;
use super::api::{GatewayApi, TENANT, ingest_all};
use super::fairness::{note_lateness, now_ms};
use super::nodes::DrillNodes;
use super::receiver::{Behavior, Receiver, Reply, ReplyBody};
use super::tenants::TenantsDrill;
use super::tenants_report::{Company, TenantsRun};

/// The victim tenant. The hostile one is the drills' usual tenant ([`TENANT`]),
/// which [`ingest_all`] sends to.
const VICTIM: &str = "victim";
const VICTIM_EVENT: &str = "victim.tick";
/// The API's default `max_in_flight`: the victim's endpoint asks for it, or for
/// the tenant cap when that is smaller (a gateway refuses a default above it).
const VICTIM_MAX_IN_FLIGHT: usize = 16;
/// Every hostile endpoint takes this type: each backlog event is a delivery
/// for each of them.
const HOSTILE_EVENT: &str = "hostile.backlog";
/// The longest timeout an endpoint may have: the gateway never gives up on a
/// held request, it waits for the answer.
const HOSTILE_TIMEOUT_MS: u64 = 300_000;
/// Events sent at once while loading the backlog.
const SEND_CONCURRENCY: usize = 32;
/// How long the hostile requests may take to fill the places they may hold
/// before the trickle starts anyway.
const RAMP_LIMIT: Duration = Duration::from_secs(30);

/// Sets up the victim (and beside it the hostile tenant, loaded and holding
/// its places), runs the trickle and waits for its last events.
pub(super) async fn trickle_run(
    drill: &TenantsDrill,
    cluster: &DrillNodes,
    company: Company,
    started: Instant,
) -> Result<TenantsRun, DrillError> {
    let lateness = Arc::new(Mutex::new(Vec::<u64>::new()));
    let victim_receiver = Receiver::start(note_lateness(Arc::clone(&lateness))).await?;
    let hostile_receiver = Receiver::start(answer_after(drill.hold)).await?;
    let victim = cluster.admin()?.add_tenant(VICTIM).await?;
    let endpoint = json!({
        "url": victim_receiver.url,
        "event_types": [VICTIM_EVENT],
        "max_in_flight": VICTIM_MAX_IN_FLIGHT.min(drill.tenant_places),
    });
    victim.add_endpoint(VICTIM, &endpoint).await?;
    let held_at_start = if company == Company::BesideHostile {
        load_hostile(drill, cluster, &hostile_receiver.url).await?;
        wait_until_held(drill, cluster.nodes.len(), &hostile_receiver).await
    } else {
        0
    };
    let sent = trickle(drill, &cluster.apis(victim.token())?).await?;
    let held_at_end = hostile_receiver.tally.in_flight();
    let noted = || lateness.lock().map_or(0, |l| l.len());
    let deadline = Instant::now() + drill.settle;
    while noted() < sent.acknowledged && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let mut lateness_ms = lateness.lock().map(|l| l.clone()).unwrap_or_default();
    lateness_ms.sort_unstable();
    Ok(TenantsRun {
        company,
        victim_sent: sent.acknowledged,
        victim_refused: sent.refused,
        victim_delivered: lateness_ms.len(),
        lateness_ms,
        held_at_start,
        held_at_end,
        most_held: hostile_receiver.tally.max_in_flight(),
        elapsed: started.elapsed(),
    })
}

/// The hostile tenant: its endpoints, each allowed the tenant's whole cap, and
/// its backlog, sent to every node in turn.
async fn load_hostile(
    drill: &TenantsDrill,
    cluster: &DrillNodes,
    url: &str,
) -> Result<(), DrillError> {
    let endpoint = json!({
        "url": url,
        "event_types": [HOSTILE_EVENT],
        "max_in_flight": drill.tenant_places,
        "timeout_ms": HOSTILE_TIMEOUT_MS,
    });
    let api = cluster.admin()?.setup(&endpoint).await?;
    for _ in 1..drill.hostile_endpoints {
        api.add_endpoint(TENANT, &endpoint).await?;
    }
    let apis = cluster.apis(api.token())?;
    let share = drill.backlog.div_ceil(apis.len().max(1));
    for (n, node) in apis.iter().enumerate() {
        let range = (n * share)..((n + 1) * share).min(drill.backlog);
        let payloads = range.map(|i| json!({"i": i})).collect();
        ingest_all(node, HOSTILE_EVENT, payloads, SEND_CONCURRENCY).await?;
    }
    Ok(())
}

/// Waits (at most [`RAMP_LIMIT`]) until the hostile tenant holds every place it
/// may: its share of each node, within what its endpoints and backlog allow.
/// Returns how many of its requests are held.
async fn wait_until_held(drill: &TenantsDrill, nodes: usize, receiver: &Receiver) -> usize {
    let per_node = drill.tenant_places.min(drill.node_places);
    let full = per_node
        .saturating_mul(nodes)
        .min(drill.tenant_places.saturating_mul(drill.hostile_endpoints))
        .min(drill.backlog.saturating_mul(drill.hostile_endpoints));
    let until = Instant::now() + RAMP_LIMIT;
    while receiver.tally.in_flight() < full && Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    receiver.tally.in_flight()
}

/// The victim's events: acknowledged (202), and answered anything else.
#[derive(Debug, Default)]
struct Trickled {
    acknowledged: usize,
    refused: usize,
}

/// Sends the victim an event every `drill.every` for `drill.trickle_for`, over
/// the nodes in turn; each payload carries its send time.
async fn trickle(drill: &TenantsDrill, apis: &[GatewayApi]) -> Result<Trickled, DrillError> {
    let until = Instant::now() + drill.trickle_for;
    let mut tick = tokio::time::interval(drill.every);
    let mut nodes = apis.iter().cycle();
    let mut sent = Trickled::default();
    while Instant::now() < until {
        tick.tick().await;
        let Some(node) = nodes.next() else { break };
        let payload = json!({"n": sent.acknowledged + sent.refused, "sent_ms": now_ms()});
        match node.send_event_for(VICTIM, VICTIM_EVENT, payload).await? {
            Some(_) => sent.acknowledged += 1,
            None => sent.refused += 1,
        }
    }
    Ok(sent)
}

/// 200 after `hold`: the hostile tenant's slow receiver. Its shutdown ends a
/// hold early, so no request outlives the run.
fn answer_after(hold: Duration) -> Behavior {
    Arc::new(move |_| Reply::Answer {
        status: 200,
        retry_after_s: None,
        delay: hold,
        body: ReplyBody::Small,
    })
}
