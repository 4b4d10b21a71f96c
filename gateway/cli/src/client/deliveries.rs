//! `hookgate deliveries list|show` and the dead-letter queue, `hookgate dlq
//! list|replay|summary` (the DLQ is the deliveries whose state is `dead`). The
//! summary is one tenant's, or with the admin token and no `--tenant`, every tenant's.

use clap::{ArgGroup, Args, Subcommand};
use http::Method;
use serde_json::{Map, Value, json};

use super::api_client::ApiRequest;
use super::error::CliError;
use super::input::time_arg;
use super::table::{Table, cell};
use super::timeline::render_delivery;
use super::{Session, Tenant, list_items, next_page};

/// Delivery subcommands.
#[derive(Subcommand, Debug)]
pub enum DeliveriesCommand {
    /// List deliveries, newest first.
    #[command(after_help = super::EXIT_CODES)]
    List {
        #[command(flatten)]
        tenant: Tenant,
        /// Only deliveries in this state.
        #[arg(long, value_parser = ["pending", "in_flight", "succeeded", "dead"])]
        state: Option<String>,
        #[command(flatten)]
        filters: Filters,
    },
    /// Show one delivery with its attempt timeline.
    #[command(after_help = super::EXIT_CODES)]
    Show {
        #[command(flatten)]
        tenant: Tenant,
        /// The delivery id (`dlv_...`).
        id: String,
    },
}

/// Dead-letter queue subcommands.
#[derive(Subcommand, Debug)]
pub enum DlqCommand {
    /// List dead deliveries, newest first.
    #[command(after_help = super::EXIT_CODES)]
    List {
        #[command(flatten)]
        tenant: Tenant,
        #[command(flatten)]
        filters: Filters,
    },
    /// Replay one delivery (a new series of attempts), or every dead one with --all.
    #[command(after_help = super::EXIT_CODES)]
    #[command(group(ArgGroup::new("which").required(true).args(["id", "all"])))]
    Replay {
        #[command(flatten)]
        tenant: Tenant,
        /// The delivery id (`dlv_...`).
        #[arg(conflicts_with_all = ["endpoint", "event_type"])]
        id: Option<String>,
        /// Replay every dead delivery, narrowed by the options marked "With --all".
        #[arg(long)]
        all: bool,
        /// With --all: only deliveries to this endpoint.
        #[arg(long, value_name = "ENDPOINT_ID")]
        endpoint: Option<String>,
        /// With --all: only events of this type.
        #[arg(long, value_name = "TYPE")]
        event_type: Option<String>,
        /// With --all: only deliveries dead for this reason (`give_up`, ...).
        #[arg(long, value_name = "REASON", requires = "all")]
        dead_reason: Option<String>,
        /// With --all: only deliveries created at or after TIME, an RFC 3339 time
        /// (2024-05-01T12:00:00Z) or a duration meaning that long ago on this
        /// machine's clock (90s, 30m, 2h, 1d12h).
        #[arg(long, value_name = "TIME", requires = "all", value_parser = time_arg)]
        since: Option<String>,
        /// With --all: only deliveries created before TIME (the same forms as --since).
        #[arg(long, value_name = "TIME", requires = "all", value_parser = time_arg)]
        until: Option<String>,
        /// With --all: say how many would be replayed, and change nothing.
        #[arg(long, requires = "all")]
        dry_run: bool,
        /// Replay a delivery that already succeeded.
        #[arg(long, conflicts_with = "all")]
        force: bool,
    },
    /// Count dead deliveries by reason and endpoint: one tenant's, or without
    /// --tenant every tenant's, by tenant too (admin token).
    #[command(after_help = super::EXIT_CODES)]
    Summary {
        /// The tenant id; leave it out, with the admin token, to count every tenant's.
        #[arg(long, env = "HOOKGATE_TENANT")]
        tenant: Option<String>,
    },
}

/// List filters shared by `deliveries list` and `dlq list`.
#[derive(Args, Debug)]
pub struct Filters {
    /// Only deliveries to this endpoint.
    #[arg(long, value_name = "ENDPOINT_ID")]
    endpoint: Option<String>,
    /// Only events of this type.
    #[arg(long, value_name = "TYPE")]
    event_type: Option<String>,
    /// Only deliveries dead for this reason (`give_up`, `max_attempts`, ...).
    #[arg(long, value_name = "REASON")]
    dead_reason: Option<String>,
    /// Only deliveries created at or after TIME, an RFC 3339 time
    /// (2024-05-01T12:00:00Z) or a duration meaning that long ago on this
    /// machine's clock (90s, 30m, 2h, 1d12h).
    #[arg(long, value_name = "TIME", value_parser = time_arg)]
    since: Option<String>,
    /// Only deliveries created before TIME (the same forms as --since).
    #[arg(long, value_name = "TIME", value_parser = time_arg)]
    until: Option<String>,
    /// How many to show (1 to 250).
    #[arg(long)]
    limit: Option<u32>,
    /// Continue from a previous page.
    #[arg(long)]
    cursor: Option<String>,
}

fn list_request(tenant: &Tenant, state: Option<String>, f: Filters) -> ApiRequest {
    ApiRequest::new(Method::GET, &["tenants", &tenant.tenant, "deliveries"])
        .query("state", state)
        .query("endpoint_id", f.endpoint)
        .query("event_type", f.event_type)
        .query("dead_reason", f.dead_reason)
        .query("since", f.since)
        .query("until", f.until)
        .query("limit", f.limit)
        .query("cursor", f.cursor)
}

/// Runs a delivery subcommand.
///
/// # Errors
/// Any [`CliError`] from the API.
pub(super) async fn run(s: &Session, command: DeliveriesCommand) -> Result<(), CliError> {
    match command {
        DeliveriesCommand::List {
            tenant,
            state,
            filters,
        } => {
            let reply = s.send(list_request(&tenant, state, filters)).await?;
            s.show(&reply, |v| render_list(v, "no deliveries match"));
        }
        DeliveriesCommand::Show { tenant, id } => {
            let req = ApiRequest::new(Method::GET, &["tenants", &tenant.tenant, "deliveries", &id]);
            s.show(&s.send(req).await?, render_delivery);
        }
    }
    Ok(())
}

/// Runs a dead-letter queue subcommand.
///
/// # Errors
/// Any [`CliError`] from the API; "not supported yet" from a gateway without replay.
pub(super) async fn run_dlq(s: &Session, command: DlqCommand) -> Result<(), CliError> {
    match command {
        DlqCommand::List { tenant, filters } => {
            let reply = s
                .send(list_request(&tenant, Some("dead".into()), filters))
                .await?;
            s.show(&reply, |v| render_list(v, "the dead-letter queue is empty"));
        }
        DlqCommand::Replay {
            tenant,
            id: Some(id),
            force,
            ..
        } => {
            let body = if force {
                json!({"force": true})
            } else {
                json!({})
            };
            let req = ApiRequest::new(
                Method::POST,
                &["tenants", &tenant.tenant, "deliveries", &id, "replay"],
            )
            .json(&body);
            let reply = s.send(req).await.map_err(|e| e.feature("replay"))?;
            s.show(&reply, |v| match v["state"].as_str() {
                Some(_) => format!(
                    "replayed delivery {id}: {}\n",
                    super::timeline::state_line(v)
                ),
                None => format!("replayed delivery {id}\n"),
            });
        }
        DlqCommand::Replay {
            tenant,
            endpoint,
            event_type,
            dead_reason,
            since,
            until,
            dry_run,
            ..
        } => {
            let mut body = Map::new();
            body.insert("state".into(), json!("dead"));
            let range = time_range(since.as_deref(), until.as_deref());
            let fields = [
                ("endpoint_id", endpoint),
                ("event_type", event_type),
                ("dead_reason", dead_reason),
                ("since", since),
                ("until", until),
            ];
            for (name, value) in fields {
                if let Some(v) = value {
                    body.insert(name.into(), json!(v));
                }
            }
            if dry_run {
                body.insert("dry_run".into(), json!(true));
            }
            let req = ApiRequest::new(Method::POST, &["tenants", &tenant.tenant, "replay"])
                .json(&Value::Object(body));
            let reply = s.send(req).await.map_err(|e| e.feature("replay"))?;
            s.show(&reply, |v| {
                let verb = if v["dry_run"] == true {
                    "would replay"
                } else {
                    "replayed"
                };
                let mut out = match v["replayed"].as_u64() {
                    Some(1) => format!("{verb} 1 dead delivery\n"),
                    _ => format!("{verb} {} dead deliveries\n", cell(&v["replayed"])),
                };
                out.push_str(&range);
                for b in v["open_breakers"].as_array().into_iter().flatten() {
                    out.push_str(&format!(
                        "endpoint {}: breaker {} until {}; its probe goes now, the rest once it succeeds\n",
                        cell(&b["endpoint_id"]),
                        cell(&b["state"]),
                        cell(&b["open_until"]),
                    ));
                }
                out
            });
        }
        DlqCommand::Summary {
            tenant: Some(tenant),
        } => {
            let req = ApiRequest::new(Method::GET, &["tenants", &tenant, "dlq", "summary"]);
            let reply = s.send(req).await.map_err(|e| e.feature("dlq summary"))?;
            s.show(&reply, render_summary);
        }
        DlqCommand::Summary { tenant: None } => {
            let req = ApiRequest::new(Method::GET, &["dlq", "summary"]);
            let reply = s.send(req).await.map_err(|e| match e {
                // Tokens do not say whose they are, so only the gateway can tell a
                // tenant key from the admin token; what fixes its 403 is the flag.
                CliError::Api(f) if f.status == 403 => CliError::Usage(
                    "dlq summary without --tenant counts every tenant's dead deliveries and \
                     needs the admin token; with a tenant key, give --tenant (or set HOOKGATE_TENANT)"
                        .into(),
                ),
                other => other.feature("dlq summary"),
            })?;
            s.show(&reply, render_summary);
        }
    }
    Ok(())
}

/// The line under a bulk replay's count that says which creation times it took,
/// durations already turned into times; empty without a range.
fn time_range(since: Option<&str>, until: Option<&str>) -> String {
    match (since, until) {
        (None, None) => String::new(),
        (Some(s), None) => format!("created at or after {s}\n"),
        (None, Some(u)) => format!("created before {u}\n"),
        (Some(s), Some(u)) => format!("created at or after {s} and before {u}\n"),
    }
}

/// `dlq summary`: the total, then the reasons, tenants (across tenants only) and
/// endpoints that have any.
fn render_summary(v: &Value) -> String {
    let mut out = format!("dead: {}\n", cell(&v["dead"]));
    if v["complete"] == false {
        out.push_str(&format!(
            "(counted from the newest {} deliveries only)\n",
            cell(&v["scanned"])
        ));
    }
    let mut reasons = Table::new(&["REASON", "DEAD"]);
    for (reason, n) in v["by_reason"].as_object().into_iter().flatten() {
        if n.as_u64().is_some_and(|n| n > 0) {
            reasons.row(vec![reason.clone(), cell(n)]);
        }
    }
    out.push_str(&reasons.render());
    // Only the admin's summary across tenants has `by_tenant`; it also names each
    // endpoint's tenant, which the admin needs to act on that endpoint.
    let across = v["by_tenant"].as_array();
    if let Some(tenants) = across {
        let mut table = Table::new(&["TENANT", "DEAD"]);
        for t in tenants {
            table.row(vec![cell(&t["tenant_id"]), cell(&t["dead"])]);
        }
        out.push_str(&table.render());
    }
    let mut endpoints = match across {
        Some(_) => Table::new(&["TENANT", "ENDPOINT", "DEAD"]),
        None => Table::new(&["ENDPOINT", "DEAD"]),
    };
    for e in v["by_endpoint"].as_array().into_iter().flatten() {
        let mut row = vec![cell(&e["endpoint_id"]), cell(&e["dead"])];
        if across.is_some() {
            row.insert(0, cell(&e["tenant_id"]));
        }
        endpoints.row(row);
    }
    out + &endpoints.render()
}

fn render_list(v: &Value, empty: &str) -> String {
    let items = list_items(v);
    if items.is_empty() {
        return format!("{empty}\n");
    }
    let mut table = Table::new(&[
        "DELIVERY",
        "EVENT TYPE",
        "ENDPOINT",
        "STATE",
        "ATTEMPTS",
        "LAST",
        "NEXT ATTEMPT",
    ]);
    for d in items {
        let state = match (d["state"].as_str(), d["dead_reason"].as_str()) {
            (Some("dead"), Some(reason)) => format!("dead ({reason})"),
            _ => cell(&d["state"]),
        };
        let max = d["max_attempts"]
            .as_u64()
            .map_or_else(|| "?".to_owned(), |m| m.to_string());
        let last = match (&d["last_status"], &d["last_error"]) {
            (Value::Number(n), _) => n.to_string(),
            (_, e) => cell(e),
        };
        table.row(vec![
            cell(&d["id"]),
            cell(&d["event_type"]),
            cell(&d["endpoint_id"]),
            state,
            format!("{} of {max}", cell(&d["attempts"])),
            last,
            cell(&d["next_attempt_at"]),
        ]);
    }
    table.render() + &next_page(v)
}
