//! Request bodies: read within the route's limit, parsed as JSON with errors that
//! say whether the JSON was malformed (400 `invalid_json`) or a field was wrong
//! (400 `invalid_field`, naming it).

use axum::body::Body;
use bytes::Bytes;
use http_body_util::{BodyExt, Limited};
use serde::de::DeserializeOwned;

use super::error::ApiError;

/// Reads a whole body, refusing more than `limit` bytes with 413.
///
/// # Errors
/// 413 over the limit; 400 if the body could not be read.
pub async fn read_limited(body: Body, limit: usize) -> Result<Bytes, ApiError> {
    match Limited::new(body, limit).collect().await {
        Ok(c) => Ok(c.to_bytes()),
        Err(e)
            if e.downcast_ref::<http_body_util::LengthLimitError>()
                .is_some() =>
        {
            Err(ApiError::too_large(limit))
        }
        Err(e) => Err(ApiError::invalid_json(format!("could not read body: {e}"))),
    }
}

/// Parses JSON into `T`, naming the failing field.
///
/// # Errors
/// 400 `invalid_json` for malformed JSON, 400 `invalid_field` for a wrong type,
/// a missing required field or an unknown field.
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if inner.is_syntax() || inner.is_eof() {
            ApiError::invalid_json(format!("malformed JSON: {inner}"))
        } else {
            let field = if path == "." { String::new() } else { path };
            ApiError::invalid_field(field, inner.to_string())
        }
    })?;
    de.end()
        .map_err(|e| ApiError::invalid_json(format!("trailing characters: {e}")))?;
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code, reason = "fields exist to be parsed")]
    struct Input {
        name: String,
        inner: Option<Inner>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code, reason = "fields exist to be parsed")]
    struct Inner {
        n: u32,
    }

    #[test]
    fn malformed_and_wrongly_typed_bodies_are_told_apart() {
        assert_eq!(
            parse_json::<Input>(b"{\"name\":").unwrap_err().code,
            "invalid_json"
        );
        assert_eq!(
            parse_json::<Input>(b"{\"name\":\"a\"} x").unwrap_err().code,
            "invalid_json"
        );
        let e = parse_json::<Input>(b"{\"name\":\"a\",\"inner\":{\"n\":\"x\"}}").unwrap_err();
        assert_eq!(
            (e.code, e.field.as_deref()),
            ("invalid_field", Some("inner.n"))
        );
        let e = parse_json::<Input>(b"{\"name\":1}").unwrap_err();
        assert_eq!(
            (e.code, e.field.as_deref()),
            ("invalid_field", Some("name"))
        );
        let e = parse_json::<Input>(b"{\"name\":\"a\",\"extra\":1}").unwrap_err();
        assert_eq!(e.code, "invalid_field");
        assert!(parse_json::<Input>(b"{\"name\":\"a\"}").is_ok());
    }

    #[tokio::test]
    async fn bodies_over_the_limit_are_413() {
        let e = read_limited(Body::from(vec![b'x'; 11]), 10)
            .await
            .unwrap_err();
        assert_eq!(e.status.as_u16(), 413);
        assert_eq!(
            read_limited(Body::from("12345"), 10)
                .await
                .unwrap()
                .as_ref(),
            b"12345"
        );
    }
}
