//! Tenant fairness, item 3: a NUL byte is a bad request, not a database
//! outage. Every route of the OpenAPI document is called with a NUL in each of
//! its path and query parameters in turn (the others real), and the bulk
//! replay's body filters too; each answer is a JSON 404 or 400, never a 5xx.

use hookgate_tests::receiver::Receiver;
use hookgate_tests::{ADMIN, Backend, TestGateway, is_final};
use serde_json::{Value, json};

hookgate_tests::on_each_backend! {
    a_nul_byte_is_a_bad_request_not_a_database_outage,
}

const NUL: &str = "x%00y";
const WAIT: std::time::Duration = std::time::Duration::from_secs(30);

/// Real values for each path parameter, by the path's resource.
struct Real {
    endpoint: String,
    operator_endpoint: String,
    event: String,
    delivery: String,
    task: String,
    attempt: String,
}

impl Real {
    fn value(&self, path: &str, param: &str) -> String {
        match param {
            "t" => "acme".to_owned(),
            "name" => "json-error-code".to_owned(),
            "id" if path.contains("/endpoints/") => self.endpoint.clone(),
            "id" if path.contains("/operator-endpoints/") => self.operator_endpoint.clone(),
            "id" if path.contains("/events/") => self.event.clone(),
            "id" if path.contains("/deliveries/") => self.delivery.clone(),
            "id" if path.contains("/tasks/") => self.task.clone(),
            "id" if path.contains("/attempts/") => self.attempt.clone(),
            other => panic!("no real value for {{{other}}} in {path}"),
        }
    }
}

/// `template` with each `{param}` filled, `nul` (if any) given a NUL.
fn fill(template: &str, real: &Real, nul: Option<&str>) -> String {
    let mut path = template.to_owned();
    while let Some(start) = path.find('{') {
        let end = path[start..].find('}').unwrap() + start;
        let param = &path[start + 1..end];
        let value = if nul == Some(param) {
            NUL.to_owned()
        } else {
            real.value(template, param)
        };
        path.replace_range(start..=end, &value);
    }
    path
}

async fn a_nul_byte_is_a_bad_request_not_a_database_outage(backend: Backend) {
    let gw = TestGateway::start_on(backend).await;
    let key = gw.tenant("acme").await;
    let rx = Receiver::start(Vec::new()).await;
    let ep = gw.endpoint("acme", &key, json!({"url": rx.url()})).await;
    let ev = gw.event("acme", &key, "order.created", json!({})).await;
    let recover = format!(
        "/v1/tenants/acme/endpoints/{}/recover",
        ep["id"].as_str().unwrap()
    );
    let since = json!({"since": "2020-01-01T00:00:00Z"});
    let (s, task) = gw.call("POST", &recover, Some(&key), Some(since)).await;
    assert_eq!(s, 202, "{task}");
    // The event's one attempt, once made.
    let delivery = ev["deliveries"][0]["id"].as_str().unwrap().to_owned();
    gw.wait_delivery("acme", &key, &delivery, WAIT, is_final)
        .await;
    let (s, attempts) = gw
        .call("GET", "/v1/tenants/acme/attempts", Some(&key), None)
        .await;
    assert_eq!(s, 200, "{attempts}");
    let body = json!({"url": rx.url()});
    let (s, operator) = gw
        .call("POST", "/v1/operator-endpoints", Some(ADMIN), Some(body))
        .await;
    assert_eq!(s, 201, "{operator}");
    let real = Real {
        operator_endpoint: operator["id"].as_str().unwrap().to_owned(),
        attempt: attempts["data"][0]["id"].as_str().unwrap().to_owned(),
        task: task["id"].as_str().unwrap().to_owned(),
        endpoint: ep["id"].as_str().unwrap().to_owned(),
        event: ev["id"].as_str().unwrap().to_owned(),
        delivery,
    };
    let doc: Value = serde_json::from_str(&hookgate_server::openapi_document()).unwrap();
    let mut calls = 0;
    for (template, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            let method = method.to_uppercase();
            let params = op["parameters"].as_array().cloned().unwrap_or_default();
            for p in &params {
                let name = p["name"].as_str().unwrap();
                let (path, want) = match p["in"].as_str().unwrap() {
                    "path" => (fill(template, &real, Some(name)), (404, None)),
                    "query" => {
                        let path = fill(template, &real, None);
                        (format!("{path}?{name}={NUL}"), (400, Some(name)))
                    }
                    _ => continue,
                };
                let body = (method != "GET" && method != "DELETE").then(|| json!({}));
                let (status, answer) = gw.call(&method, &path, Some(ADMIN), body).await;
                let field = answer["error"]["field"].as_str();
                assert_eq!((status, field), want, "{method} {path}: {answer}");
                calls += 1;
            }
        }
    }
    assert!(calls > 30, "only {calls} parameters were tried");

    // The bulk replay's filters come in its body.
    for field in ["endpoint_id", "event_type"] {
        let body = json!({"state": "dead", field: "x\u{0}y", "dry_run": true});
        let (status, answer) = gw
            .call("POST", "/v1/tenants/acme/replay", Some(&key), Some(body))
            .await;
        assert_eq!(
            (status, answer["error"]["field"].as_str()),
            (422, Some(field)),
            "{answer}"
        );
    }
}
