//! Tenant fairness, item 5: the plugin upload limit (10 per tenant in any
//! rolling hour) is kept in the store, so it holds for every node of a cluster
//! and is not forgotten when a gateway restarts.

use hookgate_server::RunOptions;
use hookgate_tests::{Backend, TestGateway};

hookgate_tests::on_each_backend! {
    the_plugin_upload_limit_holds_across_nodes_and_restarts,
}

/// Uploads bytes that the first checks refuse at once: each still counts.
async fn upload(gw: &TestGateway, key: &str) -> (u16, String) {
    let (status, body) = gw
        .upload_plugin("acme", key, "policy", b"not a wasm module".to_vec())
        .await;
    (
        status,
        body["error"]["code"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
    )
}

async fn the_plugin_upload_limit_holds_across_nodes_and_restarts(backend: Backend) {
    let bed = backend.bed().await;
    let other = bed.another_node();
    let gw = TestGateway::start_bed(bed.clone(), RunOptions::default()).await;
    let key = gw.tenant("acme").await;
    for n in 0..10 {
        let (status, code) = upload(&gw, &key).await;
        assert_eq!(
            (status, code.as_str()),
            (422, "plugin_rejected"),
            "upload {n}"
        );
    }
    let limited = (429, "rate_limited".to_owned());
    if let Some(other) = other {
        let second = TestGateway::start_bed(other, RunOptions::default()).await;
        assert_eq!(
            upload(&second, &key).await,
            limited,
            "another node counts them too"
        );
        second.stop().await;
    }
    gw.stop().await;
    let restarted = TestGateway::start_bed(bed, RunOptions::default()).await;
    assert_eq!(
        upload(&restarted, &key).await,
        limited,
        "a restart forgets nothing"
    );
    restarted.stop().await;
}
