//! The config loader: any TOML text loads or is refused with a message.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Err(e) = hookgate_server::Config::from_toml_str(&text, Vec::new()) {
        assert!(!e.to_string().is_empty());
    }
});
