//! NATS JetStream through `async-nats`: one client per destination, which
//! reconnects by itself. Delivered means the stream answered a `PubAck`; the
//! `Nats-Msg-Id` header carries the event id, so the stream's duplicate
//! window drops a retry of a message it already holds.

use std::time::Duration;

use async_nats::jetstream::{self, context::PublishErrorKind};
use async_nats::{ConnectErrorKind, HeaderMap};

use super::connect::Target;
use super::{BoxFuture, BrokerMessage, NatsSettings, PublishFailure, Publisher, Receipt};
use crate::policy::FailureKind;

/// A connected NATS destination.
pub(super) struct NatsPublisher {
    jetstream: jetstream::Context,
    subject: String,
}

impl NatsPublisher {
    /// Connects to `target` (the guard's vetted address), never to servers
    /// the cluster announces: those have not been vetted.
    pub(super) async fn connect(
        settings: &NatsSettings,
        target: Target,
        connect_timeout: Duration,
    ) -> Result<Self, PublishFailure> {
        let mut options = async_nats::ConnectOptions::new()
            .ignore_discovered_servers()
            .connection_timeout(connect_timeout);
        if let Some(c) = &target.credentials {
            if let Some(token) = &c.token {
                options = options.token(token.clone());
            } else {
                let user = c.username.clone().unwrap_or_default();
                let password = c.password.clone().unwrap_or_default();
                options = options.user_and_password(user, password);
            }
        }
        let client = options.connect(target.url().as_str()).await.map_err(|e| {
            let kind = match e.kind() {
                ConnectErrorKind::Authentication | ConnectErrorKind::AuthorizationViolation => {
                    FailureKind::AuthRefused
                }
                ConnectErrorKind::TimedOut => FailureKind::Timeout,
                ConnectErrorKind::Tls => FailureKind::Tls,
                ConnectErrorKind::Dns => FailureKind::Dns,
                ConnectErrorKind::ServerParse => FailureKind::Protocol,
                ConnectErrorKind::Io | ConnectErrorKind::MaxReconnects => FailureKind::Connect,
            };
            PublishFailure::new(kind, e.to_string())
        })?;
        Ok(Self {
            jetstream: jetstream::new(client),
            subject: settings.subject.clone(),
        })
    }
}

impl Publisher for NatsPublisher {
    fn publish<'a>(
        &'a self,
        message: &'a BrokerMessage,
    ) -> BoxFuture<'a, Result<Receipt, PublishFailure>> {
        Box::pin(async move {
            let mut headers = HeaderMap::new();
            headers.insert("Nats-Msg-Id", message.event_id.as_str());
            for (name, value) in &message.attributes {
                headers.insert(name.as_str(), value.as_str());
            }
            let ack = self
                .jetstream
                .publish_with_headers(self.subject.clone(), headers, message.body.clone())
                .await
                .map_err(|e| failure(e.kind(), e.to_string()))?
                .await
                .map_err(|e| failure(e.kind(), e.to_string()))?;
            let duplicate = if ack.duplicate { " (duplicate)" } else { "" };
            Ok(format!(
                "stream {} seq {}{duplicate}",
                ack.stream, ack.sequence
            ))
        })
    }
}

fn failure(kind: PublishErrorKind, message: String) -> PublishFailure {
    let kind = match kind {
        PublishErrorKind::StreamNotFound => FailureKind::NotFound,
        PublishErrorKind::MaxPayloadExceeded => FailureKind::TooLarge,
        PublishErrorKind::TimedOut => FailureKind::Timeout,
        PublishErrorKind::BrokenPipe => FailureKind::Reset,
        PublishErrorKind::MaxAckPending => FailureKind::Throttled,
        _ => FailureKind::Rejected,
    };
    PublishFailure::new(kind, message)
}
