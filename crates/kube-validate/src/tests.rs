//! End-to-end checks of [`Validator`] on the project's own fixture CRD (tests/fixtures),
//! which exercises every constraint kind.

use serde_json::{json, Value};

use super::*;

fn fixture() -> Value {
    let text = include_str!("../tests/fixtures/widgets-crd.json");
    serde_json::from_str(text).expect("fixture CRD is JSON")
}

fn validator(minor: u32) -> Validator {
    Validator::from_crd(&fixture(), None, KubeVersion::new(1, minor)).expect("fixture compiles")
}

fn widget(spec: Value) -> Value {
    json!({"apiVersion":"audit.example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"default"},"spec":spec})
}

fn texts(v: &WriteOutcome) -> Vec<String> {
    let mut t: Vec<String> = v.errors.iter().map(ToString::to_string).collect();
    t.sort();
    t
}

#[test]
fn valid_object_is_accepted_and_defaulted_fields_do_not_fail() {
    let v = validator(36);
    let verdict = v.validate(
        &widget(json!({"size":5,"color":"red","ports":[{"name":"a","number":80}],
        "endpoint":"https://x.example","memory":"512Mi","cidr":"10.0.0.0/8","release":"1.2.3","names":["a","b"]})),
        None,
    );
    assert!(verdict.errors.is_empty(), "{:?}", verdict.errors);
    assert!(verdict.pruned.is_empty());
}

#[test]
fn schema_errors_block_cel_as_upstream() {
    let v = validator(36);
    let verdict = v.validate(&widget(json!({"size":"big"})), None);
    assert_eq!(
        texts(&verdict),
        [
            "<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation",
            "spec.size: Invalid value: \"string\": spec.size in body must be of type integer: \"string\"",
        ]
    );
    assert!(!verdict.accepted);
}

#[test]
fn cel_rules_messages_field_paths_and_reasons() {
    let v = validator(36);
    let verdict = v.validate(
        &widget(json!({"size":5,"min":3,"max":1,"endpoint":"http://x","memory":"2Gi",
        "release":"0.1.0","names":["b","a"],"ports":[{"name":"p","number":70000}]})),
        None,
    );
    assert_eq!(
        texts(&verdict),
        [
            "spec.endpoint: Invalid value: \"http://x\": endpoint must be an https URL",
            "spec.memory: Invalid value: \"2Gi\": memory below 1Gi",
            "spec.min: Invalid value: \"object\": min must not exceed max".replace("\"object\": ", "").as_str(),
            "spec.names: Invalid value: names must be lower-case and sorted",
            "spec.ports[0].number: Invalid value: 70000: port out of range",
            "spec.release: Invalid value: \"0.1.0\": release must be semver 1.x or later",
        ]
    );
}

#[test]
fn unsupported_library_is_unevaluated_not_passed() {
    let v = validator(36);
    let verdict = v.validate(&widget(json!({"size":5,"display":"ok"})), None);
    assert!(verdict.errors.is_empty());
    assert_eq!(verdict.unevaluated.len(), 1);
    assert!(verdict.unevaluated[0].rule.starts_with("format.dns1123Label"));
    assert!(!verdict.accepted, "an unevaluated rule is not a pass");
}

#[test]
fn pruning_is_reported_and_status_dropped_on_create() {
    let v = validator(36);
    let mut o = widget(
        json!({"size":5,"bogus":1,"extra":{"kept":true},"template":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","junk":1},"x":1}}),
    );
    o["status"] = json!({"ready":true});
    let verdict = v.validate(&o, None);
    assert_eq!(verdict.pruned, ["spec.bogus", "spec.template.metadata.junk"]);
    assert!(verdict.errors.is_empty(), "{:?}", verdict.errors);
}

#[test]
fn transition_rules_run_only_on_update_and_ratcheting_keeps_unchanged_values() {
    let v = validator(36);
    let old = widget(json!({"size":5,"mode":"Locked","color":"red","labels":{"a":"toolong"}}));
    // Create: the oldSelf rule does not run; the bad label value fails.
    let create = v.validate(&old, None);
    assert_eq!(
        texts(&create),
        [
            "<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation",
            "spec.labels.a: Too long: may not be more than 5 bytes"
        ]
    );
    // Update that changes size: transition rule fires (Forbidden), the unchanged label ratchets.
    let new = widget(json!({"size":6,"mode":"Locked","color":"red","labels":{"a":"toolong"}}));
    let upd = v.validate(&new, Some(&old));
    assert_eq!(texts(&upd), ["spec: Forbidden: size is locked at 5"]);
    assert_eq!(upd.ratcheted.len(), 1);
    // optionalOldSelf: changing color is refused on update.
    let new = widget(json!({"size":5,"mode":"Locked","color":"blue","labels":{"a":"toolong"}}));
    assert_eq!(texts(&v.validate(&new, Some(&old))), ["spec: Invalid value: color is immutable once set"]);
    // Before 1.30 there is no ratcheting.
    let v29 = validator(29);
    let new = widget(json!({"size":5,"mode":"Locked","color":"red","labels":{"a":"toolong"},"min":1}));
    assert_eq!(texts(&v29.validate(&new, Some(&old)))[1], "spec.labels.a: Too long: may not be more than 5 bytes");
}

#[test]
fn root_rules_reject_every_update_of_a_stored_object() {
    let v = validator(36);
    let mut stored = widget(json!({"size":5,"color":"Red"}));
    stored["metadata"]["name"] = json!("a-very-long-widget-name-indeed");
    let outlook = v.outlook(&stored);
    let any: Vec<String> = outlook.on_any_update.iter().map(ToString::to_string).collect();
    assert_eq!(any, ["<nil>: Invalid value: name at most 20 characters"]);
    let later: Vec<String> = outlook.when_field_changes.iter().map(ToString::to_string).collect();
    assert_eq!(later, ["spec.color: Invalid value: \"Red\": spec.color in body should match '^[a-z]+$'"]);
}

#[test]
fn crd_issues_by_cluster_version() {
    let issues = crd_write::issues(&fixture(), &KubeVersion::new(1, 29), CrdWrite::Create).unwrap();
    let msgs: Vec<&str> = issues.iter().map(|i| i.message.as_str()).collect();
    assert!(msgs.iter().any(|m| m.contains("'isCIDR'")), "{msgs:?}");
    assert!(msgs.iter().any(|m| m.contains("'semver'")), "{msgs:?}");
    assert!(!msgs.iter().any(|m| m.contains("'quantity'")), "quantity is there from 1.29 servers: {msgs:?}");
    let at36 = crd_write::issues(&fixture(), &KubeVersion::new(1, 36), CrdWrite::Create).unwrap();
    assert!(!at36.iter().any(|i| i.kind == IssueKind::Compile), "{at36:?}");
    // What kube-apiserver 1.36.1's CRD validation says of the fixture (crdcel): an unbounded
    // string through the format library's regex, and a message expression over the unbounded
    // `size`, over the per-expression limit.
    let cost: Vec<(&str, &str)> = at36
        .iter()
        .filter(|i| !i.message.starts_with("contributed") && i.path != "<root>")
        .map(|i| (i.path.as_str(), i.message.as_str()))
        .collect();
    assert_eq!(cost.len(), 2, "{cost:?}");
    assert!(
        cost.iter().any(|(p, m)| *p == "spec.display" && m.starts_with("estimated rule cost exceeds budget by factor of 1.006634x")),
        "{cost:?}"
    );
    assert!(
        cost.iter()
            .any(|(p, m)| *p == "spec" && m.starts_with("estimated messageExpression cost exceeds budget by factor of more than 100x")),
        "{cost:?}"
    );
}

#[test]
fn reserved_word_fields_fail_before_1_32() {
    let crd = json!({"metadata":{"name":"x.y"},"spec":{"group":"y","names":{"kind":"X"},"versions":[{"name":"v1","storage":true,
        "schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object","properties":{
          "templates":{"type":"array","items":{"type":"object","properties":{"metadata":{"type":"object","properties":{
            "namespace":{"type":"string"}}}}}}},
          "x-kubernetes-validations":[{"rule":"self.templates.all(t, !has(t.metadata.namespace) || size(t.metadata.namespace) == 0)"}]}}}}}]}});
    for (minor, fails) in [(30, true), (31, true), (32, false), (36, false)] {
        let issues = crd_write::issues(&crd, &KubeVersion::new(1, minor), CrdWrite::Create).unwrap();
        assert_eq!(issues.iter().any(|i| i.message.starts_with("undefined field 'namespace'")), fails, "1.{minor}: {issues:?}");
    }
}

#[test]
fn bad_inputs_are_errors() {
    assert!(matches!(Validator::from_crd(&json!({}), None, KubeVersion::new(1, 30)), Err(ValidateError::NotACrd("spec"))));
    let e = Validator::from_crd(&fixture(), Some("v9"), KubeVersion::new(1, 30)).unwrap_err();
    assert_eq!(e.to_string(), "CRD widgets.audit.example.com has no version \"v9\" (it has: v1)");
    assert!(KubeVersion::parse("v1.30.2").is_ok_and(|v| v.same_minor(&KubeVersion::new(1, 30))));
    assert!(KubeVersion::parse("latest").is_err());
}

fn counter_crd(rule: &str) -> Value {
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "counters.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced", "names": {"kind": "Counter", "plural": "counters"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "n": {"type": "integer", "x-kubernetes-validations": [{"rule": rule, "message": "n rule"}]}}}}}}}]}})
}

#[test]
fn outlook_skips_the_update_probe_only_when_transition_rules_are_reflexive() {
    let counter = json!({"apiVersion":"example.com/v1","kind":"Counter","metadata":{"name":"c","namespace":"default"},"spec":{"n":3}});
    for rule in ["self == oldSelf", " oldSelf==self "] {
        let v = Validator::from_crd(&counter_crd(rule), None, KubeVersion::new(1, 36)).unwrap();
        assert!(v.transitions_reflexive, "{rule}");
        let o = v.outlook(&counter);
        assert!(o.as_new.errors.is_empty() && o.on_any_update.is_empty() && o.when_field_changes.is_empty(), "{rule}: {o:?}");
    }
    // A transition rule an unchanged value fails: valid as new, rejected on every update.
    let v = Validator::from_crd(&counter_crd("self > oldSelf"), None, KubeVersion::new(1, 36)).unwrap();
    assert!(!v.transitions_reflexive);
    let o = v.outlook(&counter);
    assert!(o.as_new.errors.is_empty(), "{:?}", o.as_new.errors);
    assert_eq!(o.on_any_update.iter().map(ToString::to_string).collect::<Vec<_>>(), ["spec.n: Invalid value: 3: n rule"]);
    // The same probe, run by hand, agrees with the fast path on the reflexive rule.
    let v = Validator::from_crd(&counter_crd("self == oldSelf"), None, KubeVersion::new(1, 36)).unwrap();
    let mut touched = counter.clone();
    touched["metadata"]["annotations"] = json!({"x": "y"});
    assert!(v.validate(&touched, Some(&counter)).errors.is_empty());
}

#[test]
fn without_status_keeps_everything_else_in_order() {
    let o = json!({"kind": "Widget", "status": {"x": 1}, "spec": {"status": "kept"}, "metadata": {}});
    let copy = without_status(&o);
    assert_eq!(copy, json!({"kind": "Widget", "spec": {"status": "kept"}, "metadata": {}}));
    assert_eq!(
        copy.as_object().map(|m| m.keys().cloned().collect::<Vec<_>>()),
        Some(vec!["kind".into(), "spec".into(), "metadata".into()])
    );
    assert_eq!(without_status(&json!("text")), json!("text"));
}
