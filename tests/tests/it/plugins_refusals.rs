//! What the plugin platform refuses: each bad input named by its upload check,
//! oversize bodies, the upload rate limit, and `hookgate plugin-check` reporting
//! the same checks locally.

use hookgate_tests::{TestGateway, fixture_module, plugin_fixture, plugin_wasm, upload_example};

#[tokio::test]
async fn each_bad_plugin_is_refused_naming_its_check_and_uploads_are_rate_limited() {
    let gw = TestGateway::start().await;
    let key = gw.tenant("acme").await;
    let wasi = wat::parse_str(r#"(module (import "wasi_snapshot_preview1" "fd_write" (func (param i32 i32 i32 i32) (result i32))) (memory (export "memory") 1))"#).unwrap();
    let bad_types = wat::parse_str(r#"(module (memory (export "memory") 1) (func (export "hookgate:policy/decide@0.1.0#classify") (param i64) (result i64) local.get 0) (func (export "hookgate:policy/decide@0.1.0#next-delay") (param i32) (result i32) i32.const 0) (func (export "cabi_realloc") (param i32 i32 i32 i32) (result i32) i32.const 0))"#).unwrap();
    let big_memory = {
        let read = plugin_fixture;
        let prelude = read("prelude.wat").replace(
            r#"(memory (export "memory") 1)"#,
            r#"(memory (export "memory") 300)"#,
        );
        wat::parse_str(format!("(module\n{prelude}\n{})", read("tryagain.wat"))).unwrap()
    };
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "not wasm",
            b"{\"not\":\"wasm\"}".to_vec(),
            "check 3 validation",
        ),
        (
            "over the size limit",
            vec![0; 512 * 1024 + 1],
            "check 1 size",
        ),
        ("WASI imports", wasi, "check 6 imports"),
        ("wrong export types", bad_types, "check 4 componentize"),
        (
            "a component with other exports",
            wat::parse_str("(component)").unwrap(),
            "check 7 exports",
        ),
        ("memory over the limit", big_memory, "check 8 resources"),
        (
            "a conformance overrun",
            fixture_module("loop"),
            "check 9 conformance",
        ),
        (
            "a non-deterministic plugin",
            fixture_module("stateful"),
            "not deterministic",
        ),
    ];
    for (what, bytes, says) in cases {
        let (s, b) = gw.upload_plugin("acme", &key, "bad", bytes).await;
        assert_eq!(
            (s, b["error"]["code"].as_str()),
            (422, Some("plugin_rejected")),
            "{what}: {b}"
        );
        let message = b["error"]["message"].as_str().unwrap();
        assert!(message.contains(says), "{what}: {message}");
    }
    let (s, b) = gw
        .upload_plugin("acme", &key, "bad", vec![0; 4 * 512 * 1024 + 1])
        .await;
    assert_eq!(
        (s, b["error"]["code"].as_str()),
        (413, Some("payload_too_large")),
        "{b}"
    );
    let (s, list) = gw
        .call("GET", "/v1/tenants/acme/plugins", Some(&key), None)
        .await;
    assert_eq!(
        (s, list["data"].as_array().map(Vec::len)),
        (200, Some(0)),
        "nothing stored: {list}"
    );
    // Those were 9 uploads; the 10th passes, the 11th in the hour is refused.
    upload_example(&gw, &key, "good", "ladder", 1).await;
    let (s, b) = gw
        .upload_plugin("acme", &key, "good", plugin_wasm("ladder"))
        .await;
    assert_eq!(
        (s, b["error"]["code"].as_str()),
        (429, Some("rate_limited")),
        "{b}"
    );
}

#[test]
fn plugin_check_reports_usage_against_the_limits_or_names_the_check() {
    use hookgate::ops::plugin_check::{CheckFailure, check_file};
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("ladder.wasm");
    std::fs::write(&good, plugin_wasm("ladder")).unwrap();
    let report = check_file(&good, 512 * 1024).unwrap();
    for line in [
        "check 1 size",
        "check 5 compile",
        "check 9 conformance",
        "fuel of 10000000",
        "memory of 16.00 MiB",
        "most used",
        "passed checks 1-9",
    ] {
        assert!(report.contains(line), "{line}: {report}");
    }
    assert!(report.contains("after-ms(300000)"), "{report}");
    // The SDK builds 0.3.0 plugins; a 0.1.0 module is still checked as 0.1.0.
    for says in [
        "made a component of the host's hookgate:policy/plugin@0.3.0",
        "ok: hookgate:policy/decide@0.3.0 decide\n",
    ] {
        assert!(report.contains(says), "{says}: {report}");
    }
    let old = dir.path().join("tryagain.wasm");
    std::fs::write(&old, fixture_module("tryagain")).unwrap();
    let report = check_file(&old, 512 * 1024).unwrap();
    for says in [
        "made a component of the host's hookgate:policy/plugin@0.1.0",
        "ok: hookgate:policy/decide@0.1.0 classify, next-delay\n",
    ] {
        assert!(report.contains(says), "{says}: {report}");
    }
    let looping = dir.path().join("loop.wasm");
    std::fs::write(&looping, fixture_module("loop")).unwrap();
    match check_file(&looping, 512 * 1024) {
        Err(CheckFailure::Refused(r)) => {
            assert!(r.contains("refused by check 9 conformance"), "{r}")
        }
        other => panic!("{other:?}"),
    }
    match check_file(&good, 1_000) {
        Err(CheckFailure::Refused(r)) => assert!(r.contains("refused by check 1 size"), "{r}"),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        check_file(&dir.path().join("missing.wasm"), 1),
        Err(CheckFailure::Usage(_))
    ));
}
