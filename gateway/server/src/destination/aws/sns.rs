//! Amazon SNS: one `Publish` per attempt. Delivered means SNS answered a
//! message id. A FIFO topic gets the event id as deduplication id and a
//! message group, as an SQS FIFO queue does.

use aws_sdk_sns::types::MessageAttributeValue;
use aws_types::SdkConfig;

use super::attributes::queued;
use super::classify;
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
            let s = &self.settings;
            let q = queued(
                message,
                "SNS",
                s.is_fifo(),
                s.message_group_path.as_deref(),
                &self.endpoint_id,
            )?;
            let mut publish = self
                .client
                .publish()
                .topic_arn(&s.topic_arn)
                .message(q.body);
            for (name, value) in q.attributes {
                let value = MessageAttributeValue::builder()
                    .data_type("String")
                    .string_value(value)
                    .build()
                    .map_err(|e| PublishFailure::new(FailureKind::Protocol, e.to_string()))?;
                publish = publish.message_attributes(name, value);
            }
            if let Some((group, dedup)) = q.fifo {
                publish = publish
                    .message_group_id(group)
                    .message_deduplication_id(dedup);
            }
            let published = publish.send().await.map_err(|e| classify(&e))?;
            Ok(format!(
                "MessageId {}",
                published.message_id().unwrap_or("-")
            ))
        })
    }
}
