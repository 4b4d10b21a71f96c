//! What an attempt sends, signed: an HTTP request, or a broker message
//! carrying the same signature headers as attributes. And what came back.

use bytes::Bytes;
use http::Request;
use http_body_util::Full;

use super::DeliveryWorker;
use crate::delivery::client::HttpResponse;
use crate::destination::{BrokerMessage, EVENT_TYPE_ATTRIBUTE, Receipt};
use crate::plugin_runtime::TransformRequest;
use crate::signing::{Ed25519Key, SignatureScheme, SigningSecret, sign_with};
use crate::store::{DeliveryRecord, EndpointHeader, SentHeader, SentRequest, TraceContext};

/// One attempt's request, by destination kind.
pub(crate) enum Outgoing {
    Http(Request<Full<Bytes>>),
    Broker(BrokerMessage),
}

/// What came back from an attempt.
#[derive(Debug)]
pub(crate) enum Answer {
    /// An HTTP receiver's response.
    Http(HttpResponse),
    /// A broker's confirmation.
    Published(Receipt),
    /// Nothing was sent: the endpoint's transform skipped it, for this reason.
    Skipped(String),
}

impl Answer {
    /// The HTTP response, when there is one.
    pub(crate) fn http(&self) -> Option<&HttpResponse> {
        match self {
            Self::Http(r) => Some(r),
            Self::Published(_) | Self::Skipped(_) => None,
        }
    }
}

impl DeliveryWorker {
    /// The signed request, and what of it the attempt log keeps: its signature
    /// and the endpoint's own headers, a sensitive one's value masked. With a
    /// transform's `shaped` request and the URL it goes to, that is what is signed and sent: its
    /// method, path, headers (instead of the endpoint's), body and type.
    pub(super) fn outgoing(
        &self,
        d: &DeliveryRecord,
        payload: String,
        shaped: Option<(TransformRequest, String)>,
        now_ms: u64,
        trace: Option<TraceContext>,
    ) -> Result<(Outgoing, SentRequest), http::Error> {
        let now_s = i64::try_from(now_ms / 1000).unwrap_or(i64::MAX);
        let ep = &self.endpoint;
        let live = || {
            ep.secrets
                .iter()
                .filter(|s| s.expires_at_ms.is_none_or(|e| e > now_ms))
        };
        let settings = &ep.signature;
        let secrets: Vec<SigningSecret> = if settings.uses(SignatureScheme::V1) {
            live()
                .filter_map(|s| SigningSecret::parse(&s.secret).ok())
                .collect()
        } else {
            Vec::new()
        };
        // Parsed only for `v1a` endpoints: the key's public half is derived.
        let keys: Vec<Ed25519Key> = if settings.uses(SignatureScheme::V1a) {
            live()
                .filter_map(|s| Ed25519Key::parse(s.signing_key.as_deref()?).ok())
                .collect()
        } else {
            Vec::new()
        };
        let (body, content_type, own_headers, method, target) = match shaped {
            Some((r, target)) => (
                Bytes::from(r.body),
                r.content_type,
                r.headers,
                r.method.as_str(),
                target,
            ),
            None => (
                Bytes::from(payload),
                SentRequest::CONTENT_TYPE.to_owned(),
                ep.headers
                    .iter()
                    .map(|h| (h.name.clone(), h.value.clone()))
                    .collect(),
                "POST",
                ep.url.clone(),
            ),
        };
        let signature = sign_with(
            &settings.schemes,
            &secrets,
            &keys,
            &d.event_id,
            now_s,
            &body,
        );
        let timestamp = now_s.to_string();
        let mut headers: Vec<(&str, &str)> = Vec::with_capacity(8 + own_headers.len());
        headers.push(("content-type", content_type.as_str()));
        for [id, at, signed] in settings.headers.names() {
            headers.push((*id, d.event_id.as_str()));
            headers.push((*at, timestamp.as_str()));
            headers.push((*signed, signature.as_str()));
        }
        if let Some(trace) = &trace {
            headers.push(("traceparent", trace.traceparent.as_str()));
            if let Some(state) = &trace.tracestate {
                headers.push(("tracestate", state.as_str()));
            }
        }
        // The endpoint's own headers (or its transform's), validated when set:
        // none replaces one of hookgate's, and a value the endpoint marks
        // sensitive is never in the attempt's log.
        let mut kept = Vec::with_capacity(own_headers.len());
        for (name, value) in &own_headers {
            headers.push((name.as_str(), value.as_str()));
            let sensitive = ep
                .headers
                .iter()
                .any(|h| h.sensitive && h.name.eq_ignore_ascii_case(name));
            kept.push(SentHeader {
                name: name.clone(),
                value: if sensitive {
                    EndpointHeader::MASK.to_owned()
                } else {
                    value.clone()
                },
            });
        }
        let outgoing = if ep.destination.is_some() {
            let mut attributes: Vec<(String, String)> = headers
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect();
            attributes.push((EVENT_TYPE_ATTRIBUTE.to_owned(), d.event_type.clone()));
            Outgoing::Broker(BrokerMessage {
                event_id: d.event_id.to_string(),
                event_type: d.event_type.clone(),
                timestamp_s: now_s,
                body,
                attributes,
            })
        } else {
            let mut request = Request::builder()
                .method(method)
                .uri(target.as_str())
                .header("user-agent", SentRequest::USER_AGENT);
            for (name, value) in headers {
                request = request.header(name, value);
            }
            Outgoing::Http(request.body(Full::new(body))?)
        };
        let sent = SentRequest {
            signature,
            header_set: settings.headers,
            headers: kept,
        };
        Ok((outgoing, sent))
    }
}
