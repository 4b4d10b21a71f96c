//! SIGKILL of the gateway running a background task (a tenant's delete, paced
//! slow on purpose): the task is neither lost nor left half done. After a
//! restart, the embedded store's one process takes it up again; on PostgreSQL
//! a new node takes it at once, the dead node's presence lock gone with it.

use std::time::Duration;

use hookgate_server::lab::ScratchDatabase;

use crate::common::{ADMIN, Gateway, call, tenant_with_endpoint_events};

/// Starts a gateway whose tasks step slowly, over `dir` and `store_env`.
fn slow_tasks_gateway(dir: &std::path::Path, store_env: &[(&str, &str)]) -> Gateway {
    let mut env = vec![
        ("HOOKGATE_TASKS__BATCH", "10"),
        ("HOOKGATE_TASKS__PAUSE", "200ms"),
    ];
    env.extend_from_slice(store_env);
    Gateway::spawn(dir, &env)
}

/// The task as the admin sees it.
async fn task(base: &str, id: &str) -> serde_json::Value {
    let (s, t) = call("GET", &format!("{base}/v1/tasks/{id}"), ADMIN, None).await;
    assert_eq!(s, 200, "{t}");
    t
}

async fn a_killed_task_is_resumed(store_env: &[(&str, &str)]) {
    let first_dir = tempfile::tempdir().unwrap();
    let gw = slow_tasks_gateway(first_dir.path(), store_env);
    let endpoint = serde_json::json!({"url": "http://127.0.0.1:9/closed"});
    let (key, _) = tenant_with_endpoint_events(&gw.base, endpoint, 60).await;
    let (s, t) = call(
        "DELETE",
        &format!("{}/v1/tenants/acme", gw.base),
        ADMIN,
        None,
    )
    .await;
    assert_eq!(s, 202, "{t}");
    let id = t["id"].as_str().unwrap().to_owned();
    // Kill it mid-way: some records removed, the task still running.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let t = task(&gw.base, &id).await;
        assert_eq!(t["state"], "running", "killed too late: {t}");
        if t["changed"].as_u64().unwrap() >= 20 {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "no progress: {t}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    gw.kill();

    // The same data dir on sled; another node's on PostgreSQL.
    let second_dir = tempfile::tempdir().unwrap();
    let dir = if store_env.is_empty() {
        first_dir.path()
    } else {
        second_dir.path()
    };
    let gw = slow_tasks_gateway(dir, store_env);
    let (s, _) = call(
        "GET",
        &format!("{}/v1/tenants/acme/endpoints", gw.base),
        &key,
        None,
    )
    .await;
    assert_eq!(s, 401, "the tenant stays deleted");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    let done = loop {
        let t = task(&gw.base, &id).await;
        if t["state"] != "running" {
            break t;
        }
        assert!(tokio::time::Instant::now() < deadline, "not resumed: {t}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(done["state"], "finished", "{done}");
    // 60 events and their deliveries, the endpoint: all counted once removed
    // (a step redone after the kill may count again, never fewer).
    assert!(done["changed"].as_u64().unwrap() >= 121, "{done}");
    let (s, b) = call(
        "POST",
        &format!("{}/v1/tenants", gw.base),
        ADMIN,
        Some(serde_json::json!({"id": "acme"})),
    )
    .await;
    assert_eq!(s, 201, "the id is free once the delete is done: {b}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_survives_sigkill_on_the_embedded_store() {
    a_killed_task_is_resumed(&[]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_survives_sigkill_of_its_node_on_postgres() {
    let db = ScratchDatabase::create()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let env = [
        ("HOOKGATE_STORE__BACKEND", "postgres"),
        ("HOOKGATE_STORE__URL", db.url.as_str()),
    ];
    a_killed_task_is_resumed(&env).await;
}
