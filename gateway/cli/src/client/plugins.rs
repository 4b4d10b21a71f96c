//! `hookgate plugin new|upload|list|rollback`: creating a WebAssembly
//! retry-policy plugin (no gateway needed), and a tenant's plugins on a gateway.
//! A gateway without the plugin routes says so plainly.

use std::path::PathBuf;

use clap::Subcommand;
use http::Method;
use serde_json::Value;

use super::api_client::ApiRequest;
use super::error::CliError;
use super::input::read_file;
use super::table::{Table, cell};
use super::{Connection, Session, Tenant, list_items, next_page};

/// Columns shown for a plugin, in order, when the gateway sends them.
const PLUGIN_COLUMNS: [&str; 7] = [
    "name",
    "version",
    "active_version",
    "versions",
    "sha256",
    "size",
    "created_at",
];

/// `hookgate plugin ...`: one command that needs no gateway, and those that do.
/// Each gateway command carries its own [`Connection`], so `plugin new --help`
/// shows no gateway options.
#[derive(Subcommand, Debug)]
pub enum PluginGroup {
    /// Create a plugin crate that builds on its own, with a copy of the SDK (or
    /// the SDK from git or crates.io), a policy skeleton with tests, and a README.
    #[command(
        after_help = "Exit codes:\n  0  created\n  2  a bad NAME or SDK flag, \
                            or a --dir that exists and is not empty"
    )]
    New(crate::ops::plugin_new::PluginNewArgs),
    #[command(flatten)]
    Gateway(PluginCommand),
}

/// Plugin subcommands that talk to a gateway.
#[derive(Subcommand, Debug)]
pub enum PluginCommand {
    /// Upload a plugin (a .wasm module or component) as NAME's next version.
    #[command(after_help = super::EXIT_CODES)]
    Upload {
        #[command(flatten)]
        conn: Connection,
        #[command(flatten)]
        tenant: Tenant,
        /// The plugin's name; endpoints bind to it.
        name: String,
        /// The .wasm file, or - for stdin.
        file: PathBuf,
    },
    /// List the tenant's plugins.
    #[command(after_help = super::EXIT_CODES)]
    List {
        #[command(flatten)]
        conn: Connection,
        #[command(flatten)]
        tenant: Tenant,
    },
    /// Move NAME's active version back by one.
    #[command(after_help = super::EXIT_CODES)]
    Rollback {
        #[command(flatten)]
        conn: Connection,
        #[command(flatten)]
        tenant: Tenant,
        /// The plugin's name.
        name: String,
    },
}

impl PluginCommand {
    /// The gateway and token the command talks to.
    pub(super) fn connection(&self) -> &Connection {
        match self {
            Self::Upload { conn, .. } | Self::List { conn, .. } | Self::Rollback { conn, .. } => {
                conn
            }
        }
    }
}

/// Runs a plugin subcommand.
///
/// # Errors
/// A usage error for an unreadable file, any [`CliError`] from the API, and
/// "not supported yet" from a gateway without plugins.
pub(super) async fn run(s: &Session, command: PluginCommand) -> Result<(), CliError> {
    let feature = |e: CliError| e.feature("plugins");
    match command {
        PluginCommand::Upload {
            tenant, name, file, ..
        } => {
            let bytes = read_file(&file)?;
            let req = ApiRequest::new(Method::PUT, &["tenants", &tenant.tenant, "plugins", &name])
                .bytes(bytes, "application/wasm");
            let reply = s.send(req).await.map_err(feature)?;
            s.show(&reply, |v| {
                format!(
                    "uploaded plugin {} version {} ({} bytes, sha256 {})\n",
                    cell(&v["name"]),
                    cell(&v["version"]),
                    cell(&v["size"]),
                    cell(&v["sha256"])
                )
            });
        }
        PluginCommand::List { tenant, .. } => {
            let req = ApiRequest::new(Method::GET, &["tenants", &tenant.tenant, "plugins"]);
            let reply = s.send(req).await.map_err(feature)?;
            s.show(&reply, render_list);
        }
        PluginCommand::Rollback { tenant, name, .. } => {
            let req = ApiRequest::new(
                Method::POST,
                &["tenants", &tenant.tenant, "plugins", &name, "rollback"],
            );
            let reply = s.send(req).await.map_err(feature)?;
            s.show(&reply, |v| {
                let version = v.get("active_version").unwrap_or(&v["version"]);
                format!("plugin {name} is now at version {}\n", cell(version))
            });
        }
    }
    Ok(())
}

fn render_list(v: &Value) -> String {
    let items = list_items(v);
    if items.is_empty() {
        return "no plugins\n".to_owned();
    }
    let columns: Vec<&str> = PLUGIN_COLUMNS
        .into_iter()
        .filter(|c| items.iter().any(|p| p.get(*c).is_some()))
        .collect();
    let header: Vec<String> = columns
        .iter()
        .map(|c| c.replace('_', " ").to_uppercase())
        .collect();
    let mut table = Table::new(&header.iter().map(String::as_str).collect::<Vec<_>>());
    for p in items {
        table.row(columns.iter().map(|c| cell(&p[*c])).collect());
    }
    table.render() + &next_page(v)
}
