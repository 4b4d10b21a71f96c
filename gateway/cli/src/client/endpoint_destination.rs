//! The destination options of `endpoints create|update` (docs/destinations.md):
//! a kind and its settings as flags, or the whole object as JSON, read into a
//! create body's `destination` or a merge patch of it. An option of another
//! kind than the one chosen is a usage error, caught before any request.

use clap::{Args, ValueEnum};
use serde_json::{Map, Value, json};

use super::error::CliError;
use super::input::json_value_arg;

/// Where an endpoint delivers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Kind {
    /// A signed POST to --endpoint-url (the default).
    Http,
    /// A RabbitMQ exchange (AMQP 0-9-1).
    Rabbitmq,
    /// A NATS JetStream subject.
    Nats,
    /// A Redis stream.
    Redis,
    /// An Amazon SQS queue.
    Sqs,
    /// An Amazon SNS topic.
    Sns,
    /// An Amazon Kinesis data stream.
    Kinesis,
}

/// The kinds that publish to a broker at a `url`.
const BROKERS: &[Kind] = &[Kind::Rabbitmq, Kind::Nats, Kind::Redis];
/// The kinds that send to an AWS service, in a `region`, with AWS keys.
const AWS: &[Kind] = &[Kind::Sqs, Kind::Sns, Kind::Kinesis];
/// Every kind but http.
const NOT_HTTP: &[Kind] = &[
    Kind::Rabbitmq,
    Kind::Nats,
    Kind::Redis,
    Kind::Sqs,
    Kind::Sns,
    Kind::Kinesis,
];

/// The credentials fields a broker kind takes.
const BROKER_CREDENTIALS: &[&str] = &["name", "username", "password", "token"];
/// The credentials fields an AWS kind takes.
const AWS_CREDENTIALS: &[&str] = &[
    "name",
    "access_key_id",
    "secret_access_key",
    "session_token",
];

impl Kind {
    /// The API's name of the kind (`destination.type`).
    pub(super) fn as_str(self) -> &'static str {
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

    fn from_api(name: &str) -> Option<Self> {
        Self::value_variants()
            .iter()
            .copied()
            .find(|k| k.as_str() == name)
    }

    /// Whether the kind sends to an AWS service (sqs, sns, kinesis).
    fn is_aws(self) -> bool {
        AWS.contains(&self)
    }

    /// The article the kind's name reads with (`an sqs`, `a nats`).
    fn article(self) -> &'static str {
        match self {
            Self::Http | Self::Sqs | Self::Sns => "an",
            _ => "a",
        }
    }

    /// The flag and API field a destination kind cannot go without: its
    /// target, and what it is, for the message.
    fn target(self) -> Option<(&'static str, &'static str, &'static str)> {
        match self {
            Self::Http => None,
            Self::Rabbitmq => Some((
                "--exchange",
                "exchange",
                "the exchange to publish to ('' for the default exchange)",
            )),
            Self::Nats => Some(("--subject", "subject", "the subject to publish to")),
            Self::Redis => Some(("--stream", "stream", "the stream to publish to")),
            Self::Sqs => Some((
                "--queue-url",
                "queue_url",
                "the queue's URL (https://sqs.REGION.amazonaws.com/ACCOUNT/NAME)",
            )),
            Self::Sns => Some((
                "--topic-arn",
                "topic_arn",
                "the topic's ARN (arn:aws:sns:REGION:ACCOUNT:NAME)",
            )),
            Self::Kinesis => Some(("--stream", "stream", "the data stream's name or ARN")),
        }
    }

    /// The credentials fields the kind takes.
    fn credential_fields(self) -> &'static [&'static str] {
        if self.is_aws() {
            AWS_CREDENTIALS
        } else {
            BROKER_CREDENTIALS
        }
    }
}

/// `kinds` as a reader lists them: `redis or kinesis`, `sqs, sns or kinesis`.
fn either(kinds: &[Kind]) -> String {
    let names: Vec<&str> = kinds.iter().map(|k| k.as_str()).collect();
    match names.split_last() {
        Some((last, [])) => (*last).to_owned(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// The destination options shared by `create` and `update`.
#[derive(Args, Debug, Default)]
pub struct DestinationArgs {
    /// Where deliveries go: http (a POST to --endpoint-url, the default); a
    /// broker the tenant runs: rabbitmq, nats (JetStream) or redis (a stream);
    /// or an AWS service: sqs (a queue), sns (a topic) or kinesis (a data stream).
    #[arg(long = "destination", value_enum, value_name = "KIND")]
    kind: Option<Kind>,
    /// rabbitmq, nats, redis: the broker's address, without credentials:
    /// amqp://host:5672/%2f, nats://host:4222 or redis://host:6379/0 (amqps,
    /// tls, rediss for TLS).
    #[arg(long, value_name = "URL")]
    destination_url: Option<String>,
    /// rabbitmq: the exchange to publish to ('' is the default exchange, which
    /// routes by queue name).
    #[arg(long, value_name = "NAME")]
    exchange: Option<String>,
    /// rabbitmq: the routing key (the event's type when absent).
    #[arg(long, value_name = "KEY")]
    routing_key: Option<String>,
    /// nats: the subject a JetStream stream captures (no wildcards).
    #[arg(long, value_name = "SUBJECT")]
    subject: Option<String>,
    /// redis: the stream's key; kinesis: the data stream's name or ARN.
    #[arg(long, value_name = "STREAM")]
    stream: Option<String>,
    /// redis: trim the stream to about N entries on each add (MAXLEN ~ N).
    #[arg(long, value_name = "N")]
    max_len: Option<u64>,
    /// sqs: the queue's URL, https://sqs.REGION.amazonaws.com/ACCOUNT/NAME.
    #[arg(long, value_name = "URL")]
    queue_url: Option<String>,
    /// sns: the topic's ARN, arn:aws:sns:REGION:ACCOUNT:NAME.
    #[arg(long, value_name = "ARN")]
    topic_arn: Option<String>,
    /// sqs, sns, kinesis: the AWS region, e.g. us-east-1.
    #[arg(long, value_name = "REGION")]
    region: Option<String>,
    /// sqs, sns, kinesis: an http(s) URL to send to instead of the region's
    /// AWS endpoint, e.g. a local emulator (--endpoint-url is an http
    /// endpoint's own URL).
    #[arg(long, value_name = "URL")]
    aws_endpoint_url: Option<String>,
    /// sqs, sns (FIFO queues and topics only): a JSON pointer into the payload
    /// whose value is the message group id, e.g. /customer/id.
    #[arg(long, value_name = "POINTER")]
    message_group_path: Option<String>,
    /// kinesis: a JSON pointer into the payload whose value is the partition
    /// key, e.g. /customer/id.
    #[arg(long, value_name = "POINTER")]
    partition_key_path: Option<String>,
    /// rabbitmq, nats, redis: the broker user to connect as.
    #[arg(long, value_name = "NAME", conflicts_with = "credentials_name")]
    broker_username: Option<String>,
    /// rabbitmq, nats, redis: the broker user's password; never shown again
    /// (views mask it). Keep it out of the shell's history with
    /// --destination-json @FILE.
    #[arg(long, value_name = "PASSWORD", conflicts_with = "credentials_name")]
    broker_password: Option<String>,
    /// nats: a token to connect with, instead of a username and password.
    #[arg(long, value_name = "TOKEN", conflicts_with_all = ["credentials_name", "broker_username", "broker_password"])]
    broker_token: Option<String>,
    /// sqs, sns, kinesis: the AWS access key id to sign with (with
    /// --secret-access-key).
    #[arg(
        long,
        value_name = "ID",
        conflicts_with = "credentials_name",
        requires = "secret_access_key"
    )]
    access_key_id: Option<String>,
    /// sqs, sns, kinesis: the secret access key of --access-key-id; never
    /// shown again (views mask it). Keep it out of the shell's history with
    /// --destination-json @FILE.
    #[arg(long, value_name = "SECRET", conflicts_with = "credentials_name")]
    secret_access_key: Option<String>,
    /// sqs, sns, kinesis: the session token of temporary keys (with
    /// --access-key-id); never shown again.
    #[arg(
        long,
        value_name = "TOKEN",
        conflicts_with = "credentials_name",
        requires = "access_key_id"
    )]
    session_token: Option<String>,
    /// Credentials the operator named in the gateway's config
    /// ([destinations.credentials.NAME]), instead of giving them here.
    #[arg(long, value_name = "NAME")]
    credentials_name: Option<String>,
    /// The whole destination as JSON or @FILE, as the API takes it, e.g.
    /// '{"type":"nats","url":"nats://host:4222","subject":"orders"}'; on
    /// update, merged into the stored one.
    #[arg(long, value_name = "JSON|@FILE", conflicts_with_all = [
        "kind", "destination_url", "exchange", "routing_key", "subject", "stream", "max_len",
        "queue_url", "topic_arn", "region", "aws_endpoint_url", "message_group_path",
        "partition_key_path", "broker_username", "broker_password", "broker_token",
        "access_key_id", "secret_access_key", "session_token", "credentials_name",
    ])]
    destination_json: Option<String>,
}

/// What a destination makes of the endpoint's `url` and `destination`.
#[derive(Debug, PartialEq)]
pub(super) enum Change {
    /// Nothing about the destination was given.
    None,
    /// `destination` as given: an object, or null (back to http).
    Set(Value),
}

impl DestinationArgs {
    /// The options given, each with the kinds that take it.
    fn given(&self) -> Vec<(&'static str, &'static [Kind])> {
        use Kind::{Kinesis, Nats, Rabbitmq, Redis, Sns, Sqs};
        let flags: [(&'static str, &'static [Kind], bool); 19] = [
            ("--destination-url", BROKERS, self.destination_url.is_some()),
            ("--exchange", &[Rabbitmq], self.exchange.is_some()),
            ("--routing-key", &[Rabbitmq], self.routing_key.is_some()),
            ("--subject", &[Nats], self.subject.is_some()),
            ("--broker-token", &[Nats], self.broker_token.is_some()),
            ("--stream", &[Redis, Kinesis], self.stream.is_some()),
            ("--max-len", &[Redis], self.max_len.is_some()),
            ("--queue-url", &[Sqs], self.queue_url.is_some()),
            ("--topic-arn", &[Sns], self.topic_arn.is_some()),
            ("--region", AWS, self.region.is_some()),
            ("--aws-endpoint-url", AWS, self.aws_endpoint_url.is_some()),
            (
                "--message-group-path",
                &[Sqs, Sns],
                self.message_group_path.is_some(),
            ),
            (
                "--partition-key-path",
                &[Kinesis],
                self.partition_key_path.is_some(),
            ),
            ("--broker-username", BROKERS, self.broker_username.is_some()),
            ("--broker-password", BROKERS, self.broker_password.is_some()),
            ("--access-key-id", AWS, self.access_key_id.is_some()),
            ("--secret-access-key", AWS, self.secret_access_key.is_some()),
            ("--session-token", AWS, self.session_token.is_some()),
            (
                "--credentials-name",
                NOT_HTTP,
                self.credentials_name.is_some(),
            ),
        ];
        flags
            .into_iter()
            .filter(|(_, _, given)| *given)
            .map(|(flag, kinds, _)| (flag, kinds))
            .collect()
    }

    /// Refuses an option that `kind` does not take; `chosen` says where the
    /// kind comes from, for the message.
    fn check_belongs(&self, kind: Kind, chosen: &str) -> Result<(), CliError> {
        for (flag, owners) in self.given() {
            if owners.contains(&kind) {
                continue;
            }
            let whose = if owners == BROKERS {
                "a broker destination's".to_owned()
            } else if owners == AWS {
                "an AWS destination's".to_owned()
            } else if owners == NOT_HTTP {
                "a broker or AWS destination's".to_owned()
            } else {
                let article = owners.first().map_or("a", |k| k.article());
                format!("{article} {} destination's", either(owners))
            };
            return Err(CliError::Usage(format!(
                "{flag} is {whose} option, and {chosen}: give --destination {}",
                either(owners)
            )));
        }
        Ok(())
    }

    /// The settings given as flags, as the API names them (no `type`), with
    /// the credentials: on update (`stored` the endpoint's, if any) also the
    /// nulls that drop another form of them.
    fn settings(
        &self,
        kind: Kind,
        update: bool,
        stored: Option<&Map<String, Value>>,
    ) -> Map<String, Value> {
        let mut map = Map::new();
        for (field, value) in [
            ("url", &self.destination_url),
            ("exchange", &self.exchange),
            ("routing_key", &self.routing_key),
            ("subject", &self.subject),
            ("stream", &self.stream),
            ("queue_url", &self.queue_url),
            ("topic_arn", &self.topic_arn),
            ("region", &self.region),
            ("endpoint_url", &self.aws_endpoint_url),
            ("message_group_path", &self.message_group_path),
            ("partition_key_path", &self.partition_key_path),
        ] {
            if let Some(v) = value {
                map.insert(field.into(), json!(v));
            }
        }
        if let Some(n) = self.max_len {
            map.insert("max_len".into(), json!(n));
        }
        if let Some(c) = self.credentials(kind, update, stored) {
            map.insert("credentials".into(), Value::Object(c));
        }
        map
    }

    /// Whether any credentials were given.
    fn has_credentials(&self) -> bool {
        [
            &self.credentials_name,
            &self.broker_username,
            &self.broker_password,
            &self.broker_token,
            &self.access_key_id,
            &self.secret_access_key,
            &self.session_token,
        ]
        .iter()
        .any(|v| v.is_some())
    }

    /// The credentials given; on update the forms not given are set to null
    /// (those `kind` takes, and those `stored` holds), so a name replaces a
    /// stored username and password or AWS keys, and the reverse. New AWS
    /// keys without a session token drop the stored one.
    fn credentials(
        &self,
        kind: Kind,
        update: bool,
        stored: Option<&Map<String, Value>>,
    ) -> Option<Map<String, Value>> {
        // Each field, the option that gives it, and its form.
        let given = [
            ("name", &self.credentials_name, "name"),
            ("username", &self.broker_username, "user"),
            ("password", &self.broker_password, "user"),
            ("token", &self.broker_token, "token"),
            ("access_key_id", &self.access_key_id, "aws"),
            ("secret_access_key", &self.secret_access_key, "aws"),
            ("session_token", &self.session_token, "aws"),
        ];
        if !self.has_credentials() {
            return None;
        }
        let forms: Vec<&str> = given
            .iter()
            .filter(|(_, v, _)| v.is_some())
            .map(|(_, _, form)| *form)
            .collect();
        let mut map = Map::new();
        for (field, value, form) in given {
            match value {
                Some(v) => {
                    map.insert(field.into(), json!(v));
                }
                // Another form of credentials than the one given is dropped;
                // a password given alone keeps the stored username.
                None if update => {
                    let present = kind.credential_fields().contains(&field)
                        || stored.is_some_and(|s| s.contains_key(field));
                    let other_form = !forms.contains(&form);
                    let new_keys = field == "session_token" && self.access_key_id.is_some();
                    if present && (other_form || new_keys) {
                        map.insert(field.into(), Value::Null);
                    }
                }
                None => {}
            }
        }
        Some(map)
    }

    /// The destination of a new endpoint, checked against `endpoint_url`:
    /// http needs it, any other kind refuses it.
    ///
    /// # Errors
    /// [`CliError::Usage`] for an option of another kind, a missing or
    /// refused URL, a kind without its address, target or (AWS) region and
    /// credentials, or bad JSON.
    pub(super) fn for_create(&self, endpoint_url: Option<&str>) -> Result<Change, CliError> {
        if let Some(text) = &self.destination_json {
            let given = json_object("--destination-json", text)?;
            let kind = given.get("type").and_then(Value::as_str);
            url_fits(kind.unwrap_or("broker"), kind == Some("http"), endpoint_url)?;
            return Ok(Change::Set(Value::Object(given)));
        }
        let kind = self.kind.unwrap_or(Kind::Http);
        let chosen = match self.kind {
            Some(k) => format!("--destination is {}", k.as_str()),
            None => "the destination is http (the default)".to_owned(),
        };
        self.check_belongs(kind, &chosen)?;
        url_fits(kind.as_str(), kind == Kind::Http, endpoint_url)?;
        if kind == Kind::Http {
            return Ok(Change::None);
        }
        self.needs_address(kind, kind.article(), false)?;
        let mut destination = Map::new();
        destination.insert("type".into(), json!(kind.as_str()));
        destination.extend(self.settings(kind, false, None));
        Ok(Change::Set(Value::Object(destination)))
    }

    /// Whether an update must read the endpoint first, to know the kind it
    /// delivers to: a destination option was given, and not as JSON.
    pub(super) fn reads_current(&self) -> bool {
        self.destination_json.is_none() && (self.kind.is_some() || !self.given().is_empty())
    }

    /// What an update's options can be checked for before the endpoint is
    /// read: those of a kind other than the `--destination` given.
    ///
    /// # Errors
    /// [`CliError::Usage`] for such an option, or `--endpoint-url` with a
    /// kind other than http.
    pub(super) fn check_chosen(&self, endpoint_url: Option<&str>) -> Result<(), CliError> {
        let Some(kind) = self.kind else {
            return Ok(());
        };
        self.check_belongs(kind, &format!("--destination is {}", kind.as_str()))?;
        if kind == Kind::Http {
            return Ok(());
        }
        url_fits(kind.as_str(), false, endpoint_url)
    }

    /// The merge patch of an endpoint's destination, from `current` (its view,
    /// read when [`Self::reads_current`]) and the options given: the kind's
    /// settings; a switch to another kind drops the old kind's settings (and,
    /// between a broker and an AWS kind, its credentials); `--destination
    /// http` is null.
    ///
    /// # Errors
    /// As [`Self::for_create`], and a switch of kind without the new kind's
    /// address and target (and, to an AWS kind, region and credentials).
    pub(super) fn for_update(
        &self,
        endpoint_url: Option<&str>,
        current: Option<&Value>,
    ) -> Result<Change, CliError> {
        if let Some(text) = &self.destination_json {
            let given = json_value_arg("--destination-json", text)?;
            // `{"type": "http"}` is no merge: it means back to http.
            let http_only = given.as_object().is_some_and(|o| {
                o.len() == 1 && o.get("type").and_then(Value::as_str) == Some("http")
            });
            return Ok(Change::Set(if http_only { Value::Null } else { given }));
        }
        let Some(current) = current.filter(|_| self.reads_current()) else {
            return Ok(Change::None);
        };
        let stored = current["destination"]["type"]
            .as_str()
            .and_then(Kind::from_api)
            .unwrap_or(Kind::Http);
        let kind = self.kind.unwrap_or(stored);
        let chosen = match self.kind {
            Some(k) => format!("--destination is {}", k.as_str()),
            None => format!("this endpoint delivers to {}", stored.as_str()),
        };
        self.check_belongs(kind, &chosen)?;
        if kind == Kind::Http {
            if stored != Kind::Http && endpoint_url.is_none() {
                return Err(CliError::Usage(format!(
                    "back to http from {}: give --endpoint-url URL, where deliveries go from now on",
                    stored.as_str()
                )));
            }
            return Ok(Change::Set(Value::Null));
        }
        url_fits(kind.as_str(), false, endpoint_url)?;
        let stored_credentials = current["destination"]["credentials"].as_object();
        let mut patch = Map::new();
        if kind != stored {
            // Broker credentials are no AWS keys, nor the reverse.
            let same_family = stored != Kind::Http && stored.is_aws() == kind.is_aws();
            self.needs_address(
                kind,
                &format!("a switch from {} to", stored.as_str()),
                same_family,
            )?;
            patch.insert("type".into(), json!(kind.as_str()));
            // What the old kind took goes, the new kind's given below;
            // credentials stay unless given, or of the other family.
            if let Some(old) = current["destination"].as_object() {
                for key in old.keys() {
                    if !matches!(key.as_str(), "type" | "credentials") {
                        patch.insert(key.clone(), Value::Null);
                    }
                }
            }
            if !same_family && stored_credentials.is_some() && !self.has_credentials() {
                patch.insert("credentials".into(), Value::Null);
            }
        }
        patch.extend(self.settings(kind, true, stored_credentials));
        if patch.is_empty() {
            return Ok(Change::None);
        }
        Ok(Change::Set(Value::Object(patch)))
    }

    /// A kind's address and target, and for the AWS kinds the region and
    /// credentials (unless `credentials_kept`), which `what` (a new
    /// endpoint, a switch of kind) cannot go without.
    fn needs_address(
        &self,
        kind: Kind,
        what: &str,
        credentials_kept: bool,
    ) -> Result<(), CliError> {
        let needs = |option: &str| {
            Err(CliError::Usage(format!(
                "{what} {} destination needs {option}",
                kind.as_str()
            )))
        };
        if !kind.is_aws() && self.destination_url.is_none() {
            let example = match kind {
                Kind::Rabbitmq => "amqp://host:5672/%2f",
                Kind::Nats => "nats://host:4222",
                _ => "redis://host:6379/0",
            };
            return needs(&format!(
                "--destination-url, the broker's address (e.g. {example})"
            ));
        }
        let present = match kind {
            Kind::Rabbitmq => self.exchange.is_some(),
            Kind::Nats => self.subject.is_some(),
            Kind::Redis | Kind::Kinesis => self.stream.is_some(),
            Kind::Sqs => self.queue_url.is_some(),
            Kind::Sns => self.topic_arn.is_some(),
            Kind::Http => true,
        };
        if let Some((flag, _, what_it_is)) = kind.target().filter(|_| !present) {
            return needs(&format!("{flag}, {what_it_is}"));
        }
        if !kind.is_aws() {
            return Ok(());
        }
        if self.region.is_none() {
            return needs("--region, the AWS region (e.g. us-east-1)");
        }
        if !credentials_kept && self.access_key_id.is_none() && self.credentials_name.is_none() {
            return needs(
                "credentials: --access-key-id and --secret-access-key (with --session-token \
                 for temporary keys), or --credentials-name NAME",
            );
        }
        Ok(())
    }
}

/// `--endpoint-url` is where an http endpoint posts, and nothing for another kind.
fn url_fits(kind: &str, http: bool, endpoint_url: Option<&str>) -> Result<(), CliError> {
    match (http, endpoint_url) {
        (true, None) => Err(CliError::Usage(
            "give --endpoint-url URL, where deliveries go, or another destination with \
             --destination rabbitmq|nats|redis|sqs|sns|kinesis and its options"
                .into(),
        )),
        (false, Some(_)) => {
            let known = Kind::from_api(kind);
            let article = known.map_or("a", Kind::article);
            let address = match known.filter(|k| k.is_aws()).and_then(Kind::target) {
                Some((flag, _, _)) => format!(
                    "endpoint sends to its {flag} (--aws-endpoint-url overrides the AWS endpoint)"
                ),
                None => "endpoint's address is its --destination-url".to_owned(),
            };
            Err(CliError::Usage(format!(
                "--endpoint-url is for http endpoints; {article} {kind} {address}"
            )))
        }
        _ => Ok(()),
    }
}

/// The JSON object given to `flag`.
fn json_object(flag: &str, text: &str) -> Result<Map<String, Value>, CliError> {
    match json_value_arg(flag, text)? {
        Value::Object(map) => Ok(map),
        other => Err(CliError::Usage(format!(
            "{flag} takes a JSON object with a type, not {other}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(kind: Option<Kind>) -> DestinationArgs {
        DestinationArgs {
            kind,
            ..DestinationArgs::default()
        }
    }

    fn usage(result: Result<Change, CliError>) -> String {
        let err = result.unwrap_err();
        assert_eq!(err.exit_code(), 2, "{err}");
        err.to_string()
    }

    #[test]
    fn create_builds_each_kind_and_refuses_what_does_not_belong() {
        let mut a = args(Some(Kind::Redis));
        a.destination_url = Some("redis://h:6379/0".into());
        a.stream = Some("orders".into());
        a.max_len = Some(10);
        a.broker_username = Some("u".into());
        a.broker_password = Some("p".into());
        assert_eq!(
            a.for_create(None).unwrap(),
            Change::Set(
                json!({"type": "redis", "url": "redis://h:6379/0", "stream": "orders",
                "max_len": 10, "credentials": {"username": "u", "password": "p"}})
            )
        );
        assert!(usage(a.for_create(Some("https://x"))).contains("--destination-url"));
        a.exchange = Some("x".into());
        let err = usage(a.for_create(None));
        assert!(
            err.contains("--exchange is a rabbitmq destination's option"),
            "{err}"
        );

        let mut http = args(None);
        assert!(usage(http.for_create(None)).contains("--endpoint-url"));
        assert_eq!(http.for_create(Some("https://x")).unwrap(), Change::None);
        http.subject = Some("s".into());
        assert!(usage(http.for_create(Some("https://x"))).contains("give --destination nats"));

        let mut nats = args(Some(Kind::Nats));
        nats.destination_url = Some("nats://h:4222".into());
        assert!(usage(nats.for_create(None)).contains("needs --subject"));
    }

    #[test]
    fn update_merges_switches_and_returns_to_http() {
        let stored = json!({"destination": {"type": "rabbitmq", "url": "amqp://h/%2f",
            "exchange": "e", "routing_key": "k", "credentials": {"username": "u", "password": "********"}}});
        let mut key = args(None);
        key.routing_key = Some("k2".into());
        assert_eq!(
            key.for_update(None, Some(&stored)).unwrap(),
            Change::Set(json!({"routing_key": "k2"}))
        );
        let mut wrong = args(None);
        wrong.subject = Some("s".into());
        assert!(
            usage(wrong.for_update(None, Some(&stored)))
                .contains("this endpoint delivers to rabbitmq")
        );

        let mut nats = args(Some(Kind::Nats));
        nats.destination_url = Some("nats://h:4222".into());
        nats.subject = Some("s".into());
        nats.broker_token = Some("t".into());
        assert_eq!(
            nats.for_update(None, Some(&stored)).unwrap(),
            Change::Set(
                json!({"type": "nats", "url": "nats://h:4222", "subject": "s",
                "exchange": null, "routing_key": null,
                "credentials": {"token": "t", "name": null, "username": null, "password": null}})
            )
        );

        let http = args(Some(Kind::Http));
        assert!(usage(http.for_update(None, Some(&stored))).contains("--endpoint-url"));
        assert_eq!(
            http.for_update(Some("https://x"), Some(&stored)).unwrap(),
            Change::Set(Value::Null)
        );
        let mut json_http = args(None);
        json_http.destination_json = Some(r#"{"type":"http"}"#.into());
        assert_eq!(
            json_http.for_update(None, Some(&stored)).unwrap(),
            Change::Set(Value::Null)
        );
        assert_eq!(
            args(None).for_update(None, Some(&stored)).unwrap(),
            Change::None
        );
    }

    #[test]
    fn create_builds_the_aws_kinds_and_asks_for_what_they_need() {
        let mut sqs = args(Some(Kind::Sqs));
        sqs.queue_url = Some("https://sqs.us-east-1.amazonaws.com/123456789012/orders.fifo".into());
        sqs.region = Some("us-east-1".into());
        assert!(usage(sqs.for_create(None)).contains(
            "an sqs destination needs credentials: --access-key-id and --secret-access-key"
        ));
        sqs.aws_endpoint_url = Some("http://127.0.0.1:5000".into());
        sqs.message_group_path = Some("/customer/id".into());
        sqs.access_key_id = Some("AKIAEXAMPLE".into());
        sqs.secret_access_key = Some("s3cret".into());
        sqs.session_token = Some("tok".into());
        assert_eq!(
            sqs.for_create(None).unwrap(),
            Change::Set(json!({"type": "sqs",
                "queue_url": "https://sqs.us-east-1.amazonaws.com/123456789012/orders.fifo",
                "region": "us-east-1", "endpoint_url": "http://127.0.0.1:5000",
                "message_group_path": "/customer/id",
                "credentials": {"access_key_id": "AKIAEXAMPLE", "secret_access_key": "s3cret",
                                "session_token": "tok"}}))
        );
        let err = usage(sqs.for_create(Some("https://x")));
        assert!(
            err.contains(
                "--endpoint-url is for http endpoints; an sqs endpoint sends to its --queue-url"
            ),
            "{err}"
        );
        sqs.partition_key_path = Some("/a".into());
        let err = usage(sqs.for_create(None));
        assert!(
            err.contains("--partition-key-path is a kinesis destination's option, and --destination is sqs: give --destination kinesis"),
            "{err}"
        );
        sqs.partition_key_path = None;
        sqs.stream = Some("s".into());
        assert!(usage(sqs.for_create(None)).contains(
            "--stream is a redis or kinesis destination's option, and --destination is sqs"
        ));
        sqs.stream = None;
        sqs.destination_url = Some("https://x".into());
        assert!(usage(sqs.for_create(None)).contains(
            "--destination-url is a broker destination's option, and --destination is sqs: give --destination rabbitmq, nats or redis"
        ));

        let mut sns = args(Some(Kind::Sns));
        sns.credentials_name = Some("ops".into());
        assert!(usage(sns.for_create(None)).contains(
            "an sns destination needs --topic-arn, the topic's ARN (arn:aws:sns:REGION:ACCOUNT:NAME)"
        ));
        sns.topic_arn = Some("arn:aws:sns:us-east-1:123456789012:orders".into());
        assert!(usage(sns.for_create(None)).contains("an sns destination needs --region"));
        sns.region = Some("us-east-1".into());
        assert_eq!(
            sns.for_create(None).unwrap(),
            Change::Set(json!({"type": "sns",
                "topic_arn": "arn:aws:sns:us-east-1:123456789012:orders", "region": "us-east-1",
                "credentials": {"name": "ops"}}))
        );

        let mut kinesis = args(Some(Kind::Kinesis));
        kinesis.region = Some("eu-west-1".into());
        kinesis.credentials_name = Some("ops".into());
        assert!(
            usage(kinesis.for_create(None))
                .contains("a kinesis destination needs --stream, the data stream's name or ARN")
        );
        kinesis.stream = Some("orders".into());
        kinesis.partition_key_path = Some("/customer/id".into());
        assert_eq!(
            kinesis.for_create(None).unwrap(),
            Change::Set(
                json!({"type": "kinesis", "stream": "orders", "region": "eu-west-1",
                "partition_key_path": "/customer/id", "credentials": {"name": "ops"}})
            )
        );
        kinesis.message_group_path = Some("/a".into());
        assert!(usage(kinesis.for_create(None)).contains(
            "--message-group-path is an sqs or sns destination's option, and --destination is kinesis: give --destination sqs or sns"
        ));

        // The AWS options beside a broker or http, and a broker's beside AWS.
        let mut rabbit = args(Some(Kind::Rabbitmq));
        rabbit.region = Some("us-east-1".into());
        assert!(usage(rabbit.for_create(None)).contains(
            "--region is an AWS destination's option, and --destination is rabbitmq: give --destination sqs, sns or kinesis"
        ));
        let mut http = args(None);
        http.credentials_name = Some("ops".into());
        assert!(usage(http.for_create(Some("https://x"))).contains(
            "--credentials-name is a broker or AWS destination's option, and the destination is http (the default)"
        ));
        let mut keys = args(Some(Kind::Redis));
        keys.access_key_id = Some("AKIA".into());
        assert!(
            usage(keys.for_create(None)).contains("--access-key-id is an AWS destination's option")
        );
        let mut user = args(Some(Kind::Kinesis));
        user.broker_username = Some("u".into());
        assert!(
            usage(user.for_create(None))
                .contains("--broker-username is a broker destination's option")
        );
    }

    #[test]
    fn update_of_aws_kinds_merges_switches_and_replaces_credentials() {
        let stored = json!({"destination": {"type": "sqs",
            "queue_url": "https://sqs.us-east-1.amazonaws.com/123456789012/orders",
            "region": "us-east-1", "credentials": {"access_key_id": "AKIA1",
            "secret_access_key": "********", "session_token": "********"}}});
        let mut group = args(None);
        group.message_group_path = Some("/customer/id".into());
        assert_eq!(
            group.for_update(None, Some(&stored)).unwrap(),
            Change::Set(json!({"message_group_path": "/customer/id"}))
        );
        // New keys replace the stored ones, and their session token goes.
        let mut keys = args(None);
        keys.access_key_id = Some("AKIA2".into());
        keys.secret_access_key = Some("s2".into());
        assert_eq!(
            keys.for_update(None, Some(&stored)).unwrap(),
            Change::Set(json!({"credentials": {"access_key_id": "AKIA2",
                "secret_access_key": "s2", "session_token": null, "name": null}}))
        );
        let mut secret = args(None);
        secret.secret_access_key = Some("s3".into());
        assert_eq!(
            secret.for_update(None, Some(&stored)).unwrap(),
            Change::Set(json!({"credentials": {"secret_access_key": "s3", "name": null}}))
        );
        let mut named = args(None);
        named.credentials_name = Some("ops".into());
        assert_eq!(
            named.for_update(None, Some(&stored)).unwrap(),
            Change::Set(json!({"credentials": {"name": "ops", "access_key_id": null,
                "secret_access_key": null, "session_token": null}}))
        );
        let mut wrong = args(None);
        wrong.stream = Some("s".into());
        assert!(usage(wrong.for_update(None, Some(&stored))).contains(
            "--stream is a redis or kinesis destination's option, and this endpoint delivers to sqs"
        ));

        // sqs to kinesis: the keys stay; the queue goes; the region is given again.
        let mut kinesis = args(Some(Kind::Kinesis));
        kinesis.stream = Some("orders".into());
        assert!(
            usage(kinesis.for_update(None, Some(&stored)))
                .contains("a switch from sqs to kinesis destination needs --region")
        );
        kinesis.region = Some("us-east-1".into());
        assert_eq!(
            kinesis.for_update(None, Some(&stored)).unwrap(),
            Change::Set(
                json!({"type": "kinesis", "stream": "orders", "region": "us-east-1",
                "queue_url": null})
            )
        );
        // sqs to rabbitmq: AWS keys are no broker's credentials.
        let mut rabbit = args(Some(Kind::Rabbitmq));
        rabbit.destination_url = Some("amqp://h/%2f".into());
        rabbit.exchange = Some("e".into());
        assert_eq!(
            rabbit.for_update(None, Some(&stored)).unwrap(),
            Change::Set(
                json!({"type": "rabbitmq", "url": "amqp://h/%2f", "exchange": "e",
                "queue_url": null, "region": null, "credentials": null})
            )
        );

        // rabbitmq to sns: credentials of its own are needed; the broker's go.
        let broker = json!({"destination": {"type": "rabbitmq", "url": "amqp://h/%2f",
            "exchange": "e", "credentials": {"username": "u", "password": "********"}}});
        let mut sns = args(Some(Kind::Sns));
        sns.topic_arn = Some("arn:aws:sns:us-east-1:123456789012:orders".into());
        sns.region = Some("us-east-1".into());
        assert!(
            usage(sns.for_update(None, Some(&broker)))
                .contains("a switch from rabbitmq to sns destination needs credentials")
        );
        sns.access_key_id = Some("AKIA".into());
        sns.secret_access_key = Some("s".into());
        assert_eq!(
            sns.for_update(None, Some(&broker)).unwrap(),
            Change::Set(json!({"type": "sns",
                "topic_arn": "arn:aws:sns:us-east-1:123456789012:orders", "region": "us-east-1",
                "url": null, "exchange": null,
                "credentials": {"access_key_id": "AKIA", "secret_access_key": "s",
                    "session_token": null, "name": null, "username": null, "password": null}}))
        );
        let err = usage(sns.for_update(Some("https://x"), Some(&broker)));
        assert!(
            err.contains("an sns endpoint sends to its --topic-arn"),
            "{err}"
        );

        // A name replaces a stored token too.
        let nats = json!({"destination": {"type": "nats", "url": "nats://h:4222",
            "subject": "s", "credentials": {"token": "********"}}});
        assert_eq!(
            named.for_update(None, Some(&nats)).unwrap(),
            Change::Set(json!({"credentials": {"name": "ops", "username": null,
                "password": null, "token": null}}))
        );
    }
}
