//! `[telemetry.otlp]`: OpenTelemetry traces exported over OTLP/HTTP (protobuf),
//! off unless an endpoint is given, here, in `HOOKGATE_TELEMETRY__OTLP__*` or
//! in the standard `OTEL_EXPORTER_OTLP_ENDPOINT` / `OTEL_SERVICE_NAME`.

use serde::{Deserialize, Serialize};

use super::values::de_duration_ms;
use super::{ConfigError, invalid};

/// The standard variables the server reads besides its own, and the keys they
/// set. They sit between the file and the `HOOKGATE_*` variables.
pub(super) const OTEL_VARS: [(&str, &str); 3] = [
    ("OTEL_EXPORTER_OTLP_ENDPOINT", "endpoint"),
    ("OTEL_SERVICE_NAME", "service_name"),
    ("OTEL_EXPORTER_OTLP_PROTOCOL", "protocol"),
];

/// `[telemetry]`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct TelemetryConfig {
    /// `[telemetry.otlp]`: trace export.
    pub otlp: OtlpConfig,
}

/// How spans travel to the collector. gRPC is not built in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
pub enum OtlpProtocol {
    /// OTLP over HTTP, `ExportTraceServiceRequest` as protobuf.
    #[default]
    #[serde(rename = "http/protobuf")]
    HttpProtobuf,
}

/// `[telemetry.otlp]`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct OtlpConfig {
    /// The collector's OTLP/HTTP base URL (`http://collector:4318`); spans go to
    /// its `/v1/traces`. Unset: no spans are made or exported.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    /// The wire format.
    pub protocol: OtlpProtocol,
    /// `service.name` of the spans' resource.
    pub service_name: String,
    /// Ended spans waiting for export at most; past it a span is dropped and
    /// counted, so export never holds up ingest or delivery.
    pub queue_spans: usize,
    /// Spans per export request at most.
    pub batch_spans: usize,
    /// How often waiting spans are exported.
    #[serde(deserialize_with = "de_duration_ms")]
    pub export_interval: u64,
    /// How long one export request may take.
    #[serde(deserialize_with = "de_duration_ms")]
    pub timeout: u64,
}

impl Default for OtlpConfig {
    fn default() -> Self {
        Self {
            endpoint: None,
            protocol: OtlpProtocol::HttpProtobuf,
            service_name: "hookgate".to_owned(),
            queue_spans: 4096,
            batch_spans: 512,
            export_interval: 1_000,
            timeout: 10_000,
        }
    }
}

impl OtlpConfig {
    /// Where spans are sent, when export is on.
    #[must_use]
    pub fn traces_url(&self) -> Option<String> {
        let base = self.endpoint.as_deref()?;
        Some(format!("{}/v1/traces", base.trim_end_matches('/')))
    }

    /// Checks the endpoint and the bounds.
    pub(super) fn validate(&self) -> Result<(), ConfigError> {
        if let Some(endpoint) = &self.endpoint {
            let key = "telemetry.otlp.endpoint";
            let url = url::Url::parse(endpoint)
                .map_err(|e| invalid(key, format!("not a URL ({e}): {endpoint:?}")))?;
            if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
                let message =
                    format!("must be an http:// or https:// URL with a host, got {endpoint:?}");
                return Err(invalid(key, message));
            }
            if url.query().is_some() || url.fragment().is_some() {
                return Err(invalid(key, "must have no query or fragment"));
            }
        }
        if self.service_name.trim().is_empty() {
            return Err(invalid("telemetry.otlp.service_name", "must not be empty"));
        }
        if !(1..=1_000_000).contains(&self.queue_spans) {
            return Err(invalid(
                "telemetry.otlp.queue_spans",
                "must be from 1 to 1000000",
            ));
        }
        if !(1..=self.queue_spans).contains(&self.batch_spans) {
            let message = "must be from 1 to queue_spans";
            return Err(invalid("telemetry.otlp.batch_spans", message));
        }
        if !(1..=60_000).contains(&self.export_interval) {
            let message = "must be from 1 ms to 1 minute";
            return Err(invalid("telemetry.otlp.export_interval", message));
        }
        if !(1..=60_000).contains(&self.timeout) {
            return Err(invalid(
                "telemetry.otlp.timeout",
                "must be from 1 ms to 1 minute",
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Config, ConfigError};
    use super::OtlpProtocol;

    fn load(file: Option<&str>, env: &[(&str, &str)]) -> Result<Config, ConfigError> {
        let env = env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned()));
        match file {
            Some(text) => Config::from_toml_str(text, env),
            None => Config::load(None, env),
        }
    }

    fn refusal(file: Option<&str>, env: &[(&str, &str)], key: &str) -> String {
        let message = load(file, env).unwrap_err().to_string();
        assert!(
            message.starts_with(&format!("config key `{key}`: ")),
            "{message}"
        );
        message
    }

    #[test]
    fn off_by_default() {
        let otlp = load(None, &[]).unwrap().telemetry.otlp;
        assert_eq!(otlp.endpoint, None);
        assert_eq!(otlp.traces_url(), None);
        assert_eq!(otlp.service_name, "hookgate");
        assert_eq!(otlp.protocol, OtlpProtocol::HttpProtobuf);
    }

    #[test]
    fn the_section_parses() {
        let text = "[telemetry.otlp]\nendpoint = 'http://collector:4318/'\nservice_name = 'gw-eu'\n\
                    protocol = 'http/protobuf'\nqueue_spans = 100\nbatch_spans = 10\n\
                    export_interval = '2s'\ntimeout = '3s'\n";
        let otlp = load(Some(text), &[]).unwrap().telemetry.otlp;
        let url = otlp.traces_url();
        assert_eq!(url.as_deref(), Some("http://collector:4318/v1/traces"));
        assert_eq!(otlp.service_name, "gw-eu");
        assert_eq!((otlp.queue_spans, otlp.batch_spans), (100, 10));
        assert_eq!((otlp.export_interval, otlp.timeout), (2_000, 3_000));
    }

    #[test]
    fn the_standard_variables_sit_between_the_file_and_hookgates_own() {
        let vars = [
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "https://otel.example:4318"),
            ("OTEL_SERVICE_NAME", "from-otel"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
        ];
        let file = "[telemetry.otlp]\nendpoint = 'http://file:4318'\nservice_name = 'from-file'\n";
        let otlp = load(Some(file), &vars).unwrap().telemetry.otlp;
        assert_eq!(otlp.endpoint.as_deref(), Some("https://otel.example:4318"));
        assert_eq!(otlp.service_name, "from-otel");
        let mut vars = vars.to_vec();
        vars.push(("HOOKGATE_TELEMETRY__OTLP__SERVICE_NAME", "from-hookgate"));
        vars.push(("HOOKGATE_TELEMETRY__OTLP__QUEUE_SPANS", "1024"));
        let otlp = load(Some(file), &vars).unwrap().telemetry.otlp;
        assert_eq!(
            (otlp.service_name.as_str(), otlp.queue_spans),
            ("from-hookgate", 1024)
        );
    }

    #[test]
    fn bad_values_are_named() {
        let endpoint = "telemetry.otlp.endpoint";
        for bad in [
            "ftp://x:21",
            "not a url",
            "http://c:4318/?a=1",
            "unix:/tmp/s",
        ] {
            refusal(None, &[("OTEL_EXPORTER_OTLP_ENDPOINT", bad)], endpoint);
        }
        let m = refusal(
            None,
            &[("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")],
            "telemetry.otlp.protocol",
        );
        assert!(m.contains("http/protobuf"), "{m}");
        refusal(
            None,
            &[("OTEL_SERVICE_NAME", " ")],
            "telemetry.otlp.service_name",
        );
        let section = |body: &str| format!("[telemetry.otlp]\n{body}\n");
        let cases = [
            ("queue_spans = 0", "telemetry.otlp.queue_spans"),
            (
                "queue_spans = 10\nbatch_spans = 11",
                "telemetry.otlp.batch_spans",
            ),
            ("export_interval = 0", "telemetry.otlp.export_interval"),
            ("timeout = '2m'", "telemetry.otlp.timeout"),
            ("queue_spans = 'many'", "telemetry.otlp.queue_spans"),
        ];
        for (body, key) in cases {
            refusal(Some(&section(body)), &[], key);
        }
        let unknown = load(Some(&section("sample = 1")), &[])
            .unwrap_err()
            .to_string();
        assert!(unknown.contains("telemetry.otlp.sample"), "{unknown}");
    }
}
