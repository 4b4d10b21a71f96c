//! `hookgate portal-sessions create|revoke`: mint a portal session for one of a
//! tenant's customers (its token and the URL to embed), or end every session of
//! the tenant at once.

use clap::Subcommand;
use http::Method;
use serde_json::{Map, Value, json};

use super::api_client::ApiRequest;
use super::error::CliError;
use super::table::cell;
use super::{Session, Tenant};

/// Portal-session subcommands.
#[derive(Subcommand, Debug)]
pub enum PortalSessionsCommand {
    /// Mint a session; prints its token, expiry and the URL to embed.
    #[command(after_help = super::EXIT_CODES)]
    Create {
        #[command(flatten)]
        tenant: Tenant,
        /// A capability (repeat it): view, manage_endpoints, read_secrets,
        /// replay, manage_plugins; view when left out.
        #[arg(long = "capability", value_name = "NAME")]
        capabilities: Vec<String>,
        /// The only endpoint it reaches, by id or uid (repeat it); every
        /// endpoint when left out.
        #[arg(long = "endpoint", value_name = "ID")]
        endpoints: Vec<String>,
        /// The only event type it sees, a name or a pattern such as `order.*`
        /// (repeat it); every type when left out.
        #[arg(long = "event-type", value_name = "TYPE")]
        event_types: Vec<String>,
        /// How long it lasts, in seconds (300 to 604800); an hour when left out.
        #[arg(long, value_name = "SECONDS")]
        expires_in: Option<u64>,
        /// The product name the portal shows.
        #[arg(long)]
        product_name: Option<String>,
        /// The accent colour, `#rrggbb`.
        #[arg(long)]
        accent_color: Option<String>,
        /// `light` or `dark`.
        #[arg(long)]
        mode: Option<String>,
    },
    /// End every portal session of the tenant, on every gateway.
    #[command(after_help = super::EXIT_CODES)]
    Revoke {
        #[command(flatten)]
        tenant: Tenant,
    },
}

/// Runs a portal-session subcommand.
///
/// # Errors
/// Any [`CliError`] from the API.
pub(super) async fn run(s: &Session, command: PortalSessionsCommand) -> Result<(), CliError> {
    match command {
        PortalSessionsCommand::Create {
            tenant,
            capabilities,
            endpoints,
            event_types,
            expires_in,
            product_name,
            accent_color,
            mode,
        } => {
            let mut body = Map::new();
            if !capabilities.is_empty() {
                body.insert("capabilities".into(), json!(capabilities));
            }
            for (field, given) in [("endpoints", endpoints), ("event_types", event_types)] {
                if !given.is_empty() {
                    body.insert(field.into(), json!(given));
                }
            }
            if let Some(ttl) = expires_in {
                body.insert("expires_in_s".into(), json!(ttl));
            }
            let theme: Map<String, Value> = [
                ("product_name", product_name),
                ("accent_color", accent_color),
                ("mode", mode),
            ]
            .into_iter()
            .filter_map(|(k, v)| Some((k.to_owned(), json!(v?))))
            .collect();
            if !theme.is_empty() {
                body.insert("theme".into(), Value::Object(theme));
            }
            let path = ["tenants", tenant.tenant.as_str(), "portal-sessions"];
            let req = ApiRequest::new(Method::POST, &path).json(&Value::Object(body));
            let reply = s.send(req).await?;
            s.show(&reply, |v| {
                let listed = |field: &str| -> String {
                    let names: Vec<String> = v[field]
                        .as_array()
                        .map(|a| a.iter().map(cell).collect())
                        .unwrap_or_default();
                    if names.is_empty() {
                        "all".to_owned()
                    } else {
                        names.join(",")
                    }
                };
                format!(
                    "portal session {}\ncapabilities: {}\nendpoints: {}\nevent types: {}\nexpires: {}\ntoken: {}\nurl: {}\n",
                    cell(&v["id"]),
                    listed("capabilities"),
                    listed("endpoints"),
                    listed("event_types"),
                    cell(&v["expires_at"]),
                    cell(&v["token"]),
                    cell(&v["url"]),
                )
            });
        }
        PortalSessionsCommand::Revoke { tenant } => {
            let path = ["tenants", tenant.tenant.as_str(), "portal-sessions"];
            let reply = s.send(ApiRequest::new(Method::DELETE, &path)).await?;
            s.show(&reply, |v| {
                format!("revoked {} portal sessions\n", cell(&v["revoked"]))
            });
        }
    }
    Ok(())
}
