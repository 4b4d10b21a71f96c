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
}

impl DestinationKind {
    /// Every kind, in declaration order.
    pub const ALL: [DestinationKind; 4] = [Self::Http, Self::Rabbitmq, Self::Nats, Self::Redis];

    /// The snake_case name used in the API, the attempt log and the metrics.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Http => "http",
            Self::Rabbitmq => "rabbitmq",
            Self::Nats => "nats",
            Self::Redis => "redis",
        }
    }
}
