//! The SDK carries its own copy of the WIT package it targets
//! (`hookgate:policy@0.3.0`, `hookgate:transform@0.1.0`) so that it builds outside a checkout; the
//! workspace's `wit/` stays the one to edit. This test keeps each vendored file
//! byte for byte equal to the workspace's file of the same name. It needs the
//! checkout, so it is left out of the published package.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Every file directly in `dir`, by name, with its bytes.
fn files_in(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let entries =
        std::fs::read_dir(dir).unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()));
    entries
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.is_file())
        .map(|path| {
            let name = path.file_name().expect("a file name").to_string_lossy();
            let bytes = std::fs::read(&path)
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
            (name.into_owned(), bytes)
        })
        .collect()
}

fn sdk_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// What the SDK vendors: the package its `wit_bindgen::generate!` reads. The
/// workspace's older packages (`policy.wit`, 0.1.0, and `policy-0.2.0.wit`) stay
/// out: the SDK does not target them.
const VENDORED: [&str; 2] = ["policy-0.3.0.wit", "transform-0.1.0.wit"];

#[test]
fn the_vendored_wit_is_the_workspaces_byte_for_byte() {
    let workspace = files_in(&sdk_dir().join("../wit"));
    let vendored = files_in(&sdk_dir().join("wit"));
    let names: Vec<&str> = vendored.keys().map(String::as_str).collect();
    assert_eq!(
        names, VENDORED,
        "plugin-sdk/wit/ must hold exactly the package the SDK targets"
    );
    for (name, bytes) in &vendored {
        let source = workspace
            .get(name)
            .unwrap_or_else(|| panic!("wit/{name} is missing from the workspace"));
        assert!(
            bytes == source,
            "plugin-sdk/wit/{name} differs from wit/{name}; the workspace's is the \
             source: `cp wit/{name} plugin-sdk/wit/{name}`"
        );
    }
}

#[test]
fn the_sdk_generates_from_the_vendored_packages() {
    for (file, name) in [
        ("src/export.rs", VENDORED[0]),
        ("src/transform_export.rs", VENDORED[1]),
    ] {
        let export = std::fs::read_to_string(sdk_dir().join(file)).expect(file);
        assert!(
            export.contains(&format!("path: \"wit/{name}\"")),
            "{file} must generate from wit/{name}"
        );
    }
}
