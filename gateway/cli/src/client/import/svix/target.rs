//! The gateway imported into, through API v1 with the admin token: reading a
//! record (absent is `None`), and writing one unless the run is a dry run.
//! Which failures end the whole import (the gateway unreachable, the token
//! refused, its storage failing) and which only the record they were about
//! (a field refused, a uid taken) is decided here.

use http::Method;
use serde_json::Value;

use crate::client::error::CliError;
use crate::client::{ApiClient, ApiRequest};

/// A write a dry run would have made.
pub(super) const NOT_WRITTEN: &str = "(not written: dry run)";

/// The gateway, and whether to write to it.
pub(super) struct Target {
    api: ApiClient,
    pub(super) dry_run: bool,
}

/// The gateway's refusal of one record's write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Refusal {
    /// The CLI's one line for it.
    pub(super) message: String,
    /// The field a 422 names (`headers.x-api-key`).
    pub(super) field: Option<String>,
}

/// How a record's write ended, when not with the whole import.
pub(super) type Written = Result<Value, Refusal>;

impl Target {
    pub(super) fn new(api: ApiClient, dry_run: bool) -> Self {
        Self { api, dry_run }
    }

    /// Checks that the gateway answers and that the token is the admin's,
    /// before anything is read from the source.
    ///
    /// # Errors
    /// The gateway's refusal, or that it cannot be reached.
    pub(super) async fn check_admin(&self) -> Result<(), CliError> {
        let req = ApiRequest::new(Method::GET, &["tenants"]).query("limit", Some(1));
        self.api.send(req).await.map(drop)
    }

    /// The record at `segments` under `/v1/`; `None` when there is none (404).
    ///
    /// # Errors
    /// Any other failure ends the import: a read the gateway refuses is not
    /// one record's problem.
    pub(super) async fn find(&self, segments: &[&str]) -> Result<Option<Value>, CliError> {
        match self.api.send(ApiRequest::new(Method::GET, segments)).await {
            Ok(reply) => Ok(Some(reply.json)),
            Err(CliError::Api(f)) if f.status == 404 => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Writes `body` to `segments` (a `PATCH` as a JSON merge patch), or on a
    /// dry run only answers [`NOT_WRITTEN`].
    ///
    /// # Errors
    /// A failure that ends the import (see [`settle`]); a refusal of this
    /// record is `Ok(Err(refusal))`.
    pub(super) async fn write(
        &self,
        method: Method,
        segments: &[&str],
        body: &Value,
    ) -> Result<Written, CliError> {
        if self.dry_run {
            return Ok(Ok(Value::String(NOT_WRITTEN.into())));
        }
        let req = ApiRequest::new(method.clone(), segments);
        let req = if method == Method::PATCH {
            req.bytes(
                body.to_string().into_bytes(),
                "application/merge-patch+json",
            )
        } else {
            req.json(body)
        };
        settle(self.api.send(req).await.map(|reply| reply.json))
    }
}

/// Splits a failure into one that ends the import (`Err`) and one that is
/// only this record's (`Ok(Err(refusal))`): the gateway unreachable or not
/// answering as API v1, the token refused, its storage or disk failing end it;
/// a field refused, a conflict or a missing record do not.
///
/// # Errors
/// The failures that end the import.
pub(super) fn settle<T>(result: Result<T, CliError>) -> Result<Result<T, Refusal>, CliError> {
    match result {
        Ok(v) => Ok(Ok(v)),
        Err(CliError::Api(f)) if !matches!(f.status, 401 | 403 | 503 | 507) => Ok(Err(Refusal {
            message: f.to_string(),
            field: f.field.clone().filter(|_| f.status == 422),
        })),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::error::ApiFailure;

    fn api(status: u16) -> CliError {
        CliError::Api(ApiFailure {
            status,
            code: "x".into(),
            message: "m".into(),
            field: Some("headers.host".into()),
            route: "POST /v1/x".into(),
        })
    }

    #[test]
    fn only_a_records_own_refusals_leave_the_import_running() {
        let refused = settle::<()>(Err(api(422))).unwrap().unwrap_err();
        assert_eq!(refused.field.as_deref(), Some("headers.host"));
        let conflict = settle::<()>(Err(api(409))).unwrap().unwrap_err();
        assert_eq!(conflict.field, None);
        for fatal in [401, 403, 503, 507] {
            assert!(settle::<()>(Err(api(fatal))).is_err(), "{fatal}");
        }
        let gone = CliError::Unreachable {
            url: "u".into(),
            reason: "r".into(),
        };
        assert!(settle::<()>(Err(gone)).is_err());
    }
}
