//! The config's sections: limits, TLS, breaker, ingest, stats, tasks, metrics,
//! alerts, policy and plugins.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::address_guard::EgressRule;

use super::values::{de_byte_size, de_duration_list_ms, de_duration_ms};

/// `[breaker]`: when an endpoint's circuit opens, and for how long.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct BreakerConfig {
    /// Consecutive failed attempts (non-2xx or transport errors) that open it.
    pub failure_threshold: u32,
    /// Cool-downs of successive trips; the last repeats.
    #[serde(deserialize_with = "de_duration_list_ms")]
    pub cooldowns: Vec<u64>,
}

impl Default for BreakerConfig {
    fn default() -> Self {
        const MIN: u64 = 60_000;
        Self {
            failure_threshold: 20,
            cooldowns: vec![10 * MIN, 30 * MIN, 120 * MIN, 1440 * MIN],
        }
    }
}

/// `[outbound]`: where deliveries may go.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct OutboundConfig {
    /// When set, an endpoint URL's host must match an entry (a CIDR for an IP
    /// literal, a host pattern for a name) at creation, on change and at
    /// connect time. The alert endpoint is exempt. Unset: any host.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allow_only: Option<Vec<EgressRule>>,
}

/// `[metrics]`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct MetricsConfig {
    /// Adds an attempt counter labelled by endpoint id. Off by default: label
    /// cardinality then grows with the number of endpoints.
    pub per_endpoint_labels: bool,
}

/// `[alerts]`. Every alert goes to the log; with `url` set it is also delivered
/// there as a signed webhook, through hookgate's own queue and retries.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct AlertsConfig {
    /// Where alerts are delivered (exempt from the private-address block).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// `whsec_...` secret the alert webhooks are signed with; generated and kept
    /// in the data dir when unset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
    /// The operator event types `alerts.url` receives (types or patterns).
    pub event_types: Vec<String>,
    /// The window of the rate rules.
    #[serde(deserialize_with = "de_duration_ms")]
    pub window: u64,
    /// No second alert for the same subject sooner than this after the last.
    #[serde(deserialize_with = "de_duration_ms")]
    pub cooldown: u64,
    /// DLQ growth: more than this many deliveries dead within the window.
    pub dlq_growth: u64,
    /// An endpoint with this many consecutive failed attempts.
    pub consecutive_failures: u32,
    /// An endpoint failing more than this share of attempts within the window...
    pub failure_rate: f64,
    /// ...out of at least this many attempts.
    pub failure_rate_min_attempts: u64,
    /// Receiver clock skew above this, from responses' `Date` header.
    #[serde(deserialize_with = "de_duration_ms")]
    pub clock_skew: u64,
}

impl Default for AlertsConfig {
    fn default() -> Self {
        Self {
            url: None,
            secret: None,
            event_types: vec!["alert.*".to_owned()],
            window: 600_000,
            cooldown: 3_600_000,
            dlq_growth: 100,
            consecutive_failures: 10,
            failure_rate: 0.5,
            failure_rate_min_attempts: 20,
            clock_skew: 60_000,
        }
    }
}

/// `[ingest]`: admission, which slows a tenant's ingest (never refuses it)
/// while its delivery backlog is larger than delivery can work off.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct IngestConfig {
    /// A tenant's first attempts due and not started (over its endpoints that
    /// their own breaker or rate limit does not hold) above which its next
    /// ingest waits; 0 turns admission off.
    pub backlog_per_tenant: u64,
    /// The longest one ingest waits for its tenant's backlog to fall; it is
    /// accepted then regardless.
    #[serde(deserialize_with = "de_duration_ms")]
    pub admission_wait: u64,
}

impl Default for IngestConfig {
    fn default() -> Self {
        Self {
            backlog_per_tenant: 10_000,
            admission_wait: 2_000,
        }
    }
}

/// `[stats]`: per-endpoint delivery stats with history, in time buckets kept in
/// the store.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct StatsConfig {
    /// The width of a bucket, in seconds; buckets are aligned to the epoch.
    pub bucket_seconds: u32,
    /// How long buckets are kept, in hours; older ones are swept.
    pub history_hours: u32,
    /// How often each gateway adds what it counted to the store (and once
    /// more at shutdown); what a crash loses is at most this much.
    #[serde(deserialize_with = "de_duration_ms")]
    pub flush_ms: u64,
}

impl StatsConfig {
    /// The most buckets the history may hold, so that one answer stays small.
    pub const MAX_BUCKETS: u64 = 10_000;

    /// A bucket's width in milliseconds.
    pub fn bucket_ms(&self) -> u64 {
        u64::from(self.bucket_seconds) * 1_000
    }

    /// The history kept, in milliseconds.
    pub fn history_ms(&self) -> u64 {
        u64::from(self.history_hours) * 3_600_000
    }
}

impl Default for StatsConfig {
    fn default() -> Self {
        Self {
            bucket_seconds: 300,
            history_hours: 48,
            flush_ms: 5_000,
        }
    }
}

/// `[event_types]`: how the event-type catalog binds endpoints.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct EventTypesConfig {
    /// Endpoints may subscribe only to names the catalog holds (patterns
    /// such as `order.*` are still accepted): an unknown name is refused.
    pub strict: bool,
}

/// `[console]`: the web console as a portal other sites embed.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct ConsoleConfig {
    /// Origins (`https://app.example.com`) whose pages may frame the console;
    /// none: no page may.
    pub embed_origins: Vec<String>,
    /// The console's address as customers reach it (`https://hooks.example.com/console/`),
    /// which portal-session URLs start with; unset: they are paths (`/console/#...`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub public_url: Option<String>,
}

/// `[tasks]`: background tasks (deleting a tenant, recovering an endpoint).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct TasksConfig {
    /// Records one step of a task reads or changes; each step is saved, so a
    /// restart redoes at most one.
    pub batch: u32,
    /// A pause after each step, so that a large task leaves the store to
    /// delivery.
    #[serde(deserialize_with = "de_duration_ms")]
    pub pause: u64,
}

impl Default for TasksConfig {
    fn default() -> Self {
        Self {
            batch: 500,
            pause: 10,
        }
    }
}

/// `[policy]`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct PolicyConfig {
    /// The same policy object as the endpoint API's `"policy"` (docs/policies.md).
    pub default: crate::policy::PolicySpec,
}

/// `[plugins]`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct PluginsConfig {
    /// Plugins loaded from files at start (`[[plugins.preload]]`), until uploads exist.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub preload: Vec<PreloadPlugin>,
    /// Versions kept per plugin; older ones are dropped from memory, the store
    /// and the artifact cache, except the active one and any an endpoint binds.
    pub keep_versions: u32,
    /// Instance slots of the plugin engine's pool, whatever the core count: enough
    /// that active plugins do not evict each other's warm slots.
    pub slots: u32,
}

impl Default for PluginsConfig {
    fn default() -> Self {
        Self {
            preload: Vec::new(),
            keep_versions: 10,
            slots: crate::plugin_runtime::DEFAULT_SLOTS,
        }
    }
}

/// One plugin loaded from a file at start.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PreloadPlugin {
    /// The tenant that owns it.
    pub tenant: String,
    /// The name endpoints bind.
    pub name: String,
    /// A `.wasm` core module or component.
    pub path: PathBuf,
}

/// Input limits: every input has one (rule 9). All must be greater than zero.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// Largest JSON request body, in bytes.
    #[serde(deserialize_with = "de_byte_size")]
    pub json_body_bytes: usize,
    /// Largest plugin upload, in bytes.
    #[serde(deserialize_with = "de_byte_size")]
    pub plugin_upload_bytes: usize,
    /// Longest event type, in bytes.
    pub event_type_len: usize,
    /// Longest endpoint URL, in bytes.
    pub url_len: usize,
    /// Longest endpoint description, in characters.
    pub description_len: usize,
    /// Longest idempotency key, in bytes.
    pub idempotency_key_len: usize,
    /// Most endpoints a tenant may have.
    pub endpoints_per_tenant: usize,
    /// Most plugins a tenant may have.
    pub plugins_per_tenant: usize,
    /// Most event types one endpoint may filter on.
    pub event_types_per_endpoint: usize,
    /// Most event types the catalog may hold (it is kept in memory whole).
    pub catalog_event_types: usize,
    /// Most request headers (more: 431).
    pub max_headers: usize,
    /// Largest request head, headers included, in bytes (more: 431); at least 8 KiB.
    #[serde(deserialize_with = "de_byte_size")]
    pub header_bytes: usize,
    /// Most open client connections (more: 503, then closed).
    pub max_connections: usize,
    /// Most open connections from one client address (more: 503, then closed).
    pub connections_per_peer: usize,
    /// Longest time a connection may take to send a request head, from when
    /// it opens or its last answer was sent (more: closed), so an idle or
    /// trickling client cannot hold a connection.
    #[serde(deserialize_with = "de_duration_ms")]
    pub header_read_timeout: u64,
    /// Longest time to receive a whole request body, from the end of its head
    /// (more: 408, then closed), so a trickling client cannot hold a connection.
    #[serde(deserialize_with = "de_duration_ms")]
    pub body_read_timeout: u64,
    /// Most request bodies one tenant may have being read at once (more: 429);
    /// per tenant, not per address, since a load balancer shares one address.
    pub body_reads_per_tenant: usize,
}

/// Outbound TLS settings for deliveries.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct TlsConfig {
    /// PEM file of CA certificates trusted in addition to the webpki roots.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extra_ca_file: Option<PathBuf>,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            json_body_bytes: 256 * 1024,
            plugin_upload_bytes: 512 * 1024,
            event_type_len: 128,
            url_len: 2048,
            description_len: 1024,
            idempotency_key_len: 255,
            endpoints_per_tenant: 100,
            plugins_per_tenant: 20,
            event_types_per_endpoint: 64,
            catalog_event_types: 5_000,
            max_headers: 64,
            header_bytes: 16 * 1024,
            max_connections: 1024,
            connections_per_peer: 256,
            header_read_timeout: 5_000,
            body_read_timeout: 10_000,
            body_reads_per_tenant: 64,
        }
    }
}

/// `[destinations]`: what broker destinations may use from the operator.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct DestinationsConfig {
    /// Credentials tenants refer to by name (`"credentials": {"name": "…"}`),
    /// so the secret never passes through the API.
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub credentials: std::collections::BTreeMap<String, crate::destination::NamedCredentials>,
}
