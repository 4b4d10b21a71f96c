//! Trace export's HTTP transport: the delivery client without the address
//! block (the operator's collector is trusted, like `alerts.url`), with its
//! TLS roots, its timeouts and its bounded response reads.

use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::Full;
use opentelemetry_http::{HttpClient, HttpError};

use super::client::{DeliveryClient, SendFailure};

/// Sends OTLP export requests through a [`DeliveryClient`].
#[derive(Clone)]
pub(crate) struct OtlpTransport {
    client: DeliveryClient,
    timeout: Duration,
}

impl OtlpTransport {
    /// Each request ends within `timeout`.
    pub(crate) fn new(client: DeliveryClient, timeout: Duration) -> Self {
        Self { client, timeout }
    }
}

impl std::fmt::Debug for OtlpTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OtlpTransport")
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

#[async_trait::async_trait]
impl HttpClient for OtlpTransport {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        match self.client.send(request.map(Full::new), self.timeout).await {
            Ok(answer) => {
                let mut response = Response::new(answer.body);
                *response.status_mut() = http::StatusCode::from_u16(answer.status)?;
                *response.headers_mut() = answer.headers;
                Ok(response)
            }
            Err(SendFailure::Blocked(what)) => Err(format!("blocked: {what}").into()),
            Err(SendFailure::Transport { message, .. }) => Err(message.into()),
        }
    }
}
