//! Metadata: a bounded map of strings a platform keeps on its records (an
//! endpoint, later a tenant) for its own use; hookgate stores and shows it and
//! never reads it.

use std::collections::BTreeMap;

use super::error::ApiError;

/// Most keys in one record's metadata.
pub(super) const MAX_KEYS: usize = 50;
/// Most bytes of one key.
pub(super) const MAX_KEY_BYTES: usize = 64;
/// Most bytes of one value.
pub(super) const MAX_VALUE_BYTES: usize = 512;

/// The metadata to store from `given`, where a null value (from a merge
/// patch) removes its key.
///
/// # Errors
/// 422 `validation_failed` naming `metadata` or the key.
pub(super) fn validate(
    given: BTreeMap<String, Option<String>>,
) -> Result<BTreeMap<String, String>, ApiError> {
    let kept: BTreeMap<String, String> = given
        .into_iter()
        .filter_map(|(k, v)| Some((k, v?)))
        .collect();
    if kept.len() > MAX_KEYS {
        return Err(ApiError::validation(
            "metadata",
            format!("metadata may hold at most {MAX_KEYS} keys"),
        ));
    }
    for (key, value) in &kept {
        let field = format!("metadata.{key}");
        if key.is_empty() || key.len() > MAX_KEY_BYTES || key.chars().any(char::is_control) {
            return Err(ApiError::validation(
                &field,
                format!("a metadata key is 1 to {MAX_KEY_BYTES} bytes with no control characters"),
            ));
        }
        if value.len() > MAX_VALUE_BYTES || value.chars().any(char::is_control) {
            return Err(ApiError::validation(
                &field,
                format!(
                    "a metadata value is at most {MAX_VALUE_BYTES} bytes with no control characters"
                ),
            ));
        }
    }
    Ok(kept)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field_of(given: &[(&str, Option<&str>)]) -> Option<String> {
        let map = given
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.map(str::to_owned)))
            .collect();
        validate(map).err().and_then(|e| e.field)
    }

    #[test]
    fn metadata_is_bounded_and_a_null_removes_a_key() {
        let map: BTreeMap<String, Option<String>> = [
            ("team".to_owned(), Some("orders".to_owned())),
            ("gone".to_owned(), None),
        ]
        .into();
        assert_eq!(
            validate(map).unwrap(),
            BTreeMap::from([("team".to_owned(), "orders".to_owned())])
        );
        assert_eq!(field_of(&[("", Some("x"))]).as_deref(), Some("metadata."));
        let long = "k".repeat(MAX_KEY_BYTES + 1);
        assert_eq!(
            field_of(&[(&long, Some("x"))]),
            Some(format!("metadata.{long}"))
        );
        let big = "v".repeat(MAX_VALUE_BYTES + 1);
        assert_eq!(
            field_of(&[("k", Some(&big))]).as_deref(),
            Some("metadata.k")
        );
        assert_eq!(
            field_of(&[("k", Some("a\nb"))]).as_deref(),
            Some("metadata.k")
        );
        let many: Vec<(String, Option<&str>)> = (0..=MAX_KEYS)
            .map(|i| (format!("k{i}"), Some("v")))
            .collect();
        let many: Vec<(&str, Option<&str>)> = many.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        assert_eq!(field_of(&many).as_deref(), Some("metadata"));
    }
}
