//! `hookgate plugin new|upload|list|rollback|delete|bind|unbind`: creating a
//! WebAssembly retry-policy plugin (no gateway needed), and a tenant's plugins on
//! a gateway, bound to its endpoints through the endpoint's `plugin` field. A
//! gateway without the plugin routes says so plainly.

use std::path::PathBuf;

use clap::Subcommand;
use http::Method;
use serde_json::{Value, json};

use super::api_client::ApiRequest;
use super::error::CliError;
use super::input::read_file;
use super::table::{Table, cell};
use super::{Connection, Session, Tenant, list_items, next_page};

/// `hookgate plugin ...`: one command that needs no gateway, and those that do.
/// Each gateway command carries its own [`Connection`], so `plugin new --help`
/// shows no gateway options.
#[derive(Subcommand, Debug)]
pub enum PluginGroup {
    /// Create a plugin crate that builds on its own, with a copy of the SDK (or
    /// the SDK from git or crates.io), a policy or (with `--kind transform`)
    /// transform skeleton with tests, and a README.
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
    /// Delete NAME and every version of it; refused while an endpoint binds it.
    #[command(after_help = super::EXIT_CODES)]
    Delete {
        #[command(flatten)]
        conn: Connection,
        #[command(flatten)]
        tenant: Tenant,
        /// The plugin's name.
        name: String,
    },
    /// Bind a plugin to an endpoint: it decides the endpoint's retries before the policy does.
    ///
    /// NAME follows the plugin's active version as it changes; NAME@VERSION pins that version.
    #[command(after_help = super::EXIT_CODES)]
    Bind {
        #[command(flatten)]
        conn: Connection,
        #[command(flatten)]
        tenant: Tenant,
        /// The plugin's name, or `name@version` to pin a version.
        #[arg(value_name = "NAME[@VERSION]")]
        name: String,
        /// The endpoint id (`ep_...`) or uid.
        #[arg(long, value_name = "ENDPOINT_ID")]
        endpoint: String,
    },
    /// Unbind the endpoint's plugin: its policy alone decides its retries again.
    #[command(after_help = super::EXIT_CODES)]
    Unbind {
        #[command(flatten)]
        conn: Connection,
        #[command(flatten)]
        tenant: Tenant,
        /// The endpoint id (`ep_...`) or uid.
        #[arg(long, value_name = "ENDPOINT_ID")]
        endpoint: String,
    },
}

impl PluginCommand {
    /// The gateway and token the command talks to.
    pub(super) fn connection(&self) -> &Connection {
        match self {
            Self::Upload { conn, .. }
            | Self::List { conn, .. }
            | Self::Rollback { conn, .. }
            | Self::Delete { conn, .. }
            | Self::Bind { conn, .. }
            | Self::Unbind { conn, .. } => conn,
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
        PluginCommand::Delete { tenant, name, .. } => {
            let req = ApiRequest::new(
                Method::DELETE,
                &["tenants", &tenant.tenant, "plugins", &name],
            );
            let reply = s.send(req).await.map_err(feature)?;
            s.show(&reply, |_| {
                format!("deleted plugin {name} and every version of it\n")
            });
        }
        PluginCommand::Bind {
            tenant,
            name,
            endpoint,
            ..
        } => {
            let reply = s.send(bind(&tenant, &endpoint, json!(name))).await?;
            s.show(&reply, binding);
        }
        PluginCommand::Unbind {
            tenant, endpoint, ..
        } => {
            let reply = s.send(bind(&tenant, &endpoint, Value::Null)).await?;
            s.show(&reply, binding);
        }
    }
    Ok(())
}

/// A binding lives on the endpoint, so (un)binding is a merge patch of its
/// `plugin` field alone: `null` removes it, and nothing else changes.
fn bind(tenant: &Tenant, endpoint: &str, plugin: Value) -> ApiRequest {
    let patch = json!({ "plugin": plugin });
    ApiRequest::new(
        Method::PATCH,
        &["tenants", &tenant.tenant, "endpoints", endpoint],
    )
    .bytes(
        patch.to_string().into_bytes(),
        "application/merge-patch+json",
    )
}

/// The endpoint's binding, as the gateway stored it.
fn binding(ep: &Value) -> String {
    match ep["plugin"].as_str() {
        Some(plugin) => format!(
            "endpoint {} is bound to plugin {plugin}: it decides retries before the policy does\n",
            cell(&ep["id"])
        ),
        None => format!(
            "endpoint {} is bound to no plugin: its policy decides retries\n",
            cell(&ep["id"])
        ),
    }
}

/// `plugin list`: a row per plugin. Which endpoints bind one is not in the
/// plugin object, so it is not shown.
fn render_list(v: &Value) -> String {
    let items = list_items(v);
    if items.is_empty() {
        return "no plugins\n".to_owned();
    }
    let mut table = Table::new(&[
        "NAME",
        "ACTIVE VERSION",
        "VERSIONS KEPT",
        "SOURCE",
        "LAST UPLOAD",
    ]);
    for p in items {
        let versions = p["versions"].as_array().map_or(&[][..], Vec::as_slice);
        let mut active = cell(&p["active_version"]);
        if p["disabled"] == true {
            active.push_str(" (disabled)");
        }
        let kept: Vec<String> = versions.iter().map(|v| cell(&v["version"])).collect();
        let kept = Some(kept.join(",")).filter(|k| !k.is_empty());
        // The newest version's time, not the active one's: a rollback activates
        // an older version and records no time of its own. The gateway writes
        // every time in one UTC form, so the greatest string is the latest.
        let last_upload = versions
            .iter()
            .filter_map(|v| v["created_at"].as_str())
            .max()
            .unwrap_or("-");
        table.row(vec![
            cell(&p["name"]),
            active,
            kept.unwrap_or_else(|| "-".to_owned()),
            cell(&p["source"]),
            last_upload.to_owned(),
        ]);
    }
    table.render() + &next_page(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plugin_list_reads_as_a_table() {
        let list = json!({"data": [{
            "name": "retry", "active_version": 2, "disabled": true, "source": "upload",
            "created_at": "2024-05-01T10:00:00.000Z",
            "versions": [
                {"version": 2, "created_at": "2024-05-01T10:00:00.000Z"},
                {"version": 3, "created_at": "2024-05-02T09:00:00.000Z"},
            ],
        }], "next_cursor": null});
        assert_eq!(
            render_list(&list),
            "NAME   ACTIVE VERSION  VERSIONS KEPT  SOURCE  LAST UPLOAD\n\
             retry  2 (disabled)    2,3            upload  2024-05-02T09:00:00.000Z\n"
        );
        assert_eq!(render_list(&json!({"data": []})), "no plugins\n");
    }
}
