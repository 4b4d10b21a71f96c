//! Identifiers: a type prefix plus a ULID, so ids sort by creation time and say what they name.

use ulid::Ulid;

/// Event ids: `evt_` + ULID.
pub(crate) const EVENT: &str = "evt_";
/// Endpoint ids: `ep_` + ULID.
pub(crate) const ENDPOINT: &str = "ep_";
/// Delivery ids: `dlv_` + ULID.
pub(crate) const DELIVERY: &str = "dlv_";

/// A new id with `prefix`, stamped with `now_ms` so that ids sort newest-last.
pub(crate) fn new_id(prefix: &str, now_ms: u64) -> String {
    let ulid = Ulid::from_parts(now_ms, rand::random::<u128>());
    format!("{prefix}{ulid}")
}

/// Whether `id` is a valid tenant id: `^[a-z0-9][a-z0-9_-]{0,62}$`.
pub(crate) fn is_valid_tenant_id(id: &str) -> bool {
    let b = id.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && (b[0].is_ascii_lowercase() || b[0].is_ascii_digit())
        && b[1..]
            .iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'_' || *c == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_carry_prefix_and_sort_by_time() {
        let a = new_id(EVENT, 1_000);
        let b = new_id(EVENT, 2_000);
        assert!(a.starts_with("evt_") && a.len() == 30);
        assert!(a < b);
        assert!(Ulid::from_string(&a[EVENT.len()..]).is_ok());
    }

    #[test]
    fn tenant_ids() {
        for ok in ["a", "acme", "0-x_y", &"a".repeat(63)] {
            assert!(is_valid_tenant_id(ok), "{ok}");
        }
        for bad in ["", "-a", "_a", "Acme", "a b", "a/b", &"a".repeat(64), "é"] {
            assert!(!is_valid_tenant_id(bad), "{bad}");
        }
    }
}
