//! The drills' view of the gateway API: JSON calls over HTTP/1.1 with hyper-util's
//! client, each bounded in time.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request, StatusCode, header};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::{Value, json};
use tokio::task::JoinSet;

use super::DrillError;

/// The tenant every drill creates.
pub(crate) const TENANT: &str = "drill";
/// How long one API call may take.
const CALL_TIMEOUT: Duration = Duration::from_secs(15);
/// Deliveries per list page (the API's maximum).
const PAGE: u32 = 250;

/// A client for one gateway and one token.
#[derive(Clone)]
pub(crate) struct Api {
    client: Client<HttpConnector, Full<Bytes>>,
    base: Arc<str>,
    token: Arc<str>,
}

impl Api {
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
    ) -> Result<(StatusCode, Value), DrillError> {
        let bytes = body.map_or_else(Bytes::new, |b| Bytes::from(b.to_string()));
        let request = Request::builder()
            .method(method)
            .uri(format!("{}{path}", self.base))
            .header(header::AUTHORIZATION, format!("Bearer {}", self.token))
            .header(header::CONTENT_TYPE, "application/json")
            .body(Full::new(bytes))
            .map_err(|e| DrillError::Api(format!("{path}: {e}")))?;
        let exchange = async {
            let response = self.client.request(request).await?;
            let status = response.status();
            let body = response.into_body().collect().await?.to_bytes();
            Ok::<_, Box<dyn std::error::Error + Send + Sync>>((status, body))
        };
        let (status, body) = tokio::time::timeout(CALL_TIMEOUT, exchange)
            .await
            .map_err(|_| DrillError::Api(format!("{path}: no answer within {CALL_TIMEOUT:?}")))?
            .map_err(|e| DrillError::Api(format!("{path}: {e}")))?;
        Ok((status, serde_json::from_slice(&body).unwrap_or(Value::Null)))
    }

    /// [`Self::call`] that must answer `want`.
    pub(crate) async fn expect(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        want: StatusCode,
    ) -> Result<Value, DrillError> {
        let (status, answer) = self.call(method, path, body).await?;
        if status != want {
            return Err(DrillError::Api(format!(
                "{path}: expected {want}, got {status}: {answer}"
            )));
        }
        Ok(answer)
    }

    /// Creates the drill tenant and one endpoint (`endpoint` is the create body);
    /// returns the tenant's client.
    pub(crate) async fn setup(&self, endpoint: &Value) -> Result<Api, DrillError> {
        let tenant = self
            .expect(
                Method::POST,
                "/v1/tenants",
                Some(&json!({"id": TENANT})),
                StatusCode::CREATED,
            )
            .await?;
        let key = tenant["api_key"].as_str().unwrap_or_default();
        let api = self.with_token(key);
        api.expect(
            Method::POST,
            &format!("/v1/tenants/{TENANT}/endpoints"),
            Some(endpoint),
            StatusCode::CREATED,
        )
        .await?;
        Ok(api)
    }

    /// Sends one event; its id when acknowledged (202), `None` for any other answer.
    pub(crate) async fn send_event(
        &self,
        event_type: &str,
        payload: Value,
    ) -> Result<Option<String>, DrillError> {
        let event = json!({"event_type": event_type, "payload": payload});
        let path = format!("/v1/tenants/{TENANT}/events");
        let (status, answer) = self.call(Method::POST, &path, Some(&event)).await?;
        Ok((status == StatusCode::ACCEPTED)
            .then(|| answer["id"].as_str().map(str::to_owned))
            .flatten())
    }

    /// Every delivery of the drill tenant, by event id (one endpoint: one each).
    pub(crate) async fn deliveries_by_event(&self) -> Result<HashMap<String, Value>, DrillError> {
        let mut out = HashMap::new();
        let mut cursor: Option<String> = None;
        for _ in 0..100_000 {
            let mut path = format!("/v1/tenants/{TENANT}/deliveries?limit={PAGE}");
            if let Some(c) = &cursor {
                path.push_str(&format!("&cursor={c}"));
            }
            let mut page = self
                .expect(Method::GET, &path, None, StatusCode::OK)
                .await?;
            if let Some(data) = page["data"].as_array_mut() {
                for d in data.drain(..) {
                    let event = d["event_id"].as_str().unwrap_or_default().to_owned();
                    out.insert(event, d);
                }
            }
            match page["next_cursor"].as_str() {
                Some(c) => cursor = Some(c.to_owned()),
                None => break,
            }
        }
        Ok(out)
    }

    /// One delivery with its attempt log.
    pub(crate) async fn delivery(&self, id: &str) -> Result<Value, DrillError> {
        let path = format!("/v1/tenants/{TENANT}/deliveries/{id}");
        self.expect(Method::GET, &path, None, StatusCode::OK).await
    }
}

/// Sends one event per payload, `concurrency` at a time; every one must be
/// acknowledged. Returns the event ids in payload order.
pub(crate) async fn ingest_all(
    api: &Api,
    event_type: &str,
    payloads: Vec<Value>,
    concurrency: usize,
) -> Result<Vec<String>, DrillError> {
    let mut ids = vec![String::new(); payloads.len()];
    let mut sending = JoinSet::new();
    for (i, payload) in payloads.into_iter().enumerate() {
        if sending.len() >= concurrency.max(1)
            && let Some(sent) = sending.join_next().await
        {
            let (i, id) = joined(sent)?;
            ids[i] = id;
        }
        let (api, event_type) = (api.clone(), event_type.to_owned());
        sending.spawn(async move {
            let id = api.send_event(&event_type, payload).await?;
            let id =
                id.ok_or_else(|| DrillError::Api(format!("event {i} was not acknowledged")))?;
            Ok::<_, DrillError>((i, id))
        });
    }
    while let Some(sent) = sending.join_next().await {
        let (i, id) = joined(sent)?;
        ids[i] = id;
    }
    Ok(ids)
}

fn joined<T>(r: Result<Result<T, DrillError>, tokio::task::JoinError>) -> Result<T, DrillError> {
    r.map_err(|e| DrillError::Api(e.to_string()))?
}

/// Fetches every delivery in `ids` with its attempt log, `concurrency` at a time.
pub(crate) async fn fetch_deliveries(
    api: &Api,
    ids: Vec<String>,
    concurrency: usize,
) -> Result<Vec<Value>, DrillError> {
    let mut out = Vec::with_capacity(ids.len());
    let mut fetching = JoinSet::new();
    for id in ids {
        if fetching.len() >= concurrency.max(1)
            && let Some(got) = fetching.join_next().await
        {
            out.push(joined(got)?);
        }
        let api = api.clone();
        fetching.spawn(async move { api.delivery(&id).await });
    }
    while let Some(got) = fetching.join_next().await {
        out.push(joined(got)?);
    }
    Ok(out)
}
