//! `hookgate plugin new NAME [--kind policy|transform] [--dir D]`: a new plugin
//! crate that builds on its own, outside any hookgate checkout. It holds a
//! retry-policy or payload-transform skeleton with native tests (a transform
//! also an `event.json` to try it on), a README with the commands to test,
//! build, check and upload it, and, unless the SDK is to come from git or
//! crates.io, a copy of the SDK next to it.
//!
//! Exit codes: 0 created; 2 a bad name or SDK source, a target that exists and is
//! not an empty directory, or a file that cannot be written.

mod files;
mod sdk_copy;

use std::path::{Path, PathBuf};

pub use files::{SdkSource, plugin_files};

/// Arguments of `plugin new`.
#[derive(clap::Args, Debug)]
pub struct PluginNewArgs {
    /// The plugin's name: its package name, and the name to upload it under. 1 to
    /// 63 of a-z, 0-9, - and _, starting with a letter.
    pub name: String,
    /// What the plugin is: a retry policy (decides after a failed attempt) or a
    /// payload transform (reshapes or skips each attempt's request).
    #[arg(long, value_enum, default_value_t = ScaffoldKind::Policy)]
    pub kind: ScaffoldKind,
    /// The directory to create it in (default: ./NAME); it must not exist, or be
    /// empty.
    #[arg(long, value_name = "D")]
    pub dir: Option<PathBuf>,
    /// Take the SDK from this git repository instead of a copy next to the plugin.
    #[arg(long, value_name = "URL", conflicts_with = "sdk_version")]
    pub sdk_git: Option<String>,
    /// Take this version of the SDK from crates.io instead of a copy next to the
    /// plugin.
    #[arg(long, value_name = "V")]
    pub sdk_version: Option<String>,
}

/// The kind of plugin `plugin new` creates.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScaffoldKind {
    /// A retry policy (`hookgate:policy`), bound by an endpoint's `plugin`.
    Policy,
    /// A payload transform (`hookgate:transform`), bound by its `transform`.
    Transform,
}

/// Why no plugin was created; every case is the user's to fix.
#[derive(Debug, thiserror::Error)]
pub enum PluginNewError {
    /// NAME cannot be a plugin's name.
    #[error("invalid plugin name `{name}`: {why}")]
    BadName { name: String, why: String },
    /// `--sdk-git` or `--sdk-version` is unusable.
    #[error("{0}")]
    BadSdk(String),
    /// The target exists and is not an empty directory.
    #[error("{} already exists and is not an empty directory; choose another --dir", .0.display())]
    Occupied(PathBuf),
    /// A file could not be created.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Runs `plugin new`; returns the exit code.
pub fn run(args: &PluginNewArgs) -> i32 {
    match create(args) {
        Ok(dir) => {
            print!("{}", next_steps(&args.name, args.kind, &dir));
            0
        }
        Err(e) => {
            eprintln!("hookgate plugin new: {e}");
            2
        }
    }
}

/// Creates the plugin; returns its directory.
///
/// # Errors
/// See [`PluginNewError`]; nothing is written unless NAME, the SDK source and
/// the directory are all usable.
pub fn create(args: &PluginNewArgs) -> Result<PathBuf, PluginNewError> {
    check_name(&args.name).map_err(|why| PluginNewError::BadName {
        name: args.name.clone(),
        why,
    })?;
    let sdk = SdkSource::from_flags(args.sdk_git.as_deref(), args.sdk_version.as_deref())
        .map_err(PluginNewError::BadSdk)?;
    let dir = args
        .dir
        .clone()
        .unwrap_or_else(|| PathBuf::from(&args.name));
    check_free(&dir)?;
    for (relative, contents) in plugin_files(&args.name, args.kind, &sdk) {
        let path = dir.join(relative);
        write_file(&path, &contents).map_err(|source| PluginNewError::Write { path, source })?;
    }
    Ok(dir)
}

/// Whether NAME can be a plugin's name: a valid package name and upload name,
/// whose library name is not a keyword or a built-in crate.
///
/// # Errors
/// Why not, in words.
pub fn check_name(name: &str) -> Result<(), String> {
    const RULE: &str = "use 1 to 63 of a-z, 0-9, - and _, starting with a letter";
    let mut chars = name.chars();
    let first_is_letter = chars.next().is_some_and(|c| c.is_ascii_lowercase());
    let rest_allowed =
        chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "-_".contains(c));
    if !first_is_letter || !rest_allowed || name.len() > 63 {
        return Err(RULE.to_owned());
    }
    let lib_name = name.replace('-', "_");
    if KEYWORDS.contains(&lib_name.as_str()) {
        return Err(format!(
            "`{lib_name}` is a Rust keyword, and cannot name a library"
        ));
    }
    if RESERVED.contains(&lib_name.as_str()) {
        return Err(format!(
            "`{lib_name}` is taken by a built-in crate or the SDK"
        ));
    }
    Ok(())
}

/// Rust's keywords, strict and reserved (edition 2024).
const KEYWORDS: [&str; 51] = [
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern",
    "false", "fn", "for", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub",
    "ref", "return", "self", "static", "struct", "super", "trait", "true", "type", "unsafe", "use",
    "where", "while", "abstract", "become", "box", "do", "final", "macro", "override", "priv",
    "typeof", "unsized", "virtual", "yield", "try", "gen",
];

/// Library names a plugin cannot take: Rust's own crates, Cargo's reserved name
/// and the SDK's.
const RESERVED: [&str; 7] = [
    "std",
    "core",
    "alloc",
    "proc_macro",
    "test",
    "build",
    "hookgate_plugin_sdk",
];

/// Whether `dir` can receive the plugin: it does not exist, or is an empty
/// directory.
fn check_free(dir: &Path) -> Result<(), PluginNewError> {
    use std::io::ErrorKind::{NotADirectory, NotFound};
    match std::fs::read_dir(dir).map(|mut entries| entries.next().is_none()) {
        Ok(true) => Ok(()),
        Err(e) if e.kind() == NotFound => Ok(()),
        Err(e) if e.kind() != NotADirectory => Err(PluginNewError::Write {
            path: dir.to_owned(),
            source: e,
        }),
        _ => Err(PluginNewError::Occupied(dir.to_owned())),
    }
}

fn write_file(path: &Path, contents: &str) -> std::io::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(path, contents)
}

/// What to do next, printed after creating the plugin.
fn next_steps(name: &str, kind: ScaffoldKind, dir: &Path) -> String {
    let wasm = format!(
        "target/wasm32-unknown-unknown/release/{}.wasm",
        name.replace('-', "_")
    );
    let (what, try_it) = match kind {
        ScaffoldKind::Policy => ("plugin", String::new()),
        ScaffoldKind::Transform => (
            "transform plugin",
            format!("hookgate transform try --plugin {wasm} --event event.json\n  "),
        ),
    };
    format!(
        "created {what} {name} in {dir}\n\nnext, in {dir} (README.md says more):\n  \
         cargo test\n  \
         cargo build --target wasm32-unknown-unknown --release\n  \
         {try_it}hookgate plugin-check {wasm}\n  \
         hookgate plugin upload --tenant TENANT {name} {wasm}\n",
        dir = dir.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_package_and_upload_rules() {
        for good in ["a", "retry-conflicts", "json_error_code2", &"x".repeat(63)] {
            assert_eq!(check_name(good), Ok(()), "{good}");
        }
        for bad in [
            "",
            "1abc",
            "-abc",
            "Retry",
            "retry conflicts",
            "é",
            "a/b",
            "a.b",
            &"x".repeat(64),
        ] {
            assert!(check_name(bad).unwrap_err().contains("1 to 63"), "{bad}");
        }
        assert!(check_name("fn").unwrap_err().contains("keyword"));
        assert!(check_name("proc-macro").unwrap_err().contains("built-in"));
        assert!(
            check_name("hookgate-plugin-sdk")
                .unwrap_err()
                .contains("SDK")
        );
    }

    #[test]
    fn only_a_missing_or_empty_directory_is_free() {
        let tmp = tempfile::tempdir().expect("a temp dir");
        let occupied = |dir: &Path| matches!(check_free(dir), Err(PluginNewError::Occupied(_)));
        assert!(check_free(&tmp.path().join("missing")).is_ok());
        assert!(check_free(tmp.path()).is_ok());
        std::fs::write(tmp.path().join("file"), "x").expect("write");
        assert!(occupied(tmp.path()));
        assert!(
            occupied(&tmp.path().join("file")),
            "a file is not a directory"
        );
    }
}
