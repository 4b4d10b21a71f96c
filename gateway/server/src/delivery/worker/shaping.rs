//! An endpoint's transform, run before the attempt is signed: the request it
//! answers is the one signed and sent; a skip or a failure sends nothing.

use sha2::{Digest, Sha256};

use super::DeliveryWorker;
use crate::plugin_runtime::{TransformFacts, TransformMethod, TransformRequest, Transformed};
use crate::store::{DeliveryRecord, EventSeen, SentRequest, StoreError, TransformNote};

/// What the endpoint's transform made of the attempt.
pub(super) enum Shaping {
    /// No transform is bound: hookgate's own request.
    Plain,
    /// Send this request instead, to this URL (the endpoint's joined with the
    /// path the transform answered, which the host checked stays under it).
    Send(TransformRequest, String, TransformNote),
    /// Send nothing: the delivery ends as skipped, for this reason.
    Skip(String, TransformNote),
    /// Send nothing: the attempt failed as `transform_failed`, for this reason.
    Failed(String, TransformNote),
}

impl DeliveryWorker {
    /// Runs the endpoint's transform, if one is bound, on the attempt of `d`
    /// carrying `payload`; `seen` is the event's channels, tags and arrival
    /// when the payload's read had them.
    pub(super) async fn shape(
        &self,
        d: &DeliveryRecord,
        payload: &str,
        seen: Option<EventSeen>,
    ) -> Result<Shaping, StoreError> {
        let ep = &self.endpoint;
        let Some(spec) = &ep.transform else {
            return Ok(Shaping::Plain);
        };
        let Ok(url) = url::Url::parse(&ep.url) else {
            let note = note(spec, 0);
            return Ok(Shaping::Failed(
                format!("endpoint url {:?} does not parse", ep.url),
                note,
            ));
        };
        // Channels and tags live on the event record: read again only where
        // the payload's read did not bring them.
        let seen = match seen {
            Some(seen) => Some(seen),
            None => self
                .ctx
                .store
                .event(&ep.tenant_id, &d.event_id)
                .await?
                .map(|e| EventSeen {
                    channels: e.labels.channels,
                    tags: e.labels.tags,
                    created_at_ms: e.created_at_ms,
                }),
        };
        let (channels, tags, created_at_ms) = seen.map_or_else(
            || (Vec::new(), Vec::new(), d.created_at_ms),
            |s| (s.channels, s.tags, s.created_at_ms),
        );
        let path = match url.query() {
            Some(q) => format!("{}?{q}", url.path()),
            None => url.path().to_owned(),
        };
        let facts = TransformFacts {
            event_id: d.event_id.as_str(),
            event_type: &d.event_type,
            timestamp_ms: created_at_ms,
            payload: payload.as_bytes(),
            channels: &channels,
            tags: &tags,
            endpoint_id: ep.id.as_str(),
            endpoint_uid: ep.uid.as_deref(),
            metadata: &ep.metadata,
            destination: ep.destination_kind(),
            request: TransformRequest {
                method: TransformMethod::Post,
                path,
                headers: ep
                    .headers
                    .iter()
                    .map(|h| (h.name.to_ascii_lowercase(), h.value.clone()))
                    .collect(),
                body: payload.as_bytes().to_vec(),
                content_type: SentRequest::CONTENT_TYPE.to_owned(),
            },
        };
        let run = self
            .ctx
            .decider
            .transform(ep.tenant_id.as_str(), spec, &facts, &url)
            .await;
        let mut note = note(run.label.as_deref().unwrap_or(spec), run.run_us);
        self.ctx.telemetry.observe_transform(&run);
        Ok(match run.result {
            Ok(Transformed::Send(request)) => {
                let Ok(target) = url.join(&request.path) else {
                    let why = format!("path {:?} does not join {}", request.path, ep.url);
                    return Ok(Shaping::Failed(why, note));
                };
                note.body_sha256 = Some(hex::encode(Sha256::digest(&request.body)));
                note.body_bytes = Some(request.body.len() as u64);
                note.method = Some(request.method.as_str().to_owned());
                note.path = Some(request.path.clone());
                note.content_type = Some(request.content_type.clone());
                Shaping::Send(request, target.to_string(), note)
            }
            Ok(Transformed::Skip(reason)) => Shaping::Skip(reason, note),
            Err(failure) => Shaping::Failed(failure.to_string(), note),
        })
    }
}

fn note(plugin: &str, run_us: u64) -> TransformNote {
    TransformNote {
        plugin: plugin.to_owned(),
        run_us,
        body_sha256: None,
        body_bytes: None,
        method: None,
        path: None,
        content_type: None,
    }
}
