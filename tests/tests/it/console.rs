//! The web console's files: served at `/console/` from the binary, each with a
//! strict Content Security Policy, no framing and no referrer; every asset the
//! page loads is one of them, and none names another host.

use hookgate_tests::{ApiRequest, TestGateway};

/// The page's own references: `src="..."` and `href="..."` values.
fn references(html: &str) -> Vec<String> {
    let mut found = Vec::new();
    for attr in ["src=\"", "href=\""] {
        for (at, _) in html.match_indices(attr) {
            let rest = &html[at + attr.len()..];
            found.push(rest[..rest.find('"').unwrap()].to_owned());
        }
    }
    found
}

/// GETs `path`; the status, the headers wanted, and the body.
async fn get(gw: &TestGateway, path: &str) -> (u16, http::HeaderMap, String) {
    let answer = gw.exchange(ApiRequest::path(http::Method::GET, path)).await;
    let body = String::from_utf8_lossy(&answer.body).into_owned();
    (answer.status, answer.headers, body)
}

fn header<'a>(headers: &'a http::HeaderMap, name: &str) -> &'a str {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_else(|| panic!("no {name} header"))
}

#[tokio::test]
async fn the_console_is_served_with_strict_headers_and_no_outside_host() {
    let gw = TestGateway::start().await;
    let (status, headers, _) = get(&gw, "/console").await;
    assert_eq!((status, header(&headers, "location")), (308, "/console/"));

    let (status, headers, page) = get(&gw, "/console/").await;
    assert_eq!(status, 200, "{page}");
    assert!(header(&headers, "content-type").starts_with("text/html"));
    let mut assets = vec![page.clone()];
    let refs: Vec<String> = references(&page)
        .into_iter()
        .filter(|r| !r.starts_with('#'))
        .collect();
    assert!(
        refs.len() >= 2,
        "the page loads its script and style: {refs:?}"
    );
    for asset in std::iter::once(String::new()).chain(refs) {
        let (status, headers, body) = get(&gw, &format!("/console/{asset}")).await;
        assert_eq!(status, 200, "/console/{asset}");
        let csp = header(&headers, "content-security-policy");
        for directive in [
            "default-src 'self'",
            "script-src 'self'",
            "frame-ancestors 'none'",
        ] {
            assert!(csp.contains(directive), "{asset}: {csp}");
        }
        assert!(!csp.contains("unsafe"), "{asset}: {csp}");
        assert_eq!(header(&headers, "x-frame-options"), "DENY");
        assert_eq!(header(&headers, "referrer-policy"), "no-referrer");
        assert_eq!(header(&headers, "x-content-type-options"), "nosniff");
        assets.push(body);
    }
    for body in &assets {
        for outside in ["http://", "https://", "src=\"//", "href=\"//", "url(//"] {
            assert!(
                !body.contains(outside),
                "an asset names another host ({outside})"
            );
        }
        assert!(!body.contains("<script>"), "no inline script");
    }

    // The script parses as an ES module (node is what the test command installs
    // the signature verifiers with).
    let (_, _, script) = get(&gw, "/console/console.js").await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("console.mjs");
    std::fs::write(&path, script).unwrap();
    let checked = std::process::Command::new("node")
        .arg("--check")
        .arg(&path)
        .output()
        .expect("node runs");
    assert!(
        checked.status.success(),
        "console.js does not parse: {}",
        String::from_utf8_lossy(&checked.stderr)
    );

    let (status, _, body) = get(&gw, "/console/missing.js").await;
    assert_eq!(status, 404, "{body}");
    assert!(body.contains("not_found"), "{body}");
}
