//! `hookgate endpoints ...`: a tenant's endpoints, created (with a signing secret
//! of the gateway's or the tenant's own), listed, shown, changed with a JSON merge
//! patch, deleted, their signing secrets, recovery tasks and delivery stats.
//!
//! The endpoint's own address is `--endpoint-url`: `--url` is the gateway's. An
//! endpoint that publishes to a broker or an AWS service instead takes
//! `--destination KIND` and that kind's options (`endpoint_destination.rs`).

use clap::{ArgAction, Args, Subcommand};
use http::Method;
use serde_json::{Map, Value, json};

use super::api_client::ApiRequest;
use super::endpoint_destination::{Change, DestinationArgs};
use super::endpoint_stats::render_stats;
use super::endpoint_view::{render_endpoint, render_list, render_secrets};
use super::error::CliError;
use super::input::{json_value_arg, pairs_arg, time_arg};
use super::table::cell;
use super::{Session, Tenant};

/// Endpoint subcommands.
#[derive(Subcommand, Debug)]
pub enum EndpointsCommand {
    /// Create an endpoint; its signing secret is printed with it.
    #[command(after_help = super::EXIT_CODES)]
    Create {
        #[command(flatten)]
        tenant: Tenant,
        /// Where deliveries go (http or https); an http endpoint needs it, a
        /// broker destination takes --destination-url instead, and an AWS one
        /// its queue, topic or stream (--aws-endpoint-url overrides the AWS
        /// endpoint).
        #[arg(long, value_name = "URL")]
        endpoint_url: Option<String>,
        #[command(flatten)]
        destination: Box<DestinationArgs>,
        /// Sign with this secret of your own instead of a generated one: `whsec_` (which
        /// may be left out) and padded standard base64 of 24 to 64 bytes. The gateway checks it.
        #[arg(long, value_name = "whsec_...")]
        secret: Option<String>,
        #[command(flatten)]
        fields: EndpointFields,
    },
    /// List a tenant's endpoints, newest first.
    #[command(after_help = super::EXIT_CODES)]
    List {
        #[command(flatten)]
        tenant: Tenant,
        /// How many to show (1 to 250).
        #[arg(long)]
        limit: Option<u32>,
        /// Continue from a previous page.
        #[arg(long)]
        cursor: Option<String>,
    },
    /// Show one endpoint, with its effective policy and breaker.
    #[command(after_help = super::EXIT_CODES)]
    Show {
        #[command(flatten)]
        tenant: Tenant,
        /// The endpoint id (`ep_...`).
        id: String,
    },
    /// Change an endpoint: only the fields given change (a JSON merge patch).
    #[command(after_help = super::EXIT_CODES)]
    Update {
        #[command(flatten)]
        tenant: Tenant,
        /// The endpoint id (`ep_...`).
        id: String,
        /// Where deliveries go (http or https); with `--destination http`, back
        /// to http from a broker.
        #[arg(long, value_name = "URL")]
        endpoint_url: Option<String>,
        #[command(flatten)]
        destination: Box<DestinationArgs>,
        #[command(flatten)]
        fields: EndpointFields,
        /// Pause (true) or resume (false) deliveries to the endpoint.
        #[arg(long, action = ArgAction::Set, value_name = "true|false")]
        disabled: Option<bool>,
    },
    /// Delete an endpoint; its pending deliveries become dead (`endpoint_deleted`).
    #[command(after_help = super::EXIT_CODES)]
    Delete {
        #[command(flatten)]
        tenant: Tenant,
        /// The endpoint id (`ep_...`).
        id: String,
    },
    /// Send a catalog type's example to this endpoint, as a test event.
    #[command(after_help = super::EXIT_CODES)]
    SendExample {
        #[command(flatten)]
        tenant: Tenant,
        /// The endpoint id (`ep_...`) or uid.
        id: String,
        /// A type of the event-type catalog that has an example.
        #[arg(long)]
        event_type: String,
    },
    /// Show the endpoint's signing secrets (two during a rotation's grace period).
    #[command(after_help = super::EXIT_CODES)]
    Secret {
        #[command(flatten)]
        tenant: Tenant,
        /// The endpoint id (`ep_...`).
        id: String,
    },
    /// Start signing with a new secret; the old one keeps signing for 24 h.
    #[command(after_help = super::EXIT_CODES)]
    RotateSecret {
        #[command(flatten)]
        tenant: Tenant,
        /// The endpoint id (`ep_...`).
        id: String,
        /// Sign with this secret of your own instead of a generated one: `whsec_` (which
        /// may be left out) and padded standard base64 of 24 to 64 bytes. The gateway checks it.
        #[arg(long, value_name = "whsec_...")]
        secret: Option<String>,
    },
    /// Close the endpoint's circuit breaker now: its pending deliveries go out at
    /// once, and the failure streak and cool-down ladder start over.
    #[command(after_help = super::EXIT_CODES)]
    ResetBreaker {
        #[command(flatten)]
        tenant: Tenant,
        /// The endpoint id (`ep_...`).
        id: String,
    },
    /// Replay every dead delivery of the endpoint made since TIME, as a
    /// background task (follow it with `hookgate tasks show`).
    #[command(after_help = super::EXIT_CODES)]
    Recover {
        #[command(flatten)]
        tenant: Tenant,
        /// The endpoint id (`ep_...`) or uid.
        id: String,
        #[command(flatten)]
        range: Since,
    },
    /// Give the endpoint a delivery of every event since TIME that reaches it
    /// now and has none to it (it was created or subscribed later), as a
    /// background task.
    #[command(after_help = super::EXIT_CODES)]
    ReplayMissing {
        #[command(flatten)]
        tenant: Tenant,
        /// The endpoint id (`ep_...`) or uid.
        id: String,
        #[command(flatten)]
        range: Since,
    },
    /// Show the endpoint's delivery stats: its pending and dead deliveries, the
    /// attempts over a time range (the last day by default) with their latency,
    /// and the latest buckets that had attempts.
    #[command(after_help = super::EXIT_CODES)]
    Stats {
        #[command(flatten)]
        tenant: Tenant,
        /// The endpoint id (`ep_...`) or uid.
        id: String,
        /// From TIME: an RFC 3339 time or a duration meaning that long ago (2h,
        /// 1d); a day before --until when absent.
        #[arg(long, value_name = "TIME", value_parser = time_arg)]
        since: Option<String>,
        /// Up to TIME (the same forms); now when absent.
        #[arg(long, value_name = "TIME", value_parser = time_arg)]
        until: Option<String>,
        /// How many of the latest buckets with attempts to list.
        #[arg(long, value_name = "N", default_value_t = 12)]
        buckets: usize,
    },
}

/// The time range of a recovery.
#[derive(Args, Debug)]
pub struct Since {
    /// From TIME: an RFC 3339 time or a duration meaning that long ago (2h, 1d).
    #[arg(long, value_name = "TIME", value_parser = time_arg)]
    since: String,
    /// Up to TIME (the same forms); now when absent.
    #[arg(long, value_name = "TIME", value_parser = time_arg)]
    until: Option<String>,
}

/// The endpoint fields shared by `create` and `update`.
#[derive(Args, Debug)]
pub struct EndpointFields {
    /// An event-type pattern to receive, e.g. `order.*`; repeat for several (default `*`).
    #[arg(long = "event-type", value_name = "PATTERN")]
    event_types: Vec<String>,
    /// A description for people.
    #[arg(long)]
    description: Option<String>,
    /// The retry policy as JSON or @FILE, e.g. '{"preset":"svix"}'; `null` resets it on update.
    #[arg(long, value_name = "JSON|@FILE")]
    policy: Option<String>,
    /// At most this many requests in flight to the endpoint (default 16).
    #[arg(long, value_name = "N")]
    max_in_flight: Option<u32>,
    /// Each request's timeout in milliseconds (default 15000).
    #[arg(long, value_name = "N")]
    timeout_ms: Option<u64>,
    /// At most this many requests per second.
    #[arg(long, value_name = "PER_SECOND")]
    rate_limit: Option<u32>,
    /// A header sent with every request, e.g. `X-Api-Key=k-123`; repeat for several.
    /// On update, the headers not named stay as they are.
    #[arg(long = "header", value_name = "NAME=VALUE")]
    headers: Vec<String>,
    /// A header whose value is a secret, shown masked from then on; repeat for several.
    #[arg(long = "sensitive-header", value_name = "NAME")]
    sensitive_headers: Vec<String>,
    /// On update: a header to stop sending; repeat for several.
    #[arg(long = "remove-header", value_name = "NAME")]
    removed_headers: Vec<String>,
    /// Sign with this scheme: `v1` (HMAC-SHA256, the `whsec_` secret) or `v1a`
    /// (ed25519; receivers verify with the `whpk_` key `secret` shows); repeat
    /// for both (default `v1`).
    #[arg(long = "signature-scheme", value_name = "SCHEME", value_parser = ["v1", "v1a"])]
    signature_schemes: Vec<String>,
    /// Send the id, timestamp and signature as `webhook-*` (the default),
    /// `svix-*` (for receivers built for Svix), or both.
    #[arg(long = "signature-headers", value_name = "SET", value_parser = ["webhook", "svix", "both"])]
    signature_headers: Option<String>,
}

impl EndpointFields {
    /// Adds the given fields to a create body or a merge patch.
    fn add_to(self, body: &mut Map<String, Value>) -> Result<(), CliError> {
        if !self.event_types.is_empty() {
            body.insert("event_types".into(), json!(self.event_types));
        }
        if let Some(d) = self.description {
            body.insert("description".into(), json!(d));
        }
        if let Some(p) = self.policy {
            body.insert("policy".into(), json_value_arg("--policy", &p)?);
        }
        if let Some(n) = self.max_in_flight {
            body.insert("max_in_flight".into(), json!(n));
        }
        if let Some(n) = self.timeout_ms {
            body.insert("timeout_ms".into(), json!(n));
        }
        if let Some(n) = self.rate_limit {
            body.insert("rate_limit_per_s".into(), json!(n));
        }
        if let Some(headers) = pairs_arg("--header", &self.headers, &self.removed_headers)? {
            body.insert("headers".into(), Value::Object(headers));
        }
        if !self.sensitive_headers.is_empty() {
            body.insert("sensitive_headers".into(), json!(self.sensitive_headers));
        }
        // On update, a part not given keeps its stored value (a merge patch).
        let mut signature = Map::new();
        if !self.signature_schemes.is_empty() {
            signature.insert("schemes".into(), json!(self.signature_schemes));
        }
        if let Some(set) = self.signature_headers {
            signature.insert("headers".into(), json!(set));
        }
        if !signature.is_empty() {
            body.insert("signature".into(), Value::Object(signature));
        }
        Ok(())
    }
}

/// Runs an endpoint subcommand.
///
/// # Errors
/// A usage error for a bad `--policy` or destination option, or any
/// [`CliError`] from the API.
pub(super) async fn run(s: &Session, command: EndpointsCommand) -> Result<(), CliError> {
    match command {
        EndpointsCommand::Create {
            tenant,
            endpoint_url,
            destination,
            secret,
            fields,
        } => {
            let mut body = Map::new();
            if let Change::Set(d) = destination.for_create(endpoint_url.as_deref())? {
                body.insert("destination".into(), d);
            }
            if let Some(u) = endpoint_url {
                body.insert("url".into(), json!(u));
            }
            if let Some(secret) = secret {
                body.insert("secret".into(), json!(secret));
            }
            fields.add_to(&mut body)?;
            let req = ApiRequest::new(Method::POST, &["tenants", &tenant.tenant, "endpoints"])
                .json(&Value::Object(body));
            let reply = s.send(req).await?;
            s.show(&reply, |v| {
                let public = v["public_key"]
                    .as_str()
                    .map(|k| format!("public key (v1a): {k}\n"))
                    .unwrap_or_default();
                format!(
                    "created endpoint {}\nsigning secret: {}\n{public}\n{}",
                    cell(&v["id"]),
                    cell(&v["secret"]),
                    render_endpoint(v)
                )
            });
        }
        EndpointsCommand::List {
            tenant,
            limit,
            cursor,
        } => {
            let req = ApiRequest::new(Method::GET, &["tenants", &tenant.tenant, "endpoints"])
                .query("limit", limit)
                .query("cursor", cursor);
            s.show(&s.send(req).await?, render_list);
        }
        EndpointsCommand::Show { tenant, id } => {
            let reply = s.send(one(Method::GET, &tenant, &id, None)).await?;
            s.show(&reply, render_endpoint);
        }
        EndpointsCommand::Update {
            tenant,
            id,
            endpoint_url,
            destination,
            fields,
            disabled,
        } => {
            let mut patch = Map::new();
            destination.check_chosen(endpoint_url.as_deref())?;
            // The kind the endpoint delivers to decides what the options mean.
            let current = if destination.reads_current() {
                Some(s.send(one(Method::GET, &tenant, &id, None)).await?.json)
            } else {
                None
            };
            let change = destination.for_update(endpoint_url.as_deref(), current.as_ref())?;
            if let Change::Set(d) = change {
                patch.insert("destination".into(), d);
            }
            if let Some(u) = endpoint_url {
                patch.insert("url".into(), json!(u));
            }
            fields.add_to(&mut patch)?;
            if let Some(d) = disabled {
                patch.insert("disabled".into(), json!(d));
            }
            if patch.is_empty() {
                return Err(CliError::Usage(
                    "nothing to change: give at least one field, e.g. --description or --disabled true"
                        .into(),
                ));
            }
            let req = one(Method::PATCH, &tenant, &id, None).bytes(
                Value::Object(patch).to_string().into_bytes(),
                "application/merge-patch+json",
            );
            let reply = s.send(req).await?;
            s.show(&reply, |v| {
                format!(
                    "updated endpoint {}\n\n{}",
                    cell(&v["id"]),
                    render_endpoint(v)
                )
            });
        }
        EndpointsCommand::Delete { tenant, id } => {
            let reply = s.send(one(Method::DELETE, &tenant, &id, None)).await?;
            s.show(&reply, |_| {
                format!("deleted endpoint {id}; its pending deliveries are now dead (endpoint_deleted)\n")
            });
        }
        EndpointsCommand::SendExample {
            tenant,
            id,
            event_type,
        } => {
            let body = json!({"event_type": event_type});
            let req = one(Method::POST, &tenant, &id, Some("send-example")).json(&body);
            let reply = s.send(req).await?;
            s.show(&reply, |v| {
                format!(
                    "sent the example of {event_type} to endpoint {id} as a test: event {}, delivery {}\n",
                    cell(&v["id"]),
                    cell(&v["deliveries"][0]["id"])
                )
            });
        }
        EndpointsCommand::Secret { tenant, id } => {
            let reply = s
                .send(one(Method::GET, &tenant, &id, Some("secret")))
                .await?;
            s.show(&reply, render_secrets);
        }
        EndpointsCommand::RotateSecret { tenant, id, secret } => {
            let mut req = one(Method::POST, &tenant, &id, Some("rotate-secret"));
            if let Some(secret) = secret {
                req = req.json(&json!({"secret": secret}));
            }
            let reply = s.send(req).await?;
            s.show(&reply, |v| {
                format!(
                    "rotated: new deliveries are signed with the new secret, and with the old ones until they expire\n\n{}",
                    render_secrets(v)
                )
            });
        }
        EndpointsCommand::Recover { tenant, id, range } => {
            start_recovery(s, &tenant, &id, "recover", range).await?;
        }
        EndpointsCommand::ReplayMissing { tenant, id, range } => {
            start_recovery(s, &tenant, &id, "replay-missing", range).await?;
        }
        EndpointsCommand::Stats {
            tenant,
            id,
            since,
            until,
            buckets,
        } => {
            let req = one(Method::GET, &tenant, &id, Some("stats"))
                .query("since", since)
                .query("until", until);
            let reply = s.send(req).await?;
            s.show(&reply, |v| render_stats(v, buckets));
        }
        EndpointsCommand::ResetBreaker { tenant, id } => {
            let segments = [
                "tenants",
                &tenant.tenant,
                "endpoints",
                &id,
                "breaker",
                "reset",
            ];
            let reply = s.send(ApiRequest::new(Method::POST, &segments)).await?;
            s.show(&reply, |v| {
                format!(
                    "breaker closed: pending deliveries go out now\n\n{}",
                    render_endpoint(v)
                )
            });
        }
    }
    Ok(())
}

/// A request for one endpoint, or one of its sub-resources.
fn one(method: Method, tenant: &Tenant, id: &str, sub: Option<&str>) -> ApiRequest {
    let mut segments = vec!["tenants", tenant.tenant.as_str(), "endpoints", id];
    segments.extend(sub);
    ApiRequest::new(method, &segments)
}

/// Starts a recovery task of endpoint `id` and says how to follow it.
async fn start_recovery(
    s: &Session,
    tenant: &Tenant,
    id: &str,
    route: &str,
    range: Since,
) -> Result<(), CliError> {
    let body = json!({"since": range.since, "until": range.until});
    let segments = ["tenants", &tenant.tenant, "endpoints", id, route];
    let reply = s
        .send(ApiRequest::new(Method::POST, &segments).json(&body))
        .await?;
    s.show(&reply, |v| {
        format!(
            "started {} task {}\nfollow it with: hookgate tasks show {} --tenant {}\n",
            cell(&v["kind"]),
            cell(&v["id"]),
            cell(&v["id"]),
            cell(&v["tenant_id"]),
        )
    });
    Ok(())
}
