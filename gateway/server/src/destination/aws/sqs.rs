//! Amazon SQS: one `SendMessage` per attempt. Delivered means SQS answered a
//! message id. A FIFO queue gets the event id as deduplication id and a
//! message group (the endpoint's id, or the payload's at
//! `message_group_path`).

use aws_sdk_sqs::types::MessageAttributeValue;
use aws_types::SdkConfig;

use super::attributes::queued;
use super::classify;
use crate::destination::{
    BoxFuture, BrokerMessage, PublishFailure, Publisher, Receipt, SqsSettings,
};
use crate::policy::FailureKind;

/// A destination queue and the client that sends to it.
pub(in crate::destination) struct SqsPublisher {
    client: aws_sdk_sqs::Client,
    settings: SqsSettings,
    endpoint_id: String,
}

impl SqsPublisher {
    /// A publisher for `endpoint_id`'s queue; the SDK connects on first use.
    pub(in crate::destination) fn new(
        config: &SdkConfig,
        settings: &SqsSettings,
        endpoint_id: &str,
    ) -> Self {
        Self {
            client: aws_sdk_sqs::Client::new(config),
            settings: settings.clone(),
            endpoint_id: endpoint_id.to_owned(),
        }
    }
}

impl Publisher for SqsPublisher {
    fn publish<'a>(
        &'a self,
        message: &'a BrokerMessage,
    ) -> BoxFuture<'a, Result<Receipt, PublishFailure>> {
        Box::pin(async move {
            let s = &self.settings;
            let q = queued(
                message,
                "SQS",
                s.is_fifo(),
                s.message_group_path.as_deref(),
                &self.endpoint_id,
            )?;
            let mut send = self
                .client
                .send_message()
                .queue_url(&s.queue_url)
                .message_body(q.body);
            for (name, value) in q.attributes {
                let value = MessageAttributeValue::builder()
                    .data_type("String")
                    .string_value(value)
                    .build()
                    .map_err(|e| PublishFailure::new(FailureKind::Protocol, e.to_string()))?;
                send = send.message_attributes(name, value);
            }
            if let Some((group, dedup)) = q.fifo {
                send = send.message_group_id(group).message_deduplication_id(dedup);
            }
            let sent = send.send().await.map_err(|e| classify(&e))?;
            Ok(format!("MessageId {}", sent.message_id().unwrap_or("-")))
        })
    }
}
