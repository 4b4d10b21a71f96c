//! Parsing of the `Retry-After` response header (RFC 9110 §10.2.3).
//!
//! The value is whole seconds or an HTTP-date. The policy treats it as a floor on the
//! next delay, for 429 and 503 only; the herd simulator reuses the parser.

use std::time::UNIX_EPOCH;

/// Returns how many milliseconds the receiver asked us to wait, or `None` when the
/// value should be ignored (garbage, or a date that is not in the future).
///
/// Seconds saturate at `u64::MAX` ms rather than failing. An HTTP-date is measured
/// against the response's `Date` header when it is present and parseable (so receiver
/// clock skew cancels out), otherwise against `now_ms`.
pub fn parse_retry_after(value: &str, date: Option<&str>, now_ms: u64) -> Option<u64> {
    let value = value.trim();
    if value.is_empty() {
        return None;
    }
    if value.bytes().all(|b| b.is_ascii_digit()) {
        // All digits, so parsing fails only on overflow.
        let seconds = value.parse::<u64>().unwrap_or(u64::MAX);
        return Some(seconds.saturating_mul(1_000));
    }
    let target_ms = http_date_ms(value)?;
    let reference_ms = date.and_then(http_date_ms).unwrap_or(now_ms);
    target_ms
        .checked_sub(reference_ms)
        .filter(|wait_ms| *wait_ms > 0)
}

fn http_date_ms(text: &str) -> Option<u64> {
    let time = httpdate::parse_http_date(text.trim()).ok()?;
    let since_epoch = time.duration_since(UNIX_EPOCH).ok()?;
    Some(u64::try_from(since_epoch.as_millis()).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2021-02-26T00:00:00Z, a whole second.
    const NOW_MS: u64 = 1_614_297_600_000;

    /// The HTTP-date of a Unix millisecond time.
    fn format_ms(ms: u64) -> String {
        httpdate::fmt_http_date(UNIX_EPOCH + std::time::Duration::from_millis(ms))
    }

    #[test]
    fn whole_seconds() {
        assert_eq!(parse_retry_after("2", None, NOW_MS), Some(2_000));
        assert_eq!(parse_retry_after(" 120 ", None, NOW_MS), Some(120_000));
        assert_eq!(parse_retry_after("0", None, NOW_MS), Some(0));
    }

    #[test]
    fn huge_seconds_saturate() {
        assert_eq!(
            parse_retry_after("18446744073709551615", None, NOW_MS),
            Some(u64::MAX)
        );
        assert_eq!(
            parse_retry_after("99999999999999999999999999", None, NOW_MS),
            Some(u64::MAX)
        );
    }

    #[test]
    fn garbage_is_ignored() {
        for value in [
            "",
            "  ",
            "-5",
            "1.5",
            "soon",
            "5s",
            "Fri, 99 Feb 2021 00:00:00 GMT",
        ] {
            assert_eq!(parse_retry_after(value, None, NOW_MS), None, "{value:?}");
        }
    }

    #[test]
    fn http_date_against_now() {
        let in_90s = format_ms(NOW_MS + 90_000);
        assert_eq!(parse_retry_after(&in_90s, None, NOW_MS), Some(90_000));
        assert_eq!(
            parse_retry_after("Fri, 26 Feb 2021 00:01:30 GMT", None, NOW_MS),
            Some(90_000)
        );
    }

    #[test]
    fn http_date_against_the_date_header() {
        // The receiver's clock is 10 minutes behind ours; its Date header cancels that.
        let receiver_now = NOW_MS - 600_000;
        let retry_at = format_ms(receiver_now + 30_000);
        let date = format_ms(receiver_now);
        assert_eq!(
            parse_retry_after(&retry_at, Some(&date), NOW_MS),
            Some(30_000)
        );
        // Against our own clock the same date would be in the past.
        assert_eq!(parse_retry_after(&retry_at, None, NOW_MS), None);
        // An unparseable Date header falls back to now.
        let ahead = format_ms(NOW_MS + 5_000);
        assert_eq!(
            parse_retry_after(&ahead, Some("yesterday"), NOW_MS),
            Some(5_000)
        );
    }

    #[test]
    fn past_or_present_dates_are_ignored() {
        assert_eq!(
            parse_retry_after(&format_ms(NOW_MS - 1_000), None, NOW_MS),
            None
        );
        assert_eq!(parse_retry_after(&format_ms(NOW_MS), None, NOW_MS), None);
        assert_eq!(
            parse_retry_after("Thu, 01 Jan 1970 00:00:00 GMT", None, NOW_MS),
            None
        );
    }

    #[test]
    fn obsolete_date_formats_are_accepted() {
        // RFC 850 and asctime forms of 2021-02-26T00:01:00Z.
        assert_eq!(
            parse_retry_after("Friday, 26-Feb-21 00:01:00 GMT", None, NOW_MS),
            Some(60_000)
        );
        assert_eq!(
            parse_retry_after("Fri Feb 26 00:01:00 2021", None, NOW_MS),
            Some(60_000)
        );
    }
}
