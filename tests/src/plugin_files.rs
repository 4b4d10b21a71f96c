//! The plugins the tests load: the WAT fixtures under `tests/fixtures/plugins/`
//! and the example plugins under `plugins/`, built by this package's build script.

/// The text of a test plugin's file under `tests/fixtures/plugins/`.
pub fn plugin_fixture(file: &str) -> String {
    let path = format!("{}/fixtures/plugins/{file}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The test plugin `NAME.wat`, a core-module fragment, wrapped with the shared
/// prelude (`prelude.wat`), as module bytes.
pub fn fixture_module(name: &str) -> Vec<u8> {
    let text = format!(
        "(module\n{}\n{}\n)",
        plugin_fixture("prelude.wat"),
        plugin_fixture(&format!("{name}.wat"))
    );
    wat::parse_str(text).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// An example plugin from `plugins/` (`ladder`, `json-error-code`,
/// `event-type-cap`, `tutorial`, `broker-aware`, and the transforms
/// `rename-fields`, `slack-message`, `form-body`, `skip-by-field`), built for
/// `wasm32-unknown-unknown` by this package's build script.
pub fn plugin_wasm(name: &str) -> Vec<u8> {
    let stem = match name {
        "tutorial" => "retry_conflicts".to_owned(),
        other => format!("hookgate_plugin_{}", other.replace('-', "_")),
    };
    let path = format!("{}/{stem}.wasm", env!("HOOKGATE_PLUGINS_WASM_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}
