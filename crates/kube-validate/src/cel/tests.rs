//! Rule-level behaviour on tiny schemas.

use serde_json::json;

use super::*;

fn node(schema: serde_json::Value) -> Schema {
    let mut s = Schema::parse(&schema, &KubeVersion::new(1, 36)).unwrap();
    compile_tree(&mut s, &KubeVersion::new(1, 36), false, Some(1));
    s
}

fn run(s: &Schema, v: serde_json::Value) -> (Vec<String>, usize) {
    let ctx = root_context();
    let mut e = Eval::new(&ctx, false);
    e.validate(s, &v, None, false);
    (e.errors.into_iter().map(|e| e.error.to_string()).collect(), e.unevaluated.len())
}

#[test]
fn default_message_and_value_printing() {
    let s = node(json!({"type":"object","properties":{"n":{"type":"integer","x-kubernetes-validations":[{"rule":"self >= 1"}]}}}));
    assert_eq!(run(&s, json!({"n":0})).0, ["n: Invalid value: 0: failed rule: self >= 1"]);
    assert!(run(&s, json!({"n":1})).0.is_empty());
}

#[test]
fn trainer_style_rules() {
    let s = node(json!({"type":"object","x-kubernetes-validations":[
        {"rule":"[has(self.a), has(self.b)].filter(x, x).size() <= 1","message":"Only one"}],
        "properties":{"a":{"type":"object"},"b":{"type":"object"},
          "c":{"type":"array","items":{"type":"string"},"x-kubernetes-validations":[{"rule":"!self.exists(c, c == 'node')","message":"no node"}]},
          "u":{"type":"string","x-kubernetes-validations":[{"rule":"self == '' || self.matches('^[A-Za-z][A-Za-z0-9+.-]*://.+$')","message":"uri"}]},
          "m":{"type":"string","x-kubernetes-validations":[{"rule":"self in ['x', 'y']","message":"in"}]}}}));
    let (mut errs, unev) = run(&s, json!({"a":{},"b":{},"c":["node"],"u":"nope","m":"z"}));
    errs.sort();
    assert_eq!(unev, 0);
    assert_eq!(
        errs,
        ["<nil>: Invalid value: Only one", "c: Invalid value: no node", "m: Invalid value: \"z\": in", "u: Invalid value: \"nope\": uri"]
    );
}

#[test]
fn reads_only_needed_fields_of_self() {
    let s = node(json!({"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},
        "x-kubernetes-validations":[{"rule":"self.a == 'x'"}]}));
    assert_eq!(s.compiled[0].self_fields.as_ref().map(|f| f.len()), Some(1));
}

#[test]
fn field_paths_normalise() {
    assert_eq!(normalize_field_path(".a.b").as_deref(), Some("a.b"));
    assert_eq!(normalize_field_path(".a['x.y']").as_deref(), Some("a[x.y]"));
    assert_eq!(normalize_field_path("a"), None);
}

#[test]
fn runtime_errors_are_reported_like_the_api_server() {
    let s = node(json!({"type":"object","properties":{"m":{"type":"object","additionalProperties":{"type":"string"},
        "x-kubernetes-validations":[{"rule":"self['k'] == 'v'"}]}}}));
    let (errs, _) = run(&s, json!({"m":{"other":"v"}}));
    assert_eq!(errs, ["m: Invalid value: \"object\": no such key: k evaluating rule: self['k'] == 'v'"]);
}

#[test]
fn matches_is_ours_in_both_forms_and_reports_bad_patterns() {
    let s = node(json!({"type":"object","properties":{
        "u":{"type":"string","x-kubernetes-validations":[{"rule":"self.matches('^a+$') && matches(self, 'a$')","message":"m"}]},
        "b":{"type":"string","x-kubernetes-validations":[{"rule":"self.matches('(a')"}]}}}));
    for _ in 0..3 {
        assert!(run(&s, json!({"u":"aaa"})).0.is_empty(), "cached pattern must keep matching");
        assert_eq!(run(&s, json!({"u":"ab"})).0, ["u: Invalid value: \"ab\": m"]);
    }
    let (errs, _) = run(&s, json!({"b":"a"}));
    assert_eq!(errs.len(), 1);
    assert!(errs[0].contains("'(a' not a valid regex"), "{errs:?}");
}
