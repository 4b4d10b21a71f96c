//! The AWS SDK's HTTP transport: the delivery client's pooled, guarded
//! HTTP(S) client, so a request to SQS, SNS or Kinesis reaches only addresses
//! the address guard permits, over the gateway's own TLS. A failure travels
//! up to the destination's error mapping whole, as a [`PublishFailure`].

use std::time::Duration;

use aws_smithy_runtime_api::client::http::{
    HttpClient, HttpConnector, HttpConnectorFuture, HttpConnectorSettings, SharedHttpClient,
    SharedHttpConnector,
};
use aws_smithy_runtime_api::client::orchestrator::{HttpRequest, HttpResponse};
use aws_smithy_runtime_api::client::result::ConnectorError;
use aws_smithy_runtime_api::client::runtime_components::RuntimeComponents;
use aws_smithy_types::body::SdkBody;
use bytes::Bytes;
use http_body_util::Full;

use super::client::{HttpSender, SendFailure};
use crate::destination::PublishFailure;
use crate::policy::FailureKind;

/// A bound no SDK request outlives on its own; the attempt's deadline, which
/// the publisher pool enforces around it, is normally far shorter.
const REQUEST_BOUND: Duration = Duration::from_secs(120);

/// Sends the SDK's requests through an [`HttpSender`].
#[derive(Clone)]
pub(super) struct AwsTransport {
    http: HttpSender,
}

impl AwsTransport {
    pub(super) fn new(http: HttpSender) -> Self {
        Self { http }
    }

    /// As the SDK's config takes it.
    pub(super) fn shared(self) -> SharedHttpClient {
        SharedHttpClient::new(self)
    }
}

impl std::fmt::Debug for AwsTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AwsTransport")
    }
}

fn failed(kind: FailureKind, message: impl Into<String>) -> ConnectorError {
    ConnectorError::other(Box::new(PublishFailure::new(kind, message)), None)
}

impl HttpConnector for AwsTransport {
    fn call(&self, request: HttpRequest) -> HttpConnectorFuture {
        let http = self.http.clone();
        HttpConnectorFuture::new(async move {
            let request = request
                .try_into_http1x()
                .map_err(|e| failed(FailureKind::Protocol, e.to_string()))?;
            let (parts, body) = request.into_parts();
            // SQS, SNS and Kinesis requests are built in memory; none streams.
            let body = body.bytes().map(Bytes::copy_from_slice).ok_or_else(|| {
                failed(
                    FailureKind::Protocol,
                    "a streaming request body is not sent",
                )
            })?;
            let request = http::Request::from_parts(parts, Full::new(body));
            let answer = match http.send(request, REQUEST_BOUND).await {
                Ok(answer) => answer,
                Err(SendFailure::Blocked(what)) => {
                    return Err(failed(FailureKind::Connect, format!("blocked: {what}")));
                }
                Err(SendFailure::Transport { kind, message }) => {
                    return Err(failed(kind, message));
                }
            };
            let mut response = http::Response::new(SdkBody::from(answer.body));
            *response.status_mut() = http::StatusCode::from_u16(answer.status)
                .map_err(|e| failed(FailureKind::Protocol, e.to_string()))?;
            *response.headers_mut() = answer.headers;
            HttpResponse::try_from(response)
                .map_err(|e| failed(FailureKind::Protocol, e.to_string()))
        })
    }
}

impl HttpClient for AwsTransport {
    fn http_connector(
        &self,
        _settings: &HttpConnectorSettings,
        _components: &RuntimeComponents,
    ) -> SharedHttpConnector {
        SharedHttpConnector::new(self.clone())
    }
}
