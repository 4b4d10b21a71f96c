//! The WebAssembly side of transforms: `wit_bindgen::generate!` over
//! `wit/transform-0.1.0.wit` (the crate's own copy of the workspace's), the one
//! `transform` export made of a [`crate::Transform`], and the conversions
//! between the WIT types and the SDK's. Only built for `wasm32`;
//! [`crate::export_transform!`] is the way in.

#![allow(unsafe_code, reason = "wit-bindgen's generated canonical-ABI glue")]

use crate::{Answer, DestinationKind, Endpoint, Event, Method, Request, Transform, TransformInput};

#[doc(hidden)]
pub mod bindings {
    #![allow(missing_docs, unreachable_pub, reason = "generated code")]
    wit_bindgen::generate!({
        world: "hookgate:transform/transform-plugin@0.1.0",
        path: "wit/transform-0.1.0.wit",
        pub_export_macro: true,
        export_macro_name: "export_transform_plugin",
        default_bindings_module: "hookgate_plugin_sdk::__private_transform::bindings",
    });
}

use bindings::exports::hookgate::transform::transform as wit;

pub use wit::{Answer as WitAnswer, Guest, Input as WitInput};

/// `transform` of transform `T`, through the SDK's types.
pub fn transform<T: Transform + Default>(input: WitInput) -> WitAnswer {
    match T::default().transform(from_wit(input)) {
        Answer::Send(request) => WitAnswer::Send(to_wit_request(request)),
        Answer::Skip(reason) => WitAnswer::Skip(reason),
    }
}

fn from_wit(i: WitInput) -> TransformInput {
    TransformInput {
        event: Event {
            id: i.event.id,
            event_type: i.event.event_type,
            timestamp_ms: i.event.timestamp_ms,
            payload: i.event.payload,
            channels: i.event.channels,
            tags: i.event.tags,
        },
        endpoint: Endpoint {
            id: i.endpoint.id,
            uid: i.endpoint.uid,
            metadata: i.endpoint.metadata,
            destination: match i.endpoint.destination {
                wit::DestinationKind::Http => DestinationKind::Http,
                wit::DestinationKind::Rabbitmq => DestinationKind::Rabbitmq,
                wit::DestinationKind::Nats => DestinationKind::Nats,
                wit::DestinationKind::Redis => DestinationKind::Redis,
                wit::DestinationKind::Sqs => DestinationKind::Sqs,
                wit::DestinationKind::Sns => DestinationKind::Sns,
                wit::DestinationKind::Kinesis => DestinationKind::Kinesis,
            },
        },
        request: Request {
            method: match i.request.method {
                wit::Method::Post => Method::Post,
                wit::Method::Put => Method::Put,
                wit::Method::Patch => Method::Patch,
                wit::Method::Get => Method::Get,
            },
            path: i.request.path,
            headers: i
                .request
                .headers
                .into_iter()
                .map(|h| (h.name, h.value))
                .collect(),
            body: i.request.body,
            content_type: i.request.content_type,
        },
    }
}

fn to_wit_request(r: Request) -> wit::Request {
    wit::Request {
        method: match r.method {
            Method::Post => wit::Method::Post,
            Method::Put => wit::Method::Put,
            Method::Patch => wit::Method::Patch,
            Method::Get => wit::Method::Get,
        },
        path: r.path,
        headers: r
            .headers
            .into_iter()
            .map(|(name, value)| wit::Header { name, value })
            .collect(),
        body: r.body,
        content_type: r.content_type,
    }
}
