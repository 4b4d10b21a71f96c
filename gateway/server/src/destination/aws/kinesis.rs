//! Amazon Kinesis Data Streams: one `PutRecord` per attempt, its data the
//! JSON envelope of the headers and the body (Kinesis has no attributes).
//! Delivered means Kinesis answered a shard and sequence number. The
//! partition key is the endpoint's id, or the payload's at
//! `partition_key_path`.

use aws_sdk_kinesis::primitives::Blob;
use aws_types::SdkConfig;

use super::attributes::{envelope, group_of};
use super::classify;
use crate::destination::{
    BoxFuture, BrokerMessage, KinesisSettings, PublishFailure, Publisher, Receipt,
};

/// A destination stream and the client that writes to it.
pub(in crate::destination) struct KinesisPublisher {
    client: aws_sdk_kinesis::Client,
    settings: KinesisSettings,
    endpoint_id: String,
}

impl KinesisPublisher {
    /// A publisher for `endpoint_id`'s stream; the SDK connects on first use.
    pub(in crate::destination) fn new(
        config: &SdkConfig,
        settings: &KinesisSettings,
        endpoint_id: &str,
    ) -> Self {
        Self {
            client: aws_sdk_kinesis::Client::new(config),
            settings: settings.clone(),
            endpoint_id: endpoint_id.to_owned(),
        }
    }
}

impl Publisher for KinesisPublisher {
    fn publish<'a>(
        &'a self,
        message: &'a BrokerMessage,
    ) -> BoxFuture<'a, Result<Receipt, PublishFailure>> {
        Box::pin(async move {
            let key = group_of(
                message,
                self.settings.partition_key_path.as_deref(),
                &self.endpoint_id,
            );
            let mut put = self
                .client
                .put_record()
                .data(Blob::new(envelope(message)))
                .partition_key(key);
            put = if self.settings.stream.starts_with("arn:") {
                put.stream_arn(&self.settings.stream)
            } else {
                put.stream_name(&self.settings.stream)
            };
            let put = put.send().await.map_err(|e| classify(&e))?;
            Ok(format!(
                "shard {} seq {}",
                put.shard_id(),
                put.sequence_number()
            ))
        })
    }
}
