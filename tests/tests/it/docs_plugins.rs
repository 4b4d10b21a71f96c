//! docs/plugins.md shows the tutorial plugin's files in full: each code block after
//! a `<!-- file: PATH -->` marker must equal that file in the workspace, and every
//! file of `plugins/tutorial` must be shown.

use std::path::Path;

/// `(path, block)` for each marked code block of `doc`.
fn marked_blocks(doc: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut lines = doc.lines();
    while let Some(line) = lines.next() {
        let Some(path) = line
            .trim()
            .strip_prefix("<!-- file: ")
            .and_then(|rest| rest.strip_suffix(" -->"))
        else {
            continue;
        };
        let fence = lines.next().unwrap_or_default();
        assert!(
            fence.starts_with("```"),
            "{path}: the marker must precede a code block"
        );
        let mut block = String::new();
        for line in lines.by_ref() {
            if line.starts_with("```") {
                break;
            }
            block.push_str(line);
            block.push('\n');
        }
        out.push((path.to_owned(), block));
    }
    out
}

#[test]
fn the_tutorial_shows_the_tutorial_plugin_exactly() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let doc = std::fs::read_to_string(root.join("docs/plugins.md")).unwrap();
    let blocks = marked_blocks(&doc);
    let shown: Vec<&str> = blocks.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(
        shown,
        ["plugins/tutorial/Cargo.toml", "plugins/tutorial/src/lib.rs"]
    );
    for (path, block) in &blocks {
        let file = std::fs::read_to_string(root.join(path)).unwrap();
        assert_eq!(
            block, &file,
            "docs/plugins.md's block for {path} differs from the file"
        );
    }
}
