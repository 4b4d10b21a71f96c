//! The ingest body: accepted bodies keep their payload bytes exactly.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(body) = hookgate_server::parse_ingest_body(data, 128) {
        let text = std::str::from_utf8(data).expect("accepted bodies are UTF-8");
        assert!(text.contains(body.payload.get()));
    }
});
