//! Answers sent before the request body was read to its end (a 401 or a 503
//! from authentication, a 413 past the drain, a 408 or 429 from the read
//! guards) say `Connection: close`.
//!
//! hyper keeps a connection only if it can finish the request body, and it
//! decides that after the answer's head is written; a client not told reuses
//! the connection and its next request fails with a broken pipe. So the body
//! records whether it reached its end, and the server marks answers whose body
//! did not. The rest is not drained instead: that would wait on the client
//! (a slow or split request would hold its answer up to the body deadline) and
//! read bodies from callers already refused; a closed connection costs a
//! reconnect, and only after such an answer.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use axum::http::{HeaderValue, header};
use axum::response::Response;
use hyper::body::{Body, Frame, SizeHint};

/// Whether a request body was read to its end; shared by the body and the server.
#[derive(Debug, Clone, Default)]
pub(crate) struct BodyEnd(Arc<AtomicBool>);

impl BodyEnd {
    fn mark(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    pub(crate) fn reached(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// A body that marks its [`BodyEnd`] when it is read to its end. An empty body
/// (a GET, or `Content-Length: 0`) is at its end from the start.
#[derive(Debug)]
pub(crate) struct EndTracked<B> {
    inner: B,
    end: BodyEnd,
}

impl<B: Body> EndTracked<B> {
    pub(crate) fn new(inner: B) -> (Self, BodyEnd) {
        let end = BodyEnd::default();
        if inner.is_end_stream() {
            end.mark();
        }
        let body = Self {
            inner,
            end: end.clone(),
        };
        (body, end)
    }
}

impl<B: Body + Unpin> Body for EndTracked<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<B::Data>, B::Error>>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_frame(cx);
        // The last data frame of a sized body already leaves it at its end.
        if matches!(polled, Poll::Ready(None)) || this.inner.is_end_stream() {
            this.end.mark();
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// Adds `Connection: close` to `response` if its request body was not read to
/// its end; says whether it did.
pub(crate) fn close_if_unread(response: &mut Response, end: &BodyEnd) -> bool {
    if end.reached() {
        return false;
    }
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use http_body_util::{BodyExt, Full, StreamBody};

    fn answer() -> Response {
        Response::new(axum::body::Body::empty())
    }

    #[test]
    fn an_empty_body_is_at_its_end_unread() {
        let (_body, end) = EndTracked::new(Full::new(Bytes::new()));
        let mut response = answer();
        assert!(!close_if_unread(&mut response, &end));
        assert!(response.headers().get(header::CONNECTION).is_none());
    }

    #[tokio::test]
    async fn a_body_read_to_its_end_keeps_the_connection() {
        let (body, end) = EndTracked::new(Full::new(Bytes::from_static(b"{}")));
        assert!(!end.reached());
        assert_eq!(body.collect().await.unwrap().to_bytes().as_ref(), b"{}");
        assert!(end.reached());
        assert!(!close_if_unread(&mut answer(), &end));
    }

    #[tokio::test]
    async fn an_answer_before_the_end_of_the_body_closes_the_connection() {
        let frames = (0..3).map(|_| Ok::<_, std::io::Error>(Frame::data(Bytes::from("x"))));
        let (mut body, end) = EndTracked::new(StreamBody::new(futures_util::stream::iter(frames)));
        // One frame of three read, then the handler answers and drops the body.
        assert!(body.frame().await.is_some());
        drop(body);
        let mut response = answer();
        assert!(close_if_unread(&mut response, &end));
        assert_eq!(response.headers()[header::CONNECTION], "close");
    }

    #[tokio::test]
    async fn a_body_never_read_closes_the_connection() {
        let (body, end) = EndTracked::new(Full::new(Bytes::from_static(b"{}")));
        drop(body);
        let mut response = answer();
        assert!(close_if_unread(&mut response, &end));
        assert_eq!(response.headers()[header::CONNECTION], "close");
    }
}
