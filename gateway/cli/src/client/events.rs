//! `hookgate events send|list|show`: send an event (its payload passed through
//! byte for byte), list a tenant's events, and follow one, each delivery with
//! its attempt timeline.

use clap::Subcommand;
use http::Method;
use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::api_client::ApiRequest;
use super::error::CliError;
use super::input::json_arg;
use super::table::{Table, cell, key_values};
use super::timeline::{state_line, timeline};
use super::{PagedList, Session, Tenant, out};

/// How much of a payload the human view shows.
const PAYLOAD_PREVIEW_CHARS: usize = 200;

/// Event subcommands.
#[derive(Subcommand, Debug)]
pub enum EventsCommand {
    /// Send an event; it is fanned out to the tenant's matching endpoints.
    #[command(after_help = super::EXIT_CODES)]
    Send {
        #[command(flatten)]
        tenant: Tenant,
        /// The event type, e.g. `order.paid`.
        #[arg(long = "type", value_name = "TYPE")]
        event_type: String,
        /// The payload: JSON inline, @FILE, or @- for stdin. Sent exactly as written.
        #[arg(long, value_name = "JSON|@FILE")]
        data: String,
        /// Makes a retry of this command safe: the same key and body create nothing new.
        #[arg(long, value_name = "KEY")]
        idempotency_key: Option<String>,
    },
    /// List the tenant's events, newest first.
    #[command(after_help = super::EXIT_CODES)]
    List {
        #[command(flatten)]
        tenant: Tenant,
        /// Only these types: patterns, comma-separated (`order.*,refund.made`).
        #[arg(long = "type", value_name = "PATTERNS")]
        event_types: Option<String>,
        /// Only events on this channel.
        #[arg(long)]
        channel: Option<String>,
        /// Only events with this tag.
        #[arg(long)]
        tag: Option<String>,
        #[command(flatten)]
        page: PagedList,
    },
    /// Show an event and the timeline of each of its deliveries.
    #[command(after_help = super::EXIT_CODES)]
    Show {
        #[command(flatten)]
        tenant: Tenant,
        /// The event id (`evt_...`) or the uid it was sent with.
        id: String,
    },
}

#[derive(Serialize)]
struct IngestBody<'a> {
    event_type: &'a str,
    payload: &'a RawValue,
}

/// Runs an event subcommand.
///
/// # Errors
/// A usage error for unreadable or malformed `--data`, or any [`CliError`] from the API.
pub(super) async fn run(s: &Session, command: EventsCommand) -> Result<(), CliError> {
    match command {
        EventsCommand::List {
            tenant,
            event_types,
            channel,
            tag,
            page,
        } => {
            let req = ApiRequest::new(Method::GET, &["tenants", &tenant.tenant, "events"])
                .query("event_types", event_types)
                .query("channel", channel)
                .query("tag", tag);
            let reply = s.send(page.on(req)).await?;
            s.show(&reply, render_list);
        }
        EventsCommand::Send {
            tenant,
            event_type,
            data,
            idempotency_key,
        } => {
            let payload = json_arg("--data", &data)?;
            let body = serde_json::to_vec(&IngestBody {
                event_type: &event_type,
                payload: &payload,
            })
            .map_err(|e| CliError::Usage(format!("--data: {e}")))?;
            let req = ApiRequest::new(Method::POST, &["tenants", &tenant.tenant, "events"])
                .header("idempotency-key", idempotency_key.as_deref())
                .bytes(body, "application/json");
            let reply = s.send(req).await?;
            s.show(&reply, |v| render_accepted(v, &event_type));
        }
        EventsCommand::Show { tenant, id } => {
            let req = ApiRequest::new(Method::GET, &["tenants", &tenant.tenant, "events", &id]);
            let reply = s.send(req).await?;
            if s.json() {
                s.show(&reply, |_| String::new());
                return Ok(());
            }
            out(&render_event(&reply.json));
            for d in reply.json["deliveries"].as_array().into_iter().flatten() {
                let Some(dlv) = d["id"].as_str() else {
                    continue;
                };
                let req =
                    ApiRequest::new(Method::GET, &["tenants", &tenant.tenant, "deliveries", dlv]);
                let full = s.send(req).await?.json;
                out(&format!(
                    "\ndelivery {dlv} to {}: {}\n{}",
                    cell(&full["endpoint_id"]),
                    state_line(&full),
                    timeline(&full)
                ));
            }
        }
    }
    Ok(())
}

fn render_accepted(v: &Value, event_type: &str) -> String {
    let deliveries = v["deliveries"].as_array().map_or(&[][..], Vec::as_slice);
    let mut text = format!("accepted event {} ({event_type})\n", cell(&v["id"]));
    if deliveries.is_empty() {
        text.push_str("no enabled endpoint matches this event type: nothing will be delivered\n");
        return text;
    }
    let mut table = Table::new(&["DELIVERY", "ENDPOINT"]);
    for d in deliveries {
        table.row(vec![cell(&d["id"]), cell(&d["endpoint_id"])]);
    }
    text.push_str(&table.render());
    text
}

fn render_event(ev: &Value) -> String {
    let payload = ev["payload"].to_string();
    let mut preview: String = payload.chars().take(PAYLOAD_PREVIEW_CHARS).collect();
    if preview.len() < payload.len() {
        preview.push_str(" ...");
    }
    let count = ev["deliveries"].as_array().map_or(0, Vec::len);
    key_values(&[
        ("event", cell(&ev["id"])),
        ("type", cell(&ev["event_type"])),
        ("created", cell(&ev["created_at"])),
        ("payload", preview),
        ("deliveries", count.to_string()),
    ])
}

fn render_list(v: &Value) -> String {
    let items = super::list_items(v);
    let mut out = if items.is_empty() {
        "no events\n".to_owned()
    } else {
        let mut table = Table::new(&["EVENT", "TYPE", "UID", "CHANNELS", "DELIVERIES", "CREATED"]);
        for e in items {
            table.row(vec![
                cell(&e["id"]),
                cell(&e["event_type"]),
                cell(&e["uid"]),
                cell(&e["channels"]),
                cell(&e["deliveries"]),
                cell(&e["created_at"]),
            ]);
        }
        table.render()
    };
    out.push_str(&super::both_ways_footer(v, "events"));
    out
}
