//! The unit tests of `api_client.rs`.

use http::Method;

use super::*;

fn url() -> Url {
    Url::parse("http://gw:8080/v1/stats").unwrap()
}

#[test]
fn routes_the_gateway_lacks_are_not_supported() {
    let body = Bytes::from_static(br#"{"error":{"code":"not_found","message":"route not found"}}"#);
    let err = interpret(404, body, &url(), "GET /v1/stats".into()).unwrap_err();
    assert!(matches!(err, CliError::NotSupported { .. }), "{err}");
    let body =
        Bytes::from_static(br#"{"error":{"code":"not_found","message":"endpoint not found"}}"#);
    let err = interpret(404, body, &url(), "GET /v1/x".into()).unwrap_err();
    assert!(matches!(err, CliError::Api(_)), "{err}");
}

#[test]
fn answers_that_are_not_the_api_are_unexpected() {
    let err = interpret(
        502,
        Bytes::from_static(b"<html>bad gateway</html>"),
        &url(),
        "GET /".into(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("bad gateway"), "{err}");
    let ok = interpret(204, Bytes::new(), &url(), "DELETE /".into()).unwrap();
    assert_eq!(ok.json, Value::Null);
}

#[test]
fn segments_are_encoded_and_a_base_path_kept() {
    let api = ApiClient::new("http://gw:8080/prefix/", None).unwrap();
    let req = ApiRequest::new(Method::GET, &["tenants", "a b/c", "deliveries"])
        .query("state", Some("dead"))
        .query("limit", None::<u32>);
    assert_eq!(
        api.url_of(&req).as_str(),
        "http://gw:8080/prefix/v1/tenants/a%20b%2Fc/deliveries?state=dead"
    );
    assert!(matches!(
        ApiClient::new("gw:8080", None),
        Err(CliError::Usage(_))
    ));
}
