//! The settings of the AWS kinds as stored and given, and their checks: the
//! queue URL, topic ARN or stream; the region and an optional endpoint
//! override; the JSON pointer that picks a message group or partition key; and
//! credentials, which these kinds always need (the SDK's default chain is
//! never consulted).

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use crate::destination::Credentials;

/// `type: sqs`.
#[derive(Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SqsSettings {
    /// The queue's URL; a name ending `.fifo` makes it a FIFO queue.
    #[schema(example = "https://sqs.us-east-1.amazonaws.com/123456789012/orders")]
    pub(crate) queue_url: String,
    #[schema(example = "us-east-1")]
    pub(crate) region: String,
    /// Where requests go instead of the region's AWS endpoint (an emulator, a
    /// VPC endpoint); it passes the address guard.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) endpoint_url: Option<String>,
    /// FIFO only: a JSON pointer into the payload whose value is the message
    /// group; the endpoint's id when absent or when the payload has no value there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(example = "/customer/id")]
    pub(crate) message_group_path: Option<String>,
    /// Required: `access_key_id` and `secret_access_key` (and `session_token`), or `name`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) credentials: Option<Credentials>,
}

/// `type: sns`.
#[derive(Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SnsSettings {
    /// The topic's ARN; a name ending `.fifo` makes it a FIFO topic.
    #[schema(example = "arn:aws:sns:us-east-1:123456789012:orders")]
    pub(crate) topic_arn: String,
    #[schema(example = "us-east-1")]
    pub(crate) region: String,
    /// Where requests go instead of the region's AWS endpoint; it passes the
    /// address guard.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) endpoint_url: Option<String>,
    /// FIFO only: as for SQS.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) message_group_path: Option<String>,
    /// Required: `access_key_id` and `secret_access_key` (and `session_token`), or `name`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) credentials: Option<Credentials>,
}

/// `type: kinesis`.
#[derive(Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct KinesisSettings {
    /// The data stream's name or ARN.
    #[schema(example = "orders")]
    pub(crate) stream: String,
    #[schema(example = "us-east-1")]
    pub(crate) region: String,
    /// Where requests go instead of the region's AWS endpoint; it passes the
    /// address guard.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) endpoint_url: Option<String>,
    /// A JSON pointer into the payload whose value is the partition key; the
    /// endpoint's id when absent or when the payload has no value there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) partition_key_path: Option<String>,
    /// Required: `access_key_id` and `secret_access_key` (and `session_token`), or `name`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) credentials: Option<Credentials>,
}

/// Where a service's requests go: the override, or the region's AWS endpoint.
pub(crate) fn service_url<'a>(
    service: &str,
    region: &str,
    endpoint_url: Option<&'a str>,
) -> Cow<'a, str> {
    match endpoint_url {
        Some(url) => Cow::Borrowed(url),
        None => Cow::Owned(format!("https://{service}.{region}.amazonaws.com")),
    }
}

impl SqsSettings {
    /// Whether the queue is FIFO, by AWS's naming rule.
    pub(crate) fn is_fifo(&self) -> bool {
        self.queue_url.trim_end_matches('/').ends_with(".fifo")
    }
}

impl SnsSettings {
    /// Whether the topic is FIFO, by AWS's naming rule.
    pub(crate) fn is_fifo(&self) -> bool {
        self.topic_arn.ends_with(".fifo")
    }
}

/// A field at fault: its name under `destination.` and what is wrong.
pub(crate) type Fault = (&'static str, String);

/// An AWS region's shape: `us-east-1`, `eu-central-2`, `us-gov-west-1`.
pub(crate) fn check_region(region: &str) -> Result<(), Fault> {
    let ok = (1..=32).contains(&region.len())
        && region
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !region.starts_with('-')
        && !region.ends_with('-');
    if ok {
        Ok(())
    } else {
        Err((
            "region",
            "region is an AWS region such as us-east-1".to_owned(),
        ))
    }
}

/// The queue URL: http(s), a host, and a path naming the account and queue.
pub(crate) fn check_queue_url(queue_url: &str, max_len: usize) -> Result<(), Fault> {
    let wrong = |why: &str| Err(("queue_url", why.to_owned()));
    if queue_url.len() > max_len {
        return Err((
            "queue_url",
            format!("queue_url must be at most {max_len} bytes"),
        ));
    }
    let Ok(url) = url::Url::parse(queue_url) else {
        return wrong(
            "queue_url is not a URL; it looks like https://sqs.REGION.amazonaws.com/ACCOUNT/QUEUE",
        );
    };
    let segments: Vec<&str> = url
        .path_segments()
        .map(|s| s.filter(|p| !p.is_empty()).collect())
        .unwrap_or_default();
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() || segments.len() != 2
    {
        return wrong("queue_url looks like https://sqs.REGION.amazonaws.com/ACCOUNT/QUEUE");
    }
    Ok(())
}

/// The topic ARN: `arn:PARTITION:sns:REGION:ACCOUNT:NAME`.
pub(crate) fn check_topic_arn(arn: &str) -> Result<(), Fault> {
    let parts: Vec<&str> = arn.split(':').collect();
    let ok = parts.len() == 6
        && parts[0] == "arn"
        && parts[1].starts_with("aws")
        && parts[2] == "sns"
        && parts.iter().skip(3).all(|p| !p.is_empty())
        && arn.len() <= 256;
    if ok {
        Ok(())
    } else {
        Err((
            "topic_arn",
            "topic_arn looks like arn:aws:sns:REGION:ACCOUNT:TOPIC".to_owned(),
        ))
    }
}

/// A Kinesis stream's name (1–128 of `A-Z a-z 0-9 _ . -`) or its ARN.
pub(crate) fn check_stream(stream: &str) -> Result<(), Fault> {
    let name_ok = |n: &str| {
        (1..=128).contains(&n.len())
            && n.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
    };
    let ok = match stream.strip_prefix("arn:") {
        Some(rest) => rest.len() <= 2044 && rest.contains(":kinesis:") && rest.contains(":stream/"),
        None => name_ok(stream),
    };
    if ok {
        Ok(())
    } else {
        Err((
            "stream",
            "stream is a name of 1 to 128 of A-Z, a-z, 0-9, _, . and -, or a stream ARN".to_owned(),
        ))
    }
}

/// A JSON pointer (RFC 6901): empty, or `/`-separated tokens.
pub(crate) fn check_pointer(field: &'static str, pointer: &str) -> Result<(), Fault> {
    if pointer.starts_with('/') && pointer.len() <= 256 {
        Ok(())
    } else {
        Err((
            field,
            format!("{field} is a JSON pointer into the payload, such as /customer/id"),
        ))
    }
}

/// AWS credentials: a name, or a key id with its secret (and maybe a session
/// token), and nothing of the other kinds.
pub(crate) fn check_credentials(c: Option<&Credentials>, kind: &str) -> Result<(), Fault> {
    let Some(c) = c else {
        return Err((
            "credentials",
            format!(
                "an {kind} destination needs credentials: access_key_id and secret_access_key, \
                 or the name of the operator's; the AWS SDK's default chain is never used"
            ),
        ));
    };
    if c.username.is_some() || c.password.is_some() || c.token.is_some() {
        return Err((
            "credentials",
            format!(
                "an {kind} destination takes access_key_id, secret_access_key and session_token, \
                 not username, password or token"
            ),
        ));
    }
    if c.name.is_none() && (c.access_key_id.is_none() || c.secret_access_key.is_none()) {
        return Err((
            "credentials",
            "AWS credentials need both access_key_id and secret_access_key".to_owned(),
        ));
    }
    Ok(())
}
