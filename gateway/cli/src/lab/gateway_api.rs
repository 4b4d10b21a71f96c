//! A subcommand's view of a gateway it started (demo, drills, benchmarks): JSON
//! calls through the command line's [`ApiClient`], each bounded in time.

use std::net::SocketAddr;
use std::time::Duration;

use http::{Method, StatusCode};
use serde_json::Value;

use crate::client::{ApiClient, ApiRequest};

/// How long one API call may take.
const CALL_TIMEOUT: Duration = Duration::from_secs(15);
/// Items per list page (the API's maximum).
const PAGE: u32 = 250;
/// More pages than any list a subcommand makes: a cursor loop always ends.
const MAX_PAGES: usize = 100_000;

/// A call that failed or answered something unexpected; names the path.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ApiCallError(pub String);

/// A client for one gateway and one token.
#[derive(Clone)]
pub struct GatewayApi {
    client: ApiClient,
}

impl GatewayApi {
    /// A client for the gateway at `addr`, sending `token`.
    ///
    /// # Errors
    /// When the client cannot be set up (TLS).
    pub fn new(addr: SocketAddr, token: &str) -> Result<Self, ApiCallError> {
        let client = ApiClient::new(&format!("http://{addr}"), Some(token.to_owned()))
            .map_err(|e| ApiCallError(e.to_string()))?;
        Ok(Self {
            client: client.with_timeout(CALL_TIMEOUT),
        })
    }

    /// The command line's client underneath.
    pub fn client(&self) -> &ApiClient {
        &self.client
    }

    /// The token this client sends.
    pub fn token(&self) -> &str {
        self.client.token().unwrap_or_default()
    }

    /// The same gateway with another token.
    pub fn with_token(&self, token: &str) -> Self {
        Self {
            client: self.client.with_token(token),
        }
    }

    /// `method path` with an optional JSON body: the status and the parsed answer
    /// (`Null` when it is not JSON).
    ///
    /// # Errors
    /// When no answer came.
    pub async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<(StatusCode, Value), ApiCallError> {
        let mut request = ApiRequest::path(method, path);
        request = match body {
            Some(b) => request.json(b),
            None => request.header("content-type", Some("application/json")),
        };
        let answer = self
            .client
            .exchange(request)
            .await
            .map_err(|e| ApiCallError(format!("{path}: {e}")))?;
        let status = StatusCode::from_u16(answer.status)
            .map_err(|e| ApiCallError(format!("{path}: {e}")))?;
        Ok((status, answer.json()))
    }

    /// [`Self::call`] that must answer `want`.
    ///
    /// # Errors
    /// When no answer came, or another status.
    pub async fn expect(
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
    ///
    /// # Errors
    /// As [`Self::expect`].
    pub async fn list_all(&self, path: &str) -> Result<Vec<Value>, ApiCallError> {
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
