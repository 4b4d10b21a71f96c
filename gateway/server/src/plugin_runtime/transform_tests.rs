//! Transforms: the host's checks of an answer, and hostile transforms (WAT
//! fixtures under `tests/fixtures/plugins/`) run through the host's own path.

use std::collections::BTreeMap;

use super::*;
use crate::plugin_runtime::tests::{TENANT, host, module};
use crate::plugin_runtime::{PluginHost, PluginKind, WitVersion};

fn url(s: &str) -> url::Url {
    url::Url::parse(s).unwrap()
}

fn send(path: &str) -> wit::Request {
    wit::Request {
        method: wit::Method::Post,
        path: path.into(),
        headers: vec![wit::Header {
            name: "X-Team".into(),
            value: "7".into(),
        }],
        body: b"{}".to_vec(),
        content_type: "application/json".into(),
    }
}

fn checked(request: wit::Request, endpoint: &str) -> Result<Transformed, String> {
    check_answer(TransformAnswer::Send(request), &url(endpoint))
}

#[test]
fn a_valid_answer_is_kept_with_header_names_lowercased() {
    let Ok(Transformed::Send(r)) = checked(send("/hooks/slack?x=1"), "https://r.example/hooks")
    else {
        panic!("refused")
    };
    assert_eq!(r.headers, [("x-team".to_owned(), "7".to_owned())]);
    assert_eq!(
        (r.method, r.path.as_str()),
        (TransformMethod::Post, "/hooks/slack?x=1")
    );
}

#[test]
fn a_path_stays_on_the_endpoints_host_and_under_its_path() {
    let endpoint = "https://r.example/hooks";
    for ok in ["/hooks", "/hooks?a=b", "/hooks/in", "/hooks/a/../b"] {
        assert!(checked(send(ok), endpoint).is_ok(), "{ok}");
    }
    for bad in [
        "/hooksx",
        "/other",
        "/hooks/../admin",
        "/hooks/%2e%2e/admin",
        "//evil.example/hooks",
        "hooks",
        "/hooks#frag",
        "/hooks x",
        "/hooks\\..\\admin",
        "",
    ] {
        let why = checked(send(bad), endpoint).unwrap_err();
        assert!(why.contains("path"), "{bad}: {why}");
    }
    assert!(checked(send("/anything/at/all"), "https://r.example/").is_ok());
    assert!(
        checked(
            send(&format!("/{}", "a".repeat(MAX_PATH))),
            "https://r.example/"
        )
        .is_err()
    );
}

#[test]
fn hookgates_own_headers_and_invalid_ones_are_refused() {
    for name in [
        "webhook-signature",
        "Svix-Id",
        "content-length",
        "Host",
        "user-agent",
    ] {
        let mut r = send("/");
        r.headers.push(wit::Header {
            name: name.into(),
            value: "x".into(),
        });
        let why = checked(r, "https://r.example/").unwrap_err();
        assert!(why.contains("hookgate's to set"), "{name}: {why}");
    }
    for (name, value) in [("bad name", "x"), ("x-ok", "line\nbreak")] {
        let mut r = send("/");
        r.headers = vec![wit::Header {
            name: name.into(),
            value: value.into(),
        }];
        assert!(checked(r, "https://r.example/").is_err(), "{name}");
    }
    let mut many = send("/");
    many.headers = (0..=MAX_HEADERS)
        .map(|i| wit::Header {
            name: format!("x-{i}"),
            value: "v".into(),
        })
        .collect();
    assert!(
        checked(many, "https://r.example/")
            .unwrap_err()
            .contains("limit")
    );
}

#[test]
fn bodies_methods_and_content_types_are_bounded() {
    let mut get = send("/?q=1");
    get.method = wit::Method::Get;
    assert!(
        checked(get.clone(), "https://r.example/")
            .unwrap_err()
            .contains("GET")
    );
    get.body.clear();
    assert!(checked(get, "https://r.example/").is_ok());
    let mut big = send("/");
    big.body = vec![b'x'; MAX_BODY_BYTES + 1];
    assert!(
        checked(big, "https://r.example/")
            .unwrap_err()
            .contains("limit")
    );
    for content_type in ["", "text/plain\r\nx: y"] {
        let mut r = send("/");
        r.content_type = content_type.into();
        assert!(
            checked(r, "https://r.example/").is_err(),
            "{content_type:?}"
        );
    }
}

#[test]
fn a_skip_reason_is_kept_and_cut_on_a_character_boundary() {
    let long = "é".repeat(MAX_SKIP_REASON);
    let Ok(Transformed::Skip(reason)) =
        check_answer(TransformAnswer::Skip(long), &url("https://r.example/"))
    else {
        panic!("not a skip")
    };
    assert!(reason.len() <= MAX_SKIP_REASON && reason.chars().all(|c| c == 'é'));
}

fn facts<'a>(metadata: &'a BTreeMap<String, String>) -> TransformFacts<'a> {
    TransformFacts {
        event_id: "evt_1",
        event_type: "order.paid",
        timestamp_ms: 1,
        payload: br#"{"id":1}"#,
        channels: &[],
        tags: &[],
        endpoint_id: "ep_1",
        endpoint_uid: None,
        metadata,
        destination: DestinationKind::Http,
        request: TransformRequest {
            method: TransformMethod::Post,
            path: "/".into(),
            headers: Vec::new(),
            body: br#"{"id":1}"#.to_vec(),
            content_type: "application/json".into(),
        },
    }
}

async fn run(host: &PluginHost, spec: &str) -> TransformRun {
    let metadata = BTreeMap::new();
    host.transform(TENANT, spec, &facts(&metadata), &url("https://r.example/"))
        .await
}

#[tokio::test]
async fn a_skip_answer_comes_back_with_its_version() {
    let host = host(&["transform_skip"]);
    let run = run(&host, "transform_skip").await;
    assert_eq!(run.label.as_deref(), Some("transform_skip@1"));
    assert_eq!(run.result, Ok(Transformed::Skip("fixture skip".into())));
}

#[tokio::test]
async fn hostile_transforms_fail_and_never_answer() {
    let host = host(&[
        "transform_trap",
        "transform_loop",
        "transform_memory",
        "transform_bad_variant",
    ]);
    // A tight loop may reach the wall-clock backstop before its fuel runs out.
    for (name, reasons) in [
        ("transform_trap", &["trap"][..]),
        ("transform_loop", &["out_of_fuel", "epoch_deadline"][..]),
        ("transform_memory", &["memory_limit"][..]),
        ("transform_bad_variant", &["invalid_output"][..]),
    ] {
        let run = run(&host, name).await;
        match run.result {
            Err(TransformFailure::Failed { reason, .. }) => {
                assert!(reasons.contains(&reason), "{name}: {reason}");
            }
            other => panic!("{name}: {other:?}"),
        }
    }
}

#[tokio::test]
async fn a_transform_failing_in_a_row_is_disabled() {
    let host = host(&["transform_trap"]);
    for _ in 0..crate::plugin_runtime::DISABLE_AFTER_FAILURES {
        let run = run(&host, "transform_trap").await;
        assert!(matches!(run.result, Err(TransformFailure::Failed { .. })));
    }
    let run = run(&host, "transform_trap").await;
    assert_eq!(
        run.result,
        Err(TransformFailure::Disabled("transform_trap@1".into()))
    );
}

#[tokio::test]
async fn a_policy_or_nothing_bound_as_a_transform_is_refused() {
    let host = host(&["tryagain"]);
    assert_eq!(
        run(&host, "tryagain").await.result,
        Err(TransformFailure::NotATransform("tryagain".into()))
    );
    assert_eq!(
        run(&host, "absent").await.result,
        Err(TransformFailure::NotLoaded("absent".into()))
    );
}

#[test]
fn upload_checks_pass_a_steady_transform_and_refuse_a_trapping_one() {
    let host = host(&[]);
    let checked = host.check(&module("transform_skip", "")).unwrap();
    assert_eq!(checked.wit, WitVersion::Transform0_1_0);
    assert_eq!(checked.wit.kind(), PluginKind::Transform);
    let names: Vec<&str> = checked
        .conformance
        .samples
        .iter()
        .map(|s| s.name.as_str())
        .collect();
    assert!(names.contains(&"empty payload") && names.contains(&"maximal payload (256 KiB)"));
    assert!(
        checked
            .conformance
            .samples
            .iter()
            .all(|s| s.answer == "skip(\"fixture skip\")")
    );
    let refused = host.check(&module("transform_trap", "")).unwrap_err();
    assert_eq!(refused.check(), Some("9 conformance"), "{refused}");
    assert!(
        refused.to_string().contains("empty payload") || refused.to_string().contains("1 KiB"),
        "{refused}"
    );
}
