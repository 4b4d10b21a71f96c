//! The API's description, three ways, one document: `hookgate openapi` (no
//! gateway), `GET /v1/openapi.json` on a running `hookgate serve` (no token), and
//! the copy committed in `docs/`.

use hookgate::client::{ApiClient, ApiRequest};

use crate::common::{Gateway, run_cli};

const COMMITTED: &str = include_str!("../../../../docs/openapi.json");

#[tokio::test]
async fn the_command_the_route_and_the_committed_copy_agree() {
    let printed = run_cli(&[], &["openapi".to_owned()], b"");
    assert_eq!(printed.code, 0, "{}", printed.stderr);
    let document: serde_json::Value = serde_json::from_str(&printed.stdout).unwrap();
    assert_eq!(document["openapi"], "3.1.0");
    assert!(document["paths"]["/v1/tenants/{t}/events"]["post"].is_object());

    let dir = tempfile::tempdir().unwrap();
    let gateway = Gateway::spawn(dir.path(), &[]);
    // No token: the document is public.
    let api = ApiClient::new(&gateway.base, None).unwrap();
    let answer = api
        .exchange(ApiRequest::path(http::Method::GET, "/v1/openapi.json"))
        .await
        .unwrap();
    assert_eq!(answer.status, 200);
    assert_eq!(answer.headers["content-type"], "application/json");
    let served = String::from_utf8(answer.body.to_vec()).unwrap();
    assert!(
        served == printed.stdout,
        "the served document is the printed one"
    );
    assert!(
        served == COMMITTED,
        "docs/openapi.json is stale: regenerate it with `cargo run -p hookgate -- openapi > docs/openapi.json`"
    );
    gateway.terminate();
}
