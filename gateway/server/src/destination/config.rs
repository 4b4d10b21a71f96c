//! A broker destination's settings as stored in its endpoint's record: one
//! struct per kind, tagged by `type` in the API and the store.
//!
//! Credentials given by a tenant are kept as given and never shown again
//! (views mask them); an operator may instead name credentials from the
//! config (`[destinations.credentials.NAME]`) that tenants refer to by name.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Serialize};

use super::DestinationKind;
use super::aws::{KinesisSettings, SnsSettings, SqsSettings, service_url};

/// What a masked secret reads as; given back in a change, it keeps the stored value.
pub(crate) const MASK: &str = "********";

/// A destination other than `http`, with its settings.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum BrokerDestination {
    /// AMQP 0-9-1, published with confirms and `mandatory`.
    Rabbitmq(RabbitmqSettings),
    /// A NATS JetStream subject.
    Nats(NatsSettings),
    /// A Redis stream.
    Redis(RedisSettings),
    /// An Amazon SQS queue.
    Sqs(SqsSettings),
    /// An Amazon SNS topic.
    Sns(SnsSettings),
    /// An Amazon Kinesis data stream.
    Kinesis(KinesisSettings),
}

/// `type: rabbitmq`.
#[derive(Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RabbitmqSettings {
    /// `amqp://host[:port][/vhost]` or `amqps://…`, without credentials.
    #[schema(example = "amqp://rabbit.example.com:5672/%2f")]
    pub(crate) url: String,
    /// The exchange; `""` is the default exchange, which routes by queue name.
    pub(crate) exchange: String,
    /// The routing key; the event's type when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) routing_key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) credentials: Option<Credentials>,
}

/// `type: nats`.
#[derive(Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct NatsSettings {
    /// `nats://host[:port]` or `tls://…`, without credentials.
    #[schema(example = "nats://nats.example.com:4222")]
    pub(crate) url: String,
    /// The subject a JetStream stream captures.
    pub(crate) subject: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) credentials: Option<Credentials>,
}

/// `type: redis`.
#[derive(Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RedisSettings {
    /// `redis://host[:port][/db]` or `rediss://…`, without credentials.
    #[schema(example = "redis://redis.example.com:6379/0")]
    pub(crate) url: String,
    /// The stream's key.
    pub(crate) stream: String,
    /// Trims the stream to about this many entries on each `XADD` (`MAXLEN ~`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1, maximum = 1_000_000_000)]
    pub(crate) max_len: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) credentials: Option<Credentials>,
}

/// How the gateway authenticates to a broker: given by the tenant, or named
/// from the operator's config. Views show each secret as `********`; given
/// back so, it keeps the stored value. Debug output never shows a secret.
#[derive(Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Credentials {
    /// Names `[destinations.credentials.NAME]`; then nothing else is given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) username: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) password: Option<String>,
    /// A bearer token (NATS).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) token: Option<String>,
    /// An AWS access key id (SQS, SNS, Kinesis).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) access_key_id: Option<String>,
    /// The AWS secret access key that goes with `access_key_id`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) secret_access_key: Option<String>,
    /// An AWS session token, for temporary keys.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) session_token: Option<String>,
}

impl Credentials {
    /// As views show them: the name or the username, each secret masked.
    pub(crate) fn masked(&self) -> Self {
        let mask = |secret: &Option<String>| secret.as_ref().map(|_| MASK.to_owned());
        Self {
            name: self.name.clone(),
            username: self.username.clone(),
            password: mask(&self.password),
            token: mask(&self.token),
            access_key_id: self.access_key_id.clone(),
            secret_access_key: mask(&self.secret_access_key),
            session_token: mask(&self.session_token),
        }
    }

    /// Each secret field by name, with its value: what masking covers.
    pub(crate) fn secrets(&self) -> [(&'static str, Option<&String>); 4] {
        [
            ("password", self.password.as_ref()),
            ("token", self.token.as_ref()),
            ("secret_access_key", self.secret_access_key.as_ref()),
            ("session_token", self.session_token.as_ref()),
        ]
    }

    /// These credentials with each masked secret replaced by `stored`'s.
    pub(crate) fn unmasked_from(mut self, stored: Option<&Credentials>) -> Self {
        let keep = |given: &mut Option<String>, old: Option<&String>| {
            if given.as_deref() == Some(MASK) {
                *given = old.cloned();
            }
        };
        keep(&mut self.password, stored.and_then(|s| s.password.as_ref()));
        keep(&mut self.token, stored.and_then(|s| s.token.as_ref()));
        keep(
            &mut self.secret_access_key,
            stored.and_then(|s| s.secret_access_key.as_ref()),
        );
        keep(
            &mut self.session_token,
            stored.and_then(|s| s.session_token.as_ref()),
        );
        self
    }
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let masked = self.masked();
        f.debug_struct("Credentials")
            .field("name", &masked.name)
            .field("username", &masked.username)
            .field("password", &masked.password)
            .field("token", &masked.token)
            .field("access_key_id", &masked.access_key_id)
            .field("secret_access_key", &masked.secret_access_key)
            .field("session_token", &masked.session_token)
            .finish()
    }
}

impl BrokerDestination {
    /// Its kind.
    pub(crate) fn kind(&self) -> DestinationKind {
        match self {
            Self::Rabbitmq(_) => DestinationKind::Rabbitmq,
            Self::Nats(_) => DestinationKind::Nats,
            Self::Redis(_) => DestinationKind::Redis,
            Self::Sqs(_) => DestinationKind::Sqs,
            Self::Sns(_) => DestinationKind::Sns,
            Self::Kinesis(_) => DestinationKind::Kinesis,
        }
    }

    /// The broker's or service's address, without credentials: for the AWS
    /// kinds, the endpoint their SDK sends to.
    pub(crate) fn url(&self) -> Cow<'_, str> {
        match self {
            Self::Rabbitmq(s) => Cow::Borrowed(&s.url),
            Self::Nats(s) => Cow::Borrowed(&s.url),
            Self::Redis(s) => Cow::Borrowed(&s.url),
            Self::Sqs(s) => service_url("sqs", &s.region, s.endpoint_url.as_deref()),
            Self::Sns(s) => service_url("sns", &s.region, s.endpoint_url.as_deref()),
            Self::Kinesis(s) => service_url("kinesis", &s.region, s.endpoint_url.as_deref()),
        }
    }

    /// Its credentials, if any.
    pub(crate) fn credentials(&self) -> Option<&Credentials> {
        match self {
            Self::Rabbitmq(s) => s.credentials.as_ref(),
            Self::Nats(s) => s.credentials.as_ref(),
            Self::Redis(s) => s.credentials.as_ref(),
            Self::Sqs(s) => s.credentials.as_ref(),
            Self::Sns(s) => s.credentials.as_ref(),
            Self::Kinesis(s) => s.credentials.as_ref(),
        }
    }

    pub(crate) fn credentials_mut(&mut self) -> &mut Option<Credentials> {
        match self {
            Self::Rabbitmq(s) => &mut s.credentials,
            Self::Nats(s) => &mut s.credentials,
            Self::Redis(s) => &mut s.credentials,
            Self::Sqs(s) => &mut s.credentials,
            Self::Sns(s) => &mut s.credentials,
            Self::Kinesis(s) => &mut s.credentials,
        }
    }

    /// As views show it: every secret masked.
    pub(crate) fn masked(&self) -> Self {
        let mut out = self.clone();
        let credentials = out.credentials_mut();
        *credentials = credentials.as_ref().map(Credentials::masked);
        out
    }
}

impl fmt::Debug for BrokerDestination {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown = serde_json::to_string(&self.masked()).unwrap_or_default();
        f.write_str(&shown)
    }
}

/// Credentials an operator names in the config, for tenants to refer to:
/// `[destinations.credentials.NAME]` with `username`, and `password` or
/// `token`, or for the AWS kinds `access_key_id`, `secret_access_key` and
/// `session_token`; each secret either inline or read from an environment
/// variable (`password_env`, `token_env`, `secret_access_key_env`,
/// `session_token_env`) when the config is loaded.
#[derive(Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NamedCredentials {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    /// Shown masked wherever the config is printed.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "masked"
    )]
    pub password: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password_env: Option<String>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "masked"
    )]
    pub token: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_env: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access_key_id: Option<String>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "masked"
    )]
    pub secret_access_key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_access_key_env: Option<String>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "masked"
    )]
    pub session_token: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_token_env: Option<String>,
}

fn masked<S: serde::Serializer>(value: &Option<String>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(if value.is_some() { MASK } else { "" })
}

impl fmt::Debug for NamedCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mask = |s: &Option<String>| s.as_ref().map(|_| MASK);
        f.debug_struct("NamedCredentials")
            .field("username", &self.username)
            .field("password", &mask(&self.password))
            .field("password_env", &self.password_env)
            .field("token", &mask(&self.token))
            .field("token_env", &self.token_env)
            .field("access_key_id", &self.access_key_id)
            .field("secret_access_key", &mask(&self.secret_access_key))
            .field("secret_access_key_env", &self.secret_access_key_env)
            .field("session_token", &mask(&self.session_token))
            .field("session_token_env", &self.session_token_env)
            .finish()
    }
}

impl NamedCredentials {
    /// The credentials with secrets read from the environment where named.
    ///
    /// # Errors
    /// The name of an environment variable that is not set.
    pub(crate) fn resolved(&self) -> Result<Credentials, String> {
        let read = |inline: &Option<String>, env: &Option<String>| match env {
            Some(var) => std::env::var(var)
                .map(Some)
                .map_err(|_| format!("environment variable {var} is not set")),
            None => Ok(inline.clone()),
        };
        Ok(Credentials {
            name: None,
            username: self.username.clone(),
            password: read(&self.password, &self.password_env)?,
            token: read(&self.token, &self.token_env)?,
            access_key_id: self.access_key_id.clone(),
            secret_access_key: read(&self.secret_access_key, &self.secret_access_key_env)?,
            session_token: read(&self.session_token, &self.session_token_env)?,
        })
    }
}
