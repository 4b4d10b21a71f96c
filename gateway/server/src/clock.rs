//! Time as the gateway sees it.
//!
//! Everything reads time through a [`Clock`] held in the context, so tests can
//! control it without `tokio::time::pause()` (which misbehaves with real sockets).

use std::fmt::Write as _;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A source of wall-clock time in Unix milliseconds.
pub trait Clock: Send + Sync + 'static {
    /// Milliseconds since the Unix epoch.
    fn now_ms(&self) -> u64;
}

/// The real clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
    }
}

#[cfg(any(test, feature = "lab"))]
pub use manual::ManualClock;

#[cfg(any(test, feature = "lab"))]
mod manual {
    use super::{Clock, Duration};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};

    /// A clock that tests move by hand.
    #[derive(Debug, Default)]
    pub struct ManualClock(AtomicU64);

    impl ManualClock {
        /// A clock stopped at `start_ms`.
        pub fn new(start_ms: u64) -> Arc<Self> {
            Arc::new(Self(AtomicU64::new(start_ms)))
        }

        /// Moves the clock forward.
        pub fn advance(&self, by: Duration) {
            let ms = u64::try_from(by.as_millis()).unwrap_or(u64::MAX);
            self.0.fetch_add(ms, Ordering::SeqCst);
        }
    }

    impl Clock for ManualClock {
        fn now_ms(&self) -> u64 {
            self.0.load(Ordering::SeqCst)
        }
    }
}

/// The last instant RFC 3339 can show with its four-digit year, in Unix ms.
pub const MAX_RFC3339_MS: u64 = 253_402_300_799_999;

/// [`MAX_RFC3339_MS`] as text.
const MAX_RFC3339_TEXT: &str = "9999-12-31T23:59:59.999Z";

/// Formats Unix milliseconds as RFC 3339 UTC with milliseconds, as the API shows times.
///
/// Never panics: a time past year 9999 (a far-off due time stored before durations
/// were bounded) shows as `9999-12-31T23:59:59.999Z`.
pub fn rfc3339_ms(ms: u64) -> String {
    let Some(time) = UNIX_EPOCH.checked_add(Duration::from_millis(ms.min(MAX_RFC3339_MS))) else {
        return MAX_RFC3339_TEXT.to_owned();
    };
    // humantime refuses (with a fmt error that `to_string` would turn into a panic)
    // only years past 9999, which the clamp rules out; the fallback is for safety.
    let mut out = String::with_capacity(MAX_RFC3339_TEXT.len());
    match write!(out, "{}", humantime::format_rfc3339_millis(time)) {
        Ok(()) => out,
        Err(_) => MAX_RFC3339_TEXT.to_owned(),
    }
}

/// Parses an RFC 3339 time (as given in `since`/`until` filters) to Unix
/// milliseconds: any offset (`Z`, `+01:00`, `-05:00`), `T` and `Z` in either
/// case, and a time before 1970 as 0 (the instant is UTC either way). The
/// looser forms parsed before (a space for `T`, no offset for UTC) still are.
pub fn parse_rfc3339_ms(s: &str) -> Option<u64> {
    use time::format_description::well_known::Rfc3339;
    // T and Z are the only letters an RFC 3339 time has.
    if let Ok(t) = time::OffsetDateTime::parse(&s.to_ascii_uppercase(), &Rfc3339) {
        let ms = (t.unix_timestamp_nanos() / 1_000_000).max(0);
        return Some(u64::try_from(ms).unwrap_or(u64::MAX));
    }
    let t = humantime::parse_rfc3339_weak(s).ok()?;
    let d = t.duration_since(UNIX_EPOCH).ok()?;
    u64::try_from(d.as_millis()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Item 5 of tenant fairness: every RFC 3339 time is a UTC instant.
    #[test]
    fn since_and_until_accept_every_rfc_3339_time() {
        let at = Some(1_614_265_330_123);
        for s in [
            "2021-02-25T15:02:10.123Z",
            "2021-02-25t15:02:10.123z",
            "2021-02-25T16:02:10.123+01:00",
            "2021-02-25T10:02:10.123-05:00",
            "2021-02-25 15:02:10.123Z",
        ] {
            assert_eq!(parse_rfc3339_ms(s), at, "{s}");
        }
        assert_eq!(
            parse_rfc3339_ms("1969-12-31T23:59:59Z"),
            Some(0),
            "before 1970"
        );
        assert_eq!(parse_rfc3339_ms("2021-02-25T15:02:10+25:00"), None);
        assert_eq!(parse_rfc3339_ms("2021-02-30T15:02:10Z"), None);
    }

    #[test]
    fn formats_with_millis_and_parses_back() {
        let s = rfc3339_ms(1_614_265_330_123);
        assert_eq!(s, "2021-02-25T15:02:10.123Z");
        assert_eq!(parse_rfc3339_ms(&s), Some(1_614_265_330_123));
        assert_eq!(parse_rfc3339_ms("yesterday"), None);
    }

    #[test]
    fn durations_have_an_upper_bound_so_far_times_format_as_the_last_one() {
        let last = "9999-12-31T23:59:59.999Z";
        assert_eq!(rfc3339_ms(253_402_300_799_999), last);
        // Past year 9999 (a retry 9000 years away, or u64::MAX): clamped, no panic.
        assert_eq!(rfc3339_ms(253_402_300_800_000), last);
        assert_eq!(rfc3339_ms(286_000_000_000_000), last);
        assert_eq!(rfc3339_ms(u64::MAX), last);
        assert_eq!(parse_rfc3339_ms(last), Some(253_402_300_799_999));
        assert_eq!(rfc3339_ms(0), "1970-01-01T00:00:00.000Z");
    }

    #[test]
    fn manual_clock_moves_only_when_told() {
        let c = ManualClock::new(1000);
        assert_eq!(c.now_ms(), 1000);
        c.advance(Duration::from_millis(250));
        assert_eq!(c.now_ms(), 1250);
    }
}
