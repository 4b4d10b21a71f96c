//! `log_format = "json"`: every log line is one JSON object, and attempt lines
//! carry the ids an operator searches by.

use std::time::Duration;

use crate::common::{Gateway, SlowReceiver, tenant_endpoint_events, wait_all_succeeded};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_log_lines_parse_and_carry_the_ids() {
    let dir = tempfile::tempdir().unwrap();
    let rx = SlowReceiver::start(0).await;
    let gw = Gateway::spawn(dir.path(), &[]);
    let (key, ids) = tenant_endpoint_events(&gw.base, &rx.url, 3).await;
    assert!(
        wait_all_succeeded(&gw.base, &key, &ids, Duration::from_secs(30))
            .await
            .is_empty()
    );
    let logs = gw.logs();
    assert!(!logs.is_empty());
    let mut attempts = 0;
    for line in &logs {
        let v: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        if v["message"] == "attempt" {
            attempts += 1;
            for field in [
                "event_id",
                "delivery_id",
                "endpoint_id",
                "attempt",
                "status",
                "latency_ms",
                "decided_by",
            ] {
                assert!(
                    v.get(field).is_some_and(|f| !f.is_null()),
                    "{field} missing: {line}"
                );
            }
            assert!(ids.contains(&v["event_id"].as_str().unwrap().to_owned()));
            assert_eq!(v["status"], 200);
        }
    }
    assert_eq!(attempts, 3, "one attempt line per delivery");
}
