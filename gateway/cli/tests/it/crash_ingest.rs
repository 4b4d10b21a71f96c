//! SIGKILL right after the 202s: every acknowledged event is there after a restart.

use crate::common::{ADMIN, Gateway, call};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_events_survive_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let gw = Gateway::spawn(dir.path(), &[]);
    let (s, t) = call(
        "POST",
        &format!("{}/v1/tenants", gw.base),
        ADMIN,
        Some(json!({"id": "acme"})),
    )
    .await;
    assert_eq!(s, 201);
    let key = t["api_key"].as_str().unwrap().to_owned();
    let eps = format!("{}/v1/tenants/acme/endpoints", gw.base);
    // Nothing listens on port 9: deliveries stay pending.
    assert_eq!(
        call(
            "POST",
            &eps,
            &key,
            Some(json!({"url": "http://127.0.0.1:9/"}))
        )
        .await
        .0,
        201
    );

    let mut tasks = Vec::new();
    for i in 0..64 {
        let (url, key) = (format!("{}/v1/tenants/acme/events", gw.base), key.clone());
        tasks.push(tokio::spawn(async move {
            call(
                "POST",
                &url,
                &key,
                Some(json!({"event_type": "crash.test", "payload": {"i": i}})),
            )
            .await
        }));
    }
    let mut acked = Vec::new();
    for t in tasks {
        let (s, b) = t.await.unwrap();
        assert_eq!(s, 202, "{b}");
        acked.push(b["id"].as_str().unwrap().to_owned());
    }
    gw.kill();

    let gw = Gateway::spawn(dir.path(), &[]);
    for id in &acked {
        let (s, ev) = call(
            "GET",
            &format!("{}/v1/tenants/acme/events/{id}", gw.base),
            &key,
            None,
        )
        .await;
        assert_eq!(s, 200, "acknowledged event {id} lost");
        assert_eq!(ev["deliveries"].as_array().unwrap().len(), 1);
    }
}
