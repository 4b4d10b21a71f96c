//! The API client: hyper-util's pooled client over rustls (ring, webpki roots),
//! bearer auth, bounded waits, and the mapping of answers to [`Reply`] or
//! [`CliError`]. The lab's commands and the tests drive gateways with it too,
//! through [`ApiClient::exchange`], which hands back any status as it came.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Request, header};
use http_body_util::{BodyExt, Full, Limited};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;
use url::Url;

use super::error::{ApiFailure, CliError};
use super::request::Target;
pub use super::request::{Answer, ApiRequest};

/// How long a connection may take to open.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a whole request may take, answer included.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
/// The largest answer read.
const MAX_ANSWER_BYTES: usize = 32 << 20;

/// A 2xx answer: the exact bytes (for `--json`) and their parsed form.
#[derive(Debug)]
pub(super) struct Reply {
    pub(super) raw: Bytes,
    /// `Null` for an empty body (204).
    pub(super) json: Value,
}

/// The gateway's address, the token, and a connection pool; clones share the pool.
#[derive(Clone)]
pub struct ApiClient {
    base: Url,
    token: Option<String>,
    timeout: Duration,
    client: Client<HttpsConnector<HttpConnector>, Full<Bytes>>,
}

impl ApiClient {
    /// A client for the gateway at `base`.
    ///
    /// # Errors
    /// [`CliError::Usage`] when `base` is not an http(s) URL or TLS cannot be set up.
    pub fn new(base: &str, token: Option<String>) -> Result<Self, CliError> {
        let url = Url::parse(base)
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https") && u.has_host())
            .ok_or_else(|| {
                CliError::Usage(format!(
                    "--url {base:?} is not an http(s) URL: give the gateway's address, e.g. http://127.0.0.1:8080"
                ))
            })?;
        let mut roots = rustls::RootCertStore::empty();
        roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| CliError::Usage(format!("TLS setup failed: {e}")))?
            .with_root_certificates(roots)
            .with_no_client_auth();
        let mut http = HttpConnector::new();
        http.enforce_http(false);
        http.set_connect_timeout(Some(CONNECT_TIMEOUT));
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_or_http()
            .enable_http1()
            .wrap_connector(http);
        Ok(Self {
            base: url,
            token: token.filter(|t| !t.is_empty()),
            timeout: REQUEST_TIMEOUT,
            client: Client::builder(TokioExecutor::new()).build(https),
        })
    }

    /// The same gateway and pool with another token.
    pub fn with_token(&self, token: &str) -> Self {
        let token = Some(token.to_owned()).filter(|t| !t.is_empty());
        Self {
            token,
            ..self.clone()
        }
    }

    /// The same client with another bound on each whole request.
    pub fn with_timeout(&self, timeout: Duration) -> Self {
        Self {
            timeout,
            ..self.clone()
        }
    }

    /// The token this client sends.
    pub fn token(&self) -> Option<&str> {
        self.token.as_deref()
    }

    fn url_of(&self, req: &ApiRequest) -> Url {
        let mut url = self.base.clone();
        url.set_query(None);
        url.set_fragment(None);
        match &req.target {
            Target::Api(segments) => {
                if let Ok(mut path) = url.path_segments_mut() {
                    path.pop_if_empty().push("v1").extend(segments);
                }
            }
            Target::Path(given) => {
                let (path, query) = given.split_once('?').unwrap_or((given, ""));
                let joined = format!("{}{path}", url.path().trim_end_matches('/'));
                url.set_path(&joined);
                url.set_query(Some(query).filter(|q| !q.is_empty()));
            }
        }
        if !req.query.is_empty() {
            url.query_pairs_mut().extend_pairs(&req.query);
        }
        url
    }

    /// Sends `req`; a 2xx gives its [`Reply`].
    ///
    /// # Errors
    /// [`CliError::Api`] for an API error, [`CliError::NotSupported`] when the gateway
    /// has no such route, [`CliError::Unreachable`] when it could not be reached.
    pub(super) async fn send(&self, req: ApiRequest) -> Result<Reply, CliError> {
        let url = self.url_of(&req);
        let route = format!("{} {}", req.method, url.path());
        let answer = self.exchange(req).await?;
        interpret(answer.status, answer.body, &url, route)
    }

    /// Sends `req` and returns whatever came back, any status.
    ///
    /// # Errors
    /// [`CliError::Usage`] when the request cannot be built, [`CliError::Unreachable`]
    /// when no whole answer came within the client's timeout.
    pub async fn exchange(&self, req: ApiRequest) -> Result<Answer, CliError> {
        let url = self.url_of(&req);
        let mut builder = Request::builder()
            .method(req.method.clone())
            .uri(url.as_str())
            .header(
                header::USER_AGENT,
                concat!("hookgate-cli/", env!("CARGO_PKG_VERSION")),
            );
        if !req
            .headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("accept"))
        {
            builder = builder.header(header::ACCEPT, "application/json");
        }
        let token = req
            .token
            .as_ref()
            .map_or(self.token.as_deref(), Option::as_deref);
        if let Some(t) = token {
            builder = builder.header(header::AUTHORIZATION, format!("Bearer {t}"));
        }
        for (name, value) in &req.headers {
            builder = builder.header(name.as_str(), value);
        }
        let body = match req.body {
            Some((bytes, content_type)) => {
                if let Some(content_type) = content_type {
                    builder = builder.header(header::CONTENT_TYPE, content_type);
                }
                bytes
            }
            None => Bytes::new(),
        };
        let request = builder.body(Full::new(body)).map_err(|e| {
            CliError::Usage(format!(
                "cannot build the request (check --token and header values): {e}"
            ))
        })?;
        let unreachable = |reason: String| CliError::Unreachable {
            url: url.to_string(),
            reason,
        };
        let exchange = async {
            let resp = self
                .client
                .request(request)
                .await
                .map_err(|e| unreachable(innermost(&e)))?;
            let status = resp.status().as_u16();
            let (parts, body) = resp.into_parts();
            let raw = Limited::new(body, MAX_ANSWER_BYTES)
                .collect()
                .await
                .map_err(|e| unreachable(format!("the answer broke off: {e}")))?
                .to_bytes();
            Ok::<_, CliError>(Answer {
                status,
                headers: parts.headers,
                body: raw,
            })
        };
        tokio::time::timeout(self.timeout, exchange)
            .await
            .map_err(|_| unreachable(format!("no answer within {}s", self.timeout.as_secs())))?
    }
}

/// Turns a status and body into a reply or the matching error.
fn interpret(status: u16, raw: Bytes, url: &Url, route: String) -> Result<Reply, CliError> {
    let parsed = if raw.iter().all(u8::is_ascii_whitespace) {
        Some(Value::Null)
    } else {
        serde_json::from_slice::<Value>(&raw).ok()
    };
    if (200..300).contains(&status)
        && let Some(json) = parsed
    {
        return Ok(Reply { raw, json });
    }
    let error = parsed.as_ref().and_then(|v| v.get("error"));
    let Some(error) = error.filter(|e| e["code"].is_string()) else {
        let text = String::from_utf8_lossy(&raw);
        let snippet: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
        return Err(CliError::Unexpected {
            status,
            url: url.to_string(),
            snippet: snippet.chars().take(120).collect(),
        });
    };
    let failure = ApiFailure {
        status,
        code: error["code"].as_str().unwrap_or_default().to_owned(),
        message: error["message"].as_str().unwrap_or_default().to_owned(),
        field: error["field"].as_str().map(str::to_owned),
        route,
    };
    if failure.status == 404 && failure.code == "not_found" && failure.message == "route not found"
    {
        return Err(CliError::NotSupported {
            feature: None,
            route: failure.route,
        });
    }
    Err(CliError::Api(failure))
}

/// The most specific message in an error's source chain ("Connection refused ...").
fn innermost(e: &(dyn std::error::Error + 'static)) -> String {
    let mut last: &(dyn std::error::Error + 'static) = e;
    while let Some(next) = last.source() {
        last = next;
    }
    let text = last.to_string();
    if text.is_empty() { e.to_string() } else { text }
}

#[cfg(test)]
mod tests;
