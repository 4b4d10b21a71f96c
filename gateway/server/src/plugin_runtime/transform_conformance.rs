//! Upload step 9 for a transform: sample inputs, among them an empty and a
//! maximal payload, each run in a fresh instance under a transform's limits
//! and again all in one reused instance. Every run must answer, every answer
//! must pass the host's checks (for an endpoint at `/`, so any path under it
//! is fine), and both passes must answer the same.

use std::collections::BTreeMap;

use super::PluginError;
use super::conformance::{ConformanceReport, SampleRun, fresh_call, refusal};
use super::engine::{FUEL_PER_TRANSFORM, MEMORY_LIMIT_BYTES, Reshape, Sandbox};
use super::transform::{
    TransformFacts, TransformMethod, TransformRequest, Transformed, check_answer,
};
use super::versions::PluginPre;
use crate::destination::DestinationKind;

/// The largest payload a sample carries: the gateway's default limit on a
/// JSON body (`limits.json_body_bytes`).
pub(crate) const MAX_SAMPLE_PAYLOAD: usize = 256 * 1024;

/// The endpoint the samples are sent to.
const SAMPLE_ENDPOINT: &str = "https://receiver.example/";

/// One sample: its name, payload, destination and metadata.
struct Sample {
    name: &'static str,
    payload: Vec<u8>,
    destination: DestinationKind,
    metadata: BTreeMap<String, String>,
}

fn samples() -> Vec<Sample> {
    let object = |name, payload: String| Sample {
        name,
        payload: payload.into_bytes(),
        destination: DestinationKind::Http,
        metadata: BTreeMap::new(),
    };
    let pad = "x".repeat(MAX_SAMPLE_PAYLOAD - r#"{"pad":""}"#.len());
    let with_metadata = Sample {
        metadata: [("team", "7"), ("rename.id", "order_id")]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect(),
        destination: DestinationKind::Rabbitmq,
        ..object(
            "rabbitmq destination, metadata",
            r#"{"id":"ord_1","test":true}"#.into(),
        )
    };
    vec![
        object(
            "1 KiB JSON object",
            format!(
                r#"{{"id":"ord_1","amount":4200,"customer":{{"id":"cus_9","name":"Zoë"}},"note":"{}"}}"#,
                "n".repeat(940)
            ),
        ),
        object("empty payload", String::new()),
        object("empty object", "{}".into()),
        object("JSON array", "[1,2,3]".into()),
        object("maximal payload (256 KiB)", format!(r#"{{"pad":"{pad}"}}"#)),
        with_metadata,
    ]
}

/// The facts of `sample`, as the worker would build them.
fn facts(sample: &Sample) -> TransformFacts<'_> {
    TransformFacts {
        event_id: "evt_2qJ0conformance",
        event_type: "order.paid",
        timestamp_ms: 1_733_500_000_000,
        payload: &sample.payload,
        channels: &[],
        tags: &[],
        endpoint_id: "ep_2qJ0conformance",
        endpoint_uid: None,
        metadata: &sample.metadata,
        destination: sample.destination,
        request: TransformRequest {
            method: TransformMethod::Post,
            path: "/".into(),
            headers: vec![("x-team".into(), "7".into())],
            body: sample.payload.clone(),
            content_type: "application/json".into(),
        },
    }
}

/// Runs the samples (step 9 of a transform).
///
/// # Errors
/// `Conformance`, naming the sample and what went wrong.
pub(crate) fn check(sandbox: &Sandbox, pre: &PluginPre) -> Result<ConformanceReport, PluginError> {
    let endpoint =
        url::Url::parse(SAMPLE_ENDPOINT).map_err(|e| PluginError::Engine(e.to_string()))?;
    let samples = samples();
    let calls: Vec<Reshape> = samples.iter().map(|s| Reshape(facts(s).input())).collect();
    let mut runs = Vec::with_capacity(calls.len());
    let mut answers = Vec::with_capacity(calls.len());
    for (sample, call) in samples.iter().zip(&calls) {
        let (answer, usage) = fresh_call(sandbox, pre, call);
        let answer = answer.map_err(|f| refusal(sample.name, &f))?;
        let checked = check_answer(answer.clone(), &endpoint).map_err(|why| {
            PluginError::Conformance(format!(
                "sample \"{}\" answered a request the host refuses: {why}",
                sample.name
            ))
        })?;
        runs.push(SampleRun {
            name: sample.name.to_owned(),
            usage,
            answer: describe(&checked),
        });
        answers.push(answer);
    }
    let reused = sandbox
        .run_reused(pre, &calls)
        .map_err(|(i, f)| refusal(samples[i].name, &f))?;
    if let Some(i) = (0..answers.len()).find(|&i| answers[i] != reused[i]) {
        return Err(PluginError::Conformance(format!(
            "not deterministic: sample \"{}\" answered differently when run again in the same instance",
            samples[i].name
        )));
    }
    Ok(ConformanceReport {
        samples: runs,
        fuel_limit: FUEL_PER_TRANSFORM,
        memory_limit: MEMORY_LIMIT_BYTES,
    })
}

/// An answer in a line: `send POST /hooks, 131 bytes application/json, 1 header`.
pub(crate) fn describe(answer: &Transformed) -> String {
    match answer {
        Transformed::Skip(reason) => format!("skip({reason:?})"),
        Transformed::Send(r) => format!(
            "send {} {}, {} bytes {}, {} header{}",
            r.method.as_str(),
            r.path,
            r.body.len(),
            r.content_type,
            r.headers.len(),
            if r.headers.len() == 1 { "" } else { "s" }
        ),
    }
}
