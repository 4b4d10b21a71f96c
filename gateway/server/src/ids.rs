//! Identifiers: a type prefix plus a ULID, so ids sort by creation time and say what they name.

use ulid::Ulid;

/// Event ids: `evt_` + ULID.
pub(crate) const EVENT: &str = "evt_";
/// Endpoint ids: `ep_` + ULID.
pub(crate) const ENDPOINT: &str = "ep_";
/// Delivery ids: `dlv_` + ULID.
pub(crate) const DELIVERY: &str = "dlv_";
/// Background task ids: `task_` + ULID.
pub(crate) const TASK: &str = "task_";
/// Attempt ids: `atm_` + ULID stamped with the attempt's start.
pub(crate) const ATTEMPT: &str = "atm_";

/// A new id with `prefix`, stamped with `now_ms` so that ids sort newest-last.
pub(crate) fn new_id(prefix: &str, now_ms: u64) -> String {
    let ulid = Ulid::from_parts(now_ms, rand::random::<u128>());
    format!("{prefix}{ulid}")
}

/// The least id with `prefix` stamped `at_ms` or later: ids sort by time, so
/// a time range is an id range.
pub(crate) fn first_id_at(prefix: &str, at_ms: u64) -> String {
    format!("{prefix}{}", Ulid::from_parts(at_ms.min(ULID_MAX_MS), 0))
}

/// An id type: a string that says what it names, so that a tenant's id and an
/// endpoint's cannot be swapped where both are asked for. Stored and shown as
/// the plain string (serde `transparent`); it reads as a `&str` wherever one
/// is wanted.
macro_rules! typed_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(
            Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash,
            serde::Serialize, serde::Deserialize,
        )]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            /// The id as text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl std::ops::Deref for $name {
            type Target = str;
            fn deref(&self) -> &str {
                &self.0
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl std::borrow::Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<String> for $name {
            fn from(id: String) -> Self {
                Self(id)
            }
        }

        impl From<&str> for $name {
            fn from(id: &str) -> Self {
                Self(id.to_owned())
            }
        }

        impl From<$name> for String {
            fn from(id: $name) -> Self {
                id.0
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.0 == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }

        impl PartialEq<String> for $name {
            fn eq(&self, other: &String) -> bool {
                &self.0 == other
            }
        }

        impl PartialEq<$name> for str {
            fn eq(&self, other: &$name) -> bool {
                self == other.0
            }
        }

        impl PartialEq<$name> for &str {
            fn eq(&self, other: &$name) -> bool {
                *self == other.0
            }
        }

        impl PartialEq<$name> for String {
            fn eq(&self, other: &$name) -> bool {
                *self == other.0
            }
        }
    };
}

typed_id!(
    /// A tenant's id, chosen by the platform: `^[a-z0-9][a-z0-9_-]{0,62}$`.
    TenantId
);
typed_id!(
    /// An endpoint's id: `ep_` + ULID (the alert endpoint's is fixed).
    EndpointId
);
typed_id!(
    /// An event's id: `evt_` + ULID; the `webhook-id` of its every request.
    EventId
);
typed_id!(
    /// A delivery's id (one event to one endpoint): `dlv_` + ULID.
    DeliveryId
);

typed_id!(
    /// A background task's id: `task_` + ULID.
    TaskId
);
typed_id!(
    /// An attempt's id: `atm_` + ULID stamped with the time it started.
    AttemptId
);

impl AttemptId {
    /// A new attempt id stamped `started_ms`.
    pub(crate) fn generate(started_ms: u64) -> Self {
        Self(new_id(ATTEMPT, started_ms))
    }
}

impl TaskId {
    /// A new task id stamped `now_ms`.
    pub(crate) fn generate(now_ms: u64) -> Self {
        Self(new_id(TASK, now_ms))
    }
}

impl EndpointId {
    /// A new endpoint id stamped `now_ms`.
    pub(crate) fn generate(now_ms: u64) -> Self {
        Self(new_id(ENDPOINT, now_ms))
    }
}

impl EventId {
    /// A new event id stamped `now_ms`.
    pub(crate) fn generate(now_ms: u64) -> Self {
        Self(new_id(EVENT, now_ms))
    }
}

impl DeliveryId {
    /// A new delivery id stamped `now_ms`.
    pub(crate) fn generate(now_ms: u64) -> Self {
        Self(new_id(DELIVERY, now_ms))
    }

    /// The least id a delivery created at `at_ms` (or later) can have: ids sort
    /// by creation time, so a time range is an id range.
    pub(crate) fn first_at(at_ms: u64) -> Self {
        Self(first_id_at(DELIVERY, at_ms))
    }
}

/// The latest time a ULID can carry (48 bits of milliseconds).
const ULID_MAX_MS: u64 = (1 << 48) - 1;

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

/// The longest uid a record may carry.
pub(crate) const UID_MAX_LEN: usize = 256;

/// Whether `uid` is a valid uid, the platform's own name for a tenant or an
/// endpoint: `^[A-Za-z0-9_.-]{1,256}$` (Svix's application and endpoint uids).
pub(crate) fn is_valid_uid(uid: &str) -> bool {
    !uid.is_empty()
        && uid.len() <= UID_MAX_LEN
        && uid
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-'))
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
    fn a_time_bounds_the_ids_of_deliveries_made_from_then_on() {
        let at = 1_700_000_000_000;
        let first = DeliveryId::first_at(at);
        assert!(first.as_str() <= DeliveryId::generate(at).as_str());
        assert!(first.as_str() > DeliveryId::generate(at - 1).as_str());
        assert!(DeliveryId::first_at(u64::MAX).as_str() >= DeliveryId::generate(at).as_str());
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
