//! CRDs made to exercise the CEL cost estimator: every kind of schema node (strings bounded and
//! not, with formats and enums; lists of scalars, of objects and of lists; maps; int-or-string;
//! embedded resources; resource roots), each bounded and unbounded and nested under bounded and
//! unbounded lists, carrying rules that call every function family Kubernetes' CEL environment
//! offers (standard library, strings, lists, sets, regex, URLs, quantities, IPs and CIDRs,
//! semver, optionals, comprehensions), with message expressions and `optionalOldSelf`. The
//! differential (`tests/cel_cost.rs`) compares trainer-audit's estimate of each rule with the
//! API server's own (`crdcel`, the CRD validation in process) and the CRD verdicts with it.
//!
//! Deterministic: the same CRDs every run, one per node family, named `<family>.cel.example.com`.

use serde_json::{json, Value};

/// Rules for a string node.
const STRING_RULES: &[&str] = &[
    "self.size() < 10",
    "size(self) > 0",
    "self.startsWith('a')",
    "self.endsWith('b')",
    "self.contains('x')",
    "self.matches('^[a-z]+$')",
    "matches(self, '^a')",
    "self == 'x'",
    "self != 'y' && self < 'm'",
    "self + 'x' != 'yx'",
    "self.lowerAscii() == self",
    "self.upperAscii() != ''",
    "self.trim() == self",
    "self.replace('a', 'bb') != ''",
    "self.replace('', 'x') != ''",
    "self.split(',').size() > 0",
    "self.split(',', 3).size() > 0",
    "self.substring(1) != ''",
    "self.indexOf('a') >= 0",
    "self.lastIndexOf('a') >= 0",
    "self.charAt(0) != 'x'",
    "self.find('[0-9]+') != ''",
    "self.findAll('[0-9]').size() < 3",
    "isURL(self) && url(self).getHost() != ''",
    "isQuantity(self) && quantity(self).isInteger()",
    "!isQuantity(self) || quantity(self).compareTo(quantity('1Gi')) < 0",
    "isIP(self) && ip(self).family() == 4",
    "isCIDR(self) && cidr(self).containsIP('10.0.0.1')",
    "!isCIDR(self) || cidr(self).containsCIDR(self)",
    "isSemver(self) && semver(self).major() >= 1",
    "string(bytes(self)) == self",
    "self in ['a', 'b']",
    "type(self) == string",
    "self == oldSelf",
    "[self, 'a'].exists(x, x == 'a')",
    "{'k': self}['k'] == self",
    "int(self.size()) + 1 > 0",
    "double(self.size()) < 1.5",
    "self.size() == 0 ? true : self.startsWith('a')",
    "dyn(self) == 'x'",
];

/// Rules for a list of strings.
const STRING_LIST_RULES: &[&str] = &[
    "self.all(x, x.size() < 5)",
    "self.exists(x, x == 'a')",
    "self.exists_one(x, x == 'a')",
    "self.map(x, x + 'a').size() > 0",
    "self.filter(x, x != '').size() >= 0",
    "self.map(x, x != '', x.size()).size() >= 0",
    "self.all(x, self.all(y, x == y || x != y))",
    "'a' in self",
    "self.isSorted()",
    "self.indexOf('a') >= -1",
    "self.lastIndexOf('a') >= -1",
    "self.join(',') != ''",
    "self.join() != ''",
    "self.min() != ''",
    "size(self) <= 10",
    "sets.contains(self, ['a'])",
    "sets.equivalent(self, self)",
    "sets.intersects(self, ['a', 'b'])",
    "self == oldSelf",
    "self + ['a'] != []",
    "self.size() == 0 || self[0] != 'x'",
    "self.all(x, x.matches('^[a-z]+$'))",
    "self.map(x, x.size()).sum() < 100",
    "self.distinct().size() > 0",
    "self.sort() == self",
    "self.reverse() != []",
    "self.slice(0, 1) != []",
    "lists.range(3).size() == 3",
];

/// Rules for a list of integers.
const INT_LIST_RULES: &[&str] =
    &["self.sum() < 100", "self.max() < 10", "self.isSorted()", "self.all(x, x > 0)", "self.exists(x, x == 2)", "2 in self"];

/// Rules for a list of objects `{name, value, ports: [int]}`.
const OBJECT_LIST_RULES: &[&str] = &[
    "self.all(x, x.name != '')",
    "self.all(x, has(x.value))",
    "self.map(x, x.name).isSorted()",
    "self.exists(x, x.name == 'a')",
    "self.filter(x, x.name.startsWith('a')).size() < 3",
    "self.all(x, x.ports.all(p, p > 0))",
    "self.all(x, self.exists_one(y, y.name == x.name))",
    "self.map(x, x.name).all(n, n.size() < 10)",
];

/// Rules for a map of strings.
const MAP_RULES: &[&str] = &[
    "self.all(k, k.size() < 10)",
    "self.all(k, self[k] != '')",
    "'a' in self",
    "size(self) < 5",
    "self.exists(k, self[k].contains('x'))",
    "has(self.foo)",
    "self.foo == 'x'",
    "self == oldSelf",
];

/// Rules for an object `{a, b, n, f, t, d, ios, nested: {x}, list: [string]}`.
const OBJECT_RULES: &[&str] = &[
    "has(self.a) || has(self.b)",
    "!has(self.a) || self.a == oldSelf.a",
    "!has(self.b) || self.b.size() > 0",
    "self.n >= 0",
    "self.n + 1 > self.n",
    "double(self.n) < 1.5 || self.f > 0.5",
    "self.t < timestamp('2020-01-01T00:00:00Z')",
    "self.d > duration('1s')",
    "type(self.ios) == int || self.ios.matches('^[0-9]+%$')",
    "self.nested.x == self.a",
    "self.list.all(x, x == self.a)",
    "self.a + self.b == 'ab'",
    "self.a.size() + self.list.size() < 10",
    "[self.a, self.b].all(x, x != '')",
    "self.?a.orValue('') == 'x'",
    "optional.of(self.a).hasValue()",
];

/// Rules at a resource root.
const ROOT_RULES: &[&str] = &[
    "self.metadata.name.size() < 63",
    "self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",
    "self.metadata.generateName == ''",
    "self.kind == 'X' || self.apiVersion.startsWith('e')",
    "size(self.metadata.name) <= 20",
];

fn rules(list: &[&str]) -> Value {
    Value::Array(list.iter().map(|r| json!({"rule": r})).collect())
}

fn string(max: Option<u64>) -> Value {
    let mut s = json!({"type": "string"});
    if let Some(m) = max {
        s["maxLength"] = json!(m);
    }
    s
}

fn list(items: Value, max: Option<u64>) -> Value {
    let mut s = json!({"type": "array", "items": items});
    if let Some(m) = max {
        s["maxItems"] = json!(m);
    }
    s
}

fn with_rules(mut s: Value, list: &[&str]) -> Value {
    s["x-kubernetes-validations"] = rules(list);
    s
}

fn object_item(max: Option<u64>) -> Value {
    json!({"type": "object", "required": ["name"], "properties": {
        "name": string(max), "value": {"type": "integer"}, "ports": list(json!({"type": "integer"}), max)}})
}

fn crd(family: &str, spec_properties: Value, root_rules: bool) -> Value {
    let mut root = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": spec_properties}}});
    if root_rules {
        root["x-kubernetes-validations"] = rules(ROOT_RULES);
    }
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{family}.cel.example.com")},
        "spec": {"group": "cel.example.com", "scope": "Namespaced",
            "names": {"kind": family_kind(family), "plural": family, "listKind": format!("{}List", family_kind(family))},
            "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": root}}]}})
}

fn family_kind(family: &str) -> String {
    let mut c = family.chars();
    let first = c.next().map(|f| f.to_ascii_uppercase().to_string()).unwrap_or_default();
    first + c.as_str()
}

/// A node of each family, bounded (`Some` sizes) or not.
fn families(max: Option<u64>, items: Option<u64>) -> Vec<(&'static str, Value)> {
    let object = json!({"type": "object", "properties": {
        "a": string(max), "b": string(max), "n": {"type": "integer"}, "f": {"type": "number"},
        "t": {"type": "string", "format": "date-time"}, "d": {"type": "string", "format": "duration"},
        "ios": {"x-kubernetes-int-or-string": true},
        "nested": {"type": "object", "properties": {"x": string(max)}},
        "list": list(string(max), items)}});
    let mut map = json!({"type": "object", "additionalProperties": string(max)});
    if let Some(m) = items {
        map["maxProperties"] = json!(m);
    }
    vec![
        ("string", with_rules(string(max), STRING_RULES)),
        ("enum", with_rules(json!({"type": "string", "enum": ["a", "bb", "ccc"]}), &STRING_RULES[..8])),
        ("strings", with_rules(list(string(max), items), STRING_LIST_RULES)),
        ("ints", with_rules(list(json!({"type": "integer"}), items), INT_LIST_RULES)),
        ("objects", with_rules(list(object_item(max), items), OBJECT_LIST_RULES)),
        ("map", with_rules(map, MAP_RULES)),
        ("object", with_rules(object, OBJECT_RULES)),
        ("nested", with_rules(list(list(string(max), items), items), &["self.all(l, l.all(x, x != ''))", "self.flatten().size() >= 0"])),
    ]
}

/// Every CRD of the corpus.
pub fn crds() -> Vec<Value> {
    let mut out = Vec::new();
    for (suffix, max, items) in [("bounded", Some(16), Some(8)), ("unbounded", None, None), ("mixed", Some(64), None)] {
        let mut props = serde_json::Map::new();
        for (family, node) in families(max, items) {
            props.insert(family.to_string(), node.clone());
            // The same node under a list: its rules' cost times the list's cardinality.
            props.insert(format!("{family}Items"), list(node, items));
        }
        out.push(crd(&format!("all{suffix}"), Value::Object(props), true));
    }
    // One CRD per family alone, so a CRD total over the limit shows which family put it there.
    for (family, node) in families(None, None) {
        out.push(crd(&format!("only{family}"), json!({ family: node }), false));
    }
    // Message expressions, optionalOldSelf and an embedded resource.
    let special = json!({
        "msg": {"type": "string", "maxLength": 32, "x-kubernetes-validations": [
            {"rule": "self.size() < 8", "messageExpression": "'too long: ' + self"},
            {"rule": "self != 'x'", "messageExpression": "'bad ' + string(self.size())"}]},
        "opt": {"type": "string", "x-kubernetes-validations": [
            {"rule": "!oldSelf.hasValue() || self == oldSelf.value()", "optionalOldSelf": true}]},
        "embedded": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true,
            "x-kubernetes-validations": rules(&["self.kind != '' && self.metadata.name.size() < 20"])},
    });
    out.push(crd("special", special, false));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_well_formed() {
        let crds = crds();
        let mut names: Vec<&str> = crds.iter().filter_map(|c| c["metadata"]["name"].as_str()).collect();
        let n = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), n);
        assert!(names.iter().all(|n| n.ends_with(".cel.example.com") && *n == n.to_ascii_lowercase()));
    }
}
