//! docs/plugins.md's tutorial, followed as written outside any checkout: every
//! `sh` block of its numbered steps runs under bash with the built `hookgate`
//! first on `PATH`, in a scratch directory outside the workspace, against a
//! gateway on 127.0.0.1:0, and each step must do what the text says. A block
//! after a `<!-- file: PATH -->` marker is the whole file at PATH (relative to the
//! scratch directory), written over the scaffold's; the workspace member
//! `plugins/tutorial` must hold the same `src/lib.rs`.
//!
//! Only what the machine requires is added: the gateway's address and the
//! tenant's key in the environment (the doc says to set them), `ENDPOINT` and
//! `DELIVERY` (the doc says where they come from), crates from the local cache
//! only, and the crate's `target/` linked to a dir under the workspace's target
//! dir, so repeat runs build incrementally.

use std::path::Path;

use crate::common::{
    ADMIN, CliClient, Gateway, RawReceiver, bash_in, sh_blocks, target_dir_beside_workspace,
    wait_until,
};

const DOC: &str = include_str!("../../../../docs/plugins.md");
const WORKSPACE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
/// The crate step 1 creates, in the scratch directory.
const CRATE: &str = "retry-conflicts";

/// `(path, block)` for each marked code block of the doc.
fn marked_blocks() -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut lines = DOC.lines();
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

/// The `sh` blocks of the section whose heading starts with `## {step}.`.
fn step_commands(step: u32) -> Vec<String> {
    sh_blocks(DOC, &format!("{step}. "))
}

/// Runs every `sh` block of `step` in `dir`; returns their stdout, joined.
fn run_step(step: u32, dir: &Path, env: &[(&str, &str)]) -> String {
    let blocks = step_commands(step);
    assert!(!blocks.is_empty(), "step {step} shows no commands");
    blocks
        .iter()
        .map(|block| bash_in(dir, block, env))
        .collect()
}

#[test]
fn the_tutorial_runs_as_written_outside_any_checkout() {
    let run: usize = (1..=7).map(|step| step_commands(step).len()).sum();
    assert_eq!(
        run,
        DOC.matches("```sh\n").count(),
        "a command outside steps 1-7"
    );
    let scratch = tempfile::tempdir().expect("a temp dir");
    let workspace = Path::new(WORKSPACE).canonicalize().expect("the workspace");
    let outside = scratch.path().canonicalize().expect("the scratch dir");
    assert!(!outside.starts_with(&workspace), "{}", outside.display());

    let gw = Gateway::spawn(&scratch.path().join("gateway-data"), &[]);
    let tenant = CliClient::new(&gw.base, ADMIN).create_tenant("acme");
    let receiver = RawReceiver::start(&[409, 200]);
    let endpoint = tenant.create_endpoint(&receiver.url, "");
    let mut env = vec![
        ("HOOKGATE_URL", gw.base.as_str()),
        ("HOOKGATE_TOKEN", tenant.token.as_str()),
        ("ENDPOINT", endpoint.as_str()),
    ];

    let created = run_step(1, scratch.path(), &env);
    assert!(
        created.contains("created plugin retry-conflicts"),
        "{created}"
    );
    let dir = scratch.path().join(CRATE);
    let target = target_dir_beside_workspace("tutorial-plugin");
    std::fs::create_dir_all(&target).expect("the tutorial's target dir");
    std::os::unix::fs::symlink(&target, dir.join("target")).expect("link target/");

    for (path, block) in marked_blocks() {
        let file = scratch.path().join(&path);
        assert!(file.is_file(), "{path} is not a file `plugin new` wrote");
        std::fs::write(&file, block).expect("write the doc's block");
    }
    let tested = run_step(3, &dir, &env);
    assert!(tested.contains("test result: ok. 2 passed"), "{tested}");
    let checked = run_step(4, &dir, &env);
    assert!(checked.contains("passed checks 1-9"), "{checked}");

    let uploaded = run_step(5, &dir, &env);
    assert!(
        uploaded.contains("uploaded plugin retry-conflicts version 1 ("),
        "{uploaded}"
    );
    assert!(uploaded.contains(r#""version":2"#), "{uploaded}");
    let listed = tenant.ok("plugin list --tenant acme --json").json();
    assert_eq!(listed["data"][0]["active_version"], 2, "{listed}");

    run_step(6, &dir, &env);
    let shown = tenant.ok(&format!("endpoints show --tenant acme {endpoint} --json"));
    assert_eq!(
        shown.json()["plugin"],
        "retry-conflicts",
        "{}",
        shown.stdout
    );

    let step7 = step_commands(7);
    let [send, show] = &step7[..] else {
        panic!("step 7 shows two commands: send an event, show its delivery");
    };
    let sent = bash_in(&dir, send, &env);
    let delivery = sent
        .split_whitespace()
        .find(|word| word.starts_with("dlv_"))
        .unwrap_or_else(|| panic!("no delivery id in {sent}"))
        .to_owned();
    env.push(("DELIVERY", &delivery));
    let show_delivery = || -> serde_json::Value {
        serde_json::from_str(&bash_in(&dir, show, &env)).expect("the delivery as JSON")
    };
    let decided = wait_until("the plugin's decision on the 409", || {
        let first = show_delivery()["attempt_log"].get(0)?.clone();
        first["decided_by"].is_string().then_some(first)
    });
    assert_eq!(decided["status"], 409, "{decided}");
    assert_eq!(decided["verdict"], "retry", "{decided}");
    assert_eq!(decided["delay_ms"], 10_000, "{decided}");
    assert_eq!(
        decided["decided_by"], "plugin:retry-conflicts@2",
        "{decided}"
    );
    // "and attempt 2, ten seconds later, is delivered"
    let delivered = wait_until("attempt 2", || {
        let shown = show_delivery();
        (shown["state"] == "succeeded").then_some(shown)
    });
    assert_eq!(delivered["attempts"], 2, "{delivered}");
}

#[test]
fn the_workspace_member_holds_the_tutorials_policy() {
    let blocks = marked_blocks();
    let shown: Vec<&str> = blocks.iter().map(|(path, _)| path.as_str()).collect();
    assert_eq!(shown, ["retry-conflicts/src/lib.rs"]);
    let member = Path::new(WORKSPACE).join("plugins/tutorial/src/lib.rs");
    let file = std::fs::read_to_string(&member).expect("plugins/tutorial/src/lib.rs");
    assert_eq!(
        blocks[0].1, file,
        "docs/plugins.md's block for {} differs from plugins/tutorial/src/lib.rs",
        blocks[0].0
    );
}
