//! `hookgate event-types list|show|create|update|delete|import`: the
//! install-wide event-type catalog (the admin writes it, any token reads it).

use std::path::PathBuf;

use clap::Subcommand;
use http::Method;
use serde_json::{Map, Value, json};

use super::api_client::ApiRequest;
use super::error::CliError;
use super::input::{json_value_arg, read_file};
use super::table::{Table, cell};
use super::{Session, list_items, next_page};

/// Event-type subcommands.
#[derive(Subcommand, Debug)]
pub enum EventTypesCommand {
    /// List the catalog by name.
    #[command(after_help = super::EXIT_CODES)]
    List {
        /// Also list archived types.
        #[arg(long)]
        include_archived: bool,
        /// How many to show (1 to 250).
        #[arg(long)]
        limit: Option<u32>,
        /// Continue from a previous page.
        #[arg(long)]
        cursor: Option<String>,
    },
    /// Show one type with its schemas and example.
    #[command(after_help = super::EXIT_CODES)]
    Show {
        /// The type's name (`order.paid`).
        name: String,
    },
    /// Create a type (admin token).
    #[command(after_help = super::EXIT_CODES)]
    Create {
        /// The type's name (`order.paid`).
        name: String,
        /// Free text for people.
        #[arg(long)]
        description: Option<String>,
        /// A group to show it under.
        #[arg(long)]
        group: Option<String>,
        /// Its JSON Schema, as version 1 (JSON inline or @FILE).
        #[arg(long, value_name = "JSON")]
        schema: Option<String>,
        /// A payload `send-example` sends (JSON inline or @FILE).
        #[arg(long, value_name = "JSON")]
        example: Option<String>,
        /// Refuse payloads at ingest that the schema does not accept.
        #[arg(long)]
        validate: bool,
    },
    /// Change a type with a JSON merge patch (admin token).
    #[command(after_help = super::EXIT_CODES)]
    Update {
        /// The type's name.
        name: String,
        /// The merge patch, e.g. `{"archived": true}` (JSON inline or @FILE).
        #[arg(long, value_name = "JSON")]
        data: String,
    },
    /// Remove a type from the catalog (admin token).
    #[command(after_help = super::EXIT_CODES)]
    Delete {
        /// The type's name.
        name: String,
    },
    /// Create or update types from an OpenAPI document's webhooks (admin token).
    #[command(after_help = super::EXIT_CODES)]
    Import {
        /// The document (JSON), or `-` for stdin.
        file: PathBuf,
    },
}

/// Runs an event-type subcommand.
///
/// # Errors
/// Any [`CliError`] from the API, or a usage error for unreadable input.
pub(super) async fn run(s: &Session, command: EventTypesCommand) -> Result<(), CliError> {
    match command {
        EventTypesCommand::List {
            include_archived,
            limit,
            cursor,
        } => {
            let req = ApiRequest::new(Method::GET, &["event-types"])
                .query("include_archived", include_archived.then_some("true"))
                .query("limit", limit)
                .query("cursor", cursor);
            let reply = s.send(req).await?;
            s.show(&reply, render_list);
        }
        EventTypesCommand::Show { name } => {
            let req = ApiRequest::new(Method::GET, &["event-types", &name]);
            let reply = s.send(req).await?;
            s.show(&reply, render_type);
        }
        EventTypesCommand::Create {
            name,
            description,
            group,
            schema,
            example,
            validate,
        } => {
            let mut body = Map::new();
            body.insert("name".into(), json!(name));
            if let Some(d) = description {
                body.insert("description".into(), json!(d));
            }
            if let Some(g) = group {
                body.insert("group".into(), json!(g));
            }
            if let Some(s) = schema {
                body.insert(
                    "schemas".into(),
                    json!({"1": json_value_arg("--schema", &s)?}),
                );
            }
            if let Some(e) = example {
                body.insert("example".into(), json_value_arg("--example", &e)?);
            }
            if validate {
                body.insert("validate".into(), json!(true));
            }
            let req = ApiRequest::new(Method::POST, &["event-types"]).json(&Value::Object(body));
            let reply = s.send(req).await?;
            s.show(&reply, |v| {
                format!("created event type {}\n", cell(&v["name"]))
            });
        }
        EventTypesCommand::Update { name, data } => {
            let patch = json_value_arg("--data", &data)?;
            let req = ApiRequest::new(Method::PATCH, &["event-types", &name]).json(&patch);
            let reply = s.send(req).await?;
            s.show(&reply, render_type);
        }
        EventTypesCommand::Delete { name } => {
            let req = ApiRequest::new(Method::DELETE, &["event-types", &name]);
            let reply = s.send(req).await?;
            s.show(&reply, |_| format!("deleted event type {name}\n"));
        }
        EventTypesCommand::Import { file } => {
            let bytes = read_file(&file)?;
            let req = ApiRequest::new(Method::POST, &["event-types", "import"])
                .bytes(bytes, "application/json");
            let reply = s.send(req).await?;
            s.show(&reply, render_import);
        }
    }
    Ok(())
}

/// The flags of a type, as words.
fn flags(v: &Value) -> String {
    let words: Vec<&str> = [
        ("deprecated", "deprecated"),
        ("archived", "archived"),
        ("validate", "validating"),
    ]
    .iter()
    .filter(|(k, _)| v[*k] == true)
    .map(|(_, w)| *w)
    .collect();
    if words.is_empty() {
        "-".to_owned()
    } else {
        words.join(",")
    }
}

fn render_list(v: &Value) -> String {
    let items = list_items(v);
    if items.is_empty() {
        return "no event types\n".to_owned();
    }
    let mut table = Table::new(&["NAME", "GROUP", "SCHEMAS", "FLAGS", "DESCRIPTION"]);
    for t in items {
        let versions: Vec<&str> = t["schemas"]
            .as_object()
            .map(|m| m.keys().map(String::as_str).collect())
            .unwrap_or_default();
        table.row(vec![
            cell(&t["name"]),
            cell(&t["group"]),
            if versions.is_empty() {
                "-".to_owned()
            } else {
                versions.join(",")
            },
            flags(t),
            cell(&t["description"]),
        ]);
    }
    table.render() + &next_page(v)
}

/// One type, as `show` and `update` print it.
fn render_type(v: &Value) -> String {
    let mut out = format!(
        "event type {}\ngroup: {}\nflags: {}\ndescription: {}\n",
        cell(&v["name"]),
        cell(&v["group"]),
        flags(v),
        cell(&v["description"]),
    );
    if let Some(schemas) = v["schemas"].as_object() {
        for (version, schema) in schemas {
            out.push_str(&format!("schema {version}: {schema}\n"));
        }
    }
    if !v["example"].is_null() {
        out.push_str(&format!("example: {}\n", v["example"]));
    }
    out
}

fn render_import(v: &Value) -> String {
    let names = |k: &str| -> String {
        let list: Vec<String> = v[k]
            .as_array()
            .map(|a| a.iter().map(cell).collect())
            .unwrap_or_default();
        if list.is_empty() {
            "-".to_owned()
        } else {
            list.join(", ")
        }
    };
    let mut out = format!(
        "created: {}\nupdated: {}\nunchanged: {}\n",
        names("created"),
        names("updated"),
        names("unchanged")
    );
    for s in v["skipped"].as_array().into_iter().flatten() {
        out.push_str(&format!(
            "skipped {}: {}\n",
            cell(&s["name"]),
            cell(&s["reason"])
        ));
    }
    out
}
