//! Control characters in a request's path or query. No id or name has one, and
//! no store should be asked about one: PostgreSQL refuses a NUL in text, and
//! without this check such a lookup read as a storage outage. A path that
//! decodes to one names nothing (404); a query parameter with one is refused
//! by name (400).

use axum::extract::Request;
use axum::http::Uri;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use percent_encoding::percent_decode_str;

use super::error::ApiError;

/// Answers a request whose path or query carries a control character, and
/// passes every other one on.
pub(super) async fn refuse_control_characters(req: Request, next: Next) -> Response {
    match check(req.uri()) {
        Ok(()) => next.run(req).await,
        Err(refused) => refused.into_response(),
    }
}

pub(super) fn check(uri: &Uri) -> Result<(), ApiError> {
    let path = percent_decode_str(uri.path()).decode_utf8();
    if !path.is_ok_and(|p| !has_control(&p)) {
        return Err(ApiError::not_found("resource"));
    }
    for (name, value) in url::form_urlencoded::parse(uri.query().unwrap_or("").as_bytes()) {
        if has_control(&name) {
            return Err(ApiError::invalid_field(
                "query",
                "query parameter names must not contain control characters",
            ));
        }
        if has_control(&value) {
            return Err(ApiError::invalid_field(
                name.as_ref(),
                format!("{name} must not contain control characters"),
            ));
        }
    }
    Ok(())
}

/// Refuses a body's text field with a control character (422, by name): such
/// a value names no endpoint or event type, and no store should be asked.
pub(super) fn plain_text(field: &str, value: Option<&str>) -> Result<(), ApiError> {
    match value {
        Some(v) if has_control(v) => Err(ApiError::validation(
            field,
            format!("{field} must not contain control characters"),
        )),
        _ => Ok(()),
    }
}

fn has_control(s: &str) -> bool {
    s.chars().any(char::is_control)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(uri: &str) -> Option<(u16, Option<String>)> {
        let uri: Uri = uri.parse().unwrap();
        check(&uri).err().map(|e| (e.status().as_u16(), e.field))
    }

    #[test]
    fn a_control_character_in_the_path_names_nothing() {
        assert_eq!(
            answer("/v1/tenants/acme/endpoints/ep_%00x"),
            Some((404, None))
        );
        assert_eq!(answer("/v1/tenants/a%1Fb"), Some((404, None)));
        assert_eq!(answer("/v1/tenants/%FF"), Some((404, None)), "not UTF-8");
        assert_eq!(answer("/v1/tenants/acme/endpoints/ep_01%20x"), None);
    }

    #[test]
    fn a_control_character_in_a_query_value_is_refused_by_name() {
        let field = |f: &str| Some((400, Some(f.to_owned())));
        assert_eq!(
            answer("/v1/tenants/a/deliveries?cursor=%00"),
            field("cursor")
        );
        assert_eq!(answer("/x?limit=5&endpoint_id=ep%0A"), field("endpoint_id"));
        assert_eq!(answer("/x?a%00=1"), field("query"));
        assert_eq!(answer("/x?event_type=order.created&limit=5"), None);
    }
}
