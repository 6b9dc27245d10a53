//! Validating each distinct shape of stored object once: a survey's outlooks memoised on exactly
//! the inputs validation reads besides ObjectMeta. Objects of a kind in a large cluster are mostly
//! copies of a few templates that differ in `metadata` (name, namespace, labels, uid …) and
//! `status` (which writes of the main resource keep as stored, so a survey judges objects without
//! it). Outside ObjectMeta validation itself, validation reads `metadata` only through CEL rules
//! at the root — and there only `name` and `generateName` — through pruning (fields ObjectMeta
//! does not have) and through the root schema's `metadata` node. So when
//!
//! - the CRD's `metadata` node is a bare `type: object` (or absent, with no additional
//!   properties schema at the root), the root neither preserves unknown fields nor is an embedded
//!   resource, and each root rule reads either not `metadata` at all or only `metadata`, without
//!   `oldSelf` and without a `messageExpression` (the validator's `memo_blind`), and
//! - the object's `metadata` is an object with ObjectMeta's fields only, without the update
//!   probe's annotation, ObjectMeta validation finds nothing, and the root rules pass on it,
//!
//! the object's outlook is a function of the object without `metadata` (and `status`): the
//! root rules that read `metadata` pass for every such object, and nothing else sees it. Two such
//! objects equal in the rest, key order included (errors follow key order), get the same outlook,
//! which the memo hands out without validating the second.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use serde_json::{Map, Value};

use super::structural::Schema;
use super::{meta, Outlook, Validator, WriteOutcome};

/// Distinct shapes kept per memo: beyond them, objects are validated as usual (a cluster whose
/// objects are all different gains nothing, and the memo's memory stays bounded).
const MAX_SHAPES: usize = 512;

/// The update probe's annotation ([`Validator::outlook`] adds it; an object that already has it
/// makes the probe a no-op update, so it is not memoised).
pub(crate) const PROBE_ANNOTATION: &str = "trainer-audit.kubeflow.org/probe";

/// Outlooks and write outcomes of the shapes seen so far, for one thread's share of a survey or
/// of a batch of writes.
#[derive(Default)]
pub struct Memo {
    shapes: HashMap<u64, Vec<Entry>>,
    kept: usize,
    /// Objects answered from the memo (for tests and profiling).
    pub hits: usize,
}

/// What was asked: an outlook (with or without status) or one write.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Ask {
    Outlook {
        no_status: bool,
    },
    Create,
    /// An update; whether the old and new `metadata` are deep-equal (ratcheting at the root
    /// compares the whole objects).
    Update {
        same_metadata: bool,
    },
}

enum Answer {
    Outlook(Outlook),
    Write(WriteOutcome),
}

struct Entry {
    /// The validator the answer is from (its address: a memo lives within one batch).
    validator: usize,
    ask: Ask,
    /// The objects (new, then old) without `metadata` (and `status` for an outlook without it).
    rest: Vec<Map<String, Value>>,
    answer: Answer,
}

/// The parts of an object the key holds, in order.
fn rest_of(obj: &Map<String, Value>, no_status: bool) -> impl Iterator<Item = (&String, &Value)> {
    obj.iter().filter(move |(k, _)| *k != "metadata" && !(no_status && *k == "status"))
}

impl Memo {
    pub fn new() -> Memo {
        Memo::default()
    }

    /// The outlook of `stored` under `v` ([`Validator::outlook_without_status`] when
    /// `no_status`, else [`Validator::outlook`]), from the memo when an equal shape was seen.
    pub fn outlook(&mut self, v: &Validator, stored: &Value, no_status: bool) -> Outlook {
        let found = self.answer(v, Ask::Outlook { no_status }, stored, None, || Answer::Outlook(v.outlook_of(stored, no_status)));
        match found {
            Answer::Outlook(o) => o,
            Answer::Write(_) => unreachable!("outlooks are asked as outlooks"),
        }
    }

    /// [`Validator::validate`] (a create when `old` is None, else an update), from the memo when
    /// an equal shape was seen.
    pub fn validate(&mut self, v: &Validator, new: &Value, old: Option<&Value>) -> WriteOutcome {
        let ask = match old {
            None => Ask::Create,
            Some(o) => Ask::Update {
                same_metadata: matches!((new.get("metadata"), o.get("metadata")), (Some(a), Some(b)) if super::openapi::deep_equal(a, b)),
            },
        };
        match self.answer(v, ask, new, old, || Answer::Write(v.validate(new, old))) {
            Answer::Write(w) => w,
            Answer::Outlook(_) => unreachable!("writes are asked as writes"),
        }
    }

    /// A memo that has kept [`MAX_SHAPES`] shapes without answering one object from them is
    /// serving objects that all differ: it stops hashing and comparing (a twentieth of a survey
    /// of such objects), and every further object is validated as it would have been on a miss.
    fn given_up(&self) -> bool {
        self.kept >= MAX_SHAPES && self.hits == 0
    }

    fn answer(&mut self, v: &Validator, ask: Ask, new: &Value, old: Option<&Value>, run: impl FnOnce() -> Answer) -> Answer {
        let no_status = ask == Ask::Outlook { no_status: true };
        let objects: Vec<&Map<String, Value>> = std::iter::once(new).chain(old).filter_map(Value::as_object).collect();
        if !v.memo_blind || objects.len() != 1 + usize::from(old.is_some()) || self.given_up() {
            return run();
        }
        let id = v as *const Validator as usize;
        let mut h = std::collections::hash_map::DefaultHasher::new();
        (id, ask).hash(&mut h);
        for obj in &objects {
            for (k, child) in rest_of(obj, no_status) {
                k.hash(&mut h);
                hash_value(child, &mut h);
            }
            0xffu8.hash(&mut h);
        }
        let hash = h.finish();
        let same = |e: &&Entry| {
            e.validator == id
                && e.ask == ask
                && e.rest.iter().zip(&objects).all(|(kept, obj)| {
                    kept.len() == rest_of(obj, no_status).count()
                        && kept.iter().zip(rest_of(obj, no_status)).all(|((ka, va), (kb, vb))| ka == kb && identical(va, vb))
                })
        };
        let blind = || v.metadata_blind_here(new) && old.is_none_or(|o| v.metadata_blind_here(o));
        if let Some(e) = self.shapes.get(&hash).and_then(|list| list.iter().find(same)) {
            if blind() {
                self.hits += 1;
                return match &e.answer {
                    Answer::Outlook(o) => Answer::Outlook(o.clone()),
                    Answer::Write(w) => Answer::Write(w.clone()),
                };
            }
            return run();
        }
        let answer = run();
        if self.kept < MAX_SHAPES && blind() {
            let rest = objects.iter().map(|obj| rest_of(obj, no_status).map(|(k, c)| (k.clone(), c.clone())).collect()).collect();
            let kept = match &answer {
                Answer::Outlook(o) => Answer::Outlook(o.clone()),
                Answer::Write(w) => Answer::Write(w.clone()),
            };
            self.shapes.entry(hash).or_default().push(Entry { validator: id, ask, rest, answer: kept });
            self.kept += 1;
        }
        answer
    }
}

impl Validator {
    /// Whether the first condition of the module's comment holds for this CRD version.
    pub(crate) fn compute_memo_blind(schema: &Schema) -> bool {
        let meta_ok = match schema.properties.get("metadata") {
            Some(m) => bare_object(m),
            None => schema.additional.is_none(),
        };
        let rules_ok = schema.compiled.iter().all(|r| {
            if r.unevaluated.is_some() || r.spec.message_expression.is_some() {
                return false;
            }
            match r.self_fields() {
                Some(f) if !f.contains("metadata") => true,
                Some(f) => f.len() == 1 && !r.uses_old_self,
                None => false,
            }
        });
        meta_ok && rules_ok && !schema.preserve_unknown && !schema.embedded_resource
    }

    /// The second condition, for one object.
    fn metadata_blind_here(&self, obj: &Value) -> bool {
        let Some(Value::Object(m)) = obj.get("metadata") else { return false };
        if !m.keys().all(|k| super::prune::OBJECT_META_FIELDS.contains(&k.as_str())) {
            return false;
        }
        if m.get("annotations").and_then(Value::as_object).is_some_and(|a| a.contains_key(PROBE_ANNOTATION)) {
            return false;
        }
        let mut errs = Vec::new();
        meta::validate_root_meta(obj, self.namespaced, &mut errs);
        if !errs.is_empty() {
            return false;
        }
        let mut eval = super::cel::Eval::new(&self.ctx, false);
        eval.root_rules(&self.schema, obj);
        eval.errors.is_empty() && eval.unevaluated.is_empty()
    }
}

/// A schema node that says nothing but `type: object`.
fn bare_object(s: &Schema) -> bool {
    s.ty == "object"
        && !s.nullable
        && !s.int_or_string
        && !s.preserve_unknown
        && !s.embedded_resource
        && s.format.is_none()
        && s.enumeration.is_none()
        && s.maximum.is_none()
        && s.minimum.is_none()
        && s.multiple_of.is_none()
        && s.max_length.is_none()
        && s.min_length.is_none()
        && s.pattern.is_none()
        && s.max_items.is_none()
        && s.min_items.is_none()
        && !s.unique_items
        && s.max_properties.is_none()
        && s.min_properties.is_none()
        && s.required.is_empty()
        && s.properties.is_empty()
        && s.additional.is_none()
        && s.items.is_none()
        && s.list_type.is_none()
        && s.list_map_keys.is_empty()
        && s.map_type.is_none()
        && s.default.is_none()
        && s.any_of.is_empty()
        && s.all_of.is_empty()
        && s.one_of.is_empty()
        && s.not.is_none()
        && s.rules.is_empty()
        && !s.has_rules_below
        && !s.has_defaults_below
        && !s.has_list_types_below
}

/// Hashes a JSON value with its keys in order.
fn hash_value(v: &Value, h: &mut impl Hasher) {
    match v {
        Value::Null => 0u8.hash(h),
        Value::Bool(b) => (1u8, b).hash(h),
        Value::Number(n) => (2u8, n).hash(h),
        Value::String(s) => (3u8, s).hash(h),
        Value::Array(a) => {
            (4u8, a.len()).hash(h);
            for i in a {
                hash_value(i, h);
            }
        }
        Value::Object(m) => {
            (5u8, m.len()).hash(h);
            for (k, c) in m {
                k.hash(h);
                hash_value(c, h);
            }
        }
    }
}

/// Equal with keys in the same order (serde_json's own equality ignores the order of keys,
/// which validation's output does not).
fn identical(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(a, b)| identical(a, b)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|((ka, va), (kb, vb))| ka == kb && identical(va, vb))
        }
        (Value::Object(_) | Value::Array(_), _) | (_, Value::Object(_) | Value::Array(_)) => false,
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::KubeVersion;
    use serde_json::json;

    /// A CRD shaped like Trainer's TrainJob: root rules on `metadata.name` only, rules, defaults
    /// and a transition rule below.
    fn crd(root_rules: Value) -> Value {
        json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "jobs.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced", "names": {"kind": "Job", "plural": "jobs"},
                "versions": [{"name": "v1", "served": true, "storage": true, "subresources": {"status": {}},
                    "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-validations": root_rules, "properties": {
                        "apiVersion": {"type": "string"}, "kind": {"type": "string"}, "metadata": {"type": "object"},
                        "spec": {"type": "object", "properties": {
                            "size": {"type": "integer", "maximum": 10, "default": 1},
                            "mode": {"type": "string", "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "mode is immutable"}]},
                            "items": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                            "name": {"type": "string", "x-kubernetes-validations": [{"rule": "self.startsWith('n')", "message": "starts with n"}]}}},
                        "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}}]}})
    }

    fn name_rules() -> Value {
        json!([{"rule": "self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')", "message": "metadata.name must match RFC 1035 DNS label format"},
               {"rule": "size(self.metadata.name) <= 10", "message": "metadata.name must be no more than 10 characters"}])
    }

    fn job(name: &str, meta_extra: Value, spec: Value) -> Value {
        let mut meta = json!({"name": name, "namespace": "ns"});
        for (k, v) in meta_extra.as_object().unwrap() {
            meta[k] = v.clone();
        }
        json!({"apiVersion": "example.com/v1", "kind": "Job", "metadata": meta, "spec": spec, "status": {"phase": name}})
    }

    /// Every object's outlook from the memo is the outlook validated on its own, and the memo
    /// answers the repeated shapes.
    #[test]
    fn the_memo_answers_as_validation_does() {
        let v = Validator::from_crd(&crd(name_rules()), None, KubeVersion::new(1, 33)).unwrap();
        assert!(v.memo_blind);
        let specs = [
            json!({"size": 3, "name": "ok"}),
            json!({"size": 11, "name": "bad"}),
            json!({"mode": 4, "items": ["a", "a"]}),
            json!({"name": "ok", "size": 3}),
            json!({"size": 3, "name": "ok", "extra": {"x": 1}}),
            json!({"items": ["a", "b"], "size": null}),
        ];
        let metas = [
            ("a", json!({})),
            ("b", json!({"labels": {"x": "y"}, "uid": "1"})),
            ("Upper", json!({})),
            ("much-too-long-a-name", json!({})),
            ("c", json!({"bogus": 1})),
            ("d", json!({"annotations": {PROBE_ANNOTATION: "update"}})),
            ("e", json!({"labels": {"bad key!": "x"}})),
            ("f", json!({"annotations": {"z": "1"}, "finalizers": ["x/y"]})),
        ];
        let mut memo = Memo::new();
        let mut n = 0;
        for round in 0..2 {
            for spec in &specs {
                for (name, extra) in &metas {
                    let obj = job(name, extra.clone(), spec.clone());
                    let want = serde_json::to_string(&v.outlook_without_status(&obj)).unwrap();
                    let got = serde_json::to_string(&memo.outlook(&v, &obj, true)).unwrap();
                    assert_eq!(got, want, "round {round}, {obj}");
                    n += 1;
                }
            }
        }
        // Per spec, four of the eight metadata (a, b, e, f: ObjectMeta validation here checks
        // names, not label keys) share one outlook; the second round hits all four.
        assert_eq!(memo.hits, specs.len() * 3 + specs.len() * 4, "{n} objects");
    }

    /// Writes as creates and as updates: the memo answers as validation does, and an update
    /// whose metadata changed is not answered by one whose metadata did not.
    #[test]
    fn writes_answer_as_validation_does() {
        let v = Validator::from_crd(&crd(name_rules()), None, KubeVersion::new(1, 33)).unwrap();
        let specs = [json!({"size": 11, "name": "ok"}), json!({"mode": "a"}), json!({"mode": 4, "name": "x"}), json!({"size": 3})];
        let metas = [("a", json!({})), ("b", json!({"labels": {"x": "y"}})), ("Upper", json!({}))];
        let mut memo = Memo::new();
        for _ in 0..2 {
            for (i, spec) in specs.iter().enumerate() {
                for (name, extra) in &metas {
                    let new = job(name, extra.clone(), spec.clone());
                    let olds = [
                        None,
                        Some(new.clone()),
                        Some(job(name, json!({"labels": {"changed": "1"}}), spec.clone())),
                        Some(job(name, extra.clone(), specs[(i + 1) % specs.len()].clone())),
                    ];
                    for old in &olds {
                        let want = serde_json::to_string(&v.validate(&new, old.as_ref())).unwrap();
                        let got = serde_json::to_string(&memo.validate(&v, &new, old.as_ref())).unwrap();
                        assert_eq!(got, want, "{new} over {old:?}");
                    }
                }
            }
        }
        assert!(memo.hits > 0);
    }

    /// Objects that all differ: once MAX_SHAPES are kept without a hit, the memo stops looking
    /// (even a shape it holds is validated again), and every answer is still validation's.
    #[test]
    fn a_memo_of_objects_that_all_differ_gives_up() {
        let v = Validator::from_crd(&crd(name_rules()), None, KubeVersion::new(1, 33)).unwrap();
        let objects: Vec<Value> = (0..MAX_SHAPES + 8).map(|i| job("a", json!({}), json!({"size": i, "name": "x"}))).collect();
        let mut memo = Memo::new();
        for obj in objects.iter().chain(&objects[..4]) {
            let want = serde_json::to_string(&v.outlook_without_status(obj)).unwrap();
            assert_eq!(serde_json::to_string(&memo.outlook(&v, obj, true)).unwrap(), want, "{obj}");
        }
        assert!(memo.given_up());
        assert_eq!(memo.hits, 0, "the first shapes come again after the memo gave up");
        // A memo that has answered from its shapes keeps looking.
        let mut memo = Memo::new();
        for obj in objects[..1].iter().chain(&objects) {
            memo.outlook(&v, obj, true);
        }
        assert!(!memo.given_up() && memo.hits == 1);
    }

    #[test]
    fn crds_whose_validation_reads_metadata_otherwise_are_not_memoised() {
        let blind = |rules: Value| Validator::from_crd(&crd(rules), None, KubeVersion::new(1, 33)).unwrap().memo_blind;
        assert!(blind(json!([])));
        assert!(blind(json!([{"rule": "has(self.spec)"}])));
        assert!(!blind(json!([{"rule": "self.metadata.name == self.spec.name"}])));
        assert!(!blind(json!([{"rule": "self.metadata.name != ''", "messageExpression": "self.metadata.name"}])));
        assert!(!blind(json!([{"rule": "self == oldSelf"}])));
        let mut declared = crd(name_rules());
        declared["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["metadata"] =
            json!({"type": "object", "properties": {"name": {"type": "string", "maxLength": 5}}});
        assert!(!Validator::from_crd(&declared, None, KubeVersion::new(1, 33)).unwrap().memo_blind);
    }
}
