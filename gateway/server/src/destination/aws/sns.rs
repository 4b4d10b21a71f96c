//! Amazon SNS: one `Publish` per attempt. Delivered means SNS answered a
//! message id. A FIFO topic gets the event id as deduplication id and a
//! message group, as an SQS FIFO queue does.

use std::collections::HashMap;

use aws_sdk_sns::types::MessageAttributeValue;
use aws_types::SdkConfig;

use super::attributes::{group_of, message_attributes};
use super::classify;
use super::sqs::text_body;
use crate::destination::{
    BoxFuture, BrokerMessage, PublishFailure, Publisher, Receipt, SnsSettings,
};
use crate::policy::FailureKind;

/// A destination topic and the client that publishes to it.
pub(in crate::destination) struct SnsPublisher {
    client: aws_sdk_sns::Client,
    settings: SnsSettings,
    endpoint_id: String,
}

impl SnsPublisher {
    /// A publisher for `endpoint_id`'s topic; the SDK connects on first use.
    pub(in crate::destination) fn new(
        config: &SdkConfig,
        settings: &SnsSettings,
        endpoint_id: &str,
    ) -> Self {
        Self {
            client: aws_sdk_sns::Client::new(config),
            settings: settings.clone(),
            endpoint_id: endpoint_id.to_owned(),
        }
    }
}

impl Publisher for SnsPublisher {
    fn publish<'a>(
        &'a self,
        message: &'a BrokerMessage,
    ) -> BoxFuture<'a, Result<Receipt, PublishFailure>> {
        Box::pin(async move {
            let body = text_body(message, "SNS")?;
            let mut attributes = HashMap::new();
            for (name, value) in message_attributes(message) {
                let value = MessageAttributeValue::builder()
                    .data_type("String")
                    .string_value(value)
                    .build()
                    .map_err(|e| PublishFailure::new(FailureKind::Protocol, e.to_string()))?;
                attributes.insert(name, value);
            }
            let mut publish = self
                .client
                .publish()
                .topic_arn(&self.settings.topic_arn)
                .message(body)
                .set_message_attributes(Some(attributes));
            if self.settings.is_fifo() {
                let group = group_of(
                    message,
                    self.settings.message_group_path.as_deref(),
                    &self.endpoint_id,
                );
                publish = publish
                    .message_group_id(group)
                    .message_deduplication_id(&message.event_id);
            }
            let published = publish.send().await.map_err(|e| classify(&e))?;
            Ok(format!(
                "MessageId {}",
                published.message_id().unwrap_or("-")
            ))
        })
    }
}
