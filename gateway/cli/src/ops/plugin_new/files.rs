//! The files of a new plugin: its manifest, code, README and build settings
//! from the templates beside this module (`template/policy/` or
//! `template/transform/`, and the manifest they share), and the SDK's copy when
//! the plugin takes the SDK by path.

use std::path::PathBuf;

use super::ScaffoldKind;
use super::sdk_copy::{SDK_FILES, SDK_PACKAGE, standalone_manifest};

const CARGO_TOML: &str = include_str!("template/Cargo.toml.tmpl");
const POLICY_LIB_RS: &str = include_str!("template/policy/lib.rs.tmpl");
const POLICY_README_MD: &str = include_str!("template/policy/README.md.tmpl");
const POLICY_CARGO_CONFIG: &str = include_str!("template/policy/cargo-config.toml.tmpl");
const TRANSFORM_LIB_RS: &str = include_str!("template/transform/lib.rs.tmpl");
const TRANSFORM_README_MD: &str = include_str!("template/transform/README.md.tmpl");
const TRANSFORM_EVENT_JSON: &str = include_str!("template/transform/event.json.tmpl");

/// What a transform parses payloads with: the SDK's own JSON, without `std`'s
/// extras, so the plugin links one copy.
const SERDE_JSON_DEPENDENCY: &str =
    r#"serde_json = { version = "1", default-features = false, features = ["alloc"] }"#;

/// Where a plugin takes the SDK from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SdkSource {
    /// A copy written next to the plugin, from the SDK built into this binary.
    Copy,
    /// A git repository (the SDK's package is found in it by name).
    Git(String),
    /// A version requirement, from crates.io.
    Version(String),
}

impl SdkSource {
    /// The source that `--sdk-git` / `--sdk-version` ask for (a copy when
    /// neither is given).
    ///
    /// # Errors
    /// An empty URL or a version requirement with characters no requirement has.
    pub fn from_flags(git: Option<&str>, version: Option<&str>) -> Result<Self, String> {
        match (git, version) {
            (Some(url), _) if url.trim().is_empty() => Err("--sdk-git needs a URL".to_owned()),
            (Some(url), _) => Ok(Self::Git(url.to_owned())),
            (None, Some(v)) if !is_version_requirement(v) => Err(format!(
                "--sdk-version `{v}` is not a version requirement such as 0.1.0 or ^0.1"
            )),
            (None, Some(v)) => Ok(Self::Version(v.to_owned())),
            (None, None) => Ok(Self::Copy),
        }
    }

    /// The plugin's `[dependencies]` line for the SDK.
    fn dependency(&self) -> String {
        let quoted = |s: &str| toml::Value::String(s.to_owned()).to_string();
        match self {
            Self::Copy => format!("{SDK_PACKAGE} = {{ path = {} }}", quoted(SDK_PACKAGE)),
            Self::Git(url) => format!("{SDK_PACKAGE} = {{ git = {} }}", quoted(url)),
            Self::Version(v) => format!("{SDK_PACKAGE} = {}", quoted(v)),
        }
    }

    /// Where the SDK comes from, for the README.
    fn describe(&self) -> String {
        match self {
            Self::Copy => format!("the copy in `{SDK_PACKAGE}/`"),
            Self::Git(url) => format!("from git, {url}"),
            Self::Version(v) => format!("version {v} from crates.io"),
        }
    }
}

/// Digits, letters, dots and the operators of Cargo's requirements; not empty.
fn is_version_requirement(v: &str) -> bool {
    !v.trim().is_empty()
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || ".-+^~=<>*, ".contains(c))
}

/// The plugin's type name: NAME in upper camel case, ending in `Policy` or
/// `Transform` (which also keeps it clear of the SDK's `Attempt`, `Verdict`,
/// `RetryPolicy`, `Transform`, `TransformInput`, ...).
fn type_name(name: &str, kind: ScaffoldKind) -> String {
    let (suffix, taken) = match kind {
        ScaffoldKind::Policy => ("Policy", "RetryPolicy"),
        ScaffoldKind::Transform => ("Transform", "Transform"),
    };
    let mut out: String = name
        .split(['-', '_'])
        .flat_map(|word| {
            let mut chars = word.chars();
            chars
                .next()
                .map(|c| c.to_ascii_uppercase())
                .into_iter()
                .chain(chars)
        })
        .collect();
    if !out.ends_with(suffix) || out == taken {
        out.push_str(suffix);
    }
    out
}

/// Every file of the `kind` plugin named `name`, as `(path in its directory,
/// contents)`. `name` has passed [`super::check_name`].
pub fn plugin_files(name: &str, kind: ScaffoldKind, sdk: &SdkSource) -> Vec<(PathBuf, String)> {
    let mut dependencies = sdk.dependency();
    if kind == ScaffoldKind::Transform {
        dependencies = format!("{dependencies}\n{SERDE_JSON_DEPENDENCY}");
    }
    let fill = |template: &str| {
        template
            .replace("{{name}}", name)
            .replace("{{crate_name}}", &name.replace('-', "_"))
            .replace("{{policy}}", &type_name(name, ScaffoldKind::Policy))
            .replace("{{transform}}", &type_name(name, ScaffoldKind::Transform))
            .replace("{{dependencies}}", &dependencies)
            .replace("{{sdk_source}}", &sdk.describe())
    };
    let mut files = vec![
        (PathBuf::from("Cargo.toml"), fill(CARGO_TOML)),
        (PathBuf::from(".gitignore"), "/target\n".to_owned()),
    ];
    match kind {
        ScaffoldKind::Policy => files.extend([
            (PathBuf::from("src/lib.rs"), fill(POLICY_LIB_RS)),
            (PathBuf::from("README.md"), fill(POLICY_README_MD)),
            // A policy needs little stack; a transform keeps Rust's default,
            // which parsing a deeply nested payload can use.
            (
                PathBuf::from(".cargo/config.toml"),
                POLICY_CARGO_CONFIG.to_owned(),
            ),
        ]),
        ScaffoldKind::Transform => files.extend([
            (PathBuf::from("src/lib.rs"), fill(TRANSFORM_LIB_RS)),
            (PathBuf::from("README.md"), fill(TRANSFORM_README_MD)),
            (PathBuf::from("event.json"), TRANSFORM_EVENT_JSON.to_owned()),
        ]),
    }
    if *sdk == SdkSource::Copy {
        let sdk_dir = PathBuf::from(SDK_PACKAGE);
        // The embedded manifests are checked by the unit tests; should they not
        // fit, the copy still gets a manifest that says why it cannot build.
        let manifest = standalone_manifest().unwrap_or_else(|e| format!("# {e}\n"));
        files.push((sdk_dir.join("Cargo.toml"), manifest));
        for (path, contents) in SDK_FILES {
            files.push((sdk_dir.join(path), contents.to_owned()));
        }
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(files: &[(PathBuf, String)], path: &str) -> String {
        let found = files.iter().find(|(p, _)| p == &PathBuf::from(path));
        found
            .map(|(_, c)| c.clone())
            .unwrap_or_else(|| panic!("no {path}"))
    }

    #[test]
    fn the_type_name_is_camel_case_and_clear_of_the_sdks_names() {
        let policy = |name| type_name(name, ScaffoldKind::Policy);
        assert_eq!(policy("retry-conflicts"), "RetryConflictsPolicy");
        assert_eq!(policy("json_error_code2"), "JsonErrorCode2Policy");
        assert_eq!(policy("verdict"), "VerdictPolicy");
        assert_eq!(policy("my-policy"), "MyPolicy");
        assert_eq!(policy("retry-policy"), "RetryPolicyPolicy");
        let transform = |name| type_name(name, ScaffoldKind::Transform);
        assert_eq!(transform("slack-shape"), "SlackShapeTransform");
        assert_eq!(transform("my-transform"), "MyTransform");
        assert_eq!(transform("transform"), "TransformTransform");
        assert_eq!(transform("transform-input"), "TransformInputTransform");
        assert_eq!(transform("answer"), "AnswerTransform");
    }

    #[test]
    fn a_copied_sdk_is_written_and_depended_on_by_path() {
        let files = plugin_files("retry-conflicts", ScaffoldKind::Policy, &SdkSource::Copy);
        let manifest: toml::Table = file(&files, "Cargo.toml").parse().expect("TOML");
        assert_eq!(
            manifest["package"]["name"].as_str(),
            Some("retry-conflicts")
        );
        let sdk = &manifest["dependencies"][SDK_PACKAGE];
        assert_eq!(sdk["path"].as_str(), Some(SDK_PACKAGE));
        assert!(manifest.contains_key("workspace"), "a workspace of its own");
        assert!(file(&files, "src/lib.rs").contains("export_policy!(RetryConflictsPolicy);"));
        assert!(file(&files, "README.md").contains("release/retry_conflicts.wasm"));
        let wit = file(&files, "hookgate-plugin-sdk/wit/policy-0.3.0.wit");
        assert!(wit.contains("package hookgate:policy@0.3.0;"), "{wit}");
        let sdk_manifest = file(&files, "hookgate-plugin-sdk/Cargo.toml");
        assert!(sdk_manifest.contains("[package]"), "{sdk_manifest}");
        let own = files.iter().filter(|(p, _)| !p.starts_with(SDK_PACKAGE));
        assert!(
            !own.into_iter().any(|(_, c)| c.contains("{{")),
            "every placeholder filled"
        );
    }

    #[test]
    fn a_transform_gets_its_skeleton_json_an_event_and_the_transform_wit() {
        let files = plugin_files("slack-shape", ScaffoldKind::Transform, &SdkSource::Copy);
        let manifest: toml::Table = file(&files, "Cargo.toml").parse().expect("TOML");
        let dependencies = &manifest["dependencies"];
        assert_eq!(
            dependencies[SDK_PACKAGE]["path"].as_str(),
            Some(SDK_PACKAGE)
        );
        assert_eq!(
            dependencies["serde_json"]["default-features"].as_bool(),
            Some(false)
        );
        let lib = file(&files, "src/lib.rs");
        assert!(
            lib.contains("export_transform!(SlackShapeTransform);"),
            "{lib}"
        );
        assert!(
            lib.contains("TransformInput::of_json"),
            "native tests: {lib}"
        );
        assert!(file(&files, "README.md").contains("hookgate transform try"));
        let event: serde_json::Value =
            serde_json::from_str(&file(&files, "event.json")).expect("JSON");
        assert!(event["event_type"].is_string() && event["payload"].is_object());
        let wit = file(&files, "hookgate-plugin-sdk/wit/transform-0.1.0.wit");
        assert!(wit.contains("package hookgate:transform@0.1.0;"), "{wit}");
        assert!(
            !files.iter().any(|(p, _)| p.ends_with(".cargo/config.toml")),
            "a transform keeps the default stack"
        );
        let own = files.iter().filter(|(p, _)| !p.starts_with(SDK_PACKAGE));
        assert!(
            !own.into_iter().any(|(_, c)| c.contains("{{")),
            "every placeholder filled"
        );
    }

    #[test]
    fn git_and_version_sources_write_no_copy() {
        let git = SdkSource::from_flags(Some("https://example.com/h.git?a=\"b\""), None);
        let files = plugin_files("p", ScaffoldKind::Policy, &git.expect("a git source"));
        let manifest: toml::Table = file(&files, "Cargo.toml").parse().expect("TOML");
        let sdk = &manifest["dependencies"][SDK_PACKAGE];
        assert_eq!(
            sdk["git"].as_str(),
            Some("https://example.com/h.git?a=\"b\"")
        );
        assert!(!files.iter().any(|(p, _)| p.starts_with(SDK_PACKAGE)));

        let files = plugin_files(
            "p",
            ScaffoldKind::Policy,
            &SdkSource::Version("^0.1".into()),
        );
        let manifest: toml::Table = file(&files, "Cargo.toml").parse().expect("TOML");
        assert_eq!(manifest["dependencies"][SDK_PACKAGE].as_str(), Some("^0.1"));
        assert!(file(&files, "README.md").contains("version ^0.1 from crates.io"));
    }

    #[test]
    fn unusable_sdk_flags_are_refused() {
        assert_eq!(SdkSource::from_flags(None, None), Ok(SdkSource::Copy));
        assert!(SdkSource::from_flags(Some(" "), None).is_err());
        assert!(SdkSource::from_flags(None, Some("")).is_err());
        assert!(SdkSource::from_flags(None, Some("1.0\"\n[x]")).is_err());
        assert_eq!(
            SdkSource::from_flags(None, Some(">=0.1, <0.3")),
            Ok(SdkSource::Version(">=0.1, <0.3".into()))
        );
    }
}
