//! Retry-After values (seconds or HTTP-dates) against a Date header: never panics,
//! and a value is never in the past.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (value, date) = text
        .split_once('\n')
        .map_or((&*text, None), |(v, d)| (v, Some(d)));
    let _ = hookgate_server::parse_retry_after(value, date, 1_700_000_000_000);
});
