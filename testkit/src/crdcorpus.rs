//! Object corpus generator for differential tests of schema validation: from a CRD's storage
//! schema alone (no hand-written cases) it builds a minimal valid object, then one mutation per
//! constraint it finds — type confusions, enum, bounds, lengths, patterns, formats, items,
//! uniqueness, list-map keys, required fields, property counts, unknown (pruned) fields, nulls —
//! candidate values at every node carrying CEL rules, and update pairs for rules that read
//! `oldSelf`. It reads the raw JSON schema, independently of the validator under test.

use regex::Regex;
use serde_json::{json, Map, Value};

/// One object to send, and for updates the object to store first.
#[derive(Debug, Clone)]
pub struct Case {
    pub name: String,
    pub object: Value,
    /// Stored first (a real create), then `object` is sent as a dry-run update of it.
    pub old: Option<Value>,
}

/// The CRD facts the generator and harness need.
#[derive(Debug, Clone)]
pub struct Target {
    pub group: String,
    pub version: String,
    pub kind: String,
    pub plural: String,
    pub namespaced: bool,
    pub schema: Value,
}

impl Target {
    pub fn of(crd: &Value) -> Option<Target> {
        let spec = crd.get("spec")?;
        let v = spec.get("versions")?.as_array()?.iter().find(|v| v.get("storage") == Some(&Value::Bool(true)))?;
        Some(Target {
            group: spec.get("group")?.as_str()?.to_string(),
            version: v.get("name")?.as_str()?.to_string(),
            kind: spec.pointer("/names/kind")?.as_str()?.to_string(),
            plural: spec.pointer("/names/plural")?.as_str()?.to_string(),
            namespaced: spec.get("scope").and_then(Value::as_str) != Some("Cluster"),
            schema: v.pointer("/schema/openAPIV3Schema")?.clone(),
        })
    }
}

fn ty(s: &Value) -> &str {
    if s.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true)) {
        return "int-or-string";
    }
    s.get("type").and_then(Value::as_str).unwrap_or("")
}

fn num(s: &Value, k: &str) -> Option<f64> {
    s.get(k).and_then(Value::as_f64)
}

fn flag(s: &Value, k: &str) -> bool {
    s.get(k) == Some(&Value::Bool(true))
}

fn props(s: &Value) -> Option<&Map<String, Value>> {
    s.get("properties").and_then(Value::as_object)
}

fn required(s: &Value) -> Vec<String> {
    s.get("required").and_then(Value::as_array).map(|r| r.iter().filter_map(|x| x.as_str().map(String::from)).collect()).unwrap_or_default()
}

/// A string the node accepts, when one of a few candidates does.
fn good_string(s: &Value) -> Option<String> {
    if let Some(e) = s.get("enum").and_then(Value::as_array) {
        return e.first().and_then(Value::as_str).map(String::from);
    }
    match s.get("format").and_then(Value::as_str) {
        Some("date-time") => return Some("2024-01-01T00:00:00Z".into()),
        Some("byte") => return Some("YQ==".into()),
        _ => {}
    }
    let min = num(s, "minLength").unwrap_or(0.0) as usize;
    let max = num(s, "maxLength").map_or(usize::MAX, |m| m as usize);
    let re = s.get("pattern").and_then(Value::as_str).and_then(|p| Regex::new(p).ok());
    let mut cands: Vec<String> = ["a", "abc", "a1", "1", "abcdefgh", "a-b", "a.b", "A", "0", "10", "1Gi", "a/b", "example.com/a", "x://y"]
        .iter()
        .map(|c| c.to_string())
        .collect();
    cands.push("a".repeat(min.max(1)));
    cands.into_iter().find(|c| {
        let n = c.chars().count();
        n >= min && n <= max && re.as_ref().is_none_or(|r| r.is_match(c))
    })
}

/// The smallest value the node accepts (by construction, not checked).
pub fn minimal(s: &Value) -> Value {
    if let Some(d) = s.get("default") {
        return d.clone();
    }
    match ty(s) {
        "object" => {
            let mut m = Map::new();
            if let Some(p) = props(s) {
                for r in required(s) {
                    if let Some(ps) = p.get(&r) {
                        m.insert(r.clone(), minimal(ps));
                    }
                }
            }
            let min = num(s, "minProperties").unwrap_or(0.0) as usize;
            if let Some(p) = props(s) {
                for (k, ps) in p {
                    if m.len() >= min {
                        break;
                    }
                    m.entry(k.clone()).or_insert_with(|| minimal(ps));
                }
            }
            if s.get("additionalProperties").is_some_and(Value::is_object) {
                for i in 0..min {
                    m.insert(format!("k{i}"), minimal(&s["additionalProperties"]));
                }
            }
            Value::Object(m)
        }
        "array" => {
            let n = num(s, "minItems").unwrap_or(0.0) as usize;
            (0..n).map(|i| distinct_item(s, i)).collect::<Vec<_>>().into()
        }
        "string" => Value::String(good_string(s).unwrap_or_else(|| "a".into())),
        "integer" | "int-or-string" => {
            let min = num(s, "minimum").map_or(1.0, |m| {
                if flag(s, "exclusiveMinimum") {
                    m + 1.0
                } else {
                    m.max(1.0).min(num(s, "maximum").unwrap_or(f64::MAX))
                }
            });
            json!(min as i64)
        }
        "number" => json!(num(s, "minimum").map_or(1.0, |m| m + 1.0)),
        "boolean" => Value::Bool(false),
        _ => json!({}),
    }
}

/// Item `i` of a list, with map keys (and set values) made distinct.
fn distinct_item(list: &Value, i: usize) -> Value {
    let item_schema = list.get("items").cloned().unwrap_or(json!({}));
    let mut item = minimal(&item_schema);
    let keys: Vec<String> = list
        .get("x-kubernetes-list-map-keys")
        .and_then(Value::as_array)
        .map(|k| k.iter().filter_map(|x| x.as_str().map(String::from)).collect())
        .unwrap_or_default();
    if let Value::Object(m) = &mut item {
        for k in &keys {
            let ks = item_schema.pointer(&format!("/properties/{k}")).cloned().unwrap_or(json!({}));
            m.insert(k.clone(), unique_scalar(&ks, i));
        }
    } else if i > 0 {
        item = unique_scalar(&item_schema, i);
    }
    item
}

fn unique_scalar(s: &Value, i: usize) -> Value {
    match ty(s) {
        "integer" | "int-or-string" => json!(i as i64 + 1),
        _ => {
            if let Some(e) = s.get("enum").and_then(Value::as_array) {
                return e.get(i % e.len().max(1)).cloned().unwrap_or(json!("a"));
            }
            let base = good_string(s).unwrap_or_else(|| "a".into());
            Value::String(if i == 0 { base } else { format!("{base}{}", (b'a' + (i % 26) as u8) as char) })
        }
    }
}

/// Every case for one CRD, at most `max` (deterministic: the first ones in schema order).
pub fn cases(t: &Target, max: usize) -> Vec<Case> {
    let mut base = minimal(&t.schema);
    if let Value::Object(m) = &mut base {
        m.insert("apiVersion".into(), json!(format!("{}/{}", t.group, t.version)));
        m.insert("kind".into(), json!(t.kind));
        let mut meta = json!({"name": "base"});
        if t.namespaced {
            meta["namespace"] = json!("default");
        }
        m.insert("metadata".into(), meta);
        m.remove("status");
        // The base carries a minimal spec so each mutation below is its only violation.
        if let Some(spec) = props(&t.schema).and_then(|p| p.get("spec")) {
            m.entry("spec").or_insert_with(|| minimal(spec));
        }
    }
    let mut g = Gen { out: vec![Case { name: "valid-minimal".into(), object: base.clone(), old: None }], base: base.clone() };
    if let Some(p) = props(&t.schema) {
        if let Some(spec) = p.get("spec") {
            g.node(spec, &["spec".to_string()], 0);
        }
    }
    let mut named = base.clone();
    named["metadata"]["name"] = json!("Bad_Name");
    g.out.push(Case { name: "metadata.name-invalid".into(), object: named, old: None });
    let mut long = base.clone();
    long["metadata"]["name"] = json!("a".repeat(70));
    g.out.push(Case { name: "metadata.name-70-chars".into(), object: long, old: None });
    let mut unknown = base;
    unknown["zzTopLevelUnknown"] = json!(1);
    g.out.push(Case { name: "prune-top-level".into(), object: unknown, old: None });
    // Keep the object-level cases, then an even spread of the rest (deterministic).
    let tail: Vec<Case> = g.out.split_off(g.out.len() - 3);
    if g.out.len() > max.saturating_sub(3) {
        let keep = max.saturating_sub(3).max(1);
        let stride = g.out.len() as f64 / keep as f64;
        g.out = (0..keep).filter_map(|i| g.out.get((i as f64 * stride) as usize).cloned()).collect();
    }
    g.out.extend(tail);
    for (i, c) in g.out.iter_mut().enumerate() {
        if c.object["metadata"]["name"] == "base" {
            c.object["metadata"]["name"] = json!(format!("c{i}"));
        }
        if let Some(o) = &mut c.old {
            o["metadata"]["name"] = json!(format!("u{i}"));
            c.object["metadata"]["name"] = json!(format!("u{i}"));
        }
    }
    g.out
}

struct Gen {
    out: Vec<Case>,
    base: Value,
}

fn set_at(root: &Value, path: &[String], v: Option<Value>) -> Value {
    let mut r = root.clone();
    let mut cur = &mut r;
    for (i, seg) in path.iter().enumerate() {
        let last = i == path.len() - 1;
        if let Ok(idx) = seg.parse::<usize>() {
            let Some(arr) = cur.as_array_mut() else { return r };
            if last {
                match v {
                    Some(v) if idx < arr.len() => arr[idx] = v,
                    _ => {}
                }
                return r;
            }
            let Some(next) = arr.get_mut(idx) else { return r };
            cur = next;
        } else {
            let Some(m) = cur.as_object_mut() else { return r };
            if last {
                match v {
                    Some(v) => {
                        m.insert(seg.clone(), v);
                    }
                    None => {
                        m.remove(seg);
                    }
                }
                return r;
            }
            cur = m.entry(seg.clone()).or_insert_with(|| json!({}));
        }
    }
    r
}

fn get_at<'a>(root: &'a Value, path: &[String]) -> Option<&'a Value> {
    let mut cur = root;
    for seg in path {
        cur = match seg.parse::<usize>() {
            Ok(i) => cur.get(i)?,
            Err(_) => cur.get(seg)?,
        };
    }
    Some(cur)
}

impl Gen {
    fn push(&mut self, name: String, path: &[String], v: Option<Value>) {
        let object = set_at(&self.base, path, v);
        self.out.push(Case { name, object, old: None });
    }

    /// Mutations for the node at `path` (present in the base object, or an optional child added
    /// with its minimal value when `depth` allows).
    fn node(&mut self, s: &Value, path: &[String], depth: usize) {
        if depth > 12 {
            return;
        }
        let p = path.join(".");
        let present = get_at(&self.base, path).is_some();
        if !present {
            self.push(format!("{p}:add-minimal"), path, Some(minimal(s)));
        }
        // Type confusion.
        let wrong = match ty(s) {
            "integer" | "number" => json!("string"),
            "string" => json!(5),
            "boolean" => json!("yes"),
            "object" => json!("not-an-object"),
            "array" => json!({"not": "a list"}),
            "int-or-string" => json!(true),
            _ => Value::Null,
        };
        if !wrong.is_null() {
            self.push(format!("{p}:type"), path, Some(wrong));
        }
        if let Some(e) = s.get("enum").and_then(Value::as_array) {
            let bad = if e.iter().all(Value::is_string) { json!("NotInEnum") } else { json!(987654) };
            self.push(format!("{p}:enum"), path, Some(bad));
        }
        if let Some(m) = num(s, "minimum") {
            let v = if flag(s, "exclusiveMinimum") { m } else { m - 1.0 };
            self.push(format!("{p}:minimum"), path, Some(if ty(s) == "number" { json!(v) } else { json!(v as i64) }));
        }
        if let Some(m) = num(s, "maximum") {
            let v = if flag(s, "exclusiveMaximum") { m } else { m + 1.0 };
            self.push(format!("{p}:maximum"), path, Some(if ty(s) == "number" { json!(v) } else { json!(v as i64) }));
        }
        if ty(s) == "integer" && s.get("format").and_then(Value::as_str) == Some("int32") {
            self.push(format!("{p}:int32-range"), path, Some(json!(3_000_000_000i64)));
        }
        if ty(s) == "string" {
            if let Some(m) = num(s, "minLength").filter(|m| *m > 0.0) {
                self.push(format!("{p}:minLength"), path, Some(json!("a".repeat(m as usize - 1))));
            }
            if let Some(m) = num(s, "maxLength") {
                self.push(format!("{p}:maxLength"), path, Some(json!("a".repeat(m as usize + 1))));
            }
            if s.get("pattern").is_some() {
                self.push(format!("{p}:pattern"), path, Some(json!("!! not matching !!")));
            }
            if let Some(f) = s.get("format").and_then(Value::as_str) {
                self.push(format!("{p}:format-{f}"), path, Some(json!("not a valid value")));
            }
        }
        if s.get("nullable") != Some(&Value::Bool(true)) && path.len() > 1 {
            self.push(format!("{p}:null"), path, Some(Value::Null));
        }
        if s.get("x-kubernetes-validations").is_some() {
            for (i, cand) in cel_candidates(s).into_iter().enumerate() {
                self.push(format!("{p}:cel-candidate-{i}"), path, Some(cand));
            }
            self.transition(s, path);
        }
        match ty(s) {
            "object" => self.object(s, path, depth),
            "array" => self.array(s, path, depth),
            _ => {}
        }
    }

    fn object(&mut self, s: &Value, path: &[String], depth: usize) {
        let p = path.join(".");
        let preserve = flag(s, "x-kubernetes-preserve-unknown-fields");
        let here = get_at(&self.base, path).cloned().unwrap_or_else(|| minimal(s));
        let with = |k: &str, v: Value| {
            let mut o = here.clone();
            o[k] = v;
            o
        };
        if !preserve && s.get("additionalProperties").is_none() {
            self.push(format!("{p}:prune-unknown"), path, Some(with("zzUnknownField", json!(1))));
        }
        for r in required(s) {
            let mut o = here.clone();
            if let Value::Object(m) = &mut o {
                m.remove(&r);
            }
            self.push(format!("{p}:required-{r}"), path, Some(o));
        }
        if let Some(m) = num(s, "minProperties").filter(|m| *m > 0.0) {
            let _ = m;
            self.push(format!("{p}:minProperties"), path, Some(json!({})));
        }
        if let Some(m) = num(s, "maxProperties") {
            let item = s.get("additionalProperties").map_or(json!("a"), minimal);
            let o: Map<String, Value> = (0..=m as usize).map(|i| (format!("k{i}"), item.clone())).collect();
            self.push(format!("{p}:maxProperties"), path, Some(Value::Object(o)));
        }
        if let Some(ps) = props(s) {
            for (k, child) in ps {
                let mut cp = path.to_vec();
                cp.push(k.clone());
                self.node(child, &cp, depth + 1);
            }
        }
    }

    fn array(&mut self, s: &Value, path: &[String], depth: usize) {
        let p = path.join(".");
        let item = s.get("items").cloned().unwrap_or(json!({}));
        if let Some(m) = num(s, "minItems").filter(|m| *m > 0.0) {
            let v: Vec<Value> = (0..m as usize - 1).map(|i| distinct_item(s, i)).collect();
            self.push(format!("{p}:minItems"), path, Some(v.into()));
        }
        if let Some(m) = num(s, "maxItems") {
            if m < 200.0 {
                let v: Vec<Value> = (0..=m as usize).map(|i| distinct_item(s, i)).collect();
                self.push(format!("{p}:maxItems"), path, Some(v.into()));
            }
        }
        match s.get("x-kubernetes-list-type").and_then(Value::as_str) {
            Some("set") | Some("map") => {
                let one = distinct_item(s, 0);
                self.push(format!("{p}:duplicates"), path, Some(json!([one.clone(), one])));
            }
            _ => {}
        }
        // Recurse into a one-item list.
        let mut cp = path.to_vec();
        if get_at(&self.base, path).and_then(Value::as_array).is_none_or(|a| a.is_empty()) {
            let saved = self.base.clone();
            self.base = set_at(&self.base, path, Some(json!([distinct_item(s, 0)])));
            cp.push("0".into());
            self.node(&item, &cp, depth + 1);
            self.base = saved;
        } else {
            cp.push("0".into());
            self.node(&item, &cp, depth + 1);
        }
    }

    /// Rules reading `oldSelf`: store a value, then update it to another and to itself.
    fn transition(&mut self, s: &Value, path: &[String]) {
        let uses_old = s["x-kubernetes-validations"]
            .as_array()
            .is_some_and(|r| r.iter().any(|r| r.get("rule").and_then(Value::as_str).is_some_and(|t| t.contains("oldSelf"))));
        if !uses_old {
            return;
        }
        let p = path.join(".");
        let a = minimal(s);
        let b = match ty(s) {
            "integer" => json!(a.as_i64().unwrap_or(1) + 1),
            "string" => {
                let alt = unique_scalar(s, 1);
                if alt == a {
                    json!(format!("{}x", a.as_str().unwrap_or("a")))
                } else {
                    alt
                }
            }
            _ => {
                let mut o = a.clone();
                if let (Value::Object(m), Some(ps)) = (&mut o, props(s)) {
                    if let Some((k, cs)) = ps.iter().find(|(k, _)| !m.contains_key(*k)) {
                        m.insert(k.clone(), minimal(cs));
                    }
                }
                o
            }
        };
        let old = set_at(&self.base, path, Some(a.clone()));
        self.out.push(Case { name: format!("{p}:update-changed"), object: set_at(&self.base, path, Some(b)), old: Some(old.clone()) });
        self.out.push(Case { name: format!("{p}:update-unchanged"), object: old.clone(), old: Some(old) });
    }
}

/// Values likely to exercise a node's rules: empty and odd strings, boundary numbers, the
/// object with every optional child set, a list holding a `node` string.
fn cel_candidates(s: &Value) -> Vec<Value> {
    match ty(s) {
        "string" => vec![json!(""), json!("nope"), json!("scheme://ok"), json!("node")],
        "integer" => vec![json!(0), json!(-1), json!(1)],
        "array" => {
            let item = s.get("items").cloned().unwrap_or(json!({}));
            let mut v = vec![json!([minimal(&item)])];
            if ty(&item) == "string" {
                v.push(json!(["node"]));
            }
            if ty(&item) == "object" {
                let mut full = minimal(&item);
                fill_optional(&item, &mut full, 2);
                v.push(json!([full]));
            }
            v
        }
        "object" => {
            let mut full = minimal(s);
            fill_optional(s, &mut full, 3);
            vec![full]
        }
        _ => vec![],
    }
}

fn fill_optional(s: &Value, v: &mut Value, depth: usize) {
    if depth == 0 {
        return;
    }
    if let (Some(ps), Value::Object(m)) = (props(s), v) {
        for (k, cs) in ps {
            let e = m.entry(k.clone()).or_insert_with(|| minimal(cs));
            fill_optional(cs, e, depth - 1);
        }
    }
}
