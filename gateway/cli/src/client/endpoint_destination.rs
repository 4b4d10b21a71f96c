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
}

impl Kind {
    /// The API's name of the kind (`destination.type`).
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Self::Http => "http",
            Self::Rabbitmq => "rabbitmq",
            Self::Nats => "nats",
            Self::Redis => "redis",
        }
    }

    fn from_api(name: &str) -> Option<Self> {
        Self::value_variants()
            .iter()
            .copied()
            .find(|k| k.as_str() == name)
    }

    /// The flag and API field a broker kind cannot go without: its target.
    fn target(self) -> Option<(&'static str, &'static str)> {
        match self {
            Self::Http => None,
            Self::Rabbitmq => Some(("--exchange", "exchange")),
            Self::Nats => Some(("--subject", "subject")),
            Self::Redis => Some(("--stream", "stream")),
        }
    }
}

/// The destination options shared by `create` and `update`.
#[derive(Args, Debug, Default)]
pub struct DestinationArgs {
    /// Where deliveries go: http (a POST to --endpoint-url, the default), or a
    /// broker the tenant runs: rabbitmq, nats (JetStream) or redis (a stream).
    #[arg(long = "destination", value_enum, value_name = "KIND")]
    kind: Option<Kind>,
    /// The broker's address, without credentials: amqp://host:5672/%2f,
    /// nats://host:4222 or redis://host:6379/0 (amqps, tls, rediss for TLS).
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
    /// redis: the stream's key.
    #[arg(long, value_name = "KEY")]
    stream: Option<String>,
    /// redis: trim the stream to about N entries on each add (MAXLEN ~ N).
    #[arg(long, value_name = "N")]
    max_len: Option<u64>,
    /// The broker user to connect as.
    #[arg(long, value_name = "NAME", conflicts_with = "credentials_name")]
    broker_username: Option<String>,
    /// The broker user's password; never shown again (views mask it). Keep it
    /// out of the shell's history with --destination-json @FILE.
    #[arg(long, value_name = "PASSWORD", conflicts_with = "credentials_name")]
    broker_password: Option<String>,
    /// nats: a token to connect with, instead of a username and password.
    #[arg(long, value_name = "TOKEN", conflicts_with_all = ["credentials_name", "broker_username", "broker_password"])]
    broker_token: Option<String>,
    /// Credentials the operator named in the gateway's config
    /// ([destinations.credentials.NAME]), instead of giving them here.
    #[arg(long, value_name = "NAME")]
    credentials_name: Option<String>,
    /// The whole destination as JSON or @FILE, as the API takes it, e.g.
    /// '{"type":"nats","url":"nats://host:4222","subject":"orders"}'; on
    /// update, merged into the stored one.
    #[arg(long, value_name = "JSON|@FILE", conflicts_with_all = [
        "kind", "destination_url", "exchange", "routing_key", "subject", "stream", "max_len",
        "broker_username", "broker_password", "broker_token", "credentials_name",
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
    /// The options given, each with the kind it belongs to (none: any broker).
    fn given(&self) -> Vec<(&'static str, Option<Kind>)> {
        let flags = [
            ("--destination-url", None, self.destination_url.is_some()),
            ("--exchange", Some(Kind::Rabbitmq), self.exchange.is_some()),
            (
                "--routing-key",
                Some(Kind::Rabbitmq),
                self.routing_key.is_some(),
            ),
            ("--subject", Some(Kind::Nats), self.subject.is_some()),
            (
                "--broker-token",
                Some(Kind::Nats),
                self.broker_token.is_some(),
            ),
            ("--stream", Some(Kind::Redis), self.stream.is_some()),
            ("--max-len", Some(Kind::Redis), self.max_len.is_some()),
            ("--broker-username", None, self.broker_username.is_some()),
            ("--broker-password", None, self.broker_password.is_some()),
            ("--credentials-name", None, self.credentials_name.is_some()),
        ];
        flags
            .into_iter()
            .filter(|(_, _, given)| *given)
            .map(|(flag, kind, _)| (flag, kind))
            .collect()
    }

    /// Refuses an option that `kind` does not take; `chosen` says where the
    /// kind comes from, for the message.
    fn check_belongs(&self, kind: Kind, chosen: &str) -> Result<(), CliError> {
        for (flag, owner) in self.given() {
            let fits = match owner {
                Some(owner) => owner == kind,
                None => kind != Kind::Http,
            };
            if fits {
                continue;
            }
            let whose = owner.map_or("a broker destination's", |k| match k {
                Kind::Rabbitmq => "a rabbitmq destination's",
                Kind::Nats => "a nats destination's",
                Kind::Redis => "a redis destination's",
                Kind::Http => "an http destination's",
            });
            let hint = match owner {
                Some(owner) => format!("give --destination {}", owner.as_str()),
                None => "give --destination rabbitmq, nats or redis".to_owned(),
            };
            return Err(CliError::Usage(format!(
                "{flag} is {whose} option, and {chosen}: {hint}"
            )));
        }
        Ok(())
    }

    /// The settings given as flags, as the API names them (no `type`).
    fn settings(&self, update: bool) -> Map<String, Value> {
        let mut map = Map::new();
        for (field, value) in [
            ("url", &self.destination_url),
            ("exchange", &self.exchange),
            ("routing_key", &self.routing_key),
            ("subject", &self.subject),
            ("stream", &self.stream),
        ] {
            if let Some(v) = value {
                map.insert(field.into(), json!(v));
            }
        }
        if let Some(n) = self.max_len {
            map.insert("max_len".into(), json!(n));
        }
        if let Some(c) = self.credentials(update) {
            map.insert("credentials".into(), Value::Object(c));
        }
        map
    }

    /// The credentials given; on update the forms not given are set to null,
    /// so a name replaces a stored username and password, and the reverse.
    fn credentials(&self, update: bool) -> Option<Map<String, Value>> {
        let given = [
            ("name", &self.credentials_name),
            ("username", &self.broker_username),
            ("password", &self.broker_password),
            ("token", &self.broker_token),
        ];
        if given.iter().all(|(_, v)| v.is_none()) {
            return None;
        }
        let named = self.credentials_name.is_some();
        let token = self.broker_token.is_some();
        let mut map = Map::new();
        for (field, value) in given {
            match value {
                Some(v) => {
                    map.insert(field.into(), json!(v));
                }
                // Another form of credentials than the one given is dropped;
                // a password given alone keeps the stored username.
                None if update => {
                    let other_form = match field {
                        "name" => true,
                        "token" => !named,
                        _ => named || token,
                    };
                    if other_form {
                        map.insert(field.into(), Value::Null);
                    }
                }
                None => {}
            }
        }
        Some(map)
    }

    /// The destination of a new endpoint, checked against `endpoint_url`:
    /// http needs it, a broker refuses it.
    ///
    /// # Errors
    /// [`CliError::Usage`] for an option of another kind, a missing or
    /// refused URL, a broker without its address or target, or bad JSON.
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
        self.needs_address(kind, "a")?;
        let mut destination = Map::new();
        destination.insert("type".into(), json!(kind.as_str()));
        destination.extend(self.settings(false));
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
    /// [`CliError::Usage`] for such an option, or `--endpoint-url` with a broker.
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
    /// read when [`Self::reads_current`]) and the options given: the kind's settings; a switch to another kind
    /// drops the old kind's settings; `--destination http` is null.
    ///
    /// # Errors
    /// As [`Self::for_create`], and a switch of kind without the new kind's
    /// address and target.
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
        let mut patch = Map::new();
        if kind != stored {
            self.needs_address(kind, &format!("a switch from {} to", stored.as_str()))?;
            patch.insert("type".into(), json!(kind.as_str()));
            // What only the old kind takes goes; credentials stay unless given.
            if let Some(old) = current["destination"].as_object() {
                for key in old.keys() {
                    if !matches!(key.as_str(), "type" | "url" | "credentials") {
                        patch.insert(key.clone(), Value::Null);
                    }
                }
            }
        }
        patch.extend(self.settings(true));
        if patch.is_empty() {
            return Ok(Change::None);
        }
        Ok(Change::Set(Value::Object(patch)))
    }

    /// A broker kind's address and target, which `what` (a new endpoint, a
    /// switch of kind) cannot go without.
    fn needs_address(&self, kind: Kind, what: &str) -> Result<(), CliError> {
        let example = match kind {
            Kind::Rabbitmq => "amqp://host:5672/%2f",
            Kind::Nats => "nats://host:4222",
            _ => "redis://host:6379/0",
        };
        if self.destination_url.is_none() {
            return Err(CliError::Usage(format!(
                "{what} {} destination needs --destination-url, the broker's address (e.g. {example})",
                kind.as_str()
            )));
        }
        let present = match kind {
            Kind::Rabbitmq => self.exchange.is_some(),
            Kind::Nats => self.subject.is_some(),
            _ => self.stream.is_some(),
        };
        match kind.target() {
            Some((flag, field)) if !present => Err(CliError::Usage(format!(
                "{what} {} destination needs {flag}, the {field} to publish to{}",
                kind.as_str(),
                if kind == Kind::Rabbitmq {
                    " ('' for the default exchange)"
                } else {
                    ""
                }
            ))),
            _ => Ok(()),
        }
    }
}

/// `--endpoint-url` is where an http endpoint posts, and nothing for a broker.
fn url_fits(kind: &str, http: bool, endpoint_url: Option<&str>) -> Result<(), CliError> {
    match (http, endpoint_url) {
        (true, None) => Err(CliError::Usage(
            "give --endpoint-url URL, where deliveries go, or a broker with \
             --destination rabbitmq|nats|redis and --destination-url"
                .into(),
        )),
        (false, Some(_)) => Err(CliError::Usage(format!(
            "--endpoint-url is for http endpoints; a {kind} endpoint's address is its --destination-url"
        ))),
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
}
