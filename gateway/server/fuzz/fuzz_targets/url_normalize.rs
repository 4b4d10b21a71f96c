//! Endpoint URL normalization: never panics, and normalizing is idempotent.
#![no_main]
use hookgate_server::normalize_endpoint_url;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(url) = normalize_endpoint_url(&text, 4096) {
        let again =
            normalize_endpoint_url(url.as_str(), 8192).expect("a normalized URL stays valid");
        assert_eq!(url, again);
    }
});
