//! Replays Helm's recorded answers for the snippet cases (`tests/snippets/expected.json`,
//! written by `cargo xtask conformance --snippets --update-expected` from Helm's own engine)
//! against our engine, so `cargo test` checks rendering fidelity without Python or Helm.

use testkit::snippet::render_snippet;

#[test]
fn engine_matches_recorded_helm_output() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/snippets/expected.json")).unwrap();
    let cases: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&text).unwrap();
    assert!(cases.len() >= 500, "only {} recorded cases", cases.len());
    let mut failures = Vec::new();
    for (name, case) in &cases {
        let values = case["values"].as_str().unwrap();
        let template = case["template"].as_str().unwrap();
        let ours = match render_snippet(values, template) {
            Ok(out) => serde_json::json!({ "ok": out }),
            Err(e) => serde_json::json!({ "err": e }),
        };
        if ours != case["helm"] {
            failures.push(format!("{name}: template {template:?}\n  helm: {}\n  ours: {ours}", case["helm"]));
        }
    }
    assert!(failures.is_empty(), "{} of {} cases differ:\n{}", failures.len(), cases.len(), failures.join("\n"));
}
