//! `hookgate tenants create|list|rotate-key`: tenants and their API keys.

use clap::Subcommand;
use http::Method;
use serde_json::{Value, json};

use super::api_client::ApiRequest;
use super::error::CliError;
use super::table::{Table, cell};
use super::{Session, list_items, next_page};

/// Tenant subcommands.
#[derive(Subcommand, Debug)]
pub enum TenantsCommand {
    /// Create a tenant; its API key is printed this once.
    #[command(after_help = super::EXIT_CODES)]
    Create {
        /// The tenant id: lowercase letters, digits, `_` and `-`, up to 63 characters.
        id: String,
    },
    /// List tenants, newest first.
    #[command(after_help = super::EXIT_CODES)]
    List {
        /// How many to show (1 to 250).
        #[arg(long)]
        limit: Option<u32>,
        /// Continue from a previous page.
        #[arg(long)]
        cursor: Option<String>,
    },
    /// Give a tenant a new API key; the old one stops working at once.
    #[command(after_help = super::EXIT_CODES)]
    RotateKey {
        /// The tenant id.
        id: String,
    },
}

/// Runs a tenant subcommand.
///
/// # Errors
/// Any [`CliError`] from the API.
pub(super) async fn run(s: &Session, command: TenantsCommand) -> Result<(), CliError> {
    match command {
        TenantsCommand::Create { id } => {
            let req = ApiRequest::new(Method::POST, &["tenants"]).json(&json!({ "id": id }));
            let reply = s.send(req).await?;
            s.show(&reply, |v| {
                format!(
                    "created tenant {}\napi key: {}\nthe key is shown only this once: store it now\n",
                    cell(&v["id"]),
                    cell(&v["api_key"])
                )
            });
        }
        TenantsCommand::List { limit, cursor } => {
            let req = ApiRequest::new(Method::GET, &["tenants"])
                .query("limit", limit)
                .query("cursor", cursor);
            let reply = s.send(req).await?;
            s.show(&reply, render_list);
        }
        TenantsCommand::RotateKey { id } => {
            let req = ApiRequest::new(Method::POST, &["tenants", &id, "rotate-key"]);
            let reply = s.send(req).await?;
            s.show(&reply, |v| {
                format!(
                    "new api key for tenant {}: {}\nthe old key no longer works; the new one is shown only this once\n",
                    cell(&v["id"]),
                    cell(&v["api_key"])
                )
            });
        }
    }
    Ok(())
}

fn render_list(v: &Value) -> String {
    let items = list_items(v);
    if items.is_empty() {
        return "no tenants\n".to_owned();
    }
    let mut table = Table::new(&["TENANT", "CREATED"]);
    for t in items {
        table.row(vec![cell(&t["id"]), cell(&t["created_at"])]);
    }
    table.render() + &next_page(v)
}
