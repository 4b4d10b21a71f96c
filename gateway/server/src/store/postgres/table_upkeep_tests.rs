//! Upkeep against a real server: a churned queue is vacuumed, and a plan made
//! on an empty queue is made again once the queue fills.

use std::time::Duration;

use deadpool_postgres::GenericClient;

use super::Upkeep;
use crate::store::Lane;
use crate::store::testing::TestStore;

/// A backend's counts reach the shared statistics when it idles: at most 10 s
/// later (PostgreSQL's idle flush interval); 20 s is the most a check waits.
const STATS_PATIENCE: usize = 200;

/// `queue`'s statistics: rows read by sequential scans, and index scans.
async fn queue_scans(client: &impl GenericClient) -> (i64, i64) {
    let row = client
        .query_one(
            "SELECT coalesce(seq_tup_read, 0), coalesce(idx_scan, 0)
             FROM pg_stat_user_tables WHERE relid = to_regclass('queue')",
            &[],
        )
        .await
        .unwrap();
    (row.get(0), row.get(1))
}

/// Polls `queue`'s statistics until `done` says so; panics with `what` if it
/// never does.
async fn wait_for_scans(
    client: &impl GenericClient,
    what: &str,
    done: impl Fn((i64, i64)) -> bool,
) {
    for _ in 0..STATS_PATIENCE {
        if done(queue_scans(client).await) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{what}: statistics {:?}", queue_scans(client).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_churned_queue_is_vacuumed_and_a_quiet_one_is_left_alone() {
    let t = TestStore::postgres().await;
    let pg = t.store.postgres().unwrap();
    assert_eq!(
        pg.tidy_tables().await.unwrap(),
        Upkeep::default(),
        "nothing churned"
    );
    let client = pg.client().await.unwrap();
    client
        .batch_execute(
            "INSERT INTO queue (delivery_id, tenant_id, endpoint_id, lane, due_ms,
                 scheduled_ms, series, attempts)
             SELECT 'd' || g, 't', 'ep', 0, g, g, 0, 0 FROM generate_series(1, 5000) g;
             DELETE FROM queue;",
        )
        .await
        .unwrap();
    let mut vacuumed = false;
    for _ in 0..STATS_PATIENCE {
        if pg.tidy_tables().await.unwrap().vacuumed {
            vacuumed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(vacuumed, "5 000 dead rows and none live: vacuumed");
    let dead: i64 = client
        .query_one(
            "SELECT n_dead_tup FROM pg_stat_user_tables WHERE relid = to_regclass('queue')",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert!(dead < 2_000, "{dead} dead rows left");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plan_made_on_an_empty_queue_is_made_again_once_the_queue_fills() {
    const ROWS: i64 = 20_000;
    let t = TestStore::postgres().await;
    let pg = t.store.postgres().unwrap();
    let client = pg.client().await.unwrap();
    client.batch_execute("ANALYZE queue").await.unwrap();
    // Claims on the measured-empty queue, often enough for each pooled
    // connection to keep one plan for all later claims.
    for _ in 0..60 {
        pg.due_entries(Lane::First, "ep", u64::MAX / 4, 10)
            .await
            .unwrap();
    }
    client
        .batch_execute(&format!(
            "INSERT INTO queue (delivery_id, tenant_id, endpoint_id, lane, due_ms,
                 scheduled_ms, series, attempts)
             SELECT 'd' || g, 't', 'ep', 0, g, g, 1, 0 FROM generate_series(1, {ROWS}) g"
        ))
        .await
        .unwrap();
    // The plan kept from the empty moment reads the whole table.
    let (read, _) = queue_scans(&*client).await;
    pg.due_entries(Lane::First, "ep", 1_000_000, 10)
        .await
        .unwrap();
    wait_for_scans(&*client, "the kept plan scans the table", |(r, _)| {
        r >= read + ROWS
    })
    .await;

    let mut upkeep = Upkeep::default();
    for _ in 0..STATS_PATIENCE {
        upkeep = pg.tidy_tables().await.unwrap();
        if upkeep.analyzed.contains(&"queue") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(upkeep.analyzed.contains(&"queue"), "{upkeep:?}");
    assert!(!upkeep.vacuumed, "a queue that only grew is not vacuumed");

    // Made again: claims read the index, not the table.
    let (read, index_scans) = queue_scans(&*client).await;
    for _ in 0..20 {
        let claimed = pg
            .due_entries(Lane::First, "ep", 1_000_000, 10)
            .await
            .unwrap();
        assert!(
            claimed.is_empty(),
            "queue rows with no delivery claim nothing"
        );
    }
    wait_for_scans(&*client, "claims read the index", |(_, i)| {
        i >= index_scans + 20
    })
    .await;
    let (after, _) = queue_scans(&*client).await;
    assert!(
        after - read < ROWS,
        "claims read {} rows by scanning",
        after - read
    );
    assert!(
        pg.tidy_tables().await.unwrap().analyzed.is_empty(),
        "analyzed once, not every round"
    );
}
