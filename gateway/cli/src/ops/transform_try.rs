//! `hookgate transform try --plugin FILE --event EVENT.json`: runs a transform
//! plugin on one event the way the gateway runs it before signing an attempt,
//! and prints the request it would send, with no gateway: the plugin is loaded
//! (upload checks 1–8) into a host of its own as tenant `local`'s `try`.
//!
//! `plugin-check --event` runs a plugin that passed checks 1–9 through the same
//! code: [`EndpointArgs`], [`read_event`], [`run_transform`] and [`render`].
//!
//! Exit codes: 0 a request to send, or a skip; 1 the transform failed
//! (`transform_failed: ...` on stdout); 2 a file that cannot be read or used, or
//! an option that cannot be understood (one line on stderr).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use clap::Subcommand;
use hookgate_server::{
    DestinationKind, Limits, PluginHost, PluginKind, TransformFacts, TransformMethod,
    TransformRequest, TransformRun, Transformed, parse_ingest_body,
};

/// The tenant a tried plugin is loaded for.
pub const TRY_TENANT: &str = "local";
/// The name a tried plugin is loaded under; its runs are labelled `try@1`.
pub const TRY_NAME: &str = "try";
/// The size limit of check 1: the gateway's default `limits.plugin_upload_bytes`.
const MAX_PLUGIN_BYTES: usize = 512 * 1024;
/// The endpoint URL when `--url` is not given.
pub const DEFAULT_URL: &str = "https://receiver.example/";
/// The exit code of a run whose transform failed.
pub const TRANSFORM_FAILED: i32 = 1;
/// The exit code of a mistake the user can fix.
pub const USAGE: i32 = 2;

/// `hookgate transform ...`.
#[derive(Subcommand, Debug)]
pub enum TransformCommand {
    /// Run a transform plugin on an event, as the gateway would before signing
    /// an attempt, and print the request it would send (no gateway needed).
    #[command(after_help = "Exit codes:\n  0  a request to send, or a skip\n  \
                      1  the transform failed (transform_failed)\n  \
                      2  a file that cannot be read or used, or a bad option")]
    Try(TryArgs),
}

/// Arguments of `transform try`.
#[derive(clap::Args, Debug)]
pub struct TryArgs {
    /// The transform's .wasm file: a core module built for wasm32-unknown-unknown,
    /// or a component.
    #[arg(long, value_name = "FILE")]
    pub plugin: PathBuf,
    /// The event, as the JSON body a platform POSTs to /v1/tenants/{t}/events
    /// (`event_type`, `payload`, optional `channels` and `tags`).
    #[arg(long, value_name = "EVENT.json")]
    pub event: PathBuf,
    #[command(flatten)]
    pub endpoint: EndpointArgs,
}

/// The endpoint the event goes to. Only with `--event`, which every command
/// that flattens these has.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct EndpointArgs {
    /// The endpoint's URL (default https://receiver.example/): the request's path
    /// and query come from it, and an answer must stay under it.
    #[arg(long, value_name = "URL", requires = "event")]
    pub url: Option<String>,
    /// The endpoint's metadata, which the transform reads; repeatable.
    #[arg(long = "metadata", value_name = "K=V", requires = "event")]
    pub metadata: Vec<String>,
    /// One of the endpoint's own headers, sent with the request (name in lower
    /// case); repeatable.
    #[arg(long = "header", value_name = "K=V", requires = "event")]
    pub headers: Vec<String>,
    /// The endpoint's destination: http (default), rabbitmq, nats, redis, sqs,
    /// sns or kinesis.
    #[arg(long, value_name = "KIND", requires = "event")]
    pub destination: Option<String>,
}

/// Why a transform could not be tried; every case is the user's to fix.
#[derive(Debug, thiserror::Error)]
pub enum TryError {
    /// A file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The event file is not an ingest body.
    #[error("{} is not an event as POST /v1/tenants/{{t}}/events takes it: {why}", path.display())]
    BadEvent { path: PathBuf, why: String },
    /// An endpoint option cannot be understood.
    #[error("{0}")]
    BadOption(String),
    /// The plugin failed an upload check.
    #[error("{} was refused by upload check {check}: {why}", path.display())]
    Refused {
        path: PathBuf,
        check: &'static str,
        why: String,
    },
    /// The plugin is a retry policy.
    #[error(
        "{} is a retry policy (hookgate:policy), not a transform; \
         only a transform can be run on an event", path.display()
    )]
    NotATransform { path: PathBuf },
    /// The plugin engine or the runtime could not start.
    #[error("cannot start the plugin engine: {0}")]
    Engine(String),
}

/// An event as a platform sends it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TryEvent {
    pub event_type: String,
    /// The payload's JSON text, exactly as in the file.
    pub payload: String,
    pub channels: Vec<String>,
    pub tags: Vec<String>,
}

/// [`EndpointArgs`], understood.
#[derive(Debug, Clone)]
pub struct TryEndpoint {
    pub url: url::Url,
    pub metadata: BTreeMap<String, String>,
    pub headers: Vec<(String, String)>,
    pub destination: DestinationKind,
}

/// What a run prints, and how the command ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    pub stdout: String,
    pub code: i32,
}

/// Runs `transform try`; returns the exit code.
pub fn run(command: TransformCommand) -> i32 {
    let TransformCommand::Try(args) = command;
    match try_file(&args) {
        Ok(rendered) => {
            print!("{}", rendered.stdout);
            rendered.code
        }
        Err(e) => {
            eprintln!("hookgate transform try: {e}");
            USAGE
        }
    }
}

/// Loads the plugin, runs it on the event and renders what it answered.
///
/// # Errors
/// See [`TryError`]; a failed transform is not an error but a rendering.
pub fn try_file(args: &TryArgs) -> Result<Rendered, TryError> {
    let event = read_event(&args.event)?;
    let endpoint = args.endpoint.parse()?;
    let bytes = std::fs::read(&args.plugin).map_err(|source| TryError::Read {
        path: args.plugin.clone(),
        source,
    })?;
    let host = PluginHost::new(MAX_PLUGIN_BYTES).map_err(|e| TryError::Engine(e.to_string()))?;
    host.load(TRY_TENANT, TRY_NAME, &bytes)
        .map_err(|e| match e.check() {
            Some(check) => TryError::Refused {
                path: args.plugin.clone(),
                check,
                // Some checks quote a parser's multi-line words; one line is kept.
                why: e
                    .to_string()
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" "),
            },
            None => TryError::Engine(e.to_string()),
        })?;
    if host.kind_of(TRY_TENANT, TRY_NAME) != Some(PluginKind::Transform) {
        return Err(TryError::NotATransform {
            path: args.plugin.clone(),
        });
    }
    let run = run_transform(&host, &event, &endpoint)?;
    Ok(render(&run, &endpoint.url))
}

/// Reads an event file: the body of `POST /v1/tenants/{t}/events`, parsed and
/// checked as the gateway does.
///
/// # Errors
/// `Read` or `BadEvent`.
pub fn read_event(path: &Path) -> Result<TryEvent, TryError> {
    let bytes = std::fs::read(path).map_err(|source| TryError::Read {
        path: path.to_owned(),
        source,
    })?;
    let body = parse_ingest_body(&bytes, Limits::default().event_type_len).map_err(|e| {
        let why = match e.field.as_deref() {
            Some(field) if !field.is_empty() => format!("{field}: {}", e.message),
            _ => e.message,
        };
        TryError::BadEvent {
            path: path.to_owned(),
            why,
        }
    })?;
    Ok(TryEvent {
        event_type: body.event_type,
        payload: body.payload.get().to_owned(),
        channels: body.channels,
        tags: body.tags,
    })
}

impl EndpointArgs {
    /// The endpoint these options describe.
    ///
    /// # Errors
    /// `BadOption`, naming the option.
    pub fn parse(&self) -> Result<TryEndpoint, TryError> {
        let bad = |message: String| TryError::BadOption(message);
        let text = self.url.as_deref().unwrap_or(DEFAULT_URL);
        let url = url::Url::parse(text)
            .ok()
            .filter(|u| u.has_host() && !u.cannot_be_a_base())
            .ok_or_else(|| bad(format!("--url {text:?} is not an absolute URL with a host")))?;
        let mut metadata = BTreeMap::new();
        for pair in &self.metadata {
            let (key, value) = split_pair(pair)
                .ok_or_else(|| bad(format!("--metadata {pair:?} is not KEY=VALUE")))?;
            metadata.insert(key.to_owned(), value.to_owned());
        }
        let mut headers = Vec::with_capacity(self.headers.len());
        for pair in &self.headers {
            let header = split_pair(pair).and_then(|(name, value)| {
                let name = http::HeaderName::from_bytes(name.as_bytes()).ok()?;
                http::HeaderValue::from_str(value).ok()?;
                Some((name.as_str().to_owned(), value.to_owned()))
            });
            headers.push(header.ok_or_else(|| {
                bad(format!(
                    "--header {pair:?} is not NAME=VALUE with a valid header name and value"
                ))
            })?);
        }
        let destination = match self.destination.as_deref() {
            None => DestinationKind::Http,
            Some(kind) => DestinationKind::ALL
                .into_iter()
                .find(|k| k.as_str() == kind)
                .ok_or_else(|| {
                    let kinds: Vec<&str> =
                        DestinationKind::ALL.iter().map(|k| k.as_str()).collect();
                    bad(format!(
                        "--destination {kind:?} is not one of {}",
                        kinds.join(", ")
                    ))
                })?,
        };
        Ok(TryEndpoint {
            url,
            metadata,
            headers,
            destination,
        })
    }
}

/// `KEY=VALUE` with a non-empty key.
fn split_pair(pair: &str) -> Option<(&str, &str)> {
    pair.split_once('=').filter(|(key, _)| !key.is_empty())
}

/// Runs `host`'s loaded `local`/`try` on `event` for `endpoint`, with the
/// request the gateway would send: a POST of the payload to the URL's path and
/// query, with the endpoint's headers.
///
/// # Errors
/// `Engine` if the runtime cannot start.
pub fn run_transform(
    host: &PluginHost,
    event: &TryEvent,
    endpoint: &TryEndpoint,
) -> Result<TransformRun, TryError> {
    let url = &endpoint.url;
    let path = match url.query() {
        Some(q) => format!("{}?{q}", url.path()),
        None => url.path().to_owned(),
    };
    let now_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    let facts = TransformFacts {
        event_id: "evt_try",
        event_type: &event.event_type,
        timestamp_ms: now_ms,
        payload: event.payload.as_bytes(),
        channels: &event.channels,
        tags: &event.tags,
        endpoint_id: "ep_try",
        endpoint_uid: None,
        metadata: &endpoint.metadata,
        destination: endpoint.destination,
        request: TransformRequest {
            method: TransformMethod::Post,
            path,
            headers: endpoint.headers.clone(),
            body: event.payload.as_bytes().to_vec(),
            content_type: "application/json".to_owned(),
        },
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| TryError::Engine(e.to_string()))?;
    Ok(runtime.block_on(host.transform(TRY_TENANT, TRY_NAME, &facts, url)))
}

/// What a run prints: the request to send and how long the run took, the skip,
/// or the failure.
pub fn render(run: &TransformRun, endpoint_url: &url::Url) -> Rendered {
    let request = match &run.result {
        Ok(Transformed::Send(request)) => request,
        Ok(Transformed::Skip(reason)) => {
            return Rendered {
                stdout: format!("skipped: {reason}\n"),
                code: 0,
            };
        }
        Err(failure) => {
            return Rendered {
                stdout: format!("transform_failed: {failure}\n"),
                code: TRANSFORM_FAILED,
            };
        }
    };
    // The answer's path passed the host's checks, so it joins.
    let target = endpoint_url
        .join(&request.path)
        .map_or_else(|_| request.path.clone(), String::from);
    let mut out = format!("{} {target}\n", request.method.as_str());
    out.push_str(&format!("content-type: {}\n", request.content_type));
    for (name, value) in &request.headers {
        out.push_str(&format!("{name}: {value}\n"));
    }
    out.push('\n');
    match std::str::from_utf8(&request.body) {
        Ok(text) => out.push_str(text),
        Err(_) => out.push_str(&format!("<{} bytes, not UTF-8>", request.body.len())),
    }
    if !out.ends_with('\n') {
        out.push('\n');
    }
    let label = run.label.as_deref().unwrap_or(TRY_NAME);
    out.push_str(&format!("transform {label} ran in {} µs\n", run.run_us));
    Rendered {
        stdout: out,
        code: 0,
    }
}

#[cfg(test)]
#[path = "transform_try_tests.rs"]
mod tests;
