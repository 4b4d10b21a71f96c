//! Builds the example plugins (`plugins/*`) for `wasm32-unknown-unknown`, so the
//! end-to-end tests upload real guests compiled from this checkout's source.
//!
//! The inner cargo gets its own `--target-dir` under
//! `OUT_DIR`, and none of the outer build's target or flag variables, or it would
//! wait forever on the outer build's lock (or build for the wrong target).

use std::path::PathBuf;
use std::process::Command;

/// The plugin packages built, as `(package, file stem)`.
const PLUGINS: [(&str, &str); 9] = [
    ("hookgate-plugin-ladder", "hookgate_plugin_ladder"),
    (
        "hookgate-plugin-json-error-code",
        "hookgate_plugin_json_error_code",
    ),
    (
        "hookgate-plugin-event-type-cap",
        "hookgate_plugin_event_type_cap",
    ),
    ("retry-conflicts", "retry_conflicts"),
    (
        "hookgate-plugin-broker-aware",
        "hookgate_plugin_broker_aware",
    ),
    (
        "hookgate-plugin-rename-fields",
        "hookgate_plugin_rename_fields",
    ),
    (
        "hookgate-plugin-slack-message",
        "hookgate_plugin_slack_message",
    ),
    ("hookgate-plugin-form-body", "hookgate_plugin_form_body"),
    (
        "hookgate-plugin-skip-by-field",
        "hookgate_plugin_skip_by_field",
    ),
];

const TARGET: &str = "wasm32-unknown-unknown";

fn main() {
    let manifest =
        PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let root = manifest.parent().expect("the workspace root").to_path_buf();
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    let target_dir = out.join("wasm-plugins");
    for watched in ["plugin-sdk", "plugins", "wit", "Cargo.lock"] {
        println!("cargo:rerun-if-changed={}", root.join(watched).display());
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut build = Command::new(cargo);
    build
        .current_dir(&root)
        .args(["build", "--release", "--target", TARGET, "--target-dir"])
        .arg(&target_dir);
    for (package, _) in PLUGINS {
        build.args(["-p", package]);
    }
    for var in [
        "CARGO_TARGET_DIR",
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_BUILD_TARGET",
        "RUSTC_WORKSPACE_WRAPPER",
        "RUSTC_WRAPPER",
    ] {
        build.env_remove(var);
    }
    let status = build
        .status()
        .expect("cannot run cargo for the wasm plugins");
    assert!(
        status.success(),
        "building the example plugins for {TARGET} failed ({status}); \
         if the target is missing: rustup target add {TARGET}"
    );
    let wasm_dir = target_dir.join(TARGET).join("release");
    for (_, stem) in PLUGINS {
        let file = wasm_dir.join(format!("{stem}.wasm"));
        assert!(file.exists(), "{} was not built", file.display());
    }
    println!(
        "cargo:rustc-env=HOOKGATE_PLUGINS_WASM_DIR={}",
        wasm_dir.display()
    );
}
