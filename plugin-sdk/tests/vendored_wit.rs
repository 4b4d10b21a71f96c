//! The SDK carries its own copy of the workspace's `wit/` so that it builds
//! outside a checkout; the workspace's stays the one to edit. This test keeps the
//! two byte for byte equal, file for file. It needs the checkout, so it is left
//! out of the published package.

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

#[test]
fn the_vendored_wit_is_the_workspaces_byte_for_byte() {
    let workspace = files_in(&sdk_dir().join("../wit"));
    let vendored = files_in(&sdk_dir().join("wit"));
    assert!(!workspace.is_empty(), "the workspace's wit/ has no files");
    let names = |m: &BTreeMap<String, Vec<u8>>| m.keys().cloned().collect::<Vec<_>>();
    assert_eq!(
        names(&vendored),
        names(&workspace),
        "plugin-sdk/wit/ must hold exactly the files of wit/; copy them with \
         `cp wit/*.wit plugin-sdk/wit/`"
    );
    for (name, bytes) in &workspace {
        assert!(
            vendored[name] == *bytes,
            "plugin-sdk/wit/{name} differs from wit/{name}; the workspace's is the \
             source: `cp wit/{name} plugin-sdk/wit/{name}`"
        );
    }
}
