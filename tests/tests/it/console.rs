//! The web console's files: served at `/console/` from the binary, each with a
//! strict Content Security Policy, no framing and no referrer; every asset the
//! page loads (and every module those import) is one of them, parses, and
//! names no other host.

use hookgate_tests::{ApiRequest, TestGateway};

/// An asset's own references: `src="..."` and `href="..."` values of the page,
/// and the `from "./x.js"` imports of a module.
fn references(asset: &str) -> Vec<String> {
    let mut found = Vec::new();
    for attr in ["src=\"", "href=\"", "from \"./"] {
        for (at, _) in asset.match_indices(attr) {
            let rest = &asset[at + attr.len()..];
            found.push(rest[..rest.find('"').unwrap()].to_owned());
        }
    }
    found.retain(|r| !r.starts_with('#'));
    found
}

/// The SVG namespace name: an identifier the charts pass to
/// `createElementNS`, never fetched.
const SVG_NAMESPACE: &str = "http://www.w3.org/2000/svg";

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
    // Every asset the page loads, and every module those load, in turn.
    let mut seen = vec![String::new()];
    let mut queue = references(&page);
    assert!(
        queue.len() >= 2,
        "the page loads its script and style: {queue:?}"
    );
    let scripts = tempfile::tempdir().unwrap();
    while let Some(asset) = queue.pop() {
        if seen.contains(&asset) {
            continue;
        }
        seen.push(asset.clone());
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
        let named = body.replace(SVG_NAMESPACE, "");
        for outside in [
            "http://",
            "https://",
            "src=\"//",
            "href=\"//",
            "url(//",
            "from \"//",
        ] {
            assert!(
                !named.contains(outside),
                "{asset} names another host ({outside})"
            );
        }
        assert!(!body.contains("<script>"), "{asset}: no inline script");
        if asset.ends_with(".js") {
            // Each module parses (node is what the test command installs the
            // signature verifiers with).
            let path = scripts.path().join(asset.replace(".js", ".mjs"));
            std::fs::write(&path, &body).unwrap();
            let checked = std::process::Command::new("node")
                .arg("--check")
                .arg(&path)
                .output()
                .expect("node runs");
            assert!(
                checked.status.success(),
                "{asset} does not parse: {}",
                String::from_utf8_lossy(&checked.stderr)
            );
        }
        queue.extend(references(&body));
    }
    assert!(seen.len() >= 8, "the page and its modules: {seen:?}");

    let (status, _, body) = get(&gw, "/console/missing.js").await;
    assert_eq!(status, 404, "{body}");
    assert!(body.contains("not_found"), "{body}");
}
