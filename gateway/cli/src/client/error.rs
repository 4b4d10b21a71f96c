//! What can go wrong in a client command, as one line that says what to do,
//! and the exit code each failure maps to.

use std::fmt;

/// Exit code: the command succeeded.
pub(super) const EXIT_OK: i32 = 0;
/// Exit code: the gateway answered with an error (or `verify` found the request invalid).
pub(super) const EXIT_API: i32 = 1;
/// Exit code: the command line or its input was wrong.
pub(super) const EXIT_USAGE: i32 = 2;
/// Exit code: the gateway could not be reached.
pub(super) const EXIT_UNREACHABLE: i32 = 3;

/// An error answer from the API: `{"error":{"code","message","field"?}}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiFailure {
    pub(super) status: u16,
    pub(super) code: String,
    pub(super) message: String,
    pub(super) field: Option<String>,
    /// `METHOD /path`, for messages.
    pub(super) route: String,
}

/// Why a client command failed.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The gateway answered with an API error.
    #[error("{}", api_line(.0))]
    Api(ApiFailure),
    /// The gateway has no such route: it predates the feature.
    #[error(
        "not supported by this gateway yet: {} (it has no route {route}); upgrade the gateway to use it",
        feature.unwrap_or("this operation")
    )]
    NotSupported {
        feature: Option<&'static str>,
        route: String,
    },
    /// The gateway answered, but not with the API's JSON.
    #[error(
        "unexpected answer {status} from {url}: {snippet}; is --url (or HOOKGATE_URL) a hookgate gateway?"
    )]
    Unexpected {
        status: u16,
        url: String,
        snippet: String,
    },
    /// No answer at all.
    #[error(
        "cannot reach the gateway at {url}: {reason}; check --url (or HOOKGATE_URL) and that `hookgate serve` is running there"
    )]
    Unreachable { url: String, reason: String },
    /// A bad argument or unreadable input.
    #[error("{0}")]
    Usage(String),
}

impl CliError {
    /// The process exit code for this failure.
    pub(super) fn exit_code(&self) -> i32 {
        match self {
            Self::Api(_) | Self::NotSupported { .. } | Self::Unexpected { .. } => EXIT_API,
            Self::Usage(_) => EXIT_USAGE,
            Self::Unreachable { .. } => EXIT_UNREACHABLE,
        }
    }

    /// Names the feature in a "not supported yet" error; other errors pass through.
    pub(super) fn feature(self, name: &'static str) -> Self {
        match self {
            Self::NotSupported { route, .. } => Self::NotSupported {
                feature: Some(name),
                route,
            },
            other => other,
        }
    }
}

/// One line per API error: what went wrong and what to do about it.
fn api_line(f: &ApiFailure) -> String {
    let m = &f.message;
    let code = &f.code;
    match (f.status, code.as_str()) {
        (401, _) => {
            format!("the token is missing or wrong: set HOOKGATE_TOKEN or --token ({code}: {m})")
        }
        // A portal session's refusal names what it lacks; say that instead.
        (403, _) if m.contains("portal session") => format!("{} refused: {m} ({code})", f.route),
        (403, _) => format!(
            "{} needs the admin token, not a tenant key: set HOOKGATE_TOKEN or --token to the admin token ({code})",
            f.route
        ),
        (404, _) => format!(
            "{m}: check the id and --tenant (a tenant key sees only its own tenant) ({code})"
        ),
        (409, _) if m.contains("\"force\"") => {
            format!("conflict: {m}; with this CLI, add --force ({code})")
        }
        // The gateway names the binding endpoints; the CLI names the command.
        (409, _) if m.contains("unbind it first") => format!(
            "conflict: {m}; with this CLI, run plugin unbind --endpoint ID for each ({code})"
        ),
        (409, _) => format!("conflict: {m} ({code})"),
        (413, _) => format!("too large: {m}; send something smaller ({code})"),
        // The same code covers the operator's egress allow-list, which no
        // private-subnet setting lifts.
        (422, "url_blocked") if m.contains("outbound.allow_only") => format!(
            "{m}: the gateway delivers only to the hosts its operator allow-listed; ask them to add this one ({code})"
        ),
        (422, "url_blocked") => format!(
            "{m}: the gateway refuses private and special addresses unless allow_private_subnets lists them ({code})"
        ),
        (422, "idempotency_key_reused") => {
            format!("{m}: use a new --idempotency-key for a different event ({code})")
        }
        (422, "plugin_rejected") => format!("plugin rejected: {m} ({code})"),
        (400 | 422, _) => match &f.field {
            Some(field) if !field.is_empty() => format!("invalid {field}: {m} ({code})"),
            _ => format!("invalid request: {m} ({code})"),
        },
        (503, _) => format!("the gateway's storage is unavailable: {m}; retry later ({code})"),
        (507, _) => format!(
            "the gateway's disk is nearly full: {m}; free disk space on the gateway, then retry ({code})"
        ),
        (status, _) => format!("{} failed with {status}: {m} ({code})", f.route),
    }
}

impl fmt::Display for ApiFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&api_line(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(status: u16, code: &str, field: Option<&str>) -> CliError {
        CliError::Api(ApiFailure {
            status,
            code: code.into(),
            message: "msg".into(),
            field: field.map(Into::into),
            route: "GET /v1/tenants".into(),
        })
    }

    #[test]
    fn a_url_outside_the_egress_allow_list_is_not_blamed_on_private_subnets() {
        let mut blocked = ApiFailure {
            status: 422,
            code: "url_blocked".into(),
            message: "URL host example.com is not in the egress allow-list (outbound.allow_only)"
                .into(),
            field: Some("url".into()),
            route: "POST /v1/tenants/acme/endpoints".into(),
        };
        let line = blocked.to_string();
        assert!(line.contains("allow-listed") && !line.contains("allow_private_subnets"));
        blocked.message = "URL host is or resolves to the blocked address 10.0.0.1".into();
        assert!(blocked.to_string().contains("allow_private_subnets"));
    }

    #[test]
    fn a_plugin_still_bound_names_the_command_that_unbinds_it() {
        let bound = ApiFailure {
            status: 409,
            code: "conflict".into(),
            message: "plugin \"retry\" is bound by endpoint(s) ep_1, ep_2; unbind it first".into(),
            field: None,
            route: "DELETE /v1/tenants/acme/plugins/retry".into(),
        };
        assert_eq!(
            bound.to_string(),
            "conflict: plugin \"retry\" is bound by endpoint(s) ep_1, ep_2; unbind it first; \
             with this CLI, run plugin unbind --endpoint ID for each (conflict)"
        );
    }

    #[test]
    fn each_error_is_one_line_with_advice_and_its_exit_code() {
        let cases = [
            (failure(401, "unauthorized", None), "HOOKGATE_TOKEN", 1),
            (failure(403, "forbidden", None), "admin token", 1),
            (failure(404, "not_found", None), "check the id", 1),
            (failure(409, "conflict", None), "conflict: msg", 1),
            (failure(413, "payload_too_large", None), "smaller", 1),
            (
                failure(422, "validation_failed", Some("policy.base_ms")),
                "invalid policy.base_ms: msg",
                1,
            ),
            (failure(503, "store_unavailable", None), "retry later", 1),
            (failure(507, "insufficient_storage", None), "free disk", 1),
            (CliError::Usage("bad".into()), "bad", 2),
            (
                CliError::Unreachable {
                    url: "http://h:1/v1".into(),
                    reason: "refused".into(),
                },
                "http://h:1/v1",
                3,
            ),
            (
                CliError::NotSupported {
                    feature: None,
                    route: "GET /v1/stats".into(),
                }
                .feature("stats"),
                "not supported by this gateway yet: stats",
                1,
            ),
        ];
        for (err, needle, code) in cases {
            let line = err.to_string();
            assert!(line.contains(needle), "{line}");
            assert!(!line.contains('\n'), "{line}");
            assert_eq!(err.exit_code(), code, "{line}");
        }
    }
}
