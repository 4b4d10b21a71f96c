//! The unit tests of `policy.rs`.

use super::*;
use hookgate_server::Jitter;
use render::human;

#[test]
fn durations_read_short() {
    let cases = [
        (850, "850ms"),
        (12_500, "12.5s"),
        (60_000, "1m"),
        (255_000, "4m15s"),
    ];
    for (ms, text) in cases
        .into_iter()
        .chain([(7_500_000, "2h05m"), (97_200_000, "1d03h")])
    {
        assert_eq!(human(ms), text);
    }
}

#[test]
fn a_bad_policy_file_is_a_usage_error() {
    let dir = std::env::temp_dir().join(format!("hookgate-sim-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = |name: &str, text: &str| -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    let args = |policy: Option<PathBuf>| SimulateArgs {
        preset: None,
        policy,
        events: 10,
        outage: Duration::from_secs(1),
        seed: 1,
        format: Format::Json,
        svg: None,
    };
    let error = load_policy(&args(Some(file("zero.json", r#"{"base_ms": 0}"#)))).unwrap_err();
    assert!(
        error.contains("policy.base_ms") && !error.contains('\n'),
        "{error}"
    );
    assert!(
        load_policy(&args(Some(file("bad.json", "{"))))
            .unwrap_err()
            .contains("JSON")
    );
    assert!(load_policy(&args(Some(dir.join("missing.json")))).is_err());
    let ok = load_policy(&args(Some(file("ok.json", r#"{"jitter": "none"}"#)))).unwrap();
    assert_eq!(ok.jitter, Jitter::None);
    assert_eq!(
        run(PolicyCommand::Simulate(args(Some(file("x.json", "[]"))))),
        2
    );
    let _ = std::fs::remove_dir_all(&dir);
}
