//! `hookgate tenants create|list|show|update|delete|rotate-key`: tenants and
//! their API keys (a tenant is named by its id or its uid).

use clap::{Args, Subcommand};
use http::Method;
use serde_json::{Map, Value, json};

use super::api_client::ApiRequest;
use super::error::CliError;
use super::input::pairs_arg;
use super::table::{Table, cell};
use super::tasks::render_task;
use super::{Session, list_items, next_page};

/// Tenant subcommands.
#[derive(Subcommand, Debug)]
pub enum TenantsCommand {
    /// Create a tenant; its API key is printed this once.
    #[command(after_help = super::EXIT_CODES)]
    Create {
        /// The tenant id: lowercase letters, digits, `_` and `-`, up to 63 characters.
        id: String,
        #[command(flatten)]
        fields: TenantFields,
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
    /// Show a tenant.
    #[command(after_help = super::EXIT_CODES)]
    Show {
        /// The tenant id or uid.
        id: String,
    },
    /// Change a tenant's name, uid or metadata (admin token).
    #[command(after_help = super::EXIT_CODES)]
    Update {
        /// The tenant id or uid.
        id: String,
        #[command(flatten)]
        fields: TenantFields,
        /// Remove the tenant's uid.
        #[arg(long, conflicts_with = "uid")]
        clear_uid: bool,
        /// A metadata key to remove; repeat for several.
        #[arg(long = "remove-metadata", value_name = "KEY")]
        removed_metadata: Vec<String>,
    },
    /// Delete a tenant and everything of it, as a background task (admin token).
    #[command(after_help = super::EXIT_CODES)]
    Delete {
        /// The tenant id or uid.
        id: String,
    },
    /// Give a tenant a new API key; the old one stops working at once.
    #[command(after_help = super::EXIT_CODES)]
    RotateKey {
        /// The tenant id or uid.
        id: String,
    },
}

/// What `create` and `update` may set.
#[derive(Args, Debug)]
pub struct TenantFields {
    /// The name shown to people (the id when not given).
    #[arg(long)]
    name: Option<String>,
    /// The platform's own identifier for the tenant, usable wherever its id is.
    #[arg(long)]
    uid: Option<String>,
    /// A metadata entry, `KEY=VALUE`; repeat for several.
    #[arg(long = "metadata", value_name = "KEY=VALUE")]
    metadata: Vec<String>,
}

impl TenantFields {
    /// The body fields given, with each of `removed` metadata keys `null`.
    fn body(self, removed: &[String]) -> Result<Map<String, Value>, CliError> {
        let mut body = Map::new();
        if let Some(name) = self.name {
            body.insert("name".into(), json!(name));
        }
        if let Some(uid) = self.uid {
            body.insert("uid".into(), json!(uid));
        }
        if let Some(metadata) = pairs_arg("--metadata", &self.metadata, removed)? {
            body.insert("metadata".into(), Value::Object(metadata));
        }
        Ok(body)
    }
}

/// Runs a tenant subcommand.
///
/// # Errors
/// Any [`CliError`] from the API.
pub(super) async fn run(s: &Session, command: TenantsCommand) -> Result<(), CliError> {
    match command {
        TenantsCommand::Create { id, fields } => {
            let mut body = fields.body(&[])?;
            body.insert("id".into(), json!(id));
            let req = ApiRequest::new(Method::POST, &["tenants"]).json(&Value::Object(body));
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
        TenantsCommand::Show { id } => {
            let reply = s
                .send(ApiRequest::new(Method::GET, &["tenants", &id]))
                .await?;
            s.show(&reply, render_tenant);
        }
        TenantsCommand::Update {
            id,
            fields,
            clear_uid,
            removed_metadata,
        } => {
            let mut body = fields.body(&removed_metadata)?;
            if clear_uid {
                body.insert("uid".into(), Value::Null);
            }
            if body.is_empty() {
                return Err(CliError::Usage(
                    "nothing to change: give --name, --uid, --clear-uid, --metadata or --remove-metadata"
                        .into(),
                ));
            }
            let req = ApiRequest::new(Method::PATCH, &["tenants", &id]).bytes(
                Value::Object(body).to_string().into_bytes(),
                "application/merge-patch+json",
            );
            let reply = s.send(req).await?;
            s.show(&reply, render_tenant);
        }
        TenantsCommand::Delete { id } => {
            let reply = s
                .send(ApiRequest::new(Method::DELETE, &["tenants", &id]))
                .await?;
            s.show(&reply, |v| {
                format!(
                    "deleting tenant {}: it takes no more work; its records go in the background\n{}follow it with: hookgate tasks show {}\n",
                    cell(&v["tenant_id"]),
                    render_task(v),
                    cell(&v["id"])
                )
            });
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

fn render_tenant(v: &Value) -> String {
    let mut out = format!(
        "tenant {}\nname: {}\nuid: {}\ncreated: {}\nupdated: {}\n",
        cell(&v["id"]),
        cell(&v["name"]),
        cell(&v["uid"]),
        cell(&v["created_at"]),
        cell(&v["updated_at"]),
    );
    if let Some(metadata) = v["metadata"].as_object().filter(|m| !m.is_empty()) {
        out.push_str("metadata:\n");
        for (k, value) in metadata {
            out.push_str(&format!("  {k}: {}\n", cell(value)));
        }
    }
    out
}

fn render_list(v: &Value) -> String {
    let items = list_items(v);
    if items.is_empty() {
        return "no tenants\n".to_owned();
    }
    let mut table = Table::new(&["TENANT", "NAME", "UID", "CREATED"]);
    for t in items {
        table.row(vec![
            cell(&t["id"]),
            cell(&t["name"]),
            cell(&t["uid"]),
            cell(&t["created_at"]),
        ]);
    }
    table.render() + &next_page(v)
}
