//! What one publish carries: the body as signed and the attributes a consumer
//! needs to verify it (the Standard Webhooks headers), by their HTTP names.
//! Each kind puts them where its ecosystem looks (docs/destinations.md).

use bytes::Bytes;

/// The attribute naming the event's type.
pub(crate) const EVENT_TYPE_ATTRIBUTE: &str = "hookgate-event-type";

/// One message to publish.
#[derive(Debug, Clone)]
pub(crate) struct BrokerMessage {
    /// The event's id: a broker's message id or deduplication id.
    pub(crate) event_id: String,
    /// The event's type: the default routing key.
    pub(crate) event_type: String,
    /// When it was signed, in Unix seconds.
    pub(crate) timestamp_s: i64,
    /// The payload exactly as signed.
    pub(crate) body: Bytes,
    /// `content-type`, the signature headers (`webhook-id`, `webhook-timestamp`,
    /// `webhook-signature`, and `svix-*` where the endpoint signs so), trace
    /// context, [`EVENT_TYPE_ATTRIBUTE`] and the endpoint's own headers, names
    /// in lower case.
    pub(crate) attributes: Vec<(String, String)>,
}

impl BrokerMessage {
    /// The body's media type: its `content-type` attribute (a transform may
    /// have chosen it), else JSON.
    pub(crate) fn content_type(&self) -> &str {
        self.attributes
            .iter()
            .find(|(name, _)| name == "content-type")
            .map_or("application/json", |(_, value)| value.as_str())
    }
}
