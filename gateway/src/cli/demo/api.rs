//! The demo's view of the gateway: JSON calls over HTTP/1.1 with hyper-util's
//! client, each bounded in time, and the delivery counts the progress table shows.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request, StatusCode, header};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;

use super::DemoError;

/// How long one API call may take.
const CALL_TIMEOUT: Duration = Duration::from_secs(15);
/// Deliveries per list page (the API's maximum).
const PAGE: u32 = 250;

/// A client for one gateway and one token.
#[derive(Clone)]
pub(super) struct DemoApi {
    client: Client<HttpConnector, Full<Bytes>>,
    base: String,
    token: String,
}

impl DemoApi {
    pub(super) fn new(addr: SocketAddr, token: &str) -> Self {
        let client = Client::builder(TokioExecutor::new()).build_http();
        Self {
            client,
            base: format!("http://{addr}"),
            token: token.to_owned(),
        }
    }

    /// The same gateway with another token.
    pub(super) fn with_token(&self, token: &str) -> Self {
        Self {
            token: token.to_owned(),
            ..self.clone()
        }
    }

    /// `method path` with an optional JSON body; the status and the parsed answer
    /// (`Null` when it is not JSON).
    pub(super) async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<(StatusCode, Value), DemoError> {
        let bytes = body.map_or_else(Bytes::new, |b| Bytes::from(b.to_string()));
        let request = Request::builder()
            .method(method)
            .uri(format!("{}{path}", self.base))
            .header(header::AUTHORIZATION, format!("Bearer {}", self.token))
            .header(header::CONTENT_TYPE, "application/json")
            .body(Full::new(bytes))
            .map_err(|e| DemoError::Api(format!("{path}: {e}")))?;
        let exchange = async {
            let response = self.client.request(request).await?;
            let status = response.status();
            let body = response.into_body().collect().await?.to_bytes();
            Ok::<_, Box<dyn std::error::Error + Send + Sync>>((status, body))
        };
        let (status, body) = tokio::time::timeout(CALL_TIMEOUT, exchange)
            .await
            .map_err(|_| DemoError::Api(format!("{path}: no answer within {CALL_TIMEOUT:?}")))?
            .map_err(|e| DemoError::Api(format!("{path}: {e}")))?;
        Ok((status, serde_json::from_slice(&body).unwrap_or(Value::Null)))
    }

    /// [`Self::call`] that must answer `want`.
    pub(super) async fn expect(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        want: StatusCode,
    ) -> Result<Value, DemoError> {
        let (status, answer) = self.call(method, path, body).await?;
        if status != want {
            return Err(DemoError::Api(format!(
                "{path}: expected {want}, got {status}: {answer}"
            )));
        }
        Ok(answer)
    }

    /// Every delivery of `tenant`, counted by state.
    pub(super) async fn counts(&self, tenant: &str) -> Result<Counts, DemoError> {
        let mut counts = Counts::default();
        let mut cursor: Option<String> = None;
        loop {
            let mut path = format!("/v1/tenants/{tenant}/deliveries?limit={PAGE}");
            if let Some(c) = &cursor {
                path.push_str(&format!("&cursor={c}"));
            }
            let page = self
                .expect(Method::GET, &path, None, StatusCode::OK)
                .await?;
            for d in page["data"].as_array().into_iter().flatten() {
                counts.add(d);
            }
            match page["next_cursor"].as_str() {
                Some(c) => cursor = Some(c.to_owned()),
                None => return Ok(counts),
            }
        }
    }
}

/// Deliveries by where they stand.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Counts {
    /// Succeeded.
    pub(super) delivered: u64,
    /// Pending after at least one failed attempt: waiting for a retry.
    pub(super) retrying: u64,
    /// Pending, never attempted yet.
    pub(super) queued: u64,
    /// An attempt is in progress.
    pub(super) sending: u64,
    /// Dead (the DLQ).
    pub(super) dead: u64,
    /// Attempts made, over every delivery.
    pub(super) attempts: u64,
    /// Dead deliveries by `dead_reason`.
    pub(super) dead_reasons: BTreeMap<String, u64>,
    /// Succeeded deliveries by the attempts they took.
    pub(super) attempts_to_deliver: BTreeMap<u64, u64>,
}

impl Counts {
    fn add(&mut self, d: &Value) {
        let attempts = d["attempts"].as_u64().unwrap_or(0);
        self.attempts += attempts;
        match d["state"].as_str().unwrap_or_default() {
            "succeeded" => {
                self.delivered += 1;
                *self.attempts_to_deliver.entry(attempts).or_default() += 1;
            }
            "dead" => {
                self.dead += 1;
                let reason = d["dead_reason"].as_str().unwrap_or("unknown").to_owned();
                *self.dead_reasons.entry(reason).or_default() += 1;
            }
            "in_flight" => self.sending += 1,
            _ if attempts > 0 => self.retrying += 1,
            _ => self.queued += 1,
        }
    }

    /// Deliveries that have finished, delivered or dead.
    pub(super) fn finished(&self) -> u64 {
        self.delivered + self.dead
    }

    /// Delivered deliveries that took more than one attempt.
    pub(super) fn delivered_after_retries(&self) -> u64 {
        self.attempts_to_deliver
            .iter()
            .filter(|(a, _)| **a > 1)
            .map(|(_, n)| n)
            .sum()
    }
}
