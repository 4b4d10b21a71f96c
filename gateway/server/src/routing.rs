//! Which of a tenant's endpoints an event reaches: an enabled endpoint whose
//! event types match the event's type, that listens on one of the event's
//! channels (or on none: then it hears every event of its types), and whose
//! payload filter, if it has one, the payload passes. Ingest routes by it; a
//! replay of missing deliveries asks it again, later, of an endpoint as it is
//! then.

use std::cell::OnceCell;

use serde_json::Value;
use serde_json::value::RawValue;

use crate::event_type;
use crate::payload_filter::PayloadFilter;
use crate::store::EndpointRecord;

/// What of an event routing reads.
#[derive(Debug, Clone, Copy)]
pub(crate) struct EventRoute<'a> {
    pub event_type: &'a str,
    pub channels: &'a [String],
    pub payload: &'a RawValue,
}

/// The endpoints of `endpoints` that `event` reaches. The payload is parsed
/// once, and only if an endpoint that could take the event has a filter.
pub(crate) fn reached<'e>(
    endpoints: &'e [EndpointRecord],
    event: &EventRoute<'_>,
) -> Vec<&'e EndpointRecord> {
    let parsed: OnceCell<Option<Value>> = OnceCell::new();
    endpoints
        .iter()
        .filter(|ep| {
            !ep.disabled
                && event_type::any_matches(&ep.event_types, event.event_type)
                && hears(ep, event.channels)
                && ep.filter.as_ref().is_none_or(|filter| {
                    let payload =
                        parsed.get_or_init(|| serde_json::from_str(event.payload.get()).ok());
                    passes(ep, filter, payload.as_ref())
                })
        })
        .collect()
}

/// Whether `ep` hears an event on `channels`.
fn hears(ep: &EndpointRecord, channels: &[String]) -> bool {
    ep.channels.is_empty() || ep.channels.iter().any(|c| channels.contains(c))
}

/// Whether `payload` passes `ep`'s `filter`. A filter stored by a build with
/// looser bounds, which this one refuses, passes nothing: it is said in the log.
fn passes(ep: &EndpointRecord, filter: &Value, payload: Option<&Value>) -> bool {
    match PayloadFilter::parse(filter) {
        Ok(f) => payload.is_some_and(|p| f.matches(p)),
        Err(e) => {
            tracing::warn!(endpoint = %ep.id, at = e.at(), error = %e,
                "the endpoint's stored filter is refused by this build; it passes no event");
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::store::testing::endpoint;

    fn ids(reached: &[&EndpointRecord]) -> Vec<String> {
        reached.iter().map(|e| e.id.to_string()).collect()
    }

    #[test]
    fn types_channels_and_filters_each_narrow_the_endpoints_reached() {
        let plain = endpoint("t", "ep_plain");
        let eu = EndpointRecord {
            channels: vec!["eu".into()],
            ..endpoint("t", "ep_eu")
        };
        let big = EndpointRecord {
            filter: Some(json!({"amount": {"$gte": 100}})),
            ..endpoint("t", "ep_big")
        };
        let refunds = EndpointRecord {
            event_types: vec!["refund.*".into()],
            ..endpoint("t", "ep_refunds")
        };
        let off = EndpointRecord {
            disabled: true,
            ..endpoint("t", "ep_off")
        };
        let all = [plain, eu, big, refunds, off];
        let big_payload = RawValue::from_string(r#"{"amount": 250}"#.into()).unwrap();
        let small_payload = RawValue::from_string(r#"{"amount": 5}"#.into()).unwrap();
        let (none, eu_only) = (Vec::new(), vec!["eu".to_owned()]);
        let reach = |event_type: &str, channels: &[String], payload: &RawValue| {
            let route = EventRoute {
                event_type,
                channels,
                payload,
            };
            ids(&reached(&all, &route))
        };
        assert_eq!(
            reach("order.paid", &none, &big_payload),
            ["ep_plain", "ep_big"]
        );
        assert_eq!(
            reach("order.paid", &eu_only, &big_payload),
            ["ep_plain", "ep_eu", "ep_big"]
        );
        assert_eq!(
            reach("order.paid", &eu_only, &small_payload),
            ["ep_plain", "ep_eu"]
        );
        assert_eq!(
            reach("refund.made", &none, &small_payload),
            ["ep_plain", "ep_refunds"]
        );
    }
}
