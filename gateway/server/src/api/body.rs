//! Request bodies: read within the route's limit, parsed as JSON with errors that
//! say whether the JSON was malformed (400 `invalid_json`) or a field was wrong
//! (400 `invalid_field`, naming it). A read stopped by a [`read_guard`] (too slow,
//! or too many at once for the tenant) gets 408 or 429.

pub(crate) mod read_guard;
pub(crate) mod unread;

use axum::body::Body;
use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::Body as _;
use serde::de::DeserializeOwned;

use super::error::ApiError;
use read_guard::BodyReadRefused;

/// How much of a body over its limit is still read, and dropped, before the 413:
/// a client still sending then reads the answer, where closing on it mid-upload
/// would reset the connection and lose the answer. A body declared larger than
/// the limit and this is refused at once.
const DRAIN_PAST_LIMIT: usize = 1024 * 1024;

/// Reads a whole body, refusing more than `limit` bytes with 413.
///
/// # Errors
/// 413 over the limit; 408 past the body deadline; 429 when the tenant has too
/// many bodies being read; 400 if the body could not be read.
pub(crate) async fn read_limited(mut body: Body, limit: usize) -> Result<Bytes, ApiError> {
    let most = limit.saturating_add(DRAIN_PAST_LIMIT);
    if body.size_hint().lower() > most as u64 {
        return Err(ApiError::too_large(limit));
    }
    // Most bodies arrive as one frame, kept as it is; only more are joined.
    let mut kept: Vec<Bytes> = Vec::new();
    let mut read = 0usize;
    while let Some(frame) = body.frame().await {
        let frame = match frame {
            Ok(frame) => frame,
            // Past the limit, the answer is 413 however the rest went.
            Err(_) if read > limit => break,
            Err(e) => return Err(read_error(&e)),
        };
        let Ok(data) = frame.into_data() else {
            continue;
        };
        read = read.saturating_add(data.len());
        if read > most {
            break;
        }
        if read <= limit {
            kept.push(data);
        }
    }
    if read > limit {
        return Err(ApiError::too_large(limit));
    }
    Ok(match kept.len() {
        0 => Bytes::new(),
        1 => kept.swap_remove(0),
        _ => kept.concat().into(),
    })
}

/// What a body that failed mid-read is answered with.
fn read_error(e: &axum::Error) -> ApiError {
    match read_guard::refusal(e) {
        Some(BodyReadRefused::TimedOut) => ApiError::request_timeout(),
        Some(BodyReadRefused::TooManyReads) => ApiError::rate_limited(
            "too many request bodies are being read at once for this tenant; retry later",
        ),
        None => ApiError::invalid_json(format!("could not read body: {e}")),
    }
}

/// Reads an optional JSON body: empty, or `null`, is `T::default()`.
///
/// # Errors
/// As [`read_limited`] and [`parse_json`].
pub(crate) async fn body_or_default<T: DeserializeOwned + Default>(
    body: Body,
    limit: usize,
) -> Result<T, ApiError> {
    let bytes = read_limited(body, limit).await?;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        Ok(T::default())
    } else {
        Ok(parse_json::<Option<T>>(&bytes)?.unwrap_or_default())
    }
}

/// Parses JSON into `T`, naming the failing field.
///
/// # Errors
/// 400 `invalid_json` for malformed JSON, 400 `invalid_field` for a wrong type,
/// a missing required field or an unknown field.
pub(crate) fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    // serde reads an array as a struct's fields in order (`["x"]` as `{"id":
    // "x"}`); every body of this API is an object, so an array is refused.
    if bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[') {
        return Err(ApiError::invalid_field(
            "",
            "the body must be a JSON object, not an array",
        ));
    }
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
    use futures_util::StreamExt;
    use read_guard::{GuardedBody, ReadClaim, TenantReadGate};
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
            parse_json::<Input>(b"{\"name\":").unwrap_err().code(),
            "invalid_json"
        );
        assert_eq!(
            parse_json::<Input>(b"{\"name\":\"a\"} x")
                .unwrap_err()
                .code(),
            "invalid_json"
        );
        let e = parse_json::<Input>(b"{\"name\":\"a\",\"inner\":{\"n\":\"x\"}}").unwrap_err();
        assert_eq!(
            (e.code(), e.field.as_deref()),
            ("invalid_field", Some("inner.n"))
        );
        let e = parse_json::<Input>(b"{\"name\":1}").unwrap_err();
        assert_eq!(
            (e.code(), e.field.as_deref()),
            ("invalid_field", Some("name"))
        );
        let e = parse_json::<Input>(b"{\"name\":\"a\",\"extra\":1}").unwrap_err();
        assert_eq!(e.code(), "invalid_field");
        assert!(parse_json::<Input>(b"{\"name\":\"a\"}").is_ok());
        // Item 5 of tenant fairness: serde would read an array as the fields in order.
        let e = parse_json::<Input>(b" [\"a\"]").unwrap_err();
        assert_eq!((e.status().as_u16(), e.code()), (400, "invalid_field"));
        assert!(e.message.contains("not an array"), "{}", e.message);
    }

    #[tokio::test]
    async fn an_optional_body_may_be_empty_null_or_an_object() {
        #[derive(Debug, Default, PartialEq, Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Options {
            #[serde(default)]
            force: bool,
        }
        for (text, want) in [("", false), (" \n", false), ("null", false), ("{}", false)] {
            let got: Options = body_or_default(Body::from(text), 64).await.unwrap();
            assert_eq!(got, Options { force: want }, "{text:?}");
        }
        let got: Options = body_or_default(Body::from(r#"{"force":true}"#), 64)
            .await
            .unwrap();
        assert!(got.force);
        let e = body_or_default::<Options>(Body::from("1"), 64)
            .await
            .unwrap_err();
        assert_eq!(e.code(), "invalid_field");
    }

    /// A body that never ends, like a client trickling bytes.
    fn stalled_body() -> impl hyper::body::Body<Data = Bytes, Error = std::io::Error> {
        let chunks = futures_util::stream::once(async {
            Ok::<_, std::io::Error>(hyper::body::Frame::data(Bytes::from_static(b"{")))
        })
        .chain(futures_util::stream::pending());
        http_body_util::StreamBody::new(chunks)
    }

    #[tokio::test]
    async fn a_body_past_its_deadline_is_408() {
        let gate = TenantReadGate::new(4);
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_millis(50);
        let body = GuardedBody::new(stalled_body(), deadline, ReadClaim::new(gate));
        let e = read_limited(Body::new(body), 1024).await.unwrap_err();
        assert_eq!((e.status().as_u16(), e.code()), (408, "request_timeout"));
    }

    /// `body` read for tenant acme, with a deadline far away.
    fn for_acme<B>(gate: &std::sync::Arc<TenantReadGate>, body: B) -> Body
    where
        B: hyper::body::Body<Data = Bytes> + Send + 'static,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let claim = ReadClaim::new(std::sync::Arc::clone(gate));
        claim.name_tenant("acme");
        let far = tokio::time::Instant::now() + std::time::Duration::from_secs(60);
        Body::new(GuardedBody::new(body, far, claim))
    }

    #[tokio::test]
    async fn a_tenant_over_its_read_cap_is_429_and_slots_come_back() {
        let gate = TenantReadGate::new(1);
        let mut first = for_acme(&gate, stalled_body());
        // The first frame takes acme's only slot and keeps it while the body is open.
        assert!(first.frame().await.is_some());
        assert_eq!(gate.reading("acme"), 1);
        let e = read_limited(for_acme(&gate, stalled_body()), 1024)
            .await
            .unwrap_err();
        assert_eq!((e.status().as_u16(), e.code()), (429, "rate_limited"));
        drop(first);
        assert_eq!(gate.reading("acme"), 0);
        let ok = read_limited(for_acme(&gate, Body::from("{}")), 1024).await;
        assert_eq!(ok.unwrap().as_ref(), b"{}");
    }

    /// A client still sending a body a little over the limit gets its 413 after
    /// the body has been read, so the answer is not lost to a reset.
    #[tokio::test]
    async fn a_body_a_little_over_the_limit_is_read_to_its_end_before_the_413() {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicUsize, Ordering};
        let sent = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&sent);
        let chunks = futures_util::stream::iter(0..64).map(move |_| {
            counter.fetch_add(1, Ordering::SeqCst);
            Ok::<_, std::io::Error>(hyper::body::Frame::data(Bytes::from(vec![b'x'; 1024])))
        });
        let body = Body::new(http_body_util::StreamBody::new(chunks));
        let e = read_limited(body, 10 * 1024).await.unwrap_err();
        assert_eq!(e.status().as_u16(), 413);
        assert_eq!(sent.load(Ordering::SeqCst), 64, "every chunk was read");
    }

    #[tokio::test]
    async fn bodies_over_the_limit_are_413() {
        let e = read_limited(Body::from(vec![b'x'; 11]), 10)
            .await
            .unwrap_err();
        assert_eq!(e.status().as_u16(), 413);
        assert_eq!(
            read_limited(Body::from("12345"), 10)
                .await
                .unwrap()
                .as_ref(),
            b"12345"
        );
    }
}
