//! `hookgate operator-endpoints list|create|show|update|delete`: where operator
//! events go; the admin's without `--tenant` (every tenant's events), a
//! tenant's with it (that tenant's only).

use clap::{Args, Subcommand};
use http::Method;
use serde_json::{Map, Value, json};

use super::api_client::ApiRequest;
use super::error::CliError;
use super::input::json_value_arg;
use super::table::{Table, cell};
use super::{Session, list_items};

/// Whose operator endpoints: the admin's, or one tenant's.
#[derive(Args, Debug)]
pub struct Namespace {
    /// A tenant's operator endpoints; the admin's when left out.
    #[arg(long)]
    tenant: Option<String>,
}

impl Namespace {
    fn path<'a>(&'a self, rest: &[&'a str]) -> Vec<&'a str> {
        let mut path = match &self.tenant {
            Some(t) => vec!["tenants", t.as_str(), "operator-endpoints"],
            None => vec!["operator-endpoints"],
        };
        path.extend_from_slice(rest);
        path
    }
}

/// Operator-endpoint subcommands.
#[derive(Subcommand, Debug)]
pub enum OperatorEndpointsCommand {
    /// List the operator endpoints.
    #[command(after_help = super::EXIT_CODES)]
    List {
        #[command(flatten)]
        ns: Namespace,
    },
    /// Add an operator endpoint; its signing secret is printed with it.
    #[command(after_help = super::EXIT_CODES)]
    Create {
        #[command(flatten)]
        ns: Namespace,
        /// Where operator events go (http or https).
        #[arg(long, value_name = "URL")]
        endpoint_url: String,
        /// An operator event type or pattern to receive (repeat it); every type
        /// when left out.
        #[arg(long = "event-type", value_name = "TYPE")]
        event_types: Vec<String>,
        /// Free text for people.
        #[arg(long)]
        description: Option<String>,
        /// Sign with this secret of your own instead of a generated one.
        #[arg(long, value_name = "whsec_...")]
        secret: Option<String>,
    },
    /// Show one operator endpoint.
    #[command(after_help = super::EXIT_CODES)]
    Show {
        #[command(flatten)]
        ns: Namespace,
        /// The operator endpoint's id (`ep_...`).
        id: String,
    },
    /// Change one with a JSON merge patch, e.g. `{"disabled": true}`.
    #[command(after_help = super::EXIT_CODES)]
    Update {
        #[command(flatten)]
        ns: Namespace,
        /// The operator endpoint's id.
        id: String,
        /// The merge patch (JSON inline or @FILE).
        #[arg(long, value_name = "JSON")]
        data: String,
    },
    /// Delete one.
    #[command(after_help = super::EXIT_CODES)]
    Delete {
        #[command(flatten)]
        ns: Namespace,
        /// The operator endpoint's id.
        id: String,
    },
}

/// Runs an operator-endpoint subcommand.
///
/// # Errors
/// Any [`CliError`] from the API, or a usage error for unreadable input.
pub(super) async fn run(s: &Session, command: OperatorEndpointsCommand) -> Result<(), CliError> {
    match command {
        OperatorEndpointsCommand::List { ns } => {
            let reply = s.send(ApiRequest::new(Method::GET, &ns.path(&[]))).await?;
            s.show(&reply, render_list);
        }
        OperatorEndpointsCommand::Create {
            ns,
            endpoint_url,
            event_types,
            description,
            secret,
        } => {
            let mut body = Map::new();
            body.insert("url".into(), json!(endpoint_url));
            if !event_types.is_empty() {
                body.insert("event_types".into(), json!(event_types));
            }
            if let Some(d) = description {
                body.insert("description".into(), json!(d));
            }
            if let Some(sec) = secret {
                body.insert("secret".into(), json!(sec));
            }
            let req = ApiRequest::new(Method::POST, &ns.path(&[])).json(&Value::Object(body));
            let reply = s.send(req).await?;
            s.show(&reply, |v| {
                format!("{}secret: {}\n", render_one(v), cell(&v["secret"]))
            });
        }
        OperatorEndpointsCommand::Show { ns, id } => {
            let reply = s
                .send(ApiRequest::new(Method::GET, &ns.path(&[&id])))
                .await?;
            s.show(&reply, render_one);
        }
        OperatorEndpointsCommand::Update { ns, id, data } => {
            let patch = json_value_arg("--data", &data)?;
            let req = ApiRequest::new(Method::PATCH, &ns.path(&[&id])).json(&patch);
            let reply = s.send(req).await?;
            s.show(&reply, render_one);
        }
        OperatorEndpointsCommand::Delete { ns, id } => {
            let reply = s
                .send(ApiRequest::new(Method::DELETE, &ns.path(&[&id])))
                .await?;
            s.show(&reply, |_| format!("deleted operator endpoint {id}\n"));
        }
    }
    Ok(())
}

fn types(v: &Value) -> String {
    v["event_types"]
        .as_array()
        .map(|a| a.iter().map(cell).collect::<Vec<_>>().join(","))
        .unwrap_or_default()
}

fn render_list(v: &Value) -> String {
    let items = list_items(v);
    if items.is_empty() {
        return "no operator endpoints\n".to_owned();
    }
    let mut table = Table::new(&["ID", "URL", "EVENT TYPES", "DISABLED", "DESCRIPTION"]);
    for e in items {
        table.row(vec![
            cell(&e["id"]),
            cell(&e["url"]),
            types(e),
            cell(&e["disabled"]),
            cell(&e["description"]),
        ]);
    }
    table.render()
}

fn render_one(v: &Value) -> String {
    format!(
        "operator endpoint {}\nurl: {}\nevent types: {}\ndisabled: {}\ndescription: {}\n",
        cell(&v["id"]),
        cell(&v["url"]),
        types(v),
        cell(&v["disabled"]),
        cell(&v["description"]),
    )
}
