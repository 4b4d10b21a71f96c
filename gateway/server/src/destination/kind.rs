//! The kinds of destination an endpoint can deliver to.

use serde::{Deserialize, Serialize};

/// Where an endpoint's attempts go: an HTTP(S) receiver, or a broker or queue
/// service. Every kind goes through the same retry chain.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum DestinationKind {
    /// A POST to the endpoint's URL; delivered means a 2xx.
    #[default]
    Http,
    /// AMQP 0-9-1; delivered means the broker confirmed.
    Rabbitmq,
    /// NATS JetStream; delivered means the stream's `PubAck`.
    Nats,
    /// A Redis stream; delivered means `XADD` answered an id.
    Redis,
    /// An Amazon SQS queue; delivered means `SendMessage` answered a message id.
    Sqs,
    /// An Amazon SNS topic; delivered means `Publish` answered a message id.
    Sns,
    /// An Amazon Kinesis data stream; delivered means `PutRecord` answered a
    /// sequence number.
    Kinesis,
}

impl DestinationKind {
    /// Every kind, in declaration order.
    pub const ALL: [DestinationKind; 7] = [
        Self::Http,
        Self::Rabbitmq,
        Self::Nats,
        Self::Redis,
        Self::Sqs,
        Self::Sns,
        Self::Kinesis,
    ];

    /// The snake_case name used in the API, the attempt log and the metrics.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Http => "http",
            Self::Rabbitmq => "rabbitmq",
            Self::Nats => "nats",
            Self::Redis => "redis",
            Self::Sqs => "sqs",
            Self::Sns => "sns",
            Self::Kinesis => "kinesis",
        }
    }

    /// Whether the kind is an AWS service, reached through the AWS SDK.
    pub fn is_aws(self) -> bool {
        matches!(self, Self::Sqs | Self::Sns | Self::Kinesis)
    }
}
