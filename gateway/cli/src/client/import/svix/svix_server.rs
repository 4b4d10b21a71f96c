//! `--from-url`/`--from-token`: a running Svix server read through its API, as
//! Svix defines it, with plain HTTP: the event types (archived ones too, with
//! their schemas), the applications, each one's endpoints, and each
//! endpoint's secret and headers, every list followed through its pages
//! (`limit`, then `iterator` until `done`). Only `GET`s: the source is never
//! written to.

use http::Method;
use serde::de::DeserializeOwned;
use serde_json::Value;
use url::Url;

use super::ImportError;
use super::SvixData;
use super::model::{SvixApplication, SvixEndpoint, SvixEventType, SvixHeaders, SvixSecret};
use crate::client::error::CliError;
use crate::client::{ApiClient, ApiRequest};

/// The most pages one list is followed through, so a server whose `iterator`
/// never ends cannot hold the import forever.
const MAX_PAGES: usize = 10_000;

/// A Svix server, and the token read with.
pub(super) struct SvixServer {
    api: ApiClient,
    base: String,
    /// The `limit` each page asks for.
    page_size: u32,
}

impl SvixServer {
    /// The server at `url`, read with `token`, `page_size` items a page.
    ///
    /// # Errors
    /// [`ImportError::Input`] when `url` is not an http(s) URL.
    pub(super) fn new(url: &str, token: &str, page_size: u32) -> Result<Self, ImportError> {
        let parsed = Url::parse(url)
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https") && u.has_host());
        if parsed.is_none() {
            return Err(ImportError::Input(format!(
                "--from-url {url:?} is not an http(s) URL: give the Svix server's address, \
                 e.g. https://api.eu.svix.com"
            )));
        }
        let api = ApiClient::new(url, Some(token.to_owned()))
            .map_err(|e| ImportError::Input(e.to_string()))?;
        Ok(Self {
            api,
            base: url.trim_end_matches('/').to_owned(),
            page_size,
        })
    }

    /// Every event type, application and endpoint the token reaches.
    ///
    /// # Errors
    /// As [`Self::get`].
    pub(super) async fn read_all(&self) -> Result<SvixData, ImportError> {
        let event_types: Vec<SvixEventType> = self
            .list(
                "/api/v1/event-type",
                &[("include_archived", "true"), ("with_content", "true")],
            )
            .await?;
        let mut applications: Vec<SvixApplication> = self.list("/api/v1/app", &[]).await?;
        for app in &mut applications {
            let app_path = format!("/api/v1/app/{}", segment(&app.id));
            let mut endpoints: Vec<SvixEndpoint> =
                self.list(&format!("{app_path}/endpoint"), &[]).await?;
            for ep in &mut endpoints {
                let ep_path = format!("{app_path}/endpoint/{}", segment(&ep.id));
                let secret: SvixSecret = self.get(&format!("{ep_path}/secret"), &[]).await?;
                ep.secret = Some(secret.key);
                let headers: SvixHeaders = self.get(&format!("{ep_path}/headers"), &[]).await?;
                ep.headers = Some(headers);
            }
            app.endpoints = endpoints;
        }
        Ok(SvixData {
            event_types,
            applications,
            skipped: Vec::new(),
        })
    }

    /// Every item of the list at `path`, page by page.
    async fn list<T: DeserializeOwned>(
        &self,
        path: &str,
        query: &[(&str, &str)],
    ) -> Result<Vec<T>, ImportError> {
        let mut items = Vec::new();
        let mut iterator: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let mut query: Vec<(&str, String)> =
                query.iter().map(|(k, v)| (*k, (*v).to_owned())).collect();
            query.push(("limit", self.page_size.to_string()));
            if let Some(it) = &iterator {
                query.push(("iterator", it.clone()));
            }
            let page: Value = self.get_pairs(path, &query).await?;
            let data = page["data"].as_array().ok_or_else(|| {
                self.malformed(path, "a list answer without a `data` array".into())
            })?;
            for item in data {
                let parsed = serde_json::from_value(item.clone())
                    .map_err(|e| self.malformed(path, e.to_string()))?;
                items.push(parsed);
            }
            let next = page["iterator"].as_str().map(str::to_owned);
            let done = page["done"].as_bool().unwrap_or(true);
            if done || data.is_empty() || next.is_none() || next == iterator {
                return Ok(items);
            }
            iterator = next;
        }
        Err(self.malformed(
            path,
            format!("its list did not end within {MAX_PAGES} pages"),
        ))
    }

    /// `GET path` read as `T`.
    ///
    /// # Errors
    /// [`ImportError::SourceUnreachable`] without an answer,
    /// [`ImportError::SourceRefused`] for a 401 or 403, and
    /// [`ImportError::SourceFailed`] for any other failure or a body that is
    /// not Svix's.
    async fn get<T: DeserializeOwned>(
        &self,
        path: &str,
        query: &[(&str, String)],
    ) -> Result<T, ImportError> {
        let value = self.get_pairs(path, query).await?;
        serde_json::from_value(value).map_err(|e| self.malformed(path, e.to_string()))
    }

    async fn get_pairs(&self, path: &str, query: &[(&str, String)]) -> Result<Value, ImportError> {
        let mut req = ApiRequest::path(Method::GET, path);
        for (name, value) in query {
            req = req.query(name, Some(value));
        }
        let url = format!("{}{path}", self.base);
        let answer = self.api.exchange(req).await.map_err(|e| match e {
            CliError::Unreachable { reason, .. } => ImportError::SourceUnreachable {
                url: url.clone(),
                reason,
            },
            other => ImportError::Input(other.to_string()),
        })?;
        let body: Option<Value> = serde_json::from_slice(&answer.body).ok();
        let status = answer.status;
        if (200..300).contains(&status)
            && let Some(body) = body
        {
            return Ok(body);
        }
        let detail = body
            .as_ref()
            .and_then(|b| b["detail"].as_str().map(str::to_owned))
            .unwrap_or_else(|| snippet(&answer.body));
        Err(match status {
            401 | 403 => ImportError::SourceRefused {
                url: self.base.clone(),
                status,
                detail,
            },
            _ => ImportError::SourceFailed {
                url,
                status,
                detail,
            },
        })
    }

    /// The error for an answer at `path` that is not what Svix answers.
    fn malformed(&self, path: &str, reason: String) -> ImportError {
        ImportError::SourceFailed {
            url: format!("{}{path}", self.base),
            status: 200,
            detail: format!("not Svix's answer: {reason}"),
        }
    }
}

/// The first words of a body that is not JSON.
fn snippet(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let words: Vec<&str> = text.split_whitespace().collect();
    let joined = words.join(" ");
    if joined.is_empty() {
        "an empty answer".to_owned()
    } else {
        joined.chars().take(120).collect()
    }
}

/// `id` as one path segment: unreserved characters as they are, the rest
/// percent-encoded.
fn segment(id: &str) -> String {
    let mut out = String::with_capacity(id.len());
    for b in id.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_one_segment_and_bad_urls_are_input_errors() {
        assert_eq!(segment("app_1Ab-x.y"), "app_1Ab-x.y");
        assert_eq!(segment("a/b c"), "a%2Fb%20c");
        let err = SvixServer::new("api.svix.com", "t", 250).err().unwrap();
        assert!(err.to_string().contains("--from-url"), "{err}");
        assert_eq!(err.exit_code(), 2);
        assert_eq!(
            snippet(b"<html> bad\n gateway </html>"),
            "<html> bad gateway </html>"
        );
    }
}
