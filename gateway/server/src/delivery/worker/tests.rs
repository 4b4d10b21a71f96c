//! The worker's pure parts: clock skew from `Date`, per-attempt seeds.

use super::*;

#[test]
fn clock_skew_from_date_headers() {
    let now = 1_614_265_330_000;
    assert_eq!(clock_skew_ms("Thu, 25 Feb 2021 15:02:10 GMT", now), Some(0));
    assert_eq!(
        clock_skew_ms("Thu, 25 Feb 2021 15:04:10 GMT", now),
        Some(120_000)
    );
    assert_eq!(clock_skew_ms("garbage", now), None);
}

#[test]
fn seeds_are_deterministic_per_attempt() {
    assert_eq!(attempt_seed("dlv_a", 1, 1), attempt_seed("dlv_a", 1, 1));
    assert_ne!(attempt_seed("dlv_a", 1, 1), attempt_seed("dlv_a", 1, 2));
    assert_ne!(attempt_seed("dlv_a", 1, 1), attempt_seed("dlv_a", 2, 1));
    assert_ne!(attempt_seed("dlv_a", 1, 1), attempt_seed("dlv_b", 1, 1));
}
