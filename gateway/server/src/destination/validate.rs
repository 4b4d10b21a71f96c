//! Checks a destination as given, naming the field at fault: the URL's scheme
//! and shape per kind, the names a broker takes, and the credentials' shape.

use std::collections::BTreeMap;

use serde_json::Value;
use url::Url;

use super::aws;
use super::{BrokerDestination, Credentials, NamedCredentials};

/// A destination field that is wrong; the API answers 422 naming `field`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub(crate) struct DestinationError {
    /// `destination`, or `destination.<name>`.
    pub(crate) field: String,
    pub(crate) message: String,
}

fn wrong(name: &str, message: impl Into<String>) -> DestinationError {
    let field = if name.is_empty() {
        "destination".to_owned()
    } else {
        format!("destination.{name}")
    };
    DestinationError {
        field,
        message: message.into(),
    }
}

/// Every type, as error messages list them.
const KNOWN: &str = "http, rabbitmq, nats, redis, sqs, sns, kinesis";

/// The most bytes an exchange, routing key, subject or stream name may hold.
const MAX_NAME_BYTES: usize = 255;

/// Parses and checks `given` (a broker destination's JSON object; `http` is
/// not one). `max_url_len` is `limits.url_len`; `named` the operator's
/// credentials a tenant may name.
///
/// # Errors
/// A [`DestinationError`] naming the first field at fault.
pub(crate) fn parse(
    given: &Value,
    max_url_len: usize,
    named: &BTreeMap<String, NamedCredentials>,
) -> Result<(BrokerDestination, Url), DestinationError> {
    let kind = given
        .get("type")
        .and_then(Value::as_str)
        .ok_or_else(|| wrong("type", format!("destination.type is required: {KNOWN}")))?;
    // Each kind's struct is read on its own, so a wrong field is named by its path.
    let mut fields = given.clone();
    if let Some(o) = fields.as_object_mut() {
        o.remove("type");
    }
    let destination = match kind {
        "rabbitmq" => BrokerDestination::Rabbitmq(settings(&fields)?),
        "nats" => BrokerDestination::Nats(settings(&fields)?),
        "redis" => BrokerDestination::Redis(settings(&fields)?),
        "sqs" => BrokerDestination::Sqs(settings(&fields)?),
        "sns" => BrokerDestination::Sns(settings(&fields)?),
        "kinesis" => BrokerDestination::Kinesis(settings(&fields)?),
        _ => {
            return Err(wrong(
                "type",
                format!("unknown destination type {kind:?}; known types: {KNOWN}"),
            ));
        }
    };
    // The AWS kinds' region shapes their endpoint, so it is checked first.
    aws_checks(&destination, max_url_len).map_err(|(field, message)| wrong(field, message))?;
    let url = checked_url(&destination, max_url_len)?;
    match &destination {
        BrokerDestination::Rabbitmq(s) => {
            // "" is the default exchange, which routes to the queue the key names.
            name_within("exchange", &s.exchange, true)?;
            if let Some(key) = &s.routing_key {
                name_within("routing_key", key, true)?;
            }
        }
        BrokerDestination::Nats(s) => {
            name_within("subject", &s.subject, false)?;
            let token_ok = |t: &str| !t.is_empty() && t != "*" && t != ">";
            if !s.subject.split('.').all(token_ok) || s.subject.contains(char::is_whitespace) {
                return Err(wrong(
                    "subject",
                    "a subject is dot-separated tokens, none empty, no wildcard (* or >), no whitespace",
                ));
            }
        }
        BrokerDestination::Redis(s) => {
            name_within("stream", &s.stream, false)?;
            if s.max_len.is_some_and(|n| !(1..=1_000_000_000).contains(&n)) {
                return Err(wrong("max_len", "max_len must be from 1 to 1000000000"));
            }
        }
        BrokerDestination::Sqs(_) | BrokerDestination::Sns(_) | BrokerDestination::Kinesis(_) => {}
    }
    if let Some(c) = destination.credentials() {
        checked_credentials(c, named, destination.kind().is_aws())?;
    }
    Ok((destination, url))
}

/// What the AWS kinds ask beyond the others: a region, the queue, topic or
/// stream in AWS's shapes, JSON pointers, and credentials always.
fn aws_checks(d: &BrokerDestination, max_url_len: usize) -> Result<(), aws::Fault> {
    let kind = d.kind().as_str();
    match d {
        BrokerDestination::Sqs(s) => {
            aws::check_region(&s.region)?;
            aws::check_queue_url(&s.queue_url, max_url_len)?;
            if let Some(p) = &s.message_group_path {
                aws::check_pointer("message_group_path", p)?;
            }
            aws::check_credentials(s.credentials.as_ref(), kind)
        }
        BrokerDestination::Sns(s) => {
            aws::check_region(&s.region)?;
            aws::check_topic_arn(&s.topic_arn)?;
            if let Some(p) = &s.message_group_path {
                aws::check_pointer("message_group_path", p)?;
            }
            aws::check_credentials(s.credentials.as_ref(), kind)
        }
        BrokerDestination::Kinesis(s) => {
            aws::check_region(&s.region)?;
            aws::check_stream(&s.stream)?;
            if let Some(p) = &s.partition_key_path {
                aws::check_pointer("partition_key_path", p)?;
            }
            aws::check_credentials(s.credentials.as_ref(), kind)
        }
        _ => Ok(()),
    }
}

/// One kind's settings from `fields`, a wrong field named by its path.
fn settings<T: serde::de::DeserializeOwned>(fields: &Value) -> Result<T, DestinationError> {
    serde_path_to_error::deserialize(fields).map_err(|e| {
        let path = e.path().to_string();
        let name = if path == "." { String::new() } else { path };
        wrong(&name, e.inner().to_string())
    })
}

/// The URL: the kind's scheme, a host, and no credentials in it.
fn checked_url(d: &BrokerDestination, max_len: usize) -> Result<Url, DestinationError> {
    let given = d.url();
    // The AWS kinds' address is their endpoint override (or AWS's own).
    let field = if d.kind().is_aws() {
        "endpoint_url"
    } else {
        "url"
    };
    if given.len() > max_len {
        return Err(wrong(
            field,
            format!("{field} must be at most {max_len} bytes"),
        ));
    }
    let schemes: &[&str] = match d {
        BrokerDestination::Rabbitmq(_) => &["amqp", "amqps"],
        BrokerDestination::Nats(_) => &["nats", "tls"],
        BrokerDestination::Redis(_) => &["redis", "rediss"],
        BrokerDestination::Sqs(_) | BrokerDestination::Sns(_) | BrokerDestination::Kinesis(_) => {
            &["https", "http"]
        }
    };
    let expected = schemes.join(" or ");
    let url = Url::parse(&given)
        .map_err(|e| wrong(field, format!("{field} is not a valid {expected} URL: {e}")))?;
    if !schemes.contains(&url.scheme()) {
        return Err(wrong(
            field,
            format!(
                "a {} destination's {field} starts with {expected}://",
                d.kind().as_str()
            ),
        ));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(wrong(field, format!("{field} must name a host")));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(wrong(
            field,
            format!("{field} must not hold credentials; give them in destination.credentials"),
        ));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(wrong(field, format!("{field} takes no query or fragment")));
    }
    Ok(url)
}

fn name_within(field: &str, value: &str, may_be_empty: bool) -> Result<(), DestinationError> {
    if value.is_empty() && !may_be_empty {
        return Err(wrong(field, format!("{field} must not be empty")));
    }
    if value.len() > MAX_NAME_BYTES {
        return Err(wrong(
            field,
            format!("{field} must be at most {MAX_NAME_BYTES} bytes"),
        ));
    }
    if value.chars().any(char::is_control) {
        return Err(wrong(
            field,
            format!("{field} must hold no control character"),
        ));
    }
    Ok(())
}

fn checked_credentials(
    c: &Credentials,
    named: &BTreeMap<String, NamedCredentials>,
    aws: bool,
) -> Result<(), DestinationError> {
    let aws_given =
        c.access_key_id.is_some() || c.secret_access_key.is_some() || c.session_token.is_some();
    if let Some(name) = &c.name {
        if c.username.is_some() || c.password.is_some() || c.token.is_some() || aws_given {
            return Err(wrong(
                "credentials",
                "credentials are either a name or given values, not both",
            ));
        }
        if !named.contains_key(name) {
            return Err(wrong(
                "credentials.name",
                format!("no credentials named {name:?} in the gateway's config"),
            ));
        }
        return Ok(());
    }
    if aws_given && !aws {
        return Err(wrong(
            "credentials",
            "access_key_id, secret_access_key and session_token are for sqs, sns and kinesis",
        ));
    }
    if c.token.is_some() && (c.username.is_some() || c.password.is_some()) {
        return Err(wrong(
            "credentials",
            "credentials are a token or a username and password, not both",
        ));
    }
    if c.username.is_none() && c.password.is_none() && c.token.is_none() && !aws_given {
        return Err(wrong(
            "credentials",
            "credentials need a name, a username and password, or a token",
        ));
    }
    for (field, value) in [
        ("credentials.username", &c.username),
        ("credentials.password", &c.password),
        ("credentials.token", &c.token),
        ("credentials.access_key_id", &c.access_key_id),
        ("credentials.secret_access_key", &c.secret_access_key),
        ("credentials.session_token", &c.session_token),
    ] {
        if value.as_ref().is_some_and(|v| v.len() > 1024) {
            return Err(DestinationError {
                field: format!("destination.{field}"),
                message: format!("{field} must be at most 1024 bytes"),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::destination::MASK;

    fn field_of(given: Value) -> String {
        parse(&given, 2048, &BTreeMap::new()).unwrap_err().field
    }

    #[test]
    fn each_kind_parses_with_its_own_fields() {
        let none = BTreeMap::new();
        let (d, url) = parse(
            &json!({"type": "rabbitmq", "url": "amqp://127.0.0.1:5672/%2f", "exchange": "",
                    "routing_key": "orders", "credentials": {"username": "u", "password": "p"}}),
            2048,
            &none,
        )
        .unwrap();
        assert_eq!(d.kind().as_str(), "rabbitmq");
        assert_eq!(url.host_str(), Some("127.0.0.1"));
        let shown = format!("{d:?}");
        assert!(shown.contains(MASK) && !shown.contains("\"p\""), "{shown}");
        parse(
            &json!({"type": "nats", "url": "nats://h:4222", "subject": "a.b"}),
            2048,
            &none,
        )
        .unwrap();
        parse(
            &json!({"type": "redis", "url": "redis://h/0", "stream": "s", "max_len": 10}),
            2048,
            &none,
        )
        .unwrap();
    }

    #[test]
    fn each_mistake_names_its_field() {
        let rabbit = |extra: Value| {
            let mut v = json!({"type": "rabbitmq", "url": "amqp://h", "exchange": "x"});
            v.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            field_of(v)
        };
        assert_eq!(field_of(json!({"url": "amqp://h"})), "destination.type");
        assert_eq!(field_of(json!({"type": "kafka"})), "destination.type");
        assert_eq!(rabbit(json!({"url": "http://h"})), "destination.url");
        assert_eq!(rabbit(json!({"url": "amqp://u:p@h"})), "destination.url");
        assert_eq!(
            rabbit(json!({"exchange": "x".repeat(256)})),
            "destination.exchange"
        );
        assert_eq!(rabbit(json!({"queue": "q"})), "destination.queue");
        assert_eq!(rabbit(json!({"exchange": 5})), "destination.exchange");
        assert_eq!(
            rabbit(json!({"credentials": {"name": "ops"}})),
            "destination.credentials.name"
        );
        assert_eq!(
            rabbit(json!({"credentials": {}})),
            "destination.credentials"
        );
        assert_eq!(
            field_of(json!({"type": "nats", "url": "nats://h", "subject": "a.*"})),
            "destination.subject"
        );
        assert_eq!(
            field_of(json!({"type": "redis", "url": "redis://h", "stream": "s", "max_len": 0})),
            "destination.max_len"
        );
    }

    #[test]
    fn the_aws_kinds_check_their_own_fields() {
        let keys = json!({"access_key_id": "AKIA1", "secret_access_key": "s"});
        let none = BTreeMap::new();
        let (sqs, url) = parse(
            &json!({"type": "sqs", "queue_url": "http://127.0.0.1:5000/123456789012/q.fifo",
                    "region": "us-east-1", "endpoint_url": "http://127.0.0.1:5000",
                    "message_group_path": "/customer/id", "credentials": keys}),
            2048,
            &none,
        )
        .unwrap();
        assert_eq!(url.port(), Some(5000));
        let shown = format!("{sqs:?}");
        assert!(shown.contains(MASK) && !shown.contains("\"s\""), "{shown}");
        let (sns, _) = parse(
            &json!({"type": "sns", "topic_arn": "arn:aws:sns:eu-west-1:123456789012:t",
                    "region": "eu-west-1", "credentials": keys}),
            2048,
            &none,
        )
        .unwrap();
        assert_eq!(sns.url(), "https://sns.eu-west-1.amazonaws.com");
        let aws = |extra: Value| {
            let mut v = json!({"type": "kinesis", "stream": "orders", "region": "us-east-1",
                               "credentials": keys});
            v.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            field_of(v)
        };
        assert_eq!(aws(json!({"region": "US East"})), "destination.region");
        assert_eq!(aws(json!({"stream": "a b"})), "destination.stream");
        assert_eq!(
            aws(json!({"partition_key_path": "x"})),
            "destination.partition_key_path"
        );
        assert_eq!(
            aws(json!({"endpoint_url": "ftp://h"})),
            "destination.endpoint_url"
        );
        assert_eq!(aws(json!({"credentials": null})), "destination.credentials");
        assert_eq!(
            aws(json!({"credentials": {"username": "u", "password": "p"}})),
            "destination.credentials"
        );
        assert_eq!(
            aws(json!({"credentials": {"access_key_id": "AKIA1"}})),
            "destination.credentials"
        );
        assert_eq!(
            field_of(
                json!({"type": "sqs", "queue_url": "https://sqs.us-east-1.amazonaws.com/q",
                            "region": "us-east-1", "credentials": keys})
            ),
            "destination.queue_url"
        );
        assert_eq!(
            field_of(
                json!({"type": "sns", "topic_arn": "arn:aws:sqs:us-east-1:1:t",
                            "region": "us-east-1", "credentials": keys})
            ),
            "destination.topic_arn"
        );
        assert_eq!(
            field_of(json!({"type": "nats", "url": "nats://h", "subject": "a",
                            "credentials": keys})),
            "destination.credentials"
        );
    }

    #[test]
    fn a_masked_secret_given_back_keeps_the_stored_one() {
        let stored = Credentials {
            username: Some("u".into()),
            password: Some("secret".into()),
            ..Credentials::default()
        };
        let back = stored.masked().unmasked_from(Some(&stored));
        assert_eq!(back, stored);
        let changed = Credentials {
            password: Some("new".into()),
            ..stored.masked()
        };
        assert_eq!(
            changed.unmasked_from(Some(&stored)).password.as_deref(),
            Some("new")
        );
    }
}
