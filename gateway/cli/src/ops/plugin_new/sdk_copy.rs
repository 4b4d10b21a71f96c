//! The plugin SDK's sources, built into the binary, so that `plugin new` can
//! write a copy next to a new plugin on a machine without a hookgate checkout.
//!
//! The SDK's manifest inherits fields and lints from the workspace; the copy gets
//! them written out, so that it builds on its own.

use toml::{Table, Value};

/// The SDK's file at `path`, read at compile time.
macro_rules! sdk_file {
    ($path:literal) => {
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../plugin-sdk/",
            $path
        ))
    };
}

/// The SDK's package name, which is also the copy's directory name.
pub(super) const SDK_PACKAGE: &str = "hookgate-plugin-sdk";

/// Every file the SDK is built from, as `(path in the crate, contents)`, except
/// its manifest (see [`standalone_manifest`]).
pub(super) const SDK_FILES: [(&str, &str); 10] = [
    ("src/lib.rs", sdk_file!("src/lib.rs")),
    ("src/arena.rs", sdk_file!("src/arena.rs")),
    ("src/attempt.rs", sdk_file!("src/attempt.rs")),
    ("src/export.rs", sdk_file!("src/export.rs")),
    ("src/json_fields.rs", sdk_file!("src/json_fields.rs")),
    ("src/response.rs", sdk_file!("src/response.rs")),
    ("src/transform.rs", sdk_file!("src/transform.rs")),
    (
        "src/transform_export.rs",
        sdk_file!("src/transform_export.rs"),
    ),
    ("wit/policy-0.3.0.wit", sdk_file!("wit/policy-0.3.0.wit")),
    (
        "wit/transform-0.1.0.wit",
        sdk_file!("wit/transform-0.1.0.wit"),
    ),
];

const SDK_MANIFEST: &str = sdk_file!("Cargo.toml");
const WORKSPACE_MANIFEST: &str =
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../Cargo.toml"));

/// The SDK's `Cargo.toml` with everything it inherits from the workspace written
/// out. An error means the embedded manifests are not what this expects (a bug
/// that the unit tests catch), never the user's input.
pub(super) fn standalone_manifest() -> Result<String, String> {
    let broken = |what: &str| format!("the built-in SDK manifest {what}");
    let mut sdk: Table = SDK_MANIFEST
        .parse()
        .map_err(|e| broken(&format!("does not parse: {e}")))?;
    let workspace: Table = WORKSPACE_MANIFEST
        .parse()
        .map_err(|e| broken(&format!("has a workspace that does not parse: {e}")))?;
    let shared = |key: &str| workspace.get("workspace").and_then(|w| w.get(key)).cloned();
    let shared_package = shared("package").unwrap_or(Value::Table(Table::new()));
    let package = sdk
        .get_mut("package")
        .and_then(Value::as_table_mut)
        .ok_or_else(|| broken("has no [package]"))?;
    for (key, value) in package.iter_mut() {
        if inherited(value) {
            *value = shared_package.get(key).cloned().ok_or_else(|| {
                broken(&format!(
                    "inherits package.{key}, which the workspace lacks"
                ))
            })?;
        }
    }
    if sdk.get("lints").is_some_and(inherited) {
        let lints = shared("lints").ok_or_else(|| broken("inherits lints the workspace lacks"))?;
        sdk.insert("lints".to_owned(), lints);
    }
    if mentions_workspace(&Value::Table(sdk.clone())) {
        return Err(broken("still inherits from the workspace"));
    }
    let body = toml::to_string(&sdk).map_err(|e| broken(&format!("cannot be written: {e}")))?;
    Ok(format!(
        "# hookgate-plugin-sdk {}, unpacked by `hookgate plugin new` with the values it\n\
         # inherits from the hookgate workspace written out.\n\n{body}",
        env!("CARGO_PKG_VERSION")
    ))
}

/// `{ workspace = true }`: taken from the workspace.
fn inherited(value: &Value) -> bool {
    value.get("workspace").and_then(Value::as_bool) == Some(true)
}

/// Whether any table in `value` inherits from the workspace.
fn mentions_workspace(value: &Value) -> bool {
    match value {
        Value::Table(t) => t.contains_key("workspace") || t.values().any(mentions_workspace),
        Value::Array(items) => items.iter().any(mentions_workspace),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::path::Path;

    use super::*;

    /// Every file under `dir`, relative to `root`, with `/` separators.
    fn files_under(root: &Path, dir: &Path, out: &mut BTreeSet<String>) {
        for entry in std::fs::read_dir(dir).expect("a readable SDK directory") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                files_under(root, &path, out);
            } else {
                let relative = path.strip_prefix(root).expect("under the root");
                out.insert(relative.to_string_lossy().replace('\\', "/"));
            }
        }
    }

    #[test]
    fn every_file_the_sdk_builds_from_is_embedded() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../plugin-sdk");
        let mut on_disk = BTreeSet::new();
        for dir in ["src", "wit"] {
            files_under(&root, &root.join(dir), &mut on_disk);
        }
        let embedded: BTreeSet<String> = SDK_FILES.iter().map(|(p, _)| (*p).to_owned()).collect();
        assert_eq!(
            embedded, on_disk,
            "SDK_FILES must list every file of plugin-sdk/src and plugin-sdk/wit"
        );
    }

    #[test]
    fn the_copys_manifest_stands_alone() {
        let manifest: Table = standalone_manifest()
            .expect("a manifest")
            .parse()
            .expect("TOML");
        assert!(!mentions_workspace(&Value::Table(manifest.clone())));
        let package = &manifest["package"];
        assert_eq!(package["name"].as_str(), Some(SDK_PACKAGE));
        assert_eq!(package["version"].as_str(), Some(env!("CARGO_PKG_VERSION")));
        assert_eq!(package["edition"].as_str(), Some("2024"));
        assert_eq!(
            manifest["lints"]["rust"]["unsafe_code"].as_str(),
            Some("deny")
        );
        assert!(manifest["dependencies"].get("serde_json").is_some());
        assert!(manifest["features"]["default"].as_array().is_some());
    }

    #[test]
    fn inheritance_is_recognised_at_any_depth() {
        let inherits: Table = "[a.b]\nc = { workspace = true }".parse().expect("TOML");
        assert!(mentions_workspace(&Value::Table(inherits)));
        let own: Table = "[a.b]\nc = \"1\"".parse().expect("TOML");
        assert!(!mentions_workspace(&Value::Table(own)));
    }
}
