//! The policy object: any JSON either resolves or is refused with a field.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(v) = serde_json::from_slice::<serde_json::Value>(data) {
        match hookgate_server::PolicySpec::from_json(&v) {
            Ok(spec) => {
                let _ = spec.resolve();
            }
            Err(e) => assert!(e.field.starts_with("policy")),
        }
    }
});
