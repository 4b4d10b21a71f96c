//! The plugin API's bookkeeping: listing, showing and deleting (409 while bound),
//! tenant isolation, and plugins preloaded from the config.

use std::sync::Arc;

use hookgate_tests::{Backend, TestGateway, plugin_wasm, test_config, upload_example};
use serde_json::json;

hookgate_tests::on_each_backend! {
    plugins_are_listed_shown_and_deleted_only_when_unbound,
    tenants_cannot_see_or_bind_each_others_plugins,
}

async fn plugins_are_listed_shown_and_deleted_only_when_unbound(backend: Backend) {
    let gw = TestGateway::start_on(backend).await;
    let key = gw.tenant("acme").await;
    upload_example(&gw, &key, "ladder", "ladder", 1).await;
    upload_example(&gw, &key, "codes", "json-error-code", 1).await;
    let (s, list) = gw
        .call("GET", "/v1/tenants/acme/plugins", Some(&key), None)
        .await;
    assert_eq!(s, 200, "{list}");
    let names: Vec<&str> = list["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["codes", "ladder"]);
    let ladder = &list["data"][1];
    assert_eq!(
        (
            ladder["active_version"].as_u64(),
            ladder["disabled"].as_bool()
        ),
        (Some(1), Some(false))
    );
    assert_eq!(ladder["source"], "upload");
    let v1 = &ladder["versions"][0];
    assert_eq!(
        (
            v1["active"].as_bool(),
            v1["disabled"].as_bool(),
            v1["loaded"].as_bool()
        ),
        (Some(true), Some(false), Some(true))
    );
    assert_eq!(
        v1["size"].as_u64(),
        Some(plugin_wasm("ladder").len() as u64)
    );

    let ep = gw
        .endpoint(
            "acme",
            &key,
            json!({"url": "http://127.0.0.1:9/x", "plugin": "ladder@1"}),
        )
        .await;
    let (s, b) = gw
        .call(
            "DELETE",
            "/v1/tenants/acme/plugins/ladder",
            Some(&key),
            None,
        )
        .await;
    assert_eq!(
        (s, b["error"]["code"].as_str()),
        (409, Some("conflict")),
        "{b}"
    );
    let path = format!("/v1/tenants/acme/endpoints/{}", ep["id"].as_str().unwrap());
    assert_eq!(gw.call("DELETE", &path, Some(&key), None).await.0, 204);
    assert_eq!(
        gw.call(
            "DELETE",
            "/v1/tenants/acme/plugins/ladder",
            Some(&key),
            None
        )
        .await
        .0,
        204
    );
    assert_eq!(
        gw.call("GET", "/v1/tenants/acme/plugins/ladder", Some(&key), None)
            .await
            .0,
        404
    );
    assert_eq!(
        gw.call(
            "DELETE",
            "/v1/tenants/acme/plugins/ladder",
            Some(&key),
            None
        )
        .await
        .0,
        404
    );
    let (s, b) = gw
        .call(
            "POST",
            "/v1/tenants/acme/endpoints",
            Some(&key),
            Some(json!({"url": "http://127.0.0.1:9/x", "plugin": "ladder"})),
        )
        .await;
    assert_eq!(
        (s, b["error"]["field"].as_str()),
        (422, Some("plugin")),
        "{b}"
    );
}

async fn tenants_cannot_see_or_bind_each_others_plugins(backend: Backend) {
    let gw = TestGateway::start_on(backend).await;
    let key = gw.tenant("acme").await;
    let other = gw.tenant("globex").await;
    upload_example(&gw, &key, "codes", "json-error-code", 1).await;
    for path in ["/v1/tenants/acme/plugins", "/v1/tenants/acme/plugins/codes"] {
        let (s, b) = gw.call("GET", path, Some(&other), None).await;
        assert_eq!(s, 404, "{path}: {b}");
    }
    for (method, path) in [
        ("DELETE", "/v1/tenants/acme/plugins/codes"),
        ("POST", "/v1/tenants/acme/plugins/codes/rollback"),
    ] {
        assert_eq!(
            gw.call(method, path, Some(&other), None).await.0,
            404,
            "{method} {path}"
        );
    }
    let (s, _) = gw
        .upload_plugin("acme", &other, "codes", plugin_wasm("ladder"))
        .await;
    assert_eq!(s, 404);
    let (s, b) = gw
        .call(
            "POST",
            "/v1/tenants/globex/endpoints",
            Some(&other),
            Some(json!({"url": "http://127.0.0.1:9/x", "plugin": "codes"})),
        )
        .await;
    assert_eq!(
        (s, b["error"]["field"].as_str()),
        (422, Some("plugin")),
        "{b}"
    );
    let (s, list) = gw
        .call("GET", "/v1/tenants/globex/plugins", Some(&other), None)
        .await;
    assert_eq!((s, list["data"].as_array().map(Vec::len)), (200, Some(0)));
    // The same name is the other tenant's own plugin, numbered on its own.
    let (s, b) = gw
        .upload_plugin("globex", &other, "codes", plugin_wasm("ladder"))
        .await;
    assert_eq!((s, b["version"].as_u64()), (201, Some(1)), "{b}");
    let (_, mine) = gw
        .call("GET", "/v1/tenants/acme/plugins/codes", Some(&key), None)
        .await;
    assert_eq!(
        mine["size"].as_u64(),
        Some(plugin_wasm("json-error-code").len() as u64)
    );
}

/// A gateway with the example `json-error-code` preloaded for tenant `acme` as
/// `codes`, from `[[plugins.preload]]`.
pub(crate) async fn gateway_with_preloaded_codes() -> TestGateway {
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let path = dir.path().join("codes.wasm");
    std::fs::write(&path, plugin_wasm("json-error-code")).unwrap();
    let mut config = test_config(dir.path());
    config.plugins.preload.push(hookgate_server::PreloadPlugin {
        tenant: "acme".into(),
        name: "codes".into(),
        path,
    });
    TestGateway::start_with(
        config,
        Arc::clone(&dir),
        hookgate_server::RunOptions::default(),
    )
    .await
}

#[tokio::test]
async fn preloaded_plugins_are_listed_but_belong_to_the_config() {
    let gw = gateway_with_preloaded_codes().await;
    let key = gw.tenant("acme").await;
    upload_example(&gw, &key, "ladder", "ladder", 1).await;
    let (_, list) = gw
        .call("GET", "/v1/tenants/acme/plugins", Some(&key), None)
        .await;
    let sources: Vec<(&str, &str)> = list["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["name"].as_str().unwrap(), p["source"].as_str().unwrap()))
        .collect();
    assert_eq!(
        sources,
        [("codes", "preload"), ("ladder", "upload")],
        "{list}"
    );
    let (s, b) = gw
        .upload_plugin("acme", &key, "codes", plugin_wasm("ladder"))
        .await;
    assert_eq!(
        (s, b["error"]["code"].as_str()),
        (409, Some("conflict")),
        "{b}"
    );
    let (s, _) = gw
        .call(
            "POST",
            "/v1/tenants/acme/plugins/codes/rollback",
            Some(&key),
            None,
        )
        .await;
    assert_eq!(s, 409);
}
