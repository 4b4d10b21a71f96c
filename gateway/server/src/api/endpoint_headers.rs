//! An endpoint's custom headers: sent with every attempt, validated here,
//! shown masked where sensitive. hookgate owns the headers that sign and frame
//! a request (`webhook-*`, `svix-*`, `content-*`, `host`, `user-agent` and the
//! connection's own), so a tenant may not set those. A sensitive value is sent
//! as stored and never shown again: views carry [`MASK`], a value given as
//! [`MASK`] on an update keeps the stored one (so a client may send back what
//! it read), and a stored sensitive value stays masked until it is replaced.

use std::collections::BTreeMap;

use super::error::ApiError;
use crate::store::EndpointHeader;

/// Most custom headers on one endpoint.
pub(super) const MAX_HEADERS: usize = 20;
/// Most bytes of one header's name.
pub(super) const MAX_NAME_BYTES: usize = 100;
/// Most bytes of all of an endpoint's names and values together.
pub(super) const MAX_TOTAL_BYTES: usize = 4096;
/// What a view shows in place of a sensitive value.
pub(super) const MASK: &str = crate::store::EndpointHeader::MASK;

/// Names hookgate sets or the connection owns.
const OWNED: [&str; 14] = [
    "content-type",
    "content-length",
    "content-encoding",
    "host",
    "user-agent",
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "te",
    "trailer",
    "upgrade",
    "expect",
    "date",
];

/// Names whose values are credentials whether or not the tenant says so.
const ALWAYS_SENSITIVE: [&str; 3] = ["authorization", "proxy-authorization", "cookie"];

/// The headers to store from `given` (name → value) and the names marked
/// `sensitive`, over the endpoint's `stored` ones (whose values a [`MASK`]
/// keeps).
///
/// # Errors
/// 422 `validation_failed` naming `headers` or `sensitive_headers`.
pub(super) fn validate(
    given: &BTreeMap<String, String>,
    sensitive: &[String],
    stored: &[EndpointHeader],
) -> Result<Vec<EndpointHeader>, ApiError> {
    if given.len() > MAX_HEADERS {
        return Err(ApiError::validation(
            "headers",
            format!("headers may hold at most {MAX_HEADERS} headers"),
        ));
    }
    let mut out: BTreeMap<String, EndpointHeader> = BTreeMap::new();
    let mut total = 0;
    for (raw_name, value) in given {
        let name = checked_name(raw_name)?;
        let field = format!("headers.{raw_name}");
        let value = if value == MASK {
            stored
                .iter()
                .find(|h| h.name == name)
                .map(|h| h.value.clone())
                .ok_or_else(|| {
                    ApiError::validation(
                        &field,
                        format!("{MASK} stands for a stored value, and {name} has none"),
                    )
                })?
        } else {
            checked_value(&field, value)?
        };
        total += name.len() + value.len();
        // A stored secret stays masked until it is replaced: un-marking it
        // does not reveal it.
        let kept_secret = stored
            .iter()
            .any(|h| h.name == name && h.sensitive && h.value == value);
        let header = EndpointHeader {
            sensitive: kept_secret || ALWAYS_SENSITIVE.contains(&name.as_str()),
            name: name.clone(),
            value,
        };
        if out.insert(name.clone(), header).is_some() {
            return Err(ApiError::validation(
                &field,
                format!("header names are case-insensitive: {name} is given twice"),
            ));
        }
    }
    if total > MAX_TOTAL_BYTES {
        return Err(ApiError::validation(
            "headers",
            format!("headers may hold at most {MAX_TOTAL_BYTES} bytes of names and values"),
        ));
    }
    for (i, name) in sensitive.iter().enumerate() {
        let lower = name.to_ascii_lowercase();
        if let Some(header) = out.get_mut(&lower) {
            header.sensitive = true;
        } else if !stored.iter().any(|h| h.name == lower) {
            // A header removed by this update may stay listed.
            return Err(ApiError::validation(
                format!("sensitive_headers[{i}]"),
                format!("{name} is not one of the endpoint's headers"),
            ));
        }
    }
    Ok(out.into_values().collect())
}

/// `name` in lower case, if a tenant may set it.
fn checked_name(name: &str) -> Result<String, ApiError> {
    let field = format!("headers.{name}");
    let lower = name.to_ascii_lowercase();
    if name.is_empty()
        || name.len() > MAX_NAME_BYTES
        || http::HeaderName::from_bytes(name.as_bytes()).is_err()
    {
        return Err(ApiError::validation(
            &field,
            format!(
                "a header name is 1 to {MAX_NAME_BYTES} token characters \
                 (letters, digits and !#$%&'*+-.^_`|~)"
            ),
        ));
    }
    // Both header sets are reserved, whichever the endpoint uses now.
    if lower.starts_with("webhook-")
        || lower.starts_with("svix-")
        || OWNED.contains(&lower.as_str())
    {
        return Err(ApiError::validation(
            &field,
            format!("{lower} is set by hookgate or by the connection, not by an endpoint"),
        ));
    }
    Ok(lower)
}

/// `value` if it can travel as a header: visible ASCII, spaces and tabs, not
/// starting or ending with whitespace.
fn checked_value(field: &str, value: &str) -> Result<String, ApiError> {
    let plain = value
        .bytes()
        .all(|b| b == b'\t' || (0x20..0x7f).contains(&b));
    if !plain || value.trim() != value {
        return Err(ApiError::validation(
            field,
            "a header value is visible ASCII, spaces and tabs, with no whitespace at either end",
        ));
    }
    Ok(value.to_owned())
}

/// The headers as a view shows them: sensitive values masked.
pub(super) fn shown(headers: &[EndpointHeader]) -> BTreeMap<String, String> {
    headers
        .iter()
        .map(|h| {
            let value = if h.sensitive { MASK } else { h.value.as_str() };
            (h.name.clone(), value.to_owned())
        })
        .collect()
}

/// The names of the sensitive headers, in order.
pub(super) fn sensitive_names(headers: &[EndpointHeader]) -> Vec<String> {
    headers
        .iter()
        .filter(|h| h.sensitive)
        .map(|h| h.name.clone())
        .collect()
}

/// The headers as an update starts from: the stored values themselves.
pub(super) fn stored(headers: &[EndpointHeader]) -> BTreeMap<String, String> {
    headers
        .iter()
        .map(|h| (h.name.clone(), h.value.clone()))
        .collect()
}

#[cfg(test)]
#[path = "endpoint_headers_tests.rs"]
mod tests;
