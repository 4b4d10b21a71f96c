//! `hookgate tasks list|show`: background tasks (a tenant's delete, an
//! endpoint's recovery), of one tenant or, with the admin token and no
//! `--tenant`, of every tenant.

use clap::Subcommand;
use http::Method;
use serde_json::Value;

use super::api_client::ApiRequest;
use super::error::CliError;
use super::table::{Table, cell};
use super::{Session, list_items, next_page};

/// Task subcommands.
#[derive(Subcommand, Debug)]
pub enum TasksCommand {
    /// List tasks, newest first.
    #[command(after_help = super::EXIT_CODES)]
    List {
        /// Only this tenant's (required with a tenant's key).
        #[arg(long, env = "HOOKGATE_TENANT")]
        tenant: Option<String>,
        /// How many to show (1 to 250).
        #[arg(long)]
        limit: Option<u32>,
        /// Continue from a previous page.
        #[arg(long)]
        cursor: Option<String>,
    },
    /// Show one task: its state and progress.
    #[command(after_help = super::EXIT_CODES)]
    Show {
        /// The task id (`task_...`).
        id: String,
        /// The tenant it belongs to (required with a tenant's key).
        #[arg(long, env = "HOOKGATE_TENANT")]
        tenant: Option<String>,
    },
}

/// The path to a task list: a tenant's, or every tenant's.
fn tasks_path(tenant: Option<&str>) -> Vec<&str> {
    match tenant {
        Some(t) => vec!["tenants", t, "tasks"],
        None => vec!["tasks"],
    }
}

/// Runs a task subcommand.
///
/// # Errors
/// Any [`CliError`] from the API.
pub(super) async fn run(s: &Session, command: TasksCommand) -> Result<(), CliError> {
    match command {
        TasksCommand::List {
            tenant,
            limit,
            cursor,
        } => {
            let req = ApiRequest::new(Method::GET, &tasks_path(tenant.as_deref()))
                .query("limit", limit)
                .query("cursor", cursor);
            let reply = s.send(req).await?;
            s.show(&reply, render_list);
        }
        TasksCommand::Show { id, tenant } => {
            let mut path = tasks_path(tenant.as_deref());
            path.push(&id);
            let reply = s.send(ApiRequest::new(Method::GET, &path)).await?;
            s.show(&reply, render_task);
        }
    }
    Ok(())
}

/// One task, as `tasks show` prints it.
pub(super) fn render_task(v: &Value) -> String {
    let mut out = format!(
        "task {} ({}) of tenant {}\nstate: {}\nexamined: {}  changed: {}\nstarted: {}\nfinished: {}\n",
        cell(&v["id"]),
        cell(&v["kind"]),
        cell(&v["tenant_id"]),
        cell(&v["state"]),
        cell(&v["examined"]),
        cell(&v["changed"]),
        cell(&v["created_at"]),
        cell(&v["finished_at"]),
    );
    if let Some(e) = v["error"].as_str() {
        out.push_str(&format!("error: {e}\n"));
    }
    out
}

fn render_list(v: &Value) -> String {
    let items = list_items(v);
    if items.is_empty() {
        return "no tasks\n".to_owned();
    }
    let mut table = Table::new(&["TASK", "KIND", "TENANT", "STATE", "CHANGED", "STARTED"]);
    for t in items {
        table.row(vec![
            cell(&t["id"]),
            cell(&t["kind"]),
            cell(&t["tenant_id"]),
            cell(&t["state"]),
            cell(&t["changed"]),
            cell(&t["created_at"]),
        ]);
    }
    table.render() + &next_page(v)
}
