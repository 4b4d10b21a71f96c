//! Svix's wire format where it differs from API v1's: camelCase names, the
//! `ListResponse` (`data`, `iterator`, `prevIterator`, `done`) with `limit`,
//! `iterator` and `order`, and reading a JSON body into a map first (serde
//! would take a struct from an array).

use axum::body::Body;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::error::SvixError;
use crate::api::body::read_limited;

/// A v1 field name (`event_types[0]`, `rate_limit_per_s`) as Svix spells it.
pub(super) fn camel_path(field: &str) -> String {
    match field {
        "rate_limit_per_s" => return "throttleRate".into(),
        "event_id" => return "eventId".into(),
        _ => {}
    }
    let mut out = String::with_capacity(field.len());
    let mut upper = false;
    for c in field.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// `limit`, `iterator` and `order` of a Svix list.
#[derive(Debug, Default, Deserialize)]
pub(super) struct ListQuery {
    pub(super) limit: Option<String>,
    pub(super) iterator: Option<String>,
    pub(super) order: Option<String>,
}

impl ListQuery {
    /// The v1 query for this page: `limit` (1 to 250) and `cursor`.
    ///
    /// # Errors
    /// 422 at `limit` when out of range, or at `order` when not `descending`.
    pub(super) fn v1_query(&self) -> Result<Vec<(&'static str, String)>, SvixError> {
        let mut q = Vec::new();
        if let Some(limit) = &self.limit {
            match limit.parse::<u32>() {
                Ok(n) if (1..=250).contains(&n) => q.push(("limit", n.to_string())),
                _ => {
                    return Err(SvixError::query_field(
                        "limit",
                        "limit must be from 1 to 250",
                    ));
                }
            }
        }
        if let Some(it) = self.iterator.as_ref().filter(|i| !i.is_empty()) {
            q.push(("cursor", it.clone()));
        }
        // Applications and endpoints are listed in one order only.
        if self.order.as_deref().is_some_and(|o| o != "descending") {
            return Err(SvixError::query_field(
                "order",
                "this list comes in one order: descending",
            ));
        }
        Ok(q)
    }
}

/// A Svix `ListResponse` of `data`, from a v1 page's `next_cursor` (and
/// `prev_cursor`, where the list reads both ways).
pub(super) fn list_response(data: Vec<Value>, v1_page: &Value) -> Value {
    let next = v1_page["next_cursor"].as_str();
    json!({
        "data": data,
        "iterator": next,
        "prevIterator": v1_page["prev_cursor"].as_str(),
        "done": next.is_none(),
    })
}

/// A request's JSON body as an object, checked against `schema` (its name
/// in the face's document); no body reads as `{}`.
///
/// # Errors
/// 413 past `limit`; 422 for a body that is not a JSON object, or that the
/// schema refuses.
pub(super) async fn object_body(
    body: Body,
    limit: usize,
    schema: &str,
) -> Result<Map<String, Value>, SvixError> {
    let bytes = read_limited(body, limit).await?;
    let text = if bytes.iter().all(u8::is_ascii_whitespace) {
        &b"{}"[..]
    } else {
        &bytes[..]
    };
    let value: Value = serde_json::from_slice(text).map_err(|e| SvixError::Validation {
        loc: vec!["body".into()],
        msg: format!("the body is not JSON: {e}"),
    })?;
    super::openapi::bodies::check(schema, &value)?;
    match value {
        Value::Object(m) => Ok(m),
        _ => Err(SvixError::Validation {
            loc: vec!["body".into()],
            msg: "the body must be a JSON object".into(),
        }),
    }
}

/// Copies the fields of `from` named in `names` (`(svix, v1)`) into a new
/// object, renamed; a field absent stays absent, `null` stays `null`.
pub(super) fn renamed(from: &Map<String, Value>, names: &[(&str, &str)]) -> Map<String, Value> {
    names
        .iter()
        .filter_map(|(svix, v1)| from.get(*svix).map(|v| ((*v1).to_owned(), v.clone())))
        .collect()
}

/// A Svix query string as its name/value pairs. Svix repeats some parameters
/// (`event_types=a&event_types=b`) or joins them with commas, which a serde
/// struct would refuse; read here, every value is taken and none refused.
#[derive(Debug, Default, Clone)]
pub(super) struct Pairs(Vec<(String, String)>);

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for Pairs {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        _: &S,
    ) -> Result<Self, Self::Rejection> {
        let query = parts.uri.query().unwrap_or_default();
        Ok(Self(
            url::form_urlencoded::parse(query.as_bytes())
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect(),
        ))
    }
}

impl Pairs {
    /// The first value of `name`, if given and not empty.
    pub(super) fn one(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, v)| k == name && !v.is_empty())
            .map(|(_, v)| v.as_str())
    }

    /// Every value of `name` (or `name[]`), repeated or comma-joined.
    pub(super) fn list(&self, name: &str) -> Vec<String> {
        let bracketed = format!("{name}[]");
        self.0
            .iter()
            .filter(|(k, _)| *k == name || *k == bracketed)
            .flat_map(|(_, v)| v.split(','))
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_owned)
            .collect()
    }

    /// The boolean `name`, `default` when absent.
    ///
    /// # Errors
    /// 422 at `name` for anything but `true` or `false`.
    pub(super) fn flag(&self, name: &str, default: bool) -> Result<bool, SvixError> {
        match self.one(name) {
            None => Ok(default),
            Some(v) if v.eq_ignore_ascii_case("true") => Ok(true),
            Some(v) if v.eq_ignore_ascii_case("false") => Ok(false),
            Some(_) => Err(SvixError::query_field(
                name,
                format!("{name} must be true or false"),
            )),
        }
    }

    /// The time `name` (RFC 3339; no offset is UTC), as v1 takes it.
    ///
    /// # Errors
    /// 422 at `name` for a value that is no time, an empty one included.
    pub(super) fn time(&self, name: &str) -> Result<Option<String>, SvixError> {
        // A time given empty is no time (elsewhere an empty value reads as absent).
        let given = self
            .0
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str());
        given
            .map(|v| {
                crate::clock::parse_rfc3339_ms(v)
                    .map(crate::clock::rfc3339_ms)
                    .ok_or_else(|| {
                        SvixError::query_field(name, format!("{name} must be an RFC 3339 time"))
                    })
            })
            .transpose()
    }

    /// `limit`, `iterator` and `order`, as a [`ListQuery`].
    pub(super) fn page(&self) -> ListQuery {
        ListQuery {
            limit: self.one("limit").map(str::to_owned),
            iterator: self.one("iterator").map(str::to_owned),
            order: self.one("order").map(str::to_owned),
        }
    }
}
