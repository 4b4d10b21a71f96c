//! RabbitMQ (AMQP 0-9-1) through `lapin`: one connection and one channel in
//! confirm mode per destination. A message is published `mandatory` and
//! persistent; delivered means the broker confirmed it, and an unroutable
//! message (returned with `NO_ROUTE`) is a failure, never a silent drop.

use lapin::Confirmation;
use lapin::options::{BasicPublishOptions, ConfirmSelectOptions};
use lapin::types::{AMQPValue, FieldTable, LongString, ShortString};
use lapin::{BasicProperties, Channel, Connection, ConnectionProperties};

use super::connect::Target;
use super::{BoxFuture, BrokerMessage, PublishFailure, Publisher, RabbitmqSettings, Receipt};
use crate::policy::FailureKind;

/// A connected RabbitMQ destination.
pub(super) struct RabbitmqPublisher {
    // Kept so the connection lives as long as its channel.
    _connection: Connection,
    channel: Channel,
    exchange: ShortString,
    routing_key: Option<ShortString>,
}

impl RabbitmqPublisher {
    /// Connects to `target` (the guard's vetted address) and opens a channel
    /// in confirm mode.
    pub(super) async fn connect(
        settings: &RabbitmqSettings,
        target: Target,
    ) -> Result<Self, PublishFailure> {
        let uri = target.url_with_credentials();
        let connection = Connection::connect(uri.as_str(), ConnectionProperties::default())
            .await
            .map_err(|e| classify(&e))?;
        let channel = connection
            .create_channel()
            .await
            .map_err(|e| classify(&e))?;
        channel
            .confirm_select(ConfirmSelectOptions::default())
            .await
            .map_err(|e| classify(&e))?;
        Ok(Self {
            _connection: connection,
            channel,
            exchange: settings.exchange.as_str().into(),
            routing_key: settings.routing_key.as_deref().map(Into::into),
        })
    }
}

impl Publisher for RabbitmqPublisher {
    fn publish<'a>(
        &'a self,
        message: &'a BrokerMessage,
    ) -> BoxFuture<'a, Result<Receipt, PublishFailure>> {
        Box::pin(async move {
            let mut headers = FieldTable::default();
            for (name, value) in &message.attributes {
                headers.insert(
                    name.as_str().into(),
                    AMQPValue::LongString(LongString::from(value.as_str())),
                );
            }
            let properties = BasicProperties::default()
                .with_message_id(message.event_id.as_str().into())
                .with_type(message.event_type.as_str().into())
                .with_content_type(message.content_type().into())
                .with_timestamp(u64::try_from(message.timestamp_s).unwrap_or(0))
                // 2: persistent, so a durable queue keeps it across a broker restart.
                .with_delivery_mode(2)
                .with_headers(headers);
            let routing_key = match &self.routing_key {
                Some(key) => key.clone(),
                None => message.event_type.as_str().into(),
            };
            let options = BasicPublishOptions {
                mandatory: true,
                ..BasicPublishOptions::default()
            };
            let confirm = self
                .channel
                .basic_publish(
                    self.exchange.clone(),
                    routing_key.clone(),
                    options,
                    &message.body,
                    properties,
                )
                .await
                .map_err(|e| classify(&e))?;
            match confirm.await.map_err(|e| classify(&e))? {
                Confirmation::Ack(None) => Ok("confirmed".to_owned()),
                Confirmation::Ack(Some(returned)) | Confirmation::Nack(Some(returned)) => {
                    let code = returned.reply_code;
                    let kind = match code {
                        311 => FailureKind::TooLarge,
                        312 | 404 => FailureKind::NotFound,
                        _ => FailureKind::Rejected,
                    };
                    Err(PublishFailure::new(
                        kind,
                        format!(
                            "returned by the broker ({code} {}): exchange {:?}, routing key {:?}",
                            returned.reply_text.as_str(),
                            self.exchange.as_str(),
                            routing_key.as_str()
                        ),
                    ))
                }
                Confirmation::Nack(None) => Err(PublishFailure::new(
                    FailureKind::Rejected,
                    "the broker refused the message (nack)",
                )),
                Confirmation::NotRequested => Err(PublishFailure::new(
                    FailureKind::Protocol,
                    "the channel is not in confirm mode",
                )),
            }
        })
    }
}

/// Maps a `lapin` error to a failure kind by its AMQP reply code or I/O kind.
fn classify(e: &lapin::Error) -> PublishFailure {
    let message = e.to_string();
    let kind = match e.kind() {
        lapin::ErrorKind::ProtocolError(amqp) => match amqp.get_id() {
            403 | 530 => FailureKind::AuthRefused,
            404 | 312 => FailureKind::NotFound,
            311 => FailureKind::TooLarge,
            406 if amqp.get_message().as_str().contains("size") => FailureKind::TooLarge,
            320 => FailureKind::Reset,
            _ => FailureKind::Protocol,
        },
        lapin::ErrorKind::IOError(io) => super::connect::io_kind(io),
        lapin::ErrorKind::AuthProviderError(_) => FailureKind::AuthRefused,
        lapin::ErrorKind::InvalidConnectionState(_) | lapin::ErrorKind::InvalidChannelState(..) => {
            // The broker closed the connection during the handshake: RabbitMQ
            // does so, after a short delay, when it refuses the credentials.
            if message.contains("ACCESS_REFUSED") || message.contains("403") {
                FailureKind::AuthRefused
            } else {
                FailureKind::Reset
            }
        }
        lapin::ErrorKind::MissingHeartbeatError => FailureKind::Timeout,
        _ => FailureKind::Protocol,
    };
    PublishFailure::new(kind, message)
}
