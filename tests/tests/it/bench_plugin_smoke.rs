//! A tiny run of the benchmark scenarios that need a real plugin (`plugin`,
//! `decision`, `deliver --transform`, `transform`), with `json-error-code` and
//! `rename-fields` built from this checkout. Speed is never
//! asserted; the scenarios fail (exit 1) if a delivery or a decision goes wrong.

use hookgate::lab::bench::{BenchCommand, Common, DecisionPath, run};

fn smoke() -> Common {
    Common {
        runs: 1,
        smoke: true,
        store_url: None,
        traced: false,
        destination: None,
        transform: None,
        validated: false,
    }
}

#[test]
fn plugin_and_decision_scenarios_run_with_a_real_plugin() {
    let dir = tempfile::tempdir().unwrap();
    let plugin = dir.path().join("json_error_code.wasm");
    std::fs::write(&plugin, hookgate_tests::plugin_wasm("json-error-code")).unwrap();
    let code = run(BenchCommand::Plugin {
        common: smoke(),
        plugin: plugin.clone(),
    });
    assert_eq!(code, 0, "bench plugin --smoke");
    let code = run(BenchCommand::Decision {
        common: smoke(),
        plugin,
        path: DecisionPath::Both,
    });
    assert_eq!(code, 0, "bench decision --smoke");
}

#[test]
fn transform_scenarios_run_with_the_field_renaming_transform() {
    let dir = tempfile::tempdir().unwrap();
    let shape = dir.path().join("rename_fields.wasm");
    std::fs::write(&shape, hookgate_tests::plugin_wasm("rename-fields")).unwrap();
    let policy = dir.path().join("json_error_code.wasm");
    std::fs::write(&policy, hookgate_tests::plugin_wasm("json-error-code")).unwrap();
    let code = run(BenchCommand::Deliver(Common {
        transform: Some(shape.clone()),
        ..smoke()
    }));
    assert_eq!(code, 0, "bench deliver --transform --smoke");
    let code = run(BenchCommand::Transform {
        common: smoke(),
        plugin: shape,
        policy,
    });
    assert_eq!(code, 0, "bench transform --smoke");
}
