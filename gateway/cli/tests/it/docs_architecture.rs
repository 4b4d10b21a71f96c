//! `docs/architecture.md` is a checked map: its table of which server module may
//! import which is the rule every `crate::` path in `gateway/server/src` keeps,
//! and every file, `file::function` and `file::Type::method` it names exists.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const DOC: &str = include_str!("../../../../docs/architecture.md");
/// The section holding the import table.
const IMPORTS: &str = "## Module imports";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn server_src() -> PathBuf {
    repo().join("gateway/server/src")
}

/// A module's row: what its code may import, and what its tests may import besides.
#[derive(Debug, Default)]
struct Rule {
    code: BTreeSet<String>,
    tests: BTreeSet<String>,
}

/// The modules named in one cell: backticked names, or none for "nothing".
fn names(cell: &str) -> BTreeSet<String> {
    cell.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

/// The import table: `| module | may import | its tests may also import |`.
fn rules(doc: &str) -> BTreeMap<String, Rule> {
    let (_, section) = doc
        .split_once(IMPORTS)
        .unwrap_or_else(|| panic!("docs/architecture.md has no `{IMPORTS}` section"));
    let section = section.split("\n## ").next().unwrap_or_default();
    let mut rules = BTreeMap::new();
    for line in section.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.trim_matches('|').split('|').collect();
        assert_eq!(cells.len(), 3, "an import row has three cells: {line}");
        let module = names(cells[0]);
        assert_eq!(module.len(), 1, "one module per row: {line}");
        let module = module.into_iter().next().unwrap();
        let rule = Rule {
            code: names(cells[1]),
            tests: names(cells[2]),
        };
        assert!(
            rules.insert(module.clone(), rule).is_none(),
            "`{module}` has two rows"
        );
    }
    assert!(!rules.is_empty(), "the import table has no rows");
    rules
}

/// Whether a file under `src/` is test code as a whole.
fn is_test_file(relative: &Path) -> bool {
    let name = relative.file_name().and_then(|n| n.to_str()).unwrap_or("");
    name.ends_with("_tests.rs") || name == "tests.rs" || name == "testing.rs"
}

/// The code and the test code of one file, comments removed. An inline test
/// module is the file's tail from its `#[cfg(test)]` `mod` on.
fn split_code(text: &str, whole_file_is_test: bool) -> (String, String) {
    let mut code = String::new();
    let mut tests = String::new();
    let mut in_tests = whole_file_is_test;
    let mut pending_cfg_test = false;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("//") {
            continue;
        }
        if pending_cfg_test && trimmed.starts_with("mod ") && trimmed.ends_with('{') {
            in_tests = true;
        }
        pending_cfg_test =
            trimmed == "#[cfg(test)]" || (pending_cfg_test && trimmed.starts_with("#["));
        let line = line.split(" //").next().unwrap_or_default();
        let out = if in_tests { &mut tests } else { &mut code };
        out.push_str(line);
        out.push('\n');
    }
    (code, tests)
}

/// The top-level modules a text names with `crate::x` (or `$crate::x`), also
/// inside `crate::{x, y::z}`.
fn imported(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    for (i, _) in text.match_indices("crate::") {
        let before = text[..i].chars().next_back();
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &text[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let group = &group[..group.find('}').unwrap_or(group.len())];
            for item in group.split(',') {
                let name = ident(item.trim());
                if !name.is_empty() {
                    found.insert(name);
                }
            }
        } else {
            let name = ident(rest);
            if !name.is_empty() {
                found.insert(name);
            }
        }
    }
    found
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every import the table forbids, as `file: module imports x`.
fn forbidden_imports(rules: &BTreeMap<String, Rule>, src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let mut wrong = Vec::new();
    for file in files {
        let relative = file.strip_prefix(src).unwrap();
        // A top-level `x_tests.rs` holds the tests of `x.rs`.
        let first = relative.components().next().unwrap().as_os_str();
        let first = first.to_str().unwrap().trim_end_matches(".rs");
        let module = first.trim_end_matches("_tests").to_owned();
        let Some(rule) = rules.get(&module) else {
            wrong.push(format!(
                "{}: module `{module}` has no row in the import table",
                relative.display()
            ));
            continue;
        };
        let text = std::fs::read_to_string(&file).unwrap();
        let (code, tests) = split_code(&text, is_test_file(relative));
        for (what, text, allowed) in [
            ("code", &code, rule.code.clone()),
            (
                "tests",
                &tests,
                rule.code.union(&rule.tests).cloned().collect(),
            ),
        ] {
            for target in imported(text) {
                if target != module && !allowed.contains(&target) {
                    wrong.push(format!(
                        "{} ({what}): `{module}` imports `crate::{target}`",
                        relative.display()
                    ));
                }
            }
        }
    }
    wrong
}

#[test]
fn every_server_import_is_one_the_table_allows() {
    let rules = rules(DOC);
    let wrong = forbidden_imports(&rules, &server_src());
    assert!(
        wrong.is_empty(),
        "imports docs/architecture.md ({IMPORTS}) forbids:\n{}",
        wrong.join("\n")
    );
    // Every module the table allows to be imported is one that exists.
    for (module, rule) in &rules {
        for target in rule.code.iter().chain(&rule.tests) {
            assert!(
                rules.contains_key(target),
                "`{module}` may import `{target}`, which has no row"
            );
        }
    }
}

#[test]
fn a_forbidden_import_is_found() {
    let src = tempfile::tempdir().unwrap();
    std::fs::write(
        src.path().join("policy.rs"),
        "//! Pure.\nuse crate::clock::Clock;\n// crate::store in a comment is not code\n\
         fn f() { crate::store::Store::open(); }\n\
         #[cfg(test)]\nmod tests {\n    use crate::{config, store::Store};\n}\n",
    )
    .unwrap();
    std::fs::write(src.path().join("clock.rs"), "//! Time.\n").unwrap();
    let doc = "## Module imports\n\n| module | may import | its tests may also import |\n\
               |---|---|---|\n| `clock` | | |\n| `policy` | `clock` | `config` |\n| `config` | | |\n";
    let wrong = forbidden_imports(&rules(doc), src.path());
    assert_eq!(
        wrong,
        [
            "policy.rs (code): `policy` imports `crate::store`",
            "policy.rs (tests): `policy` imports `crate::store`",
        ]
    );
}

/// The files of the repository (the build's, git's and npm's own left out), as
/// paths relative to its root with `/` separators.
fn repo_files() -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy();
            if path.is_dir() {
                if !matches!(&*name, "target" | ".git" | "node_modules" | "corpus") {
                    walk(root, &path, out);
                }
            } else {
                let relative = path.strip_prefix(root).unwrap();
                out.push(relative.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    let root = repo();
    let mut out = Vec::new();
    walk(&root, &root, &mut out);
    out
}

/// The repository files a path the doc gives may mean: the path from the root,
/// or any file or folder it ends (the doc names files from the module it is
/// talking about), `*` standing for any name.
fn resolve(path: &str, files: &[String]) -> Vec<String> {
    let dir = path.ends_with('/');
    let path = path.trim_end_matches('/');
    let matches = |candidate: &str| -> bool {
        let (head, tail) = match path.split_once('*') {
            Some((head, tail)) => (head, Some(tail)),
            None => (path, None),
        };
        let fits = |at: &str| match tail {
            None => at == path,
            Some(tail) => {
                at.len() >= head.len() + tail.len()
                    && at.starts_with(head)
                    && at.ends_with(tail)
                    && !at[head.len()..at.len() - tail.len()].contains('/')
            }
        };
        fits(candidate)
            || candidate
                .match_indices('/')
                .any(|(i, _)| fits(&candidate[i + 1..]))
    };
    let mut found = BTreeSet::new();
    for file in files {
        if !dir && matches(file) {
            found.insert(file.clone());
        }
        // Folders: every prefix of a file's path.
        for (i, _) in file.match_indices('/') {
            if matches(&file[..i]) {
                found.insert(file[..i].to_owned());
            }
        }
    }
    found.into_iter().collect()
}

/// Whether `text` defines `name`: a function, module or constant when it is
/// lowercase or all caps, a type or trait (or an `impl` of one) when it is not.
fn defines(text: &str, name: &str) -> bool {
    let is_type = name.starts_with(|c: char| c.is_ascii_uppercase())
        && name.chars().any(|c| c.is_ascii_lowercase());
    let kinds: &[&str] = if is_type {
        &[
            "struct ", "enum ", "trait ", "type ", "union ", "impl ", "for ",
        ]
    } else {
        &["fn ", "mod ", "const ", "static ", "macro_rules! "]
    };
    kinds.iter().any(|kind| {
        text.match_indices(&format!("{kind}{name}")).any(|(i, m)| {
            let after = text[i + m.len()..].chars().next();
            !after.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        })
    })
}

/// What the doc names in backticks that is a path (has a `/` or ends in a file
/// extension) or a `file.rs::item`, each with the problem if it does not exist.
fn broken_references(doc: &str, files: &[String]) -> Vec<String> {
    let mut broken = Vec::new();
    for token in doc.split('`').skip(1).step_by(2) {
        if token.contains(' ') || token.contains("://") || token.starts_with('/') {
            continue;
        }
        let (path, items) = match token.split_once(".rs::") {
            Some((file, items)) => (format!("{file}.rs"), Some(items)),
            None => (token.to_owned(), None),
        };
        let is_path = path.contains('/')
            || [
                ".rs", ".md", ".json", ".sql", ".wit", ".toml", ".sh", ".js", ".mjs",
            ]
            .iter()
            .any(|ext| path.ends_with(ext));
        if !is_path {
            continue;
        }
        let found = resolve(&path, files);
        if found.is_empty() {
            broken.push(format!("`{token}`: no such file or folder"));
            continue;
        }
        let Some(items) = items else { continue };
        let defined = found.iter().any(|file| {
            let text = std::fs::read_to_string(repo().join(file)).unwrap_or_default();
            items.split("::").all(|item| defines(&text, item))
        });
        if !defined {
            broken.push(format!(
                "`{token}`: {} does not define `{items}`",
                found.join(", ")
            ));
        }
    }
    broken
}

#[test]
fn every_path_and_function_the_map_names_exists() {
    let files = repo_files();
    let broken = broken_references(DOC, &files);
    assert!(
        broken.is_empty(),
        "docs/architecture.md names what is not there:\n{}",
        broken.join("\n")
    );
}

#[test]
fn a_missing_path_or_function_is_found() {
    let files = repo_files();
    let doc = "`gateway/server/src/lib.rs::run` and `api/mod.rs::router`, `store/nowhere.rs`, \
               `lib.rs::no_such_function`, `store/postgres/migrations/*.sql`, `docs/`, \
               `docs/*.nothing`";
    let broken = broken_references(doc, &files);
    assert_eq!(broken.len(), 3, "{broken:#?}");
    assert_eq!(broken[0], "`store/nowhere.rs`: no such file or folder");
    assert!(
        broken[1].starts_with("`lib.rs::no_such_function`: ")
            && broken[1].ends_with("does not define `no_such_function`"),
        "{}",
        broken[1]
    );
    assert_eq!(broken[2], "`docs/*.nothing`: no such file or folder");
}

/// The files outside a backend's folder that name it, as `file: store::x`.
fn backend_crossings(src: &Path) -> BTreeSet<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut found = BTreeSet::new();
    for file in files {
        let relative = file
            .strip_prefix(src)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let text = std::fs::read_to_string(&file).unwrap();
        let code: String = text
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        for backend in ["sled", "postgres"] {
            let home = format!("store/{backend}/");
            // The facade's own files reach a backend as `super::x` or `self::x`.
            let names = [
                format!("store::{backend}::"),
                format!("super::{backend}::"),
                format!("super::super::{backend}::"),
            ];
            let in_store = relative.starts_with("store/");
            let named = names
                .iter()
                .enumerate()
                .any(|(i, n)| (i == 0 || in_store) && code.contains(n.as_str()));
            if named && !relative.starts_with(&home) {
                found.insert(format!("{relative}: store::{backend}"));
            }
        }
    }
    found
}

#[test]
fn only_the_documented_files_reach_into_a_backend() {
    // The store facade's `mod.rs` holds `enum Backend` (as `self::`); the lab
    // face re-exports the raw references and the durability seam; the store's
    // test fixtures make states no facade call makes, each backend its own way.
    let expected: BTreeSet<String> = [
        "lib.rs: store::postgres",
        "lib.rs: store::sled",
        "store/testing.rs: store::sled",
    ]
    .map(str::to_owned)
    .into();
    assert_eq!(backend_crossings(&server_src()), expected);
}
