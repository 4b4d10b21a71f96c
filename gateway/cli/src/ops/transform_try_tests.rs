//! `transform try`'s own pieces: the endpoint options, the event file and the
//! rendering of each kind of answer. The commands end to end, with real
//! plugins, are in `tests/it/transform_cli.rs`.

use super::*;
use hookgate_server::TransformFailure;

fn endpoint(url: Option<&str>, metadata: &[&str], headers: &[&str]) -> EndpointArgs {
    EndpointArgs {
        url: url.map(str::to_owned),
        metadata: metadata.iter().map(|s| (*s).to_owned()).collect(),
        headers: headers.iter().map(|s| (*s).to_owned()).collect(),
        destination: None,
    }
}

fn run_of(result: Result<Transformed, TransformFailure>) -> TransformRun {
    TransformRun {
        label: Some("try@1".to_owned()),
        result,
        run_us: 41,
    }
}

#[test]
fn options_become_the_endpoint() {
    let parsed = endpoint(
        Some("https://r.example/hooks?x=1"),
        &["rename.amt=amount", "empty=", "a=b=c"],
        &["X-Team=7"],
    )
    .parse()
    .expect("usable options");
    assert_eq!(parsed.url.as_str(), "https://r.example/hooks?x=1");
    assert_eq!(parsed.metadata["rename.amt"], "amount");
    assert_eq!(parsed.metadata["empty"], "");
    assert_eq!(parsed.metadata["a"], "b=c");
    assert_eq!(parsed.headers, [("x-team".to_owned(), "7".to_owned())]);
    assert_eq!(parsed.destination, DestinationKind::Http);
    let defaults = EndpointArgs::default().parse().expect("defaults");
    assert_eq!(defaults.url.as_str(), DEFAULT_URL);
}

#[test]
fn unusable_options_are_named() {
    let refused = |args: EndpointArgs, phrase: &str| {
        let e = args.parse().expect_err("refused").to_string();
        assert!(e.contains(phrase), "{e:?} lacks {phrase:?}");
    };
    refused(endpoint(Some("not a url"), &[], &[]), "--url");
    refused(endpoint(Some("mailto:a@b.example"), &[], &[]), "--url");
    refused(endpoint(None, &["novalue"], &[]), "--metadata \"novalue\"");
    refused(endpoint(None, &["=v"], &[]), "--metadata");
    refused(endpoint(None, &[], &["bad name=v"]), "--header");
    refused(endpoint(None, &[], &["x=a\nb"]), "--header");
    let kinds = EndpointArgs {
        destination: Some("kafka".to_owned()),
        ..EndpointArgs::default()
    };
    refused(kinds, "rabbitmq, nats");
    let sqs = EndpointArgs {
        destination: Some("sqs".to_owned()),
        ..EndpointArgs::default()
    };
    assert_eq!(sqs.parse().expect("sqs").destination, DestinationKind::Sqs);
}

#[test]
fn a_request_to_send_is_printed_as_http() {
    let url = url::Url::parse("https://receiver.example/hooks").expect("URL");
    let request = TransformRequest {
        method: TransformMethod::Put,
        path: "/hooks/in?x=1".to_owned(),
        headers: vec![("x-team".to_owned(), "7".to_owned())],
        body: br#"{"a":1}"#.to_vec(),
        content_type: "application/json".to_owned(),
    };
    let rendered = render(&run_of(Ok(Transformed::Send(request.clone()))), &url);
    assert_eq!(rendered.code, 0);
    assert_eq!(
        rendered.stdout,
        "PUT https://receiver.example/hooks/in?x=1\ncontent-type: application/json\n\
         x-team: 7\n\n{\"a\":1}\ntransform try@1 ran in 41 µs\n"
    );
    let binary = TransformRequest {
        body: vec![0xff, 0xfe],
        ..request
    };
    let rendered = render(&run_of(Ok(Transformed::Send(binary))), &url);
    assert!(rendered.stdout.contains("\n\n<2 bytes, not UTF-8>\n"));
}

#[test]
fn skips_and_failures_are_one_line() {
    let url = url::Url::parse(DEFAULT_URL).expect("URL");
    let skip = render(&run_of(Ok(Transformed::Skip("a test".into()))), &url);
    assert_eq!((skip.stdout.as_str(), skip.code), ("skipped: a test\n", 0));
    let failure = TransformFailure::Failed {
        label: "try@1".into(),
        reason: "trap",
        detail: "unreachable".into(),
    };
    let failed = render(&run_of(Err(failure)), &url);
    assert_eq!(failed.code, TRANSFORM_FAILED);
    assert!(
        failed
            .stdout
            .starts_with("transform_failed: transform try@1 failed (trap)")
    );
}

#[test]
fn an_event_file_is_read_as_the_gateway_reads_a_body() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = dir.path().join("event.json");
    std::fs::write(
        &path,
        r#"{"event_type":"a.b","payload":{"z":1, "a":[2]},"tags":["t"]}"#,
    )
    .expect("write");
    let event = read_event(&path).expect("an event");
    assert_eq!(event.event_type, "a.b");
    assert_eq!(event.payload, r#"{"z":1, "a":[2]}"#, "the exact text");
    assert_eq!(event.tags, ["t"]);
    std::fs::write(&path, r#"{"event_type":"a.b"}"#).expect("write");
    let missing = read_event(&path).expect_err("no payload").to_string();
    assert!(missing.contains("payload"), "{missing}");
    std::fs::write(&path, "{").expect("write");
    let malformed = read_event(&path).expect_err("not JSON").to_string();
    assert!(malformed.contains("malformed JSON"), "{malformed}");
    let absent = read_event(&dir.path().join("none.json")).expect_err("no file");
    assert!(matches!(absent, TryError::Read { .. }));
}
