//! `hookgate attempts list|show`: search a tenant's attempts by endpoint,
//! event, delivery, outcome, status class and time; show one with the request
//! headers it sent and the start of the answer.

use clap::Subcommand;
use http::Method;
use serde_json::Value;

use super::api_client::ApiRequest;
use super::error::CliError;
use super::table::{Table, cell, key_values};
use super::{PagedList, Session, Tenant};

/// Attempt subcommands.
#[derive(Subcommand, Debug)]
pub enum AttemptsCommand {
    /// List the tenant's attempts, newest first.
    #[command(after_help = super::EXIT_CODES)]
    List {
        #[command(flatten)]
        tenant: Tenant,
        /// Only this endpoint's (its id or uid).
        #[arg(long)]
        endpoint: Option<String>,
        /// Only attempts of this event's deliveries (its id or uid).
        #[arg(long)]
        event: Option<String>,
        /// Only this delivery's.
        #[arg(long)]
        delivery: Option<String>,
        /// Only those that ended so: delivered, retry or dead.
        #[arg(long, value_parser = ["delivered", "retry", "dead"])]
        outcome: Option<String>,
        /// Only those answered in this class: 2xx, 3xx, 4xx, 5xx, or transport
        /// (no answer).
        #[arg(long, value_parser = ["2xx", "3xx", "4xx", "5xx", "transport"])]
        status_class: Option<String>,
        #[command(flatten)]
        page: PagedList,
    },
    /// Show one attempt with the request headers it sent.
    #[command(after_help = super::EXIT_CODES)]
    Show {
        #[command(flatten)]
        tenant: Tenant,
        /// The attempt id (`atm_...`).
        id: String,
    },
}

/// Runs an attempt subcommand.
///
/// # Errors
/// Any [`CliError`] from the API.
pub(super) async fn run(s: &Session, command: AttemptsCommand) -> Result<(), CliError> {
    match command {
        AttemptsCommand::List {
            tenant,
            endpoint,
            event,
            delivery,
            outcome,
            status_class,
            page,
        } => {
            let req = ApiRequest::new(Method::GET, &["tenants", &tenant.tenant, "attempts"])
                .query("endpoint", endpoint)
                .query("event", event)
                .query("delivery", delivery)
                .query("outcome", outcome)
                .query("status_class", status_class);
            let reply = s.send(page.on(req)).await?;
            s.show(&reply, render_list);
        }
        AttemptsCommand::Show { tenant, id } => {
            let req = ApiRequest::new(Method::GET, &["tenants", &tenant.tenant, "attempts", &id]);
            let reply = s.send(req).await?;
            s.show(&reply, render_attempt);
        }
    }
    Ok(())
}

/// The answer as a short text: the status, or the transport error.
fn answer(a: &Value) -> String {
    match a["status"].as_u64() {
        Some(status) => status.to_string(),
        None => cell(&a["error_kind"]),
    }
}

fn render_list(v: &Value) -> String {
    let items = super::list_items(v);
    let mut out = if items.is_empty() {
        "no attempts\n".to_owned()
    } else {
        let mut table = Table::new(&[
            "ATTEMPT", "STARTED", "ENDPOINT", "EVENT", "ANSWER", "MS", "OUTCOME",
        ]);
        for a in items {
            table.row(vec![
                cell(&a["id"]),
                cell(&a["started_at"]),
                cell(&a["endpoint_id"]),
                cell(&a["event_id"]),
                answer(a),
                cell(&a["duration_ms"]),
                cell(&a["outcome"]),
            ]);
        }
        table.render()
    };
    out.push_str(&super::both_ways_footer(v, "attempts"));
    out
}

fn render_attempt(a: &Value) -> String {
    let mut out = key_values(&[
        ("attempt", cell(&a["id"])),
        ("delivery", cell(&a["delivery_id"])),
        ("endpoint", cell(&a["endpoint_id"])),
        (
            "event",
            format!("{} ({})", cell(&a["event_id"]), cell(&a["event_type"])),
        ),
        ("started", cell(&a["started_at"])),
        ("took", format!("{} ms", cell(&a["duration_ms"]))),
        ("answer", answer(a)),
        ("outcome", cell(&a["outcome"])),
        ("decided by", cell(&a["decided_by"])),
    ]);
    out.push_str("\nrequest headers:\n");
    let headers = a["request_headers"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    if headers.is_empty() {
        out.push_str("  (not recorded)\n");
    }
    for h in headers {
        out.push_str(&format!("  {}: {}\n", cell(&h["name"]), cell(&h["value"])));
    }
    out.push_str("\nresponse:\n");
    out.push_str(a["response_snippet"].as_str().unwrap_or_default());
    out.push('\n');
    out
}
