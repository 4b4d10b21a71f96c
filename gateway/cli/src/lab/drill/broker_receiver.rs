//! The crash drill's receiver when its endpoint delivers into RabbitMQ: an
//! exchange and queue of the run's own on the local broker, and a consumer
//! that counts every message by its `webhook-id` in the same tally the HTTP
//! receiver keeps. A message in the queue is one the broker confirmed, so the
//! drill's checks (nothing acknowledged lost) read the same way.

use std::sync::Arc;

use futures_util::StreamExt as _;
use lapin::options::{
    BasicAckOptions, BasicConsumeOptions, ExchangeDeclareOptions, QueueBindOptions,
    QueueDeclareOptions, QueueDeleteOptions,
};
use lapin::types::{AMQPValue, FieldTable};
use lapin::{Connection, ConnectionProperties, ExchangeKind};
use serde_json::{Value, json};

use super::DrillError;
use super::receiver::Tally;

/// The local broker the drill publishes into.
pub(super) const RABBITMQ: &str = "amqp://127.0.0.1:5672/%2f";

/// A consuming queue; removed when dropped.
pub(crate) struct BrokerReceiver {
    pub(crate) tally: Arc<Tally>,
    name: String,
    connection: Connection,
    consumer: tokio::task::JoinHandle<()>,
}

fn failed(what: &str, e: impl std::fmt::Display) -> DrillError {
    DrillError::Setup(format!("RabbitMQ {what}: {e}"))
}

impl BrokerReceiver {
    /// Makes the run's exchange and queue and starts consuming.
    pub(crate) async fn start() -> Result<Self, DrillError> {
        let name = format!("hg-drill-{}", ulid::Ulid::new().to_string().to_lowercase());
        let uri = RABBITMQ.replace("amqp://", "amqp://guest:guest@");
        let connection = Connection::connect(&uri, ConnectionProperties::default())
            .await
            .map_err(|e| failed("connect", e))?;
        let channel = connection
            .create_channel()
            .await
            .map_err(|e| failed("channel", e))?;
        let table = FieldTable::default;
        channel
            .exchange_declare(
                name.as_str().into(),
                ExchangeKind::Topic,
                ExchangeDeclareOptions::default(),
                table(),
            )
            .await
            .map_err(|e| failed("exchange", e))?;
        channel
            .queue_declare(
                name.as_str().into(),
                QueueDeclareOptions::default(),
                table(),
            )
            .await
            .map_err(|e| failed("queue", e))?;
        channel
            .queue_bind(
                name.as_str().into(),
                name.as_str().into(),
                "#".into(),
                QueueBindOptions::default(),
                table(),
            )
            .await
            .map_err(|e| failed("bind", e))?;
        let mut deliveries = channel
            .basic_consume(
                name.as_str().into(),
                "crash-drill".into(),
                BasicConsumeOptions::default(),
                table(),
            )
            .await
            .map_err(|e| failed("consume", e))?;
        let tally = Arc::new(Tally::new());
        let counted = Arc::clone(&tally);
        let consumer = tokio::spawn(async move {
            while let Some(Ok(delivery)) = deliveries.next().await {
                let id = delivery
                    .properties
                    .headers()
                    .as_ref()
                    .and_then(|h| h.inner().get("webhook-id").cloned())
                    .and_then(|v| match v {
                        AMQPValue::LongString(s) => Some(s.to_string()),
                        _ => None,
                    })
                    .unwrap_or_default();
                counted.arrived(&id, None);
                counted.finished(&id, None, Some(200));
                let _ = delivery.ack(BasicAckOptions::default()).await;
            }
        });
        Ok(Self {
            tally,
            name,
            connection,
            consumer,
        })
    }

    /// The endpoint's destination: this run's exchange.
    pub(crate) fn destination(&self) -> Value {
        json!({"type": "rabbitmq", "url": RABBITMQ, "exchange": self.name,
               "credentials": {"username": "guest", "password": "guest"}})
    }

    /// Stops consuming and removes the queue and exchange.
    pub(crate) async fn remove(self) {
        self.consumer.abort();
        if let Ok(channel) = self.connection.create_channel().await {
            let _ = channel
                .queue_delete(self.name.as_str().into(), QueueDeleteOptions::default())
                .await;
            let _ = channel
                .exchange_delete(self.name.as_str().into(), Default::default())
                .await;
        }
    }
}
