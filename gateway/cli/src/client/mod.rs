//! The API client subcommands (`hookgate tenants ...`, `endpoints ...`, `events ...`,
//! `deliveries ...`, `dlq ...`, `plugin ...`, `tasks ...`, `stats`), `hookgate import svix`
//! to move a platform from Svix, `hookgate verify` for receivers, and shell completions.
//!
//! Every API command reads the gateway's address and a token from `--url` /
//! `HOOKGATE_URL` and `--token` / `HOOKGATE_TOKEN`, prints a human table by default
//! and the API's JSON unchanged with `--json`, and reports a failure as one line on
//! stderr with an exit code: 0 success, 1 API error, 2 usage error, 3 unreachable.

pub mod attempts;
pub mod deliveries;
pub mod endpoint_destination;
pub mod endpoints;
pub mod event_types;
pub mod events;
pub mod import;
pub mod operator_endpoints;
pub mod plugins;
pub mod portal_sessions;
pub mod stats;
pub mod tasks;
pub mod tenants;
pub mod verify;

mod api_client;
mod capture;
mod endpoint_stats;
mod endpoint_view;
mod error;
mod input;
mod request;
mod table;
mod timeline;

use std::io::Write;

use clap::{Args, CommandFactory, Subcommand};
use serde_json::Value;

use api_client::Reply;
pub use api_client::{Answer, ApiClient, ApiRequest};
pub use error::{ApiFailure, CliError};
use error::{EXIT_OK, EXIT_USAGE};

/// The exit codes, shown under every API command's `--help`.
const EXIT_CODES: &str = "\
Exit codes:
  0  success
  1  the gateway answered with an error (the message says what to do)
  2  usage error: bad arguments, --data that is not JSON, an unreadable file
  3  the gateway could not be reached (the message names the URL tried)";

/// Client subcommands.
#[derive(Subcommand)]
pub enum ClientCommand {
    /// Tenants and their API keys (admin token).
    #[command(after_help = EXIT_CODES)]
    Tenants {
        #[command(flatten)]
        conn: Connection,
        #[command(subcommand)]
        command: tenants::TenantsCommand,
    },
    /// Background tasks: a tenant's delete, an endpoint's recovery.
    #[command(after_help = EXIT_CODES)]
    Tasks {
        #[command(flatten)]
        conn: Connection,
        #[command(subcommand)]
        command: tasks::TasksCommand,
    },
    /// A tenant's endpoints and their signing secrets.
    #[command(after_help = EXIT_CODES)]
    Endpoints {
        #[command(flatten)]
        conn: Connection,
        #[command(subcommand)]
        command: endpoints::EndpointsCommand,
    },
    /// The event-type catalog: names, schemas, examples (the admin writes it).
    #[command(after_help = EXIT_CODES)]
    EventTypes {
        #[command(flatten)]
        conn: Connection,
        #[command(subcommand)]
        command: event_types::EventTypesCommand,
    },
    /// Where operator events go: the admin's, or a tenant's with --tenant.
    #[command(after_help = EXIT_CODES)]
    OperatorEndpoints {
        #[command(flatten)]
        conn: Connection,
        #[command(subcommand)]
        command: operator_endpoints::OperatorEndpointsCommand,
    },
    /// Portal sessions for a tenant's customers: mint one, or revoke them all.
    #[command(after_help = EXIT_CODES)]
    PortalSessions {
        #[command(flatten)]
        conn: Connection,
        #[command(subcommand)]
        command: portal_sessions::PortalSessionsCommand,
    },
    /// Send events and follow their deliveries.
    #[command(after_help = EXIT_CODES)]
    Events {
        #[command(flatten)]
        conn: Connection,
        #[command(subcommand)]
        command: events::EventsCommand,
    },
    /// Search attempts, or show one with the request headers sent.
    #[command(after_help = EXIT_CODES)]
    Attempts {
        #[command(flatten)]
        conn: Connection,
        #[command(subcommand)]
        command: attempts::AttemptsCommand,
    },
    /// List deliveries, or show one with its attempt timeline.
    #[command(after_help = EXIT_CODES)]
    Deliveries {
        #[command(flatten)]
        conn: Connection,
        #[command(subcommand)]
        command: deliveries::DeliveriesCommand,
    },
    /// The dead-letter queue: dead deliveries, and replaying them.
    #[command(after_help = EXIT_CODES)]
    Dlq {
        #[command(flatten)]
        conn: Connection,
        #[command(subcommand)]
        command: deliveries::DlqCommand,
    },
    /// Retry-policy plugins (WebAssembly): create one, upload, list, roll back,
    /// delete, and bind to an endpoint.
    #[command(after_help = EXIT_CODES)]
    Plugin {
        #[command(subcommand)]
        command: plugins::PluginGroup,
    },
    /// Delivery statistics, for the gateway (admin) or one tenant.
    #[command(after_help = EXIT_CODES)]
    Stats {
        #[command(flatten)]
        conn: Connection,
        #[command(flatten)]
        args: stats::StatsArgs,
    },
    /// Move a platform to hookgate from another webhook service (Svix): its
    /// event types, applications and endpoints (admin token).
    Import {
        #[command(flatten)]
        conn: Connection,
        #[command(subcommand)]
        command: import::ImportCommand,
    },
    /// Check a captured webhook request's signature, as a receiver would.
    #[command(after_help = verify::EXIT_CODES)]
    Verify(verify::VerifyArgs),
    /// Print a shell completion script.
    ///
    /// For example: `hookgate completions bash > /etc/bash_completion.d/hookgate`.
    Completions {
        /// The shell to complete for.
        shell: clap_complete::Shell,
    },
}

/// Where the gateway is, who is asking, and how to print.
#[derive(Args, Debug, Clone)]
pub struct Connection {
    /// The gateway's base URL.
    #[arg(
        long,
        global = true,
        help_heading = "Global options",
        env = "HOOKGATE_URL",
        default_value = "http://127.0.0.1:8080",
        value_name = "URL"
    )]
    pub url: String,
    /// The admin token, or a tenant's API key.
    #[arg(
        long,
        global = true,
        help_heading = "Global options",
        env = "HOOKGATE_TOKEN",
        hide_env_values = true,
        value_name = "TOKEN"
    )]
    pub token: Option<String>,
    /// Print the API's JSON answer unchanged, for scripts.
    #[arg(long, global = true, help_heading = "Global options")]
    pub json: bool,
}

/// The tenant a command acts for.
#[derive(Args, Debug)]
pub struct Tenant {
    /// The tenant id.
    #[arg(long, env = "HOOKGATE_TENANT")]
    tenant: String,
}

/// Runs a client subcommand; returns the process exit code.
pub fn run(command: ClientCommand) -> i32 {
    match command {
        ClientCommand::Tenants { conn, command } => {
            session(conn, async |s| tenants::run(s, command).await)
        }
        ClientCommand::Tasks { conn, command } => {
            session(conn, async |s| tasks::run(s, command).await)
        }
        ClientCommand::Endpoints { conn, command } => {
            session(conn, async |s| endpoints::run(s, command).await)
        }
        ClientCommand::EventTypes { conn, command } => {
            session(conn, async |s| event_types::run(s, command).await)
        }
        ClientCommand::OperatorEndpoints { conn, command } => {
            session(conn, async |s| operator_endpoints::run(s, command).await)
        }
        ClientCommand::PortalSessions { conn, command } => {
            session(conn, async |s| portal_sessions::run(s, command).await)
        }
        ClientCommand::Events { conn, command } => {
            session(conn, async |s| events::run(s, command).await)
        }
        ClientCommand::Attempts { conn, command } => {
            session(conn, async |s| attempts::run(s, command).await)
        }
        ClientCommand::Deliveries { conn, command } => {
            session(conn, async |s| deliveries::run(s, command).await)
        }
        ClientCommand::Dlq { conn, command } => {
            session(conn, async |s| deliveries::run_dlq(s, command).await)
        }
        ClientCommand::Plugin {
            command: plugins::PluginGroup::New(args),
        } => crate::ops::plugin_new::run(&args),
        ClientCommand::Plugin {
            command: plugins::PluginGroup::Gateway(command),
        } => {
            let conn = command.connection().clone();
            session(conn, async |s| plugins::run(s, command).await)
        }
        ClientCommand::Stats { conn, args } => session(conn, async |s| stats::run(s, args).await),
        ClientCommand::Import { conn, command } => import::run(conn, command),
        ClientCommand::Verify(args) => verify::run(&args),
        ClientCommand::Completions { shell } => {
            let mut script = Vec::new();
            let mut cli = crate::Cli::command();
            clap_complete::generate(shell, &mut cli, "hookgate", &mut script);
            out(&String::from_utf8_lossy(&script));
            EXIT_OK
        }
    }
}

/// Connects, runs `body` on a current-thread runtime, and turns its outcome into
/// an exit code, printing a failure as one line.
fn session(conn: Connection, body: impl AsyncFnOnce(&Session) -> Result<(), CliError>) -> i32 {
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
    let result = ApiClient::new(&conn.url, conn.token).and_then(|api| {
        let session = Session {
            api,
            json: conn.json,
        };
        runtime.block_on(body(&session))
    });
    match result {
        Ok(()) => EXIT_OK,
        Err(e) => {
            eprintln!("error: {e}");
            e.exit_code()
        }
    }
}

/// What every API command works with.
struct Session {
    api: ApiClient,
    json: bool,
}

impl Session {
    /// Sends a request.
    ///
    /// # Errors
    /// As [`ApiClient::send`].
    pub(super) async fn send(&self, req: ApiRequest) -> Result<Reply, CliError> {
        self.api.send(req).await
    }

    /// Whether `--json` was given.
    pub(super) fn json(&self) -> bool {
        self.json
    }

    /// Prints a reply: its raw JSON with `--json`, else `human` of it.
    pub(super) fn show(&self, reply: &Reply, human: impl FnOnce(&Value) -> String) {
        if self.json {
            out(&String::from_utf8_lossy(&reply.raw));
        } else {
            out(&human(&reply.json));
        }
    }
}

/// Writes to stdout, ending with a newline; a closed pipe is not an error.
fn out(text: &str) {
    if text.is_empty() {
        return;
    }
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes());
    if !text.ends_with('\n') {
        let _ = stdout.write_all(b"\n");
    }
    let _ = stdout.flush();
}

/// The `data` array of a list answer.
fn list_items(v: &Value) -> &[Value] {
    v["data"].as_array().map_or(&[], Vec::as_slice)
}

/// The time range, order and paging of a list that pages both ways.
#[derive(Args, Debug)]
pub struct PagedList {
    /// Only those at or after TIME, an RFC 3339 time or a duration meaning
    /// that long ago (90s, 30m, 2h, 1d12h).
    #[arg(long, value_name = "TIME", value_parser = input::time_arg)]
    since: Option<String>,
    /// Only those before TIME (the same forms as --since).
    #[arg(long, value_name = "TIME", value_parser = input::time_arg)]
    until: Option<String>,
    /// Oldest first.
    #[arg(long)]
    oldest_first: bool,
    /// How many to show (1 to 250).
    #[arg(long)]
    limit: Option<u32>,
    /// Continue from a page's next (or previous) cursor.
    #[arg(long)]
    cursor: Option<String>,
}

impl PagedList {
    /// `req` with these as its query.
    fn on(self, req: ApiRequest) -> ApiRequest {
        req.query("since", self.since)
            .query("until", self.until)
            .query("order", self.oldest_first.then_some("ascending"))
            .query("limit", self.limit)
            .query("cursor", self.cursor)
    }
}

/// What is printed under a list that pages both ways: how many stored
/// `what` the page read, and the cursors to the pages after and before.
fn both_ways_footer(v: &Value, what: &str) -> String {
    let mut out = format!("read {} stored {what}\n", table::cell(&v["scanned"]));
    for (label, key) in [
        ("next page", "next_cursor"),
        ("previous page", "prev_cursor"),
    ] {
        if let Some(c) = v[key].as_str() {
            out.push_str(&format!("{label}: --cursor {c}\n"));
        }
    }
    out
}

/// The hint printed under a list when more pages follow.
fn next_page(v: &Value) -> String {
    match v["next_cursor"].as_str() {
        Some(c) => format!("more: repeat with --cursor {c}\n"),
        None => String::new(),
    }
}
