//! Amazon SQS: one `SendMessage` per attempt. Delivered means SQS answered a
//! message id. A FIFO queue gets the event id as deduplication id and a
//! message group (the endpoint's id, or the payload's at
//! `message_group_path`).

use std::collections::HashMap;

use aws_sdk_sqs::types::MessageAttributeValue;
use aws_types::SdkConfig;

use super::attributes::{group_of, message_attributes};
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
            let body = text_body(message, "SQS")?;
            let mut attributes = HashMap::new();
            for (name, value) in message_attributes(message) {
                let value = MessageAttributeValue::builder()
                    .data_type("String")
                    .string_value(value)
                    .build()
                    .map_err(|e| PublishFailure::new(FailureKind::Protocol, e.to_string()))?;
                attributes.insert(name, value);
            }
            let mut send = self
                .client
                .send_message()
                .queue_url(&self.settings.queue_url)
                .message_body(body)
                .set_message_attributes(Some(attributes));
            if self.settings.is_fifo() {
                let group = group_of(
                    message,
                    self.settings.message_group_path.as_deref(),
                    &self.endpoint_id,
                );
                send = send
                    .message_group_id(group)
                    .message_deduplication_id(&message.event_id);
            }
            let sent = send.send().await.map_err(|e| classify(&e))?;
            Ok(format!("MessageId {}", sent.message_id().unwrap_or("-")))
        })
    }
}

/// The body as text, which SQS and SNS carry; a payload is JSON, so this
/// refuses only what could never be sent.
pub(super) fn text_body<'a>(
    message: &'a BrokerMessage,
    service: &str,
) -> Result<&'a str, PublishFailure> {
    std::str::from_utf8(&message.body).map_err(|_| {
        PublishFailure::new(
            FailureKind::Rejected,
            format!("{service} carries text, and this payload is not UTF-8"),
        )
    })
}
