//! Redis Streams through `redis`: one multiplexed connection per destination.
//! Delivered means `XADD` answered the entry's id; the body and every
//! attribute are the entry's fields.

use redis::aio::MultiplexedConnection;

use super::connect::Target;
use super::{BoxFuture, BrokerMessage, PublishFailure, Publisher, Receipt, RedisSettings};
use crate::policy::FailureKind;

/// A connected Redis destination.
pub(super) struct RedisPublisher {
    connection: MultiplexedConnection,
    stream: String,
    max_len: Option<u64>,
}

impl RedisPublisher {
    /// Connects to `target` (the guard's vetted address).
    pub(super) async fn connect(
        settings: &RedisSettings,
        target: Target,
    ) -> Result<Self, PublishFailure> {
        let client = redis::Client::open(target.url_with_credentials().as_str())
            .map_err(|e| classify(&e))?;
        let connection = client
            .get_multiplexed_async_connection()
            .await
            .map_err(|e| classify(&e))?;
        Ok(Self {
            connection,
            stream: settings.stream.clone(),
            max_len: settings.max_len,
        })
    }
}

impl Publisher for RedisPublisher {
    fn publish<'a>(
        &'a self,
        message: &'a BrokerMessage,
    ) -> BoxFuture<'a, Result<Receipt, PublishFailure>> {
        Box::pin(async move {
            let mut xadd = redis::cmd("XADD");
            xadd.arg(&self.stream);
            if let Some(n) = self.max_len {
                xadd.arg("MAXLEN").arg("~").arg(n);
            }
            xadd.arg("*");
            for (name, value) in &message.attributes {
                xadd.arg(name).arg(value);
            }
            xadd.arg("body").arg(&message.body[..]);
            let mut connection = self.connection.clone();
            let id: String = xadd
                .query_async(&mut connection)
                .await
                .map_err(|e| classify(&e))?;
            Ok(format!("XADD {id}"))
        })
    }
}

fn classify(e: &redis::RedisError) -> PublishFailure {
    let message = e.to_string();
    let kind = if e.kind() == redis::ErrorKind::AuthenticationFailed
        || message.contains("NOAUTH")
        || message.contains("WRONGPASS")
        || message.contains("NOPERM")
    {
        FailureKind::AuthRefused
    } else if e.is_timeout() {
        FailureKind::Timeout
    } else if e.is_connection_refusal() {
        FailureKind::Connect
    } else if e.is_connection_dropped() || e.is_unrecoverable_error() {
        FailureKind::Reset
    } else if message.contains("OOM") || message.contains("BUSY") || message.contains("LOADING") {
        FailureKind::Throttled
    } else if message.contains("max") && message.contains("size") || message.contains("too large") {
        FailureKind::TooLarge
    } else if message.contains("WRONGTYPE") {
        FailureKind::NotFound
    } else if e.kind() == redis::ErrorKind::Io {
        FailureKind::Connect
    } else {
        FailureKind::Rejected
    };
    PublishFailure::new(kind, message)
}
