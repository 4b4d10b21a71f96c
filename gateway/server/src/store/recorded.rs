//! A typed value in a stored record that must also read names this build does not know.
//!
//! Records outlive builds: a data dir may hold a reason, kind or state written by
//! another build (an older one, or a newer one rolled back). Reading such a name
//! must neither fail (the record, and the delivery it holds, would be lost to every
//! reader) nor change it, so [`Recorded`] keeps the name as it was and writes it back
//! byte for byte. A known name is written in its own spelling: the empty breaker
//! state of older records reads as closed and is written back as `"closed"`.

use serde::de::{DeserializeOwned, IntoDeserializer};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A stored name: a value this build knows, or the name as another build wrote it.
///
/// Both are encoded as the plain JSON string `T` serialises to.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Recorded<T> {
    Known(T),
    /// A name no variant of `T` reads; shown and stored again as it is.
    Unknown(String),
}

impl<T> Recorded<T> {
    /// The value, if this build knows its name.
    pub fn known(&self) -> Option<&T> {
        match self {
            Self::Known(value) => Some(value),
            Self::Unknown(_) => None,
        }
    }
}

impl<T> From<T> for Recorded<T> {
    fn from(value: T) -> Self {
        Self::Known(value)
    }
}

impl<T: PartialEq> PartialEq<T> for Recorded<T> {
    fn eq(&self, other: &T) -> bool {
        self.known() == Some(other)
    }
}

impl<T: Default> Default for Recorded<T> {
    fn default() -> Self {
        Self::Known(T::default())
    }
}

impl<T: Serialize> Serialize for Recorded<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Known(value) => value.serialize(serializer),
            Self::Unknown(name) => serializer.serialize_str(name),
        }
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Recorded<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        let known = T::deserialize(
            IntoDeserializer::<serde::de::value::Error>::into_deserializer(name.as_str()),
        );
        Ok(known.map_or(Self::Unknown(name), Self::Known))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::DeadReason;

    #[test]
    fn known_names_read_as_their_value_and_write_back_the_same() {
        let read: Recorded<DeadReason> = serde_json::from_str(r#""max_attempts""#).unwrap();
        assert_eq!(read, DeadReason::MaxAttempts);
        assert_eq!(serde_json::to_string(&read).unwrap(), r#""max_attempts""#);
    }

    #[test]
    fn unknown_names_are_kept_as_written() {
        let read: Recorded<DeadReason> = serde_json::from_str(r#""quota_exceeded""#).unwrap();
        assert_eq!(read, Recorded::Unknown("quota_exceeded".into()));
        assert_eq!(read.known(), None);
        assert_eq!(serde_json::to_string(&read).unwrap(), r#""quota_exceeded""#);
    }

    #[test]
    fn absent_values_stay_absent() {
        let read: Option<Recorded<DeadReason>> = serde_json::from_str("null").unwrap();
        assert_eq!(read, None);
    }

    #[test]
    fn non_strings_are_still_refused() {
        assert!(serde_json::from_str::<Recorded<DeadReason>>("7").is_err());
    }
}
