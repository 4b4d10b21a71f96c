//! Both `hookgate:policy` versions in a running gateway: the SDK-built examples
//! target 0.2.0 (one `decide` call), the WAT fixtures 0.1.0 (`classify`, then
//! `next-delay`), and a gateway takes and runs both side by side.

use std::time::Duration;

use hookgate_server::{PluginHost, WitVersion};
use hookgate_tests::{
    Backend, TestGateway, body_receiver, fixture_module, is_final, plugin_wasm, upload_example,
};
use serde_json::json;

hookgate_tests::on_each_backend! {
    a_0_1_0_and_a_0_2_0_plugin_each_decide_their_deliveries,
}

const WAIT: Duration = Duration::from_secs(30);

#[test]
fn sdk_examples_target_0_2_0_and_0_1_0_fixtures_still_pass_the_checks() {
    let host = PluginHost::new(512 * 1024).unwrap();
    for example in ["ladder", "json-error-code", "event-type-cap", "tutorial"] {
        let checked = host.check(&plugin_wasm(example)).unwrap();
        assert_eq!(checked.wit, WitVersion::V0_2_0, "{example}");
        assert!(checked.componentized, "{example}");
    }
    for (fixture, version) in [
        ("tryagain", WitVersion::V0_1_0),
        ("tryagain_0_2", WitVersion::V0_2_0),
    ] {
        let checked = host.check(&fixture_module(fixture)).unwrap();
        assert_eq!(checked.wit, version, "{fixture}");
    }
}

async fn a_0_1_0_and_a_0_2_0_plugin_each_decide_their_deliveries(backend: Backend) {
    let gw = TestGateway::start_on(backend).await;
    let key = gw.tenant("acme").await;
    let (s, b) = gw
        .upload_plugin("acme", &key, "old", fixture_module("tryagain"))
        .await;
    assert_eq!(s, 201, "{b}");
    upload_example(&gw, &key, "new", "json-error-code", 1).await;
    for plugin in ["old", "new"] {
        let url = body_receiver(vec![(400, r#"{"error":"try_again"}"#)]).await;
        let body = json!({"url": url, "plugin": plugin, "event_types": [plugin]});
        gw.endpoint("acme", &key, body).await;
        let ev = gw.event("acme", &key, plugin, json!({"n": 1})).await;
        let dlv = ev["deliveries"][0]["id"].as_str().unwrap();
        let d = gw.wait_delivery("acme", &key, dlv, WAIT, is_final).await;
        assert_eq!(
            (d["state"].as_str(), d["attempts"].as_u64()),
            (Some("succeeded"), Some(2)),
            "{plugin}: {d}"
        );
        let first = &d["attempt_log"][0];
        assert_eq!(
            (first["verdict"].as_str(), first["decided_by"].as_str()),
            (Some("retry"), Some(format!("plugin:{plugin}@1").as_str())),
            "{plugin}: {d}"
        );
    }
}
