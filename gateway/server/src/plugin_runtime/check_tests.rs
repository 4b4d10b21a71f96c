//! Upload checks 1–9 and the artifact cache, against the WAT fixtures under
//! `tests/fixtures/plugins/`.

use super::*;
use super::{MissingBytes, StoredPlugin, StoredVersion};

const LIMIT: usize = 512 * 1024;

fn fixture(name: &str) -> String {
    let path = format!(
        "{}/../../tests/fixtures/plugins/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn module(name: &str) -> Vec<u8> {
    let text = format!(
        "(module\n{}\n{})",
        fixture("prelude.wat"),
        fixture(&format!("{name}.wat"))
    );
    wat::parse_str(text).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn refusal(bytes: &[u8]) -> (&'static str, String) {
    let err = PluginHost::new(LIMIT).unwrap().check(bytes).unwrap_err();
    (
        err.check().expect("a refusal names its check"),
        err.to_string(),
    )
}

#[test]
fn a_well_behaved_plugin_passes_and_reports_its_usage() {
    let checked = PluginHost::new(LIMIT)
        .unwrap()
        .check(&module("tryagain"))
        .unwrap();
    assert!(checked.componentized);
    assert_eq!(checked.sha256.len(), 64);
    let report = &checked.conformance;
    assert!(report.samples.len() >= 10);
    assert_eq!(report.fuel_limit, FUEL_PER_DECISION);
    for s in &report.samples {
        assert!(
            s.usage.fuel > 0 && s.usage.fuel < FUEL_PER_DECISION,
            "{s:?}"
        );
        assert!(s.usage.memory_bytes >= 64 * 1024, "{s:?}");
    }
    let try_again = report
        .samples
        .iter()
        .find(|s| s.name.contains("try_again"))
        .unwrap();
    assert_eq!(try_again.answer, "retry, after-ms(1000)");
}

#[test]
fn each_bad_input_is_refused_by_the_check_that_catches_it() {
    assert_eq!(refusal(&vec![0; LIMIT + 1]).0, "1 size");
    assert_eq!(refusal(b"GIF89a not wasm").0, "3 validation");
    let (check, msg) = refusal(&wat::parse_str(fixture("wasi.wat")).unwrap());
    assert_eq!(check, "6 imports");
    assert!(msg.contains("wasi_snapshot_preview1"), "{msg}");
    let (check, msg) = refusal(&wat::parse_str(fixture("wasi_component.wat")).unwrap());
    assert_eq!(check, "6 imports");
    assert!(msg.contains("wasi:random/random"), "{msg}");
    // A core module without the exports does not fit the world; a component that
    // exports something else fails the typed exports.
    let no_exports = wat::parse_str(r#"(module (memory (export "memory") 1))"#).unwrap();
    assert_eq!(refusal(&no_exports).0, "4 componentize");
    assert_eq!(
        refusal(&wat::parse_str("(component)").unwrap()).0,
        "7 exports"
    );
    let big = format!(
        "(module\n{}\n{})",
        fixture("prelude.wat").replace(
            r#"(memory (export "memory") 1)"#,
            r#"(memory (export "memory") 257)"#
        ),
        fixture("tryagain.wat")
    );
    let (check, msg) = refusal(&wat::parse_str(big).unwrap());
    assert_eq!(check, "8 resources");
    assert!(msg.contains("memory"), "{msg}");
}

#[test]
fn conformance_refuses_overruns_traps_and_hidden_state() {
    for (name, says) in [
        ("loop", "overran its fuel"),
        ("memory_bomb", "overran the memory limit"),
        ("trap", "failed: trap"),
        ("invalid_output", "failed: invalid_output"),
        ("stateful", "not deterministic"),
    ] {
        let (check, msg) = refusal(&module(name));
        assert_eq!(check, "9 conformance", "{name}: {msg}");
        assert!(msg.contains(says), "{name}: {msg}");
    }
}

fn record(checked: &CheckedPlugin) -> StoredPlugin {
    StoredPlugin {
        tenant_id: "acme".into(),
        name: "p".into(),
        versions: vec![StoredVersion {
            version: 1,
            sha256: checked.sha256.clone(),
            size: checked.size,
            created_at_ms: 5,
            disabled: false,
        }],
        active: 1,
    }
}

#[tokio::test]
async fn restarts_load_verified_artifacts_and_recompile_tampered_ones() {
    let dir = tempfile::tempdir().unwrap();
    let cache = || ArtifactCache::new(dir.path(), [9; 32]);
    let bytes = module("tryagain");
    let host = PluginHost::new(LIMIT).unwrap();
    host.attach_artifacts(cache());
    let checked = host.check(&bytes).unwrap();
    let rec = record(&checked);
    host.install("acme", "p", 1, 5, checked);
    let artifact = dir
        .path()
        .join(format!("plugin-artifacts/{}.cwasm", rec.versions[0].sha256));
    assert!(artifact.exists());

    // A verified artifact needs no bytes at all.
    let restarted = PluginHost::new(LIMIT).unwrap();
    restarted.attach_artifacts(cache());
    let no_bytes = |_| async { Ok::<_, MissingBytes>(None) };
    assert_eq!(restarted.restore(&rec, no_bytes).await.unwrap(), 1);
    assert_eq!(restarted.resolve("acme", "p"), Some(("p".into(), 1)));

    // A tampered artifact (or one under another key) is compiled again from the bytes.
    let mut file = std::fs::read(&artifact).unwrap();
    let last = file.len() - 1;
    file[last] ^= 1;
    std::fs::write(&artifact, &file).unwrap();
    let tampered = PluginHost::new(LIMIT).unwrap();
    tampered.attach_artifacts(cache());
    assert!(
        tampered.restore(&rec, no_bytes).await.is_err(),
        "the tampered artifact was used"
    );
    let with_bytes = |_| async { Ok::<_, MissingBytes>(Some(bytes.clone())) };
    assert_eq!(tampered.restore(&rec, with_bytes).await.unwrap(), 1);
    let other_key = PluginHost::new(LIMIT).unwrap();
    other_key.attach_artifacts(ArtifactCache::new(dir.path(), [1; 32]));
    assert!(
        other_key.restore(&rec, no_bytes).await.is_err(),
        "an artifact under another key was used"
    );
}

#[test]
fn rollback_and_removal_move_the_active_pointer() {
    let host = PluginHost::new(LIMIT).unwrap();
    for v in 1..=3 {
        let checked = host.check(&module("tryagain")).unwrap();
        host.install("acme", "p", v, v.into(), checked);
    }
    assert_eq!(host.resolve("acme", "p"), Some(("p".into(), 3)));
    assert!(host.set_active("acme", "p", 2));
    assert_eq!(host.resolve("acme", "p"), Some(("p".into(), 2)));
    assert_eq!(host.resolve("acme", "p@3"), Some(("p".into(), 3)));
    assert!(!host.set_active("acme", "p", 7));
    let view = host.view("acme", "p").unwrap();
    assert_eq!(
        (view.active, view.versions.len(), view.source),
        (2, 3, PluginSource::Upload)
    );
    assert!(host.view("other", "p").is_none());
    assert!(host.unload("acme", "p", &[]));
    assert_eq!(host.resolve("acme", "p"), None);
}
