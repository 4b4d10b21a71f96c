//! Headers every answer carries, and those only answers with secrets carry.
//! Every answer says `X-Content-Type-Options: nosniff`, so a browser never
//! reads JSON (or an error) as anything else; an answer that shows a secret
//! (a new tenant's key, a new endpoint's or its rotated signing secrets)
//! says `Cache-Control: no-store`, so no cache on the way keeps it.

use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};

/// An answer that shows a secret: `Cache-Control: no-store`.
pub(super) struct NoStore<T>(pub(super) T);

impl<T: IntoResponse> IntoResponse for NoStore<T> {
    fn into_response(self) -> Response {
        let mut response = self.0.into_response();
        response
            .headers_mut()
            .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        response
    }
}

/// Adds `X-Content-Type-Options: nosniff` where the answer has none.
pub(super) async fn nosniff(mut response: Response) -> Response {
    response
        .headers_mut()
        .entry(header::X_CONTENT_TYPE_OPTIONS)
        .or_insert(HeaderValue::from_static("nosniff"));
    response
}
