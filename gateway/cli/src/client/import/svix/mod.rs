//! `hookgate import svix`: moves a platform from Svix to hookgate. It reads
//! Svix's event types, applications and endpoints (with their secrets and
//! headers) from a running Svix server (`--from-url`, `--from-token`) or from
//! an environment export (`--from-file`), and makes the gateway hold the same
//! through API v1 with the admin token: the catalog's types, a tenant per
//! application, the tenant's endpoints, each signing with its Svix secret
//! under Svix's header names. A run creates what is missing, updates what
//! differs and leaves the rest, so a second run changes nothing; `--dry-run`
//! reads both sides and writes nothing. The report names every record's
//! outcome and every part not imported, and why.

mod applications;
mod endpoint_fields;
mod endpoints;
mod event_types;
mod export_file;
mod model;
mod report;
mod svix_server;
mod target;

use std::collections::BTreeSet;
use std::path::PathBuf;

use clap::{ArgGroup, Args};
use serde_json::{Map, json};

use crate::client::error::{CliError, EXIT_API, EXIT_OK, EXIT_UNREACHABLE, EXIT_USAGE};
use crate::client::{ApiClient, Connection, out};
use model::{SvixApplication, SvixEventType};
use report::{Item, Kind, Note, Outcome, Report};
use svix_server::SvixServer;
use target::Target;

/// The exit codes, shown under `hookgate import svix --help`.
pub(super) const EXIT_CODES: &str = "\
Exit codes:
  0  everything was imported (with --dry-run: could be)
  1  the gateway refused some records (the report names them), or the Svix
     server refused --from-token
  2  usage error: bad arguments, a file that cannot be read or is not a Svix export
  3  the gateway or the Svix server could not be reached";

/// Where to read Svix from, and how to import.
#[derive(Args, Debug)]
#[command(group(ArgGroup::new("source").required(true).args(["from_file", "from_url"])))]
pub struct SvixArgs {
    /// A Svix environment export (JSON, `-` for stdin): `eventTypes`, and
    /// hookgate's optional `applications`, each with its `endpoints`, their
    /// `secret` and `headers` (docs/svix.md, "Migrating from Svix").
    #[arg(long, value_name = "FILE")]
    from_file: Option<PathBuf>,
    /// A Svix server's API address (https://api.eu.svix.com, or your own),
    /// read through its API and never written to.
    #[arg(long, value_name = "URL", requires = "from_token")]
    from_url: Option<String>,
    /// The Svix server's API token (of the environment to import).
    #[arg(
        long,
        value_name = "TOKEN",
        env = "SVIX_AUTH_TOKEN",
        hide_env_values = true
    )]
    from_token: Option<String>,
    /// How many items each page of a Svix server's lists asks for (Svix
    /// answers at most 250); for tests of the paging.
    #[arg(long, hide = true, default_value_t = 250, value_parser = clap::value_parser!(u32).range(1..=250))]
    from_page_size: u32,
    /// Read both sides and print what would be created, updated and left
    /// unchanged; write nothing.
    #[arg(long)]
    dry_run: bool,
    /// The signature headers the imported endpoints send: `both` (Svix's
    /// `svix-*` and Standard Webhooks' `webhook-*`, the same signature) or
    /// `svix` alone.
    #[arg(long, value_name = "SET", default_value = "both", value_parser = ["both", "svix"])]
    signature_headers: String,
}

/// Why an import stopped.
#[derive(Debug, thiserror::Error)]
enum ImportError {
    /// A bad argument, or a file that cannot be read or is not an export.
    #[error("{0}")]
    Input(String),
    /// The Svix server refused the token.
    #[error(
        "the Svix server at {url} refused --from-token ({status}: {detail}); give an API token of the environment to import"
    )]
    SourceRefused {
        url: String,
        status: u16,
        detail: String,
    },
    /// No answer from the Svix server.
    #[error("cannot reach the Svix server at {url}: {reason}; check --from-url")]
    SourceUnreachable { url: String, reason: String },
    /// The Svix server failed, or answered what Svix does not.
    #[error("the Svix server failed at {url} ({status}): {detail}; is --from-url a Svix server?")]
    SourceFailed {
        url: String,
        status: u16,
        detail: String,
    },
    /// The gateway imported into failed.
    #[error("{0}")]
    Gateway(CliError),
}

impl ImportError {
    /// The process exit code for this failure.
    fn exit_code(&self) -> i32 {
        match self {
            Self::Input(_) => EXIT_USAGE,
            Self::SourceRefused { .. } | Self::SourceFailed { .. } => EXIT_API,
            Self::SourceUnreachable { .. } => EXIT_UNREACHABLE,
            Self::Gateway(e) => e.exit_code(),
        }
    }
}

/// What a source holds.
#[derive(Debug, Default)]
struct SvixData {
    event_types: Vec<SvixEventType>,
    applications: Vec<SvixApplication>,
    /// Parts of the source skipped whole.
    skipped: Vec<Note>,
}

/// Runs `hookgate import svix`; returns the exit code. The report is printed
/// whenever the import got as far as the gateway, failures included.
pub(super) fn run(conn: Connection, args: SvixArgs) -> i32 {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return EXIT_USAGE;
        }
    };
    let mut report = Report {
        dry_run: args.dry_run,
        ..Report::default()
    };
    let result = runtime.block_on(import(&conn, &args, &mut report));
    if result.is_ok() || !report.items.is_empty() {
        if conn.json {
            out(&serde_json::to_string_pretty(&report.to_json()).unwrap_or_default());
        } else {
            out(&report.render());
        }
    }
    match result {
        Err(e) => {
            eprintln!("error: {e}");
            e.exit_code()
        }
        Ok(()) if report.failures() > 0 => {
            eprintln!(
                "error: the gateway refused {} of the records; the report says why",
                report.failures()
            );
            EXIT_API
        }
        Ok(()) => EXIT_OK,
    }
}

/// Reads the source and imports it, recording each outcome in `report`.
async fn import(
    conn: &Connection,
    args: &SvixArgs,
    report: &mut Report,
) -> Result<(), ImportError> {
    let from_file = match &args.from_file {
        Some(path) => Some(export_file::read(path)?),
        None => None,
    };
    let server = match (&args.from_url, &args.from_token) {
        (Some(url), Some(token)) => Some(SvixServer::new(url, token, args.from_page_size)?),
        _ => None,
    };
    let api = ApiClient::new(&conn.url, conn.token.clone()).map_err(ImportError::Gateway)?;
    let target = Target::new(api, args.dry_run);
    target.check_admin().await.map_err(ImportError::Gateway)?;
    let data = match (from_file, server) {
        (Some(data), _) => {
            report.source = format!("file {}", display_path(args));
            data
        }
        (None, Some(server)) => {
            report.source = args.from_url.clone().unwrap_or_default();
            server.read_all().await?
        }
        (None, None) => {
            return Err(ImportError::Input(
                "give --from-file FILE, or --from-url URL with --from-token TOKEN".into(),
            ));
        }
    };
    report.skipped.extend(data.skipped.iter().cloned());
    report.skipped.push(Note::new(
        "createdAt, updatedAt",
        "hookgate stamps its own times on what it creates and changes",
    ));
    sync(&target, &data, &args.signature_headers, report)
        .await
        .map_err(ImportError::Gateway)
}

fn display_path(args: &SvixArgs) -> String {
    args.from_file
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_default()
}

/// Imports the event types, then each application and its endpoints, then
/// archives the types held unarchived for them.
async fn sync(
    target: &Target,
    data: &SvixData,
    signature_headers: &str,
    report: &mut Report,
) -> Result<(), CliError> {
    let subscribed: BTreeSet<String> = data
        .applications
        .iter()
        .flat_map(|a| &a.endpoints)
        .filter_map(|e| e.subscribed())
        .flatten()
        .cloned()
        .collect();
    let mut held = Vec::new();
    let mut seen = BTreeSet::new();
    for source in &data.event_types {
        if !seen.insert(source.name.as_str()) {
            report.items.push(twice(Kind::EventType, &source.name));
            continue;
        }
        let item = event_types::import(target, source, &subscribed, &mut held).await?;
        report.items.push(item);
    }
    let mut seen = BTreeSet::new();
    for app in &data.applications {
        let tenant = if seen.insert(app.id.as_str()) {
            let (item, tenant) = applications::import(target, app).await?;
            report.items.push(item);
            tenant
        } else {
            report.items.push(twice(Kind::Application, &app.id));
            None
        };
        let mut keys = BTreeSet::new();
        for ep in &app.endpoints {
            let label = format!("{}/{}", app.id, ep.id);
            let item = match &tenant {
                None => skipped(Kind::Endpoint, &label, "its application was not imported"),
                Some(_) if !keys.insert(ep.key()) => twice(Kind::Endpoint, &label),
                Some(tenant) => {
                    endpoints::import(target, tenant, &app.id, ep, signature_headers).await?
                }
            };
            report.items.push(item);
        }
    }
    event_types::archive_held(target, &held, report).await
}

/// The record of something not imported, and why.
fn skipped(kind: Kind, label: &str, reason: &str) -> Item {
    let mut ids = Map::new();
    ids.insert("source".into(), json!(label));
    Item {
        kind,
        label: label.to_owned(),
        ids,
        outcome: Outcome::Skipped(reason.to_owned()),
        notes: Vec::new(),
    }
}

/// The record of a second entry with the same name in the source.
fn twice(kind: Kind, label: &str) -> Item {
    skipped(
        kind,
        label,
        "the source gives it twice; the first is imported",
    )
}
