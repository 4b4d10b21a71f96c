//! Destinations: where an endpoint's attempts go. `http` is the engine's own
//! client; every other kind is a broker [`Publisher`] behind one trait, so the
//! engine around it (classification, policy, plugins, breaker, limits, attempt
//! log, DLQ, replay, metrics) never knows which kind it serves. A new kind is
//! one more settings struct in `config.rs`, one more module implementing
//! [`Publisher`], and one more arm in `pool.rs`. The AWS kinds (`aws/`) share
//! the SDK's setup and error mapping.

mod aws;
mod config;
mod connect;
mod kind;
mod message;
mod nats;
mod pool;
mod publisher;
mod rabbitmq;
mod redis;
mod validate;

pub(crate) use aws::{KinesisSettings, SnsSettings, SqsSettings};
/// The HTTP client the AWS SDK sends through, which the delivery client makes.
pub(crate) use aws_smithy_runtime_api::client::http::SharedHttpClient as AwsHttpClient;
pub use config::NamedCredentials;
pub(crate) use config::{
    BrokerDestination, Credentials, MASK, NatsSettings, RabbitmqSettings, RedisSettings,
};
pub(crate) use connect::ConnectRefusal;
pub use kind::DestinationKind;
pub(crate) use message::{BrokerMessage, EVENT_TYPE_ATTRIBUTE};
pub(crate) use pool::Publishers;
pub(crate) use publisher::{BoxFuture, PublishFailure, Publisher, Receipt};
pub(crate) use validate::parse;
