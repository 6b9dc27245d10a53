//! Inputs found by `cargo xtask fuzz` that once took seconds and gigabytes: each must now end
//! quickly with Helm's error.

use std::time::{Duration, Instant};

use testkit::snippet::render_snippet;

const VALUES: &str = "a: 1\nm: {x: 1, y: [1, 2]}\nl: [3, 1, 2]\ns: hello\nn: null\n";

#[test]
fn recursion_through_template_and_include_is_bounded() {
    let template = include_str!("fixtures/fuzz/template-include-recursion.tpl");
    let started = Instant::now();
    let err = render_snippet(VALUES, template).unwrap_err();
    assert!(err.ends_with("exceeded maximum template depth (100000)"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(20), "took {:?}", started.elapsed());
}

#[test]
fn plain_template_recursion_reports_gos_limit() {
    let err = render_snippet(VALUES, r#"{{ define "r" }}{{ template "r" . }}{{ end }}{{ template "r" . }}"#).unwrap_err();
    assert_eq!(
        err,
        "probe/templates/t.yaml:1:28\n  executing \"r\" at <{{template \"r\" .}}>:\n    exceeded maximum template depth (100000)"
    );
}

#[test]
fn include_recursion_reports_helms_limit() {
    let err = render_snippet(VALUES, r#"{{ define "i" }}{{ include "i" . }}{{ end }}{{ include "i" . }}"#).unwrap_err();
    assert!(
        err.contains("rendering template has a nested reference name: i: unable to execute template"),
        "{}",
        &err[err.len().saturating_sub(300)..]
    );
}

/// Found by `cargo fuzz run yaml`: map keys whose go-yaml order is not transitive made the
/// standard library's sort panic inside `toYaml` (and the YAML emitter generally).
#[test]
fn non_transitive_key_order_does_not_panic() {
    testkit::fuzz::yaml(include_bytes!("fixtures/fuzz/yaml-nontransitive-key-sort.bin"));
    let mut keys: Vec<String> = Vec::new();
    for i in 0..200 {
        keys.push(format!("a{}{}", i % 17, if i % 3 == 0 { "b" } else { "" }));
    }
    let values = keys.iter().map(|k| format!("{k}: 1")).collect::<Vec<_>>().join("\n");
    let out = testkit::snippet::render_snippet_limited(&values, "{{ toYaml .Values }}", testkit::fuzz::limits()).unwrap();
    assert_eq!(out.lines().count(), keys.iter().collect::<std::collections::BTreeSet<_>>().len());
}
