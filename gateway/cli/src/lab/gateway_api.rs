//! A subcommand's view of a gateway it started (demo, drills): JSON calls over
//! HTTP/1.1 with hyper-util's client, each bounded in time.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request, StatusCode, header};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;

/// How long one API call may take.
const CALL_TIMEOUT: Duration = Duration::from_secs(15);
/// Items per list page (the API's maximum).
const PAGE: u32 = 250;
/// More pages than any list a subcommand makes: a cursor loop always ends.
const MAX_PAGES: usize = 100_000;

/// A call that failed or answered something unexpected; names the path.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct ApiCallError(pub(crate) String);

/// A client for one gateway and one token.
#[derive(Clone)]
pub(crate) struct GatewayApi {
    client: Client<HttpConnector, Full<Bytes>>,
    base: Arc<str>,
    token: Arc<str>,
}

impl GatewayApi {
    pub(crate) fn new(addr: SocketAddr, token: &str) -> Self {
        Self {
            client: Client::builder(TokioExecutor::new()).build_http(),
            base: format!("http://{addr}").into(),
            token: token.into(),
        }
    }

    /// The token this client sends.
    pub(crate) fn token(&self) -> &str {
        &self.token
    }

    /// The same gateway with another token.
    pub(crate) fn with_token(&self, token: &str) -> Self {
        Self {
            token: token.into(),
            ..self.clone()
        }
    }

    /// `method path` with an optional JSON body: the status and the parsed answer
    /// (`Null` when it is not JSON).
    pub(crate) async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<(StatusCode, Value), ApiCallError> {
        let fail = |e: &dyn std::fmt::Display| ApiCallError(format!("{path}: {e}"));
        let bytes = body.map_or_else(Bytes::new, |b| Bytes::from(b.to_string()));
        let request = Request::builder()
            .method(method)
            .uri(format!("{}{path}", self.base))
            .header(header::AUTHORIZATION, format!("Bearer {}", self.token))
            .header(header::CONTENT_TYPE, "application/json")
            .body(Full::new(bytes))
            .map_err(|e| fail(&e))?;
        let exchange = async {
            let response = self.client.request(request).await?;
            let status = response.status();
            let body = response.into_body().collect().await?.to_bytes();
            Ok::<_, Box<dyn std::error::Error + Send + Sync>>((status, body))
        };
        let (status, body) = tokio::time::timeout(CALL_TIMEOUT, exchange)
            .await
            .map_err(|_| fail(&format_args!("no answer within {CALL_TIMEOUT:?}")))?
            .map_err(|e| fail(&e))?;
        Ok((status, serde_json::from_slice(&body).unwrap_or(Value::Null)))
    }

    /// [`Self::call`] that must answer `want`.
    pub(crate) async fn expect(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        want: StatusCode,
    ) -> Result<Value, ApiCallError> {
        let (status, answer) = self.call(method, path, body).await?;
        if status != want {
            return Err(ApiCallError(format!(
                "{path}: expected {want}, got {status}: {answer}"
            )));
        }
        Ok(answer)
    }

    /// Every item of a paged list (`path` without query), page by page.
    pub(crate) async fn list_all(&self, path: &str) -> Result<Vec<Value>, ApiCallError> {
        let mut out = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let mut page_path = format!("{path}?limit={PAGE}");
            if let Some(c) = &cursor {
                page_path.push_str(&format!("&cursor={c}"));
            }
            let mut page = self
                .expect(Method::GET, &page_path, None, StatusCode::OK)
                .await?;
            if let Some(data) = page["data"].as_array_mut() {
                out.append(data);
            }
            match page["next_cursor"].as_str() {
                Some(c) => cursor = Some(c.to_owned()),
                None => break,
            }
        }
        Ok(out)
    }
}
