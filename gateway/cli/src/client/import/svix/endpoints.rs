//! Svix's endpoints as endpoints of the tenant their application became.
//! API v1 makes an endpoint's id itself (`ep_…`), so the Svix id cannot be
//! kept: the endpoint keeps its Svix uid, or, without one, takes its Svix id
//! as its uid, and a later run finds it by that uid (any path takes a uid
//! where it takes an id). A missing endpoint is created with its secret; one
//! that differs is patched, and signs with the source's secret from then on
//! by a rotation (the one it had keeps signing for the grace period); a
//! header the gateway refuses is left out and reported, the rest written.

use http::Method;
use serde_json::{Map, Value, json};

use super::applications::Tenant;
use super::endpoint_fields::{Wanted, wanted};
use super::model::SvixEndpoint;
use super::report::{Item, Kind, Note, Outcome};
use super::target::{NOT_WRITTEN, Target, Written};
use crate::client::error::CliError;

/// Imports one endpoint of application `app_id` into `tenant`, signing under
/// `signature_headers`.
///
/// # Errors
/// A failure that ends the import.
pub(super) async fn import(
    target: &Target,
    tenant: &Tenant,
    app_id: &str,
    source: &SvixEndpoint,
    signature_headers: &str,
) -> Result<Item, CliError> {
    let mut wanted = wanted(source, signature_headers);
    let key = source.key();
    let current = if tenant.present {
        let path = ["tenants", tenant.id.as_str(), "endpoints", key];
        target.find(&path).await?
    } else {
        None
    };
    let (outcome, endpoint_id) = match &current {
        None => create(target, tenant, &mut wanted).await?,
        Some(now) => {
            let id = now["id"].as_str().unwrap_or(key).to_owned();
            (
                update(target, tenant, &id, now, &mut wanted).await?,
                Some(id),
            )
        }
    };
    let endpoint_id = endpoint_id.filter(|id| id != NOT_WRITTEN);
    let label = match &endpoint_id {
        Some(id) => format!("{app_id}/{} as {id} (uid {key})", source.id),
        None => format!("{app_id}/{} (uid {key})", source.id),
    };
    let mut ids = Map::new();
    ids.insert("application".into(), json!(app_id));
    ids.insert("id".into(), json!(source.id));
    ids.insert("uid".into(), json!(key));
    ids.insert("tenant".into(), json!(tenant.id));
    ids.insert("endpoint".into(), json!(endpoint_id));
    Ok(Item {
        kind: Kind::Endpoint,
        label,
        ids,
        outcome,
        notes: wanted.notes,
    })
}

/// Creates the endpoint; answers the outcome and its new id.
async fn create(
    target: &Target,
    tenant: &Tenant,
    wanted: &mut Wanted,
) -> Result<(Outcome, Option<String>), CliError> {
    let path = ["tenants", tenant.id.as_str(), "endpoints"];
    let mut body = wanted.create_body();
    let written = write_leaving_out_refused_headers(
        target,
        Method::POST,
        &path,
        &mut body,
        &mut wanted.notes,
    )
    .await?;
    Ok(match written {
        Ok(created) => {
            let id = created["id"]
                .as_str()
                .or(created.as_str())
                .map(str::to_owned);
            (Outcome::Created, id)
        }
        Err(refused) => (Outcome::Failed(refused.message), None),
    })
}

/// Makes the stored endpoint `id` (shown as `now`) what the source says:
/// patches what differs, and rotates to the source's secret when the newest
/// differs from it.
async fn update(
    target: &Target,
    tenant: &Tenant,
    id: &str,
    now: &Value,
    wanted: &mut Wanted,
) -> Result<Outcome, CliError> {
    let one = ["tenants", tenant.id.as_str(), "endpoints", id];
    let (mut changed, mut patch) = wanted.differences(now);
    if !patch.is_empty() {
        let written = write_leaving_out_refused_headers(
            target,
            Method::PATCH,
            &one,
            &mut patch,
            &mut wanted.notes,
        )
        .await?;
        if let Err(refused) = written {
            return Ok(Outcome::Failed(refused.message));
        }
        // What was left out for the gateway's refusal did not change.
        changed.retain(|field| patch.contains_key(*field));
    }
    if let Some(secret) = &wanted.secret {
        let path = ["tenants", tenant.id.as_str(), "endpoints", id, "secret"];
        let secrets = target.find(&path).await?.unwrap_or(Value::Null);
        if secrets["secret"].as_str() != Some(secret.as_str()) {
            changed.push("secret");
            let rotate = [
                "tenants",
                tenant.id.as_str(),
                "endpoints",
                id,
                "rotate-secret",
            ];
            let written = target
                .write(Method::POST, &rotate, &json!({"secret": secret}))
                .await?;
            if let Err(refused) = written {
                return Ok(Outcome::Failed(format!(
                    "rotating to the source's secret: {}",
                    refused.message
                )));
            }
        }
    }
    Ok(if changed.is_empty() {
        Outcome::Unchanged
    } else {
        Outcome::Updated(changed)
    })
}

/// Writes `body`; while the gateway refuses one of its headers (a 422 at
/// `headers.NAME`), leaves that header out, notes why, and writes again (not
/// at all when nothing else is left to write).
async fn write_leaving_out_refused_headers(
    target: &Target,
    method: Method,
    path: &[&str],
    body: &mut Map<String, Value>,
    notes: &mut Vec<Note>,
) -> Result<Written, CliError> {
    loop {
        if body.is_empty() {
            return Ok(Ok(Value::Null));
        }
        let written = target
            .write(method.clone(), path, &Value::Object(body.clone()))
            .await?;
        let Err(refused) = &written else {
            return Ok(written);
        };
        let name = refused
            .field
            .as_deref()
            .and_then(|f| f.strip_prefix("headers."))
            .map(str::to_owned);
        match name {
            Some(name) if leave_out(body, &name) => {
                notes.push(Note::new(format!("header {name}"), refused.message.clone()));
            }
            _ => return Ok(written),
        }
    }
}

/// Removes header `name` from a body's `headers` (and the `headers` when none
/// is left) and its `sensitive_headers`; whether it was there.
fn leave_out(body: &mut Map<String, Value>, name: &str) -> bool {
    let removed = body
        .get_mut("headers")
        .and_then(Value::as_object_mut)
        .and_then(|headers| headers.remove(name))
        .is_some();
    if body
        .get("headers")
        .and_then(Value::as_object)
        .is_some_and(Map::is_empty)
    {
        body.remove("headers");
    }
    if let Some(Value::Array(marked)) = body.get_mut("sensitive_headers") {
        marked.retain(|n| n != name);
        if marked.is_empty() {
            body.remove("sensitive_headers");
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_header_is_left_out_of_the_body() {
        let mut body = json!({"url": "u", "headers": {"host": "h", "x-a": "1"},
            "sensitive_headers": ["host"]})
        .as_object()
        .unwrap()
        .clone();
        assert!(leave_out(&mut body, "host"));
        assert_eq!(
            Value::Object(body.clone()),
            json!({"url": "u", "headers": {"x-a": "1"}})
        );
        assert!(
            !leave_out(&mut body, "host"),
            "a name not there stops the retries"
        );
        assert!(leave_out(&mut body, "x-a"));
        assert_eq!(Value::Object(body), json!({"url": "u"}));
    }
}
