//! Notifications: coalescing and chunking under the payload limit.

use super::*;

fn due(ep: &str, at: u64) -> Change {
    Change::Due {
        endpoint_id: ep.into(),
        due_ms: at,
    }
}

#[test]
fn changes_coalesce_to_the_earliest_due_per_endpoint() {
    let reset = Change::BreakerReset {
        endpoint_id: "a".into(),
    };
    let got = coalesce(vec![
        due("a", 5),
        due("b", 9),
        due("a", 3),
        reset.clone(),
        reset.clone(),
    ]);
    assert_eq!(got, vec![due("a", 3), due("b", 9), reset]);
}

#[test]
fn payloads_stay_under_the_limit_and_round_trip() {
    let many: Vec<Change> = (0..2_000).map(|i| due(&format!("ep_{i:05}"), i)).collect();
    let out = payloads("node_1", many);
    assert!(out.len() > 1);
    let mut back = Vec::new();
    for p in &out {
        assert!(p.len() <= MAX_PAYLOAD + 200, "{}", p.len());
        let m: Message = serde_json::from_str(p).unwrap();
        assert_eq!(m.node, "node_1");
        back.extend(m.changes);
    }
    assert_eq!(back.len(), 2_000);
}
