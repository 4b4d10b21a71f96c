//! Several gateways on one database: heartbeats list the live ones, a node
//! that stops hands its singleton work on at once, and a turn is planned by
//! one node at a time against the leases every node holds.

use super::*;
use crate::ids::EndpointId;
use crate::store::testing::TestStore;
use crate::store::{ClaimedTurn, NODE_ALIVE_MS, RuntimeRecord, Singleton, TurnPlan};

/// A plan that asks for up to `want` attempts within `max_in_flight`, and
/// remembers what it saw.
struct Greedy {
    want: usize,
    max_in_flight: usize,
    live_seen: Option<usize>,
}

impl TurnPlan for Greedy {
    fn allowed(&mut self, _: &RuntimeRecord, live_leases: usize) -> usize {
        self.live_seen = Some(live_leases);
        self.want
            .min(self.max_in_flight.saturating_sub(live_leases))
    }
    fn started(&mut self, runtime: &mut RuntimeRecord, started: usize, _: u64) {
        runtime.starts.extend(std::iter::repeat_n(7, started));
    }
}

/// A connection of the test's own to the store's database, outside its pools.
async fn raw_connection(t: &TestStore) -> tokio_postgres::Client {
    let url = t.database_url().expect("a PostgreSQL store");
    let (raw, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    raw
}

fn greedy(want: usize) -> Greedy {
    Greedy {
        want,
        max_in_flight: 4,
        live_seen: None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_nodes_are_listed_and_a_stopped_one_hands_on_its_singletons() {
    let t = TestStore::postgres().await;
    let b = t.another_node("node-b").await;
    let now = SystemClock.now_ms();
    let mut listed = Vec::new();
    for _ in 0..100 {
        listed = t.store.cluster_nodes(now + 1).await.unwrap();
        if listed.len() == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let ids: Vec<&str> = listed.iter().map(|n| n.node_id.as_str()).collect();
    assert!(
        ids.contains(&"node-b") && ids.contains(&t.store.node_id()),
        "{ids:?}"
    );
    assert!(
        listed
            .iter()
            .all(|n| n.version == env!("CARGO_PKG_VERSION"))
    );

    assert!(b.singleton(Singleton::AlertRules).await.unwrap().is_some());
    let refused = t.store.singleton(Singleton::AlertRules).await.unwrap();
    assert!(refused.is_none(), "two nodes hold the alert rules");
    b.close().await;
    let taken = t.store.singleton(Singleton::AlertRules).await.unwrap();
    assert!(taken.is_some(), "the stopped node's grant is free at once");
    let after = t.store.cluster_nodes(SystemClock.now_ms()).await.unwrap();
    assert!(after.iter().all(|n| n.node_id != "node-b"), "{after:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grant_held_by_a_node_that_stopped_beating_passes_on() {
    let t = TestStore::postgres().await;
    let now = i64::try_from(SystemClock.now_ms()).unwrap();
    let raw = raw_connection(&t).await;
    let held = "INSERT INTO singletons (name, holder, until_ms) VALUES ($1, $2, $3)
                ON CONFLICT (name) DO UPDATE SET holder = $2, until_ms = $3";
    let beat = "INSERT INTO nodes VALUES ($1, 0, $2, 'x')
                ON CONFLICT (node_id) DO UPDATE SET last_seen_ms = $2";
    // A live holder keeps its unexpired grant.
    raw.execute(beat, &[&"live", &now]).await.unwrap();
    raw.execute(held, &[&"retention", &"live", &(now + 60_000)])
        .await
        .unwrap();
    assert!(
        t.store
            .singleton(Singleton::Retention)
            .await
            .unwrap()
            .is_none()
    );
    // Silent for longer than a node is listed as alive: the grant passes on,
    // long before it would expire.
    let silent = now - NODE_ALIVE_MS as i64 - 1_000;
    raw.execute(beat, &[&"live", &silent]).await.unwrap();
    assert!(
        t.store
            .singleton(Singleton::Retention)
            .await
            .unwrap()
            .is_some()
    );
    // A holder with no heartbeat at all (killed before its first) too.
    raw.execute(held, &[&"retention", &"ghost", &(now + 60_000)])
        .await
        .unwrap();
    assert!(
        t.store
            .singleton(Singleton::Retention)
            .await
            .unwrap()
            .is_some()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_counts_other_nodes_leases_and_skips_a_planned_endpoint() {
    let t = TestStore::postgres().await;
    let b = t.another_node("node-b").await;
    let ep = t.endpoint("acme", "ep_1").await;
    let now = SystemClock.now_ms();
    for _ in 0..6 {
        t.ingest("acme", &[&ep], now).await;
    }
    // Node b takes 3 of the 4 places; this node may take only the last one.
    let mut plan = greedy(3);
    let ClaimedTurn::Claimed { leases, runtime } = b
        .claim_turn(&EndpointId::from("ep_1"), now, &mut plan)
        .await
        .unwrap()
    else {
        panic!("nobody else holds the endpoint");
    };
    assert_eq!((leases.len(), plan.live_seen), (3, Some(0)));
    assert_eq!(runtime.starts, [7, 7, 7], "the plan's change is stored");
    let mut plan = greedy(3);
    let ClaimedTurn::Claimed { leases, runtime } = t
        .store
        .claim_turn(&EndpointId::from("ep_1"), now, &mut plan)
        .await
        .unwrap()
    else {
        panic!("nobody else holds the endpoint");
    };
    assert_eq!((leases.len(), plan.live_seen), (1, Some(3)));
    assert_eq!(runtime.starts.len(), 4, "node b's starts are seen");

    // While another transaction holds the endpoint's row, a turn moves on.
    let mut raw = raw_connection(&t).await;
    let holder = raw.transaction().await.unwrap();
    holder
        .execute(
            "SELECT 1 FROM endpoint_runtime WHERE endpoint_id = 'ep_1' FOR UPDATE",
            &[],
        )
        .await
        .unwrap();
    let busy = t
        .store
        .claim_turn(&EndpointId::from("ep_1"), now, &mut greedy(1))
        .await
        .unwrap();
    assert!(matches!(busy, ClaimedTurn::Busy), "{busy:?}");
    holder.rollback().await.unwrap();
    b.close().await;
}
