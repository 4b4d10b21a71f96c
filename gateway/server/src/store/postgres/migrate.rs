//! The schema: embedded SQL files applied in order at start (or by `hookgate
//! migrate`) under one advisory lock, so gateways starting together apply each
//! once. `hookgate_schema` records what was applied; a database written by a
//! newer hookgate is refused rather than guessed at.

use tokio_postgres::Client;

use super::error::pg_error;
use crate::clock::Clock;
use crate::store::StoreError;

/// The migrations, in order, each with its version (the number its file's name
/// starts with). Versions rise but need not be contiguous: changes made side by
/// side each take their own number, and a database records the newest it
/// reached, so a migration is applied when its version is above that.
const MIGRATIONS: &[(u64, &str)] = &[
    (1, include_str!("migrations/0001_init.sql")),
    (2, include_str!("migrations/0002_cluster.sql")),
    (3, include_str!("migrations/0003_plugin_uploads.sql")),
    (4, include_str!("migrations/0004_late_attempts.sql")),
    (5, include_str!("migrations/0005_autovacuum.sql")),
    (6, include_str!("migrations/0006_tenants_and_tasks.sql")),
    (7, include_str!("migrations/0007_attempt_index.sql")),
    (8, include_str!("migrations/0008_endpoint_stats.sql")),
    (
        9,
        include_str!("migrations/0009_attempts_by_endpoint_only.sql"),
    ),
    (10, include_str!("migrations/0010_event_types.sql")),
    (11, include_str!("migrations/0011_portal_sessions.sql")),
];

/// The newest schema this build knows: the last migration's version.
pub(crate) const SCHEMA_VERSION: u64 = MIGRATIONS[MIGRATIONS.len() - 1].0;

/// The advisory lock key migrations run under (one bigint key; the only other
/// advisory locks hookgate takes are the nodes' presence locks, two int keys).
const MIGRATION_LOCK: i64 = 0x686f_6f6b_6761_7465; // "hookgate"

/// Brings the schema up to [`SCHEMA_VERSION`]; returns the versions applied.
///
/// # Errors
/// `NewerSchema` for a database a newer hookgate wrote; a storage error if a
/// migration fails (it is rolled back whole).
pub(crate) async fn migrate(client: &mut Client) -> Result<Vec<u64>, StoreError> {
    client
        .execute("SELECT pg_advisory_lock($1)", &[&MIGRATION_LOCK])
        .await
        .map_err(pg_error)?;
    let applied = apply_missing(client).await;
    let unlocked = client
        .execute("SELECT pg_advisory_unlock($1)", &[&MIGRATION_LOCK])
        .await
        .map_err(pg_error);
    let applied = applied?;
    unlocked?;
    Ok(applied)
}

async fn apply_missing(client: &mut Client) -> Result<Vec<u64>, StoreError> {
    // Created only when absent: a gateway whose role may not create tables
    // starts on a database an owner already migrated.
    let exists = client
        .query_one("SELECT to_regclass('hookgate_schema') IS NOT NULL", &[])
        .await
        .map_err(pg_error)?;
    if !exists.get::<_, bool>(0) {
        client
            .batch_execute(
                "CREATE TABLE IF NOT EXISTS hookgate_schema (
                    version       integer PRIMARY KEY,
                    applied_at_ms bigint NOT NULL
                )",
            )
            .await
            .map_err(pg_error)?;
    }
    let found = current_version(client).await?;
    if found > SCHEMA_VERSION {
        return Err(StoreError::NewerSchema {
            found,
            supported: SCHEMA_VERSION,
        });
    }
    let mut applied = Vec::new();
    for &(version, sql) in MIGRATIONS.iter().filter(|(v, _)| *v > found) {
        let tx = client.transaction().await.map_err(pg_error)?;
        tx.batch_execute(sql).await.map_err(pg_error)?;
        let now = crate::clock::SystemClock.now_ms() as i64;
        tx.execute(
            "INSERT INTO hookgate_schema (version, applied_at_ms) VALUES ($1, $2)",
            &[&(version as i32), &now],
        )
        .await
        .map_err(pg_error)?;
        tx.commit().await.map_err(pg_error)?;
        applied.push(version);
    }
    Ok(applied)
}

/// The newest version applied (0 for an empty database).
///
/// # Errors
/// On a storage failure.
pub(crate) async fn current_version(client: &Client) -> Result<u64, StoreError> {
    let row = client
        .query_one("SELECT COALESCE(max(version), 0) FROM hookgate_schema", &[])
        .await
        .map_err(pg_error)?;
    Ok(u64::try_from(row.get::<_, i32>(0)).unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::TenantId;
    use crate::store::scratch_database::ScratchDatabase;

    /// The versions of the migrations after `version`, in order.
    fn versions_after(version: u64) -> Vec<u64> {
        MIGRATIONS
            .iter()
            .map(|(v, _)| *v)
            .filter(|v| *v > version)
            .collect()
    }

    #[test]
    fn migration_versions_rise() {
        let versions = versions_after(0);
        assert!(versions.windows(2).all(|w| w[0] < w[1]), "{versions:?}");
        assert_eq!(versions.last(), Some(&SCHEMA_VERSION));
    }

    async fn client(url: &str) -> Client {
        let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(connection);
        client
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn gateways_starting_together_apply_each_migration_once() {
        let db = ScratchDatabase::create()
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let runs: Vec<_> = (0..4)
            .map(|_| {
                let url = db.url.clone();
                tokio::spawn(async move { migrate(&mut client(&url).await).await })
            })
            .collect();
        let mut applied = Vec::new();
        for run in runs {
            applied.extend(run.await.unwrap().unwrap());
        }
        assert_eq!(applied, versions_after(0));
        let c = client(&db.url).await;
        assert_eq!(current_version(&c).await.unwrap(), SCHEMA_VERSION);
        let rows = c
            .query("SELECT version FROM hookgate_schema", &[])
            .await
            .unwrap();
        assert_eq!(rows.len(), MIGRATIONS.len(), "one row per version");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_gateway_whose_role_may_only_read_and_write_starts_on_a_migrated_database() {
        let db = ScratchDatabase::create()
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let mut owner = client(&db.url).await;
        migrate(&mut owner).await.unwrap();
        let role = format!("hookgate_rt_{:08x}", rand::random::<u32>());
        owner
            .batch_execute(&format!(
                "CREATE ROLE {role} LOGIN;
                 GRANT USAGE ON SCHEMA public TO {role};
                 GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {role};"
            ))
            .await
            .unwrap();
        let url = db.url.replacen("postgres@", &format!("{role}@"), 1);
        let config = crate::config::StoreConfig {
            backend: crate::config::StoreBackend::Postgres,
            url: Some(url),
            ..crate::config::StoreConfig::default()
        };
        let opened = crate::store::Store::open(&config).await;
        let tenant = match &opened {
            Ok(store) => store
                .create_test_tenant(&TenantId::from("acme"), [1; 32], 0)
                .await
                .map(|t| t.is_some()),
            Err(_) => Ok(false),
        };
        if let Ok(store) = &opened {
            store.close().await;
        }
        drop(opened);
        // The role outlives the database; it goes before the result is judged.
        owner
            .batch_execute(&format!("DROP OWNED BY {role}; DROP ROLE {role};"))
            .await
            .ok();
        assert!(matches!(tenant, Ok(true)), "{tenant:?}");
    }

    /// Rows as a schema-5 gateway wrote them (tenants without a record,
    /// events without a uid or labels, attempts without ids) read back through
    /// this build once migrations 6 and 7 have run: names default to the id,
    /// labels to none, and an attempt stays on its log but out of lists.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn rows_written_at_schema_5_read_back_after_migrations_6_and_7() {
        let db = ScratchDatabase::create()
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let mut c = client(&db.url).await;
        c.batch_execute(
            "CREATE TABLE hookgate_schema (version integer PRIMARY KEY, applied_at_ms bigint NOT NULL)",
        )
        .await
        .unwrap();
        for (version, sql) in MIGRATIONS.iter().filter(|(v, _)| *v <= 5) {
            c.batch_execute(sql).await.unwrap();
            let version = *version as i32;
            c.execute(
                "INSERT INTO hookgate_schema (version, applied_at_ms) VALUES ($1, 0)",
                &[&version],
            )
            .await
            .unwrap();
        }
        // As schema 5's statements wrote them.
        let endpoint = crate::store::testing::endpoint("acme", "ep_1");
        let mut old_record = serde_json::to_value(&endpoint).unwrap();
        for added in ["uid", "channels", "filter", "headers", "metadata"] {
            old_record.as_object_mut().unwrap().remove(added);
        }
        c.batch_execute(&format!(
            "INSERT INTO tenants (id, key_sha256, created_at_ms) VALUES ('acme', '{}', 7);
             INSERT INTO endpoints (tenant_id, id, timeout_ms, record)
                 VALUES ('acme', 'ep_1', 15000, '{}');
             INSERT INTO events (tenant_id, id, event_type, payload, created_at_ms, deliveries)
                 VALUES ('acme', 'evt_01', 'order.paid', '{{\"n\": 1}}', 8, '[]');
             INSERT INTO attempts (delivery_id, series, attempt, record)
                 VALUES ('dlv_01', 1, 1, '{}');",
            hex::encode([1u8; 32]),
            old_record.to_string().replace('\'', "''"),
            old_attempt().replace('\'', "''"),
        ))
        .await
        .unwrap();
        assert_eq!(migrate(&mut c).await.unwrap(), versions_after(5));
        let config = crate::config::StoreConfig {
            backend: crate::config::StoreBackend::Postgres,
            url: Some(db.url.clone()),
            ..crate::config::StoreConfig::default()
        };
        let store = crate::store::Store::open(&config).await.unwrap();
        let acme = TenantId::from("acme");
        let tenant = store.find_tenant("acme").await.unwrap().unwrap();
        assert_eq!(
            (
                tenant.name.as_str(),
                tenant.uid.as_deref(),
                tenant.created_at_ms
            ),
            ("acme", None, 7)
        );
        assert!(tenant.is_live());
        assert_eq!(
            store.tenant_by_key(&[1; 32]).await.unwrap().as_deref(),
            Some("acme")
        );
        let ep = store.find_endpoint(&acme, "ep_1").await.unwrap().unwrap();
        assert!(ep.uid.is_none() && ep.channels.is_empty() && ep.filter.is_none());
        let ev = store.find_event(&acme, "evt_01").await.unwrap().unwrap();
        assert_eq!(
            (ev.event_type.as_str(), ev.labels.is_empty()),
            ("order.paid", true)
        );
        let page = store
            .list_events(
                &acme,
                &crate::store::EventQuery {
                    limit: 10,
                    ..Default::default()
                },
                |_| true,
            )
            .await
            .unwrap();
        assert_eq!(page.data.len(), 1);
        let log = store
            .attempt_log(&acme, &crate::ids::DeliveryId::from("dlv_01"))
            .await
            .unwrap();
        assert_eq!(
            (log.len(), log[0].status, log[0].id.is_none()),
            (1, Some(200), true)
        );
        let attempts = store
            .list_attempts(
                &acme,
                &crate::store::AttemptScope::Tenant,
                &crate::store::AttemptQuery {
                    limit: 10,
                    ..Default::default()
                },
                |_| true,
            )
            .await
            .unwrap();
        assert!(
            attempts.data.is_empty(),
            "an attempt without an id is not listed"
        );
        // And a change made now keeps what was there.
        let renamed = store
            .update_tenant(&acme, |t| t.name = "Acme".into())
            .await
            .unwrap()
            .written()
            .unwrap();
        assert_eq!((renamed.name.as_str(), renamed.created_at_ms), ("Acme", 7));
        assert_eq!(
            store.tenant_by_key(&[1; 32]).await.unwrap().as_deref(),
            Some("acme")
        );
        store.close().await;
    }

    /// An attempt's record as a schema-5 gateway wrote it: no id, no headers.
    fn old_attempt() -> String {
        serde_json::json!({
            "series": 1, "attempt": 1, "started_at_ms": 9, "duration_ms": 3,
            "status": 200, "error_kind": null, "response_snippet": "ok",
            "verdict": "delivered", "delay_ms": null, "next_attempt_at_ms": null,
            "dead_reason": null, "decided_by": "builtin", "policy": "config:default",
            "node_id": "n1"
        })
        .to_string()
    }
}
