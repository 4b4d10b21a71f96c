//! `hookgate transform try` and `hookgate plugin-check --event` on the example
//! transforms (`plugins/rename-fields`, `plugins/skip-by-field`), built here for
//! `wasm32-unknown-unknown` from this checkout, and on the end-to-end suite's
//! trapping WAT fixture: the request printed, the skip, the failure (exit 1),
//! and mistakes refused with exit 2 and one line.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::common::{CliRun, cargo_in, run_cli, target_dir_beside_workspace};

const WORKSPACE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
/// The shared WAT fixtures (tests/fixtures/plugins/).
const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/plugins");

/// The example plugins these tests run, as `(package, file stem)`.
const EXAMPLES: [(&str, &str); 3] = [
    (
        "hookgate-plugin-rename-fields",
        "hookgate_plugin_rename_fields",
    ),
    (
        "hookgate-plugin-skip-by-field",
        "hookgate_plugin_skip_by_field",
    ),
    // A retry policy, for the refusals.
    (
        "hookgate-plugin-json-error-code",
        "hookgate_plugin_json_error_code",
    ),
];

/// The example `stem`'s .wasm, built (once per test run, into a target dir
/// that persists between runs) from the workspace's sources.
fn example(stem: &str) -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    let dir = BUILT.get_or_init(|| {
        let target = target_dir_beside_workspace("transform-examples");
        let mut args = vec!["build", "--release", "--target", "wasm32-unknown-unknown"];
        for (package, _) in EXAMPLES {
            args.extend(["-p", package]);
        }
        cargo_in(Path::new(WORKSPACE), &args, &target);
        target.join("wasm32-unknown-unknown/release")
    });
    let wasm = dir.join(format!("{stem}.wasm"));
    assert!(wasm.is_file(), "{} was not built", wasm.display());
    wasm
}

/// The fixture `NAME.wat` wrapped with the shared prelude, as a module file in `dir`.
fn fixture_module(dir: &Path, name: &str) -> PathBuf {
    let read = |file: &str| {
        let path = format!("{FIXTURES}/{file}");
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    };
    let text = format!(
        "(module\n{}\n{}\n)",
        read("prelude.wat"),
        read(&format!("{name}.wat"))
    );
    let path = dir.join(format!("{name}.wasm"));
    std::fs::write(&path, wat::parse_str(text).expect("the fixture assembles")).expect("write");
    path
}

/// An event file in `dir` with `payload` (JSON text).
fn event_file(dir: &Path, name: &str, payload: &str) -> PathBuf {
    let path = dir.join(name);
    let body = format!(r#"{{"event_type": "invoice.paid", "payload": {payload}, "tags": ["t1"]}}"#);
    std::fs::write(&path, body).expect("write the event");
    path
}

/// `hookgate ARGS...`, the paths as they are.
fn hookgate(args: &[&str]) -> CliRun {
    let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    run_cli(&[], &args, b"")
}

fn path(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 path")
}

/// Exit 2, one line on stderr with `prefix` and `phrase`, and nothing else.
fn assert_usage_error(run: &CliRun, prefix: &str, phrase: &str) {
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr.starts_with(prefix) && run.stderr.contains(phrase),
        "{:?} lacks {prefix:?} or {phrase:?}",
        run.stderr
    );
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
}

#[test]
fn rename_fields_sends_the_renamed_body_to_the_endpoint() {
    let tmp = tempfile::tempdir().expect("a temp dir");
    let event = event_file(tmp.path(), "event.json", r#"{"id": 1, "amt": 5}"#);
    let wasm = example("hookgate_plugin_rename_fields");
    let run = hookgate(&[
        "transform",
        "try",
        "--plugin",
        path(&wasm),
        "--event",
        path(&event),
        "--metadata",
        "rename.amt=amount",
        "--url",
        "https://receiver.example/hooks?x=1",
        "--header",
        "X-Team=7",
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(
        lines[..5],
        [
            "POST https://receiver.example/hooks?x=1",
            "content-type: application/json",
            "x-team: 7",
            "",
            r#"{"id":1,"amount":5}"#,
        ],
        "{}",
        run.stdout
    );
    let last = lines.last().expect("a last line");
    assert!(
        last.starts_with("transform try@1 ran in ") && last.ends_with(" µs"),
        "{last}"
    );
    assert_eq!(lines.len(), 6, "{}", run.stdout);
}

#[test]
fn skip_by_field_skips_a_test_event_and_sends_the_rest() {
    let tmp = tempfile::tempdir().expect("a temp dir");
    let wasm = example("hookgate_plugin_skip_by_field");
    let marked = event_file(tmp.path(), "test.json", r#"{"test": true}"#);
    let run = hookgate(&[
        "transform",
        "try",
        "--plugin",
        path(&wasm),
        "--event",
        path(&marked),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "skipped: /test is true\n");

    let plain = event_file(tmp.path(), "real.json", r#"{"test": false}"#);
    let run = hookgate(&[
        "transform",
        "try",
        "--plugin",
        path(&wasm),
        "--event",
        path(&plain),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.starts_with(
            "POST https://receiver.example/\ncontent-type: application/json\n\n{\"test\": false}\n"
        ),
        "the payload as the platform sent it:\n{}",
        run.stdout
    );
}

#[test]
fn a_trapping_transform_fails_with_exit_1() {
    let tmp = tempfile::tempdir().expect("a temp dir");
    let trap = fixture_module(tmp.path(), "transform_trap");
    let event = event_file(tmp.path(), "event.json", "{}");
    let run = hookgate(&[
        "transform",
        "try",
        "--plugin",
        path(&trap),
        "--event",
        path(&event),
    ]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout
            .starts_with("transform_failed: transform try@1 failed (trap)"),
        "{}",
        run.stdout
    );
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
}

#[test]
fn mistakes_are_refused_with_exit_2_and_one_line() {
    let tmp = tempfile::tempdir().expect("a temp dir");
    let event = event_file(tmp.path(), "event.json", "{}");
    let rename = example("hookgate_plugin_rename_fields");
    let policy = example("hookgate_plugin_json_error_code");
    let try_with = |plugin: &Path, event: &Path, extra: &[&str]| {
        let args = [
            &[
                "transform",
                "try",
                "--plugin",
                path(plugin),
                "--event",
                path(event),
            ],
            extra,
        ]
        .concat();
        hookgate(&args)
    };
    let prefix = "hookgate transform try: ";
    let missing = tmp.path().join("missing.json");
    assert_usage_error(&try_with(&rename, &missing, &[]), prefix, "cannot read");
    assert_usage_error(
        &try_with(&policy, &event, &[]),
        prefix,
        "is a retry policy (hookgate:policy), not a transform",
    );
    let not_json = tmp.path().join("not.json");
    std::fs::write(&not_json, "{\"event_type\": ").expect("write");
    assert_usage_error(&try_with(&rename, &not_json, &[]), prefix, "malformed JSON");
    let no_payload = tmp.path().join("no-payload.json");
    std::fs::write(&no_payload, r#"{"event_type": "a.b"}"#).expect("write");
    assert_usage_error(&try_with(&rename, &no_payload, &[]), prefix, "payload");
    assert_usage_error(
        &try_with(&event, &event, &[]),
        prefix,
        "refused by upload check 3 validation",
    );
    for (option, value) in [
        ("--metadata", "no-equals"),
        ("--header", "bad name=1"),
        ("--destination", "kafka"),
        ("--url", "not a url"),
    ] {
        let run = try_with(&rename, &event, &[option, value]);
        assert_usage_error(&run, prefix, option);
    }
}

#[test]
fn plugin_check_runs_a_transform_that_passed_on_the_event() {
    let tmp = tempfile::tempdir().expect("a temp dir");
    let event = event_file(tmp.path(), "event.json", r#"{"id": 1, "amt": 5}"#);
    let wasm = example("hookgate_plugin_rename_fields");
    let run = hookgate(&[
        "plugin-check",
        path(&wasm),
        "--event",
        path(&event),
        "--metadata",
        "rename.amt=amount",
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let (report, request) = run
        .stdout
        .split_once("\n\nPOST https://receiver.example/\n")
        .unwrap_or_else(|| panic!("no request after the report:\n{}", run.stdout));
    assert!(report.contains("passed checks 1-9"), "{report}");
    assert!(
        request.contains("\n\n{\"id\":1,\"amount\":5}\ntransform try@1 ran in "),
        "{request}"
    );

    let skip = example("hookgate_plugin_skip_by_field");
    let marked = event_file(tmp.path(), "test.json", r#"{"test": true}"#);
    let run = hookgate(&["plugin-check", path(&skip), "--event", path(&marked)]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.ends_with("\n\nskipped: /test is true\n"),
        "{}",
        run.stdout
    );
}

#[test]
fn plugin_check_refuses_an_event_for_a_policy_or_one_it_cannot_read() {
    let tmp = tempfile::tempdir().expect("a temp dir");
    let event = event_file(tmp.path(), "event.json", "{}");
    let policy = example("hookgate_plugin_json_error_code");
    let run = hookgate(&["plugin-check", path(&policy), "--event", path(&event)]);
    assert_usage_error(&run, "hookgate plugin-check: ", "is a retry policy");
    assert!(
        run.stdout.contains("passed checks 1-9"),
        "the report still shows: {}",
        run.stdout
    );

    let missing = tmp.path().join("missing.json");
    let run = hookgate(&["plugin-check", path(&policy), "--event", path(&missing)]);
    assert_usage_error(&run, "hookgate plugin-check: ", "cannot read");
    assert!(run.stdout.is_empty(), "no check ran: {}", run.stdout);

    // The endpoint's options mean nothing without an event.
    let run = hookgate(&["plugin-check", path(&policy), "--metadata", "a=b"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("--event"), "{}", run.stderr);
}
