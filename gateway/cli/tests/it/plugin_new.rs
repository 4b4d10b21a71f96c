//! `hookgate plugin new`: a plugin created outside the workspace, with the SDK
//! copy the binary carries, passes its own tests, builds for
//! `wasm32-unknown-unknown`, passes `plugin-check` without ever growing its
//! memory (the SDK's arena), and uploads; a transform (`--kind transform`)
//! passes the host's checks as one and runs on its own `event.json`; bad input
//! is refused with exit 2.

use std::path::PathBuf;

use crate::common::{
    ADMIN, CliClient, Gateway, bash_in, cargo_in, hookgate_in, run_cli, target_dir_beside_workspace,
};

/// The target dir every run of the policy scaffold's test shares: the SDK's
/// dependencies build once.
fn scaffold_target_dir() -> PathBuf {
    target_dir_beside_workspace("scaffold")
}

/// The transform scaffold's own target dir: the two tests run at once, and two
/// builds of SDK copies at different paths in one dir remove each other's
/// artifacts mid-build.
fn transform_scaffold_target_dir() -> PathBuf {
    target_dir_beside_workspace("scaffold-transform")
}

/// The first `N.NN MiB` in `line`, in MiB.
fn mib_in(line: &str) -> f64 {
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = words
        .iter()
        .position(|w| *w == "MiB")
        .expect("a size in MiB");
    words[at - 1].parse().expect("a number of MiB")
}

#[test]
fn a_new_plugin_tests_builds_checks_and_uploads_outside_the_workspace() {
    let tmp = tempfile::tempdir().expect("a temp dir");
    let dir = tmp.path().join("plugin");
    // Its own name: the target dir is shared, and so is the .wasm's path in it.
    let name = format!("scaffolded-{}", std::process::id());
    let created = hookgate_in(
        tmp.path(),
        &format!("plugin new {name} --dir {}", dir.display()),
    );
    assert_eq!(created.code, 0, "{}", created.stderr);
    assert!(created.stdout.contains(&format!("created plugin {name}")));
    for file in [
        "Cargo.toml",
        "src/lib.rs",
        "README.md",
        "hookgate-plugin-sdk/wit/policy-0.3.0.wit",
    ] {
        assert!(dir.join(file).is_file(), "{file} was written");
    }
    let readme = std::fs::read_to_string(dir.join("README.md")).expect("README");
    for command in [
        "cargo test",
        "--target wasm32-unknown-unknown --release",
        "hookgate plugin-check",
        "hookgate plugin upload",
    ] {
        assert!(readme.contains(command), "the README shows `{command}`");
    }

    let target = scaffold_target_dir();
    cargo_in(&dir, &["test", "--offline"], &target);
    cargo_in(
        &dir,
        &[
            "build",
            "--offline",
            "--target",
            "wasm32-unknown-unknown",
            "--release",
        ],
        &target,
    );
    let wasm = target
        .join("wasm32-unknown-unknown/release")
        .join(format!("{}.wasm", name.replace('-', "_")));

    let check = run_cli(
        &[],
        &["plugin-check".to_owned(), wasm.display().to_string()],
        b"",
    );
    assert_eq!(check.code, 0, "{}\n{}", check.stdout, check.stderr);
    assert!(
        check.stdout.contains("passed checks 1-9"),
        "{}",
        check.stdout
    );
    // The SDK's arena is in the initial memory, so no sample grew it.
    let initial = mib_in(check.line("  check 8 resources"));
    let most_used = mib_in(check.line("  most used"));
    assert_eq!(most_used, initial, "{}", check.stdout);

    let gw = Gateway::spawn(&tmp.path().join("data"), &[]);
    let tenant = CliClient::new(&gw.base, ADMIN).create_tenant("acme");
    let upload = format!("plugin upload --tenant acme {name} {}", wasm.display());
    let uploaded = tenant.ok(&upload);
    let expected = format!("uploaded plugin {name} version 1");
    assert!(uploaded.stdout.contains(&expected), "{}", uploaded.stdout);
}

#[test]
fn a_new_transform_tests_builds_and_passes_the_checks_as_a_transform() {
    let tmp = tempfile::tempdir().expect("a temp dir");
    let dir = tmp.path().join("transform");
    // Its own name: the target dir is shared, and so is the .wasm's path in it.
    let name = format!("shaped-{}", std::process::id());
    let created = hookgate_in(
        tmp.path(),
        &format!("plugin new {name} --kind transform --dir {}", dir.display()),
    );
    assert_eq!(created.code, 0, "{}", created.stderr);
    assert!(
        created
            .stdout
            .contains(&format!("created transform plugin {name}")),
        "{}",
        created.stdout
    );
    for file in [
        "Cargo.toml",
        "src/lib.rs",
        "README.md",
        "event.json",
        "hookgate-plugin-sdk/src/transform.rs",
        "hookgate-plugin-sdk/src/transform_export.rs",
        "hookgate-plugin-sdk/wit/transform-0.1.0.wit",
    ] {
        assert!(dir.join(file).is_file(), "{file} was written");
    }
    let readme = std::fs::read_to_string(dir.join("README.md")).expect("README");
    for command in [
        "cargo test",
        "--target wasm32-unknown-unknown --release",
        "hookgate transform try",
        "hookgate plugin-check",
        "hookgate plugin upload",
    ] {
        assert!(readme.contains(command), "the README shows `{command}`");
    }

    let target = transform_scaffold_target_dir();
    cargo_in(&dir, &["test", "--offline"], &target);
    cargo_in(
        &dir,
        &[
            "build",
            "--offline",
            "--target",
            "wasm32-unknown-unknown",
            "--release",
        ],
        &target,
    );
    let wasm = target
        .join("wasm32-unknown-unknown/release")
        .join(format!("{}.wasm", name.replace('-', "_")));

    let bytes = std::fs::read(&wasm).expect("the built transform");
    let host = hookgate_server::PluginHost::new(512 * 1024).expect("a plugin host");
    let checked = host.check(&bytes).expect("passes checks 1-9");
    assert_eq!(checked.wit.kind(), hookgate_server::PluginKind::Transform);

    // The skeleton adds its header to the request of the event it came with.
    let tried = hookgate_in(
        &dir,
        &format!(
            "transform try --plugin {} --event event.json",
            wasm.display()
        ),
    );
    assert_eq!(tried.code, 0, "{}\n{}", tried.stdout, tried.stderr);
    assert!(
        tried.stdout.contains("\nx-event-type: invoice.paid\n"),
        "{}",
        tried.stdout
    );
}

#[test]
fn bad_input_is_refused_with_exit_2_and_writes_nothing() {
    let tmp = tempfile::tempdir().expect("a temp dir");
    let refused = |line: &str, phrase: &str| {
        let run = hookgate_in(tmp.path(), line);
        assert_eq!(run.code, 2, "{line}: {}", run.stderr);
        assert!(
            run.stderr.contains(phrase),
            "{line}: {:?} lacks {phrase:?}",
            run.stderr
        );
        assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    };
    let target = tmp.path().join("p");
    let at = |name: &str| format!("plugin new {name} --dir {}", target.display());
    refused(&at("Retry"), "invalid plugin name `Retry`");
    refused(&at("'two words'"), "invalid plugin name");
    refused(&at("1st"), "starting with a letter");
    refused(&at("fn"), "keyword");
    assert!(!target.exists(), "nothing written for a bad name");
    refused(
        &format!("{} --sdk-version '1.0 [x]'", at("ok")),
        "--sdk-version",
    );
    refused(
        &format!("{} --sdk-version 1 --sdk-git https://x", at("ok")),
        "cannot be used with",
    );
    assert!(!target.exists(), "nothing written for a bad SDK source");

    std::fs::create_dir(&target).expect("mkdir");
    std::fs::write(target.join("keep.txt"), "mine").expect("write");
    refused(&at("ok"), "already exists and is not an empty directory");
    let entries = std::fs::read_dir(&target).expect("list").count();
    assert_eq!(entries, 1, "the occupied directory is left alone");
    refused(
        &format!("plugin new ok --dir {}", target.join("keep.txt").display()),
        "not an empty directory",
    );
}

#[test]
fn without_dir_the_plugin_goes_to_its_name_here_with_the_sdk_asked_for() {
    let tmp = tempfile::tempdir().expect("a temp dir");
    let run = hookgate_in(tmp.path(), "plugin new from-crates-io --sdk-version 0.1");
    assert_eq!(run.code, 0, "{}", run.stderr);
    let manifest = std::fs::read_to_string(tmp.path().join("from-crates-io/Cargo.toml"))
        .expect("the plugin's manifest");
    assert!(
        manifest.contains("hookgate-plugin-sdk = \"0.1\""),
        "{manifest}"
    );
    assert!(
        !tmp.path()
            .join("from-crates-io/hookgate-plugin-sdk")
            .exists(),
        "no SDK copy when the SDK comes from crates.io"
    );
}

#[test]
fn plugin_new_help_shows_only_what_applies_to_it() {
    let tmp = tempfile::tempdir().expect("a temp dir");
    let help = hookgate_in(tmp.path(), "plugin new --help");
    assert_eq!(help.code, 0, "{}", help.stderr);
    for own in [
        "<NAME>",
        "--dir <D>",
        "--sdk-git <URL>",
        "--sdk-version <V>",
    ] {
        assert!(help.stdout.contains(own), "{own} missing:\n{}", help.stdout);
    }
    for gateway_option in ["--url", "--token", "--json", "HOOKGATE_", "Global options"] {
        assert!(
            !help.stdout.contains(gateway_option),
            "`plugin new` needs no gateway, yet its help shows {gateway_option}:\n{}",
            help.stdout
        );
    }
    // The commands that talk to a gateway keep their options.
    let upload = hookgate_in(tmp.path(), "plugin upload --help");
    for option in [
        "--url <URL>",
        "--token <TOKEN>",
        "--json",
        "--tenant <TENANT>",
    ] {
        assert!(
            upload.stdout.contains(option),
            "{option}:\n{}",
            upload.stdout
        );
    }
}

/// The SDK can be published: `cargo package` takes only its own files (the
/// vendored WIT, not the checkout's), and the package's verify build compiles
/// it for the plugin target from the packaged files alone.
#[test]
fn the_sdk_packages_and_its_package_builds_for_wasm() {
    let workspace = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let package = "cargo package -p hookgate-plugin-sdk --allow-dirty";
    let listed = bash_in(&workspace, &format!("{package} --list"), &[]);
    let files: Vec<&str> = listed.lines().collect();
    for expected in [
        "Cargo.toml",
        "src/lib.rs",
        "src/export.rs",
        "wit/policy-0.3.0.wit",
    ] {
        assert!(files.contains(&expected), "{expected} not in {files:?}");
    }
    assert!(
        !files.iter().any(|f| f.starts_with("tests/")),
        "the checkout-only test is left out: {files:?}"
    );
    cargo_in(
        &workspace,
        &[
            "package",
            "-p",
            "hookgate-plugin-sdk",
            "--allow-dirty",
            "--target",
            "wasm32-unknown-unknown",
        ],
        &target_dir_beside_workspace("sdk-package"),
    );
}
