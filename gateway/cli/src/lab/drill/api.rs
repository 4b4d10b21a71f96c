//! The drills' view of the gateway API: the shared client, and the calls every
//! drill makes (set-up, ingest, reading deliveries back).

use std::collections::HashMap;

use http::{Method, StatusCode};
use serde_json::{Value, json};
use tokio::task::JoinSet;

use super::DrillError;
pub(crate) use crate::lab::gateway_api::GatewayApi;

/// The tenant every drill creates.
pub(crate) const TENANT: &str = "drill";

impl From<crate::lab::gateway_api::ApiCallError> for DrillError {
    fn from(e: crate::lab::gateway_api::ApiCallError) -> Self {
        Self::Api(e.0)
    }
}

impl GatewayApi {
    /// Creates the drill tenant and one endpoint (`endpoint` is the create body);
    /// returns the tenant's client.
    pub(crate) async fn setup(&self, endpoint: &Value) -> Result<GatewayApi, DrillError> {
        let api = self.add_tenant(TENANT).await?;
        api.add_endpoint(TENANT, endpoint).await?;
        Ok(api)
    }

    /// Creates tenant `id` (with the admin token); returns its client.
    pub(crate) async fn add_tenant(&self, id: &str) -> Result<GatewayApi, DrillError> {
        let tenant = self
            .expect(
                Method::POST,
                "/v1/tenants",
                Some(&json!({"id": id})),
                StatusCode::CREATED,
            )
            .await?;
        let key = tenant["api_key"].as_str().unwrap_or_default();
        Ok(self.with_token(key))
    }

    /// Creates one endpoint of `tenant` (`endpoint` is the create body).
    pub(crate) async fn add_endpoint(
        &self,
        tenant: &str,
        endpoint: &Value,
    ) -> Result<(), DrillError> {
        let path = format!("/v1/tenants/{tenant}/endpoints");
        self.expect(Method::POST, &path, Some(endpoint), StatusCode::CREATED)
            .await?;
        Ok(())
    }

    /// Sends one event of the drill tenant; its id when acknowledged (202), `None`
    /// for any other answer.
    pub(crate) async fn send_event(
        &self,
        event_type: &str,
        payload: Value,
    ) -> Result<Option<String>, DrillError> {
        self.send_event_for(TENANT, event_type, payload).await
    }

    /// Sends one event of `tenant`; its id when acknowledged (202), `None` for any
    /// other answer.
    pub(crate) async fn send_event_for(
        &self,
        tenant: &str,
        event_type: &str,
        payload: Value,
    ) -> Result<Option<String>, DrillError> {
        let event = json!({"event_type": event_type, "payload": payload});
        let path = format!("/v1/tenants/{tenant}/events");
        let (status, answer) = self.call(Method::POST, &path, Some(&event)).await?;
        Ok((status == StatusCode::ACCEPTED)
            .then(|| answer["id"].as_str().map(str::to_owned))
            .flatten())
    }

    /// Every delivery of the drill tenant, by event id (one endpoint: one each).
    pub(crate) async fn deliveries_by_event(&self) -> Result<HashMap<String, Value>, DrillError> {
        let all = self
            .list_all(&format!("/v1/tenants/{TENANT}/deliveries"))
            .await?;
        Ok(all
            .into_iter()
            .map(|d| (d["event_id"].as_str().unwrap_or_default().to_owned(), d))
            .collect())
    }

    /// One delivery with its attempt log.
    pub(crate) async fn delivery(&self, id: &str) -> Result<Value, DrillError> {
        let path = format!("/v1/tenants/{TENANT}/deliveries/{id}");
        Ok(self
            .expect(Method::GET, &path, None, StatusCode::OK)
            .await?)
    }
}

/// Sends one event per payload, `concurrency` at a time; every one must be
/// acknowledged. Returns the event ids in payload order.
pub(crate) async fn ingest_all(
    api: &GatewayApi,
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
    api: &GatewayApi,
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
