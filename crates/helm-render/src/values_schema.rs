//! `values.schema.json` validation with the messages Helm prints (santhosh-tekuri/jsonschema
//! v6 wording): `- at '/replicas': got string, want integer`, `missing property 'name'`, …
//! Keywords: type, enum, const, required, properties, additionalProperties, items, prefixItems,
//! min/maxItems, uniqueItems, min/maxLength, pattern, minimum, maximum, exclusive bounds,
//! multipleOf, allOf, anyOf, oneOf, not, and local `$ref`s. Where jsonschema iterates Go maps
//! (several failing properties), the order here is by property name.

use crate::json::from_json;
use gotmpl::{Map, Value};

#[derive(Debug, Clone)]
struct Failure {
    path: String,
    message: String,
    causes: Vec<Failure>,
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Nil | Value::Invalid => "null",
        Value::Bool(_) => "boolean",
        Value::Int(_) | Value::Int64(_) | Value::Uint(_) => "number",
        Value::Float(_) => "number",
        Value::String(_) => "string",
        Value::List(_) => "array",
        Value::Map(_) => "object",
        _ => "object",
    }
}

fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Int(i) | Value::Int64(i) => Some(*i as f64),
        Value::Uint(u) => Some(*u as f64),
        Value::Float(f) => Some(*f),
        _ => None,
    }
}

fn is_type(v: &Value, t: &str) -> bool {
    match t {
        "integer" => number(v).is_some_and(|f| f.fract() == 0.0),
        "number" => number(v).is_some(),
        other => json_type(v) == other,
    }
}

fn show(v: &Value) -> String {
    match v {
        Value::String(s) => format!("'{s}'"),
        Value::Float(f) => gotmpl::fmt::format_float_shortest(*f),
        other => crate::json::to_json(other, &crate::json::COMPACT).unwrap_or_default(),
    }
}

fn num(f: f64) -> String {
    gotmpl::fmt::format_float_shortest(f)
}

fn map_of(v: &Value) -> Option<Map> {
    match v {
        Value::Map(m) => Some(m.entries.borrow().clone()),
        _ => None,
    }
}

fn escape_pointer(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

struct Validator<'a> {
    root: &'a Value,
}

impl Validator<'_> {
    fn resolve(&self, reference: &str) -> Option<Value> {
        let pointer = reference.strip_prefix('#')?;
        let mut current = self.root.clone();
        for part in pointer.split('/').skip(1) {
            let part = part.replace("~1", "/").replace("~0", "~");
            current = match &current {
                Value::Map(m) => m.entries.borrow().get(&part)?.clone(),
                Value::List(l) => l.items.get(part.parse::<usize>().ok()?)?.clone(),
                _ => return None,
            };
        }
        Some(current)
    }

    fn validate(&self, schema: &Value, v: &Value, path: &str, depth: usize) -> Vec<Failure> {
        let fail = |message: String| Failure { path: path.to_string(), message, causes: Vec::new() };
        if depth > 200 {
            return vec![fail("schema nesting is too deep".into())];
        }
        let s = match schema {
            Value::Bool(true) => return Vec::new(),
            Value::Bool(false) => return vec![fail("false schema".into())],
            Value::Map(m) => m.entries.borrow().clone(),
            _ => return Vec::new(),
        };
        let mut out = Vec::new();
        if let Some(Value::String(r)) = s.get("$ref") {
            match self.resolve(r) {
                Some(target) => out.extend(self.validate(&target, v, path, depth + 1)),
                None => out.push(fail(format!("cannot resolve $ref {r}"))),
            }
        }
        if let Some(t) = s.get("type") {
            let wanted: Vec<String> = match t {
                Value::String(t) => vec![t.to_string()],
                Value::List(l) => l.items.iter().filter_map(|x| x.as_str().map(str::to_string)).collect(),
                _ => Vec::new(),
            };
            if !wanted.is_empty() && !wanted.iter().any(|w| is_type(v, w)) {
                let mut sorted = wanted.clone();
                sorted.sort();
                out.push(fail(format!("got {}, want {}", json_type(v), sorted.join(" or "))));
                return out;
            }
        }
        if let Some(c) = s.get("const") {
            if !json_equal(c, v) {
                out.push(fail(format!("value must be {}", show(c))));
            }
        }
        if let Some(Value::List(e)) = s.get("enum") {
            if !e.items.iter().any(|x| json_equal(x, v)) {
                out.push(fail(format!("value must be one of {}", e.items.iter().map(show).collect::<Vec<_>>().join(", "))));
            }
        }
        if let Some(obj) = map_of(v) {
            if let Some(Value::List(req)) = s.get("required") {
                let missing: Vec<String> =
                    req.items.iter().filter_map(|r| r.as_str()).filter(|r| !obj.contains_key(*r)).map(|r| format!("'{r}'")).collect();
                match missing.len() {
                    0 => {}
                    1 => out.push(fail(format!("missing property {}", missing[0]))),
                    _ => out.push(fail(format!("missing properties {}", missing.join(", ")))),
                }
            }
            let props = s.get("properties").and_then(map_of).unwrap_or_default();
            let patterns: Vec<(regex::Regex, Value)> = s
                .get("patternProperties")
                .and_then(map_of)
                .unwrap_or_default()
                .into_iter()
                .filter_map(|(p, sch)| regex::Regex::new(&p).ok().map(|r| (r, sch)))
                .collect();
            if let Some(additional) = s.get("additionalProperties") {
                let extra: Vec<&String> =
                    obj.keys().filter(|k| !props.contains_key(*k) && !patterns.iter().any(|(r, _)| r.is_match(k))).collect();
                match additional {
                    Value::Bool(false) if !extra.is_empty() => out.push(fail(format!(
                        "additional properties {} not allowed",
                        extra.iter().map(|k| format!("'{k}'")).collect::<Vec<_>>().join(", ")
                    ))),
                    Value::Map(_) => {
                        for k in extra {
                            out.extend(self.validate(additional, &obj[k], &format!("{path}/{}", escape_pointer(k)), depth + 1));
                        }
                    }
                    _ => {}
                }
            }
            for (k, sub) in &props {
                if let Some(child) = obj.get(k) {
                    out.extend(self.validate(sub, child, &format!("{path}/{}", escape_pointer(k)), depth + 1));
                }
            }
            for (r, sub) in &patterns {
                for (k, child) in &obj {
                    if r.is_match(k) {
                        out.extend(self.validate(sub, child, &format!("{path}/{}", escape_pointer(k)), depth + 1));
                    }
                }
            }
        }
        if let Value::List(list) = v {
            let n = list.items.len() as f64;
            if let Some(min) = s.get("minItems").and_then(number) {
                if n < min {
                    out.push(fail(format!("minItems: got {}, want {}", num(n), num(min))));
                }
            }
            if let Some(max) = s.get("maxItems").and_then(number) {
                if n > max {
                    out.push(fail(format!("maxItems: got {}, want {}", num(n), num(max))));
                }
            }
            if matches!(s.get("uniqueItems"), Some(Value::Bool(true))) {
                'outer: for i in 0..list.items.len() {
                    for j in i + 1..list.items.len() {
                        if json_equal(&list.items[i], &list.items[j]) {
                            out.push(fail(format!("items at {i} and {j} are equal")));
                            break 'outer;
                        }
                    }
                }
            }
            let prefix = match s.get("prefixItems") {
                Some(Value::List(p)) => p.items.clone(),
                _ => Vec::new(),
            };
            for (i, item) in list.items.iter().enumerate() {
                let sub = prefix.get(i).cloned().or_else(|| s.get("items").cloned());
                if let Some(sub) = sub {
                    out.extend(self.validate(&sub, item, &format!("{path}/{i}"), depth + 1));
                }
            }
        }
        if let Value::String(text) = v {
            let len = text.chars().count() as f64;
            if let Some(min) = s.get("minLength").and_then(number) {
                if len < min {
                    out.push(fail(format!("minLength: got {}, want {}", num(len), num(min))));
                }
            }
            if let Some(max) = s.get("maxLength").and_then(number) {
                if len > max {
                    out.push(fail(format!("maxLength: got {}, want {}", num(len), num(max))));
                }
            }
            if let Some(Value::String(p)) = s.get("pattern") {
                if regex::Regex::new(p).is_ok_and(|r| !r.is_match(text)) {
                    out.push(fail(format!("'{text}' does not match pattern '{p}'")));
                }
            }
        }
        if let Some(x) = number(v) {
            type Check = (&'static str, fn(f64, f64) -> bool);
            let checks: [Check; 4] = [
                ("minimum", |x, b| x >= b),
                ("maximum", |x, b| x <= b),
                ("exclusiveMinimum", |x, b| x > b),
                ("exclusiveMaximum", |x, b| x < b),
            ];
            for (keyword, ok) in checks {
                if let Some(bound) = s.get(keyword).and_then(number) {
                    if !ok(x, bound) {
                        out.push(fail(format!("{keyword}: got {}, want {}", num(x), num(bound))));
                    }
                }
            }
            if let Some(m) = s.get("multipleOf").and_then(number) {
                if m != 0.0 && (x / m).fract() != 0.0 {
                    out.push(fail(format!("{} not multipleOf {}", num(x), num(m))));
                }
            }
        }
        if let Some(Value::List(all)) = s.get("allOf") {
            for sub in &all.items {
                out.extend(self.validate(sub, v, path, depth + 1));
            }
        }
        if let Some(Value::List(any)) = s.get("anyOf") {
            let results: Vec<Vec<Failure>> = any.items.iter().map(|sub| self.validate(sub, v, path, depth + 1)).collect();
            if results.iter().all(|r| !r.is_empty()) {
                out.push(Failure { path: path.into(), message: "'anyOf' failed".into(), causes: results.into_iter().flatten().collect() });
            }
        }
        if let Some(Value::List(one)) = s.get("oneOf") {
            let results: Vec<Vec<Failure>> = one.items.iter().map(|sub| self.validate(sub, v, path, depth + 1)).collect();
            let passing: Vec<usize> = results.iter().enumerate().filter(|(_, r)| r.is_empty()).map(|(i, _)| i).collect();
            match passing.len() {
                0 => out.push(Failure {
                    path: path.into(),
                    message: "'oneOf' failed, none matched".into(),
                    causes: results.into_iter().flatten().collect(),
                }),
                1 => {}
                _ => out.push(fail(format!("'oneOf' failed, subschemas {}, {} matched", passing[0], passing[1]))),
            }
        }
        if let Some(not) = s.get("not") {
            if self.validate(not, v, path, depth + 1).is_empty() {
                out.push(fail("'not' failed".into()));
            }
        }
        out
    }
}

/// JSON equality: numbers by value (1 == 1.0), maps and lists structurally.
fn json_equal(a: &Value, b: &Value) -> bool {
    match (number(a), number(b)) {
        (Some(x), Some(y)) => x == y,
        _ => match (a, b) {
            (Value::List(x), Value::List(y)) => {
                x.items.len() == y.items.len() && x.items.iter().zip(&y.items).all(|(p, q)| json_equal(p, q))
            }
            (Value::Map(x), Value::Map(y)) => {
                let (x, y) = (x.entries.borrow(), y.entries.borrow());
                x.len() == y.len() && x.iter().zip(y.iter()).all(|((k1, v1), (k2, v2))| k1 == k2 && json_equal(v1, v2))
            }
            _ => a.deep_equal(b) || (a.is_nil() && b.is_nil()),
        },
    }
}

fn render_failures(failures: &[Failure], indent: usize, out: &mut String) {
    for f in failures {
        out.push_str(&format!("{}- at '{}': {}\n", "  ".repeat(indent), f.path, f.message));
        render_failures(&f.causes, indent + 1, out);
    }
}

/// Validates `values` against one chart's schema; Some(lines) when invalid.
/// A chart's values.schema.json that is not JSON.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid values.schema.json: {0}")]
pub struct InvalidSchema(#[source] pub crate::json::JsonError);

pub fn validate(schema_json: &[u8], values: &Value) -> Result<Option<String>, InvalidSchema> {
    let schema = from_json(&String::from_utf8_lossy(schema_json)).map_err(InvalidSchema)?;
    let failures = Validator { root: &schema }.validate(&schema, values, "", 0);
    if failures.is_empty() {
        return Ok(None);
    }
    let mut out = String::new();
    render_failures(&failures, 0, &mut out);
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(schema: &str, values: &str) -> Option<String> {
        validate(schema.as_bytes(), &from_json(values).unwrap()).unwrap()
    }

    #[test]
    fn messages_match_helm() {
        assert_eq!(
            check(r#"{"type":"object","required":["name","other"],"properties":{"replicas":{"type":"integer"}}}"#, r#"{"replicas":"two"}"#)
                .unwrap(),
            "- at '': missing properties 'name', 'other'\n- at '/replicas': got string, want integer\n"
        );
        assert_eq!(
            check(r#"{"properties":{"e":{"enum":["a","b",1]}}}"#, r#"{"e":"c"}"#).unwrap(),
            "- at '/e': value must be one of 'a', 'b', 1\n"
        );
        assert_eq!(
            check(r#"{"properties":{"u":{"type":["string","null"]}}}"#, r#"{"u":1}"#).unwrap(),
            "- at '/u': got number, want null or string\n"
        );
        assert_eq!(
            check(r#"{"properties":{"l":{"type":"array","items":{"type":"string"},"minItems":3}}}"#, r#"{"l":[1,"b"]}"#).unwrap(),
            "- at '/l': minItems: got 2, want 3\n- at '/l/0': got number, want string\n"
        );
        assert_eq!(
            check(r#"{"properties":{"v":{"anyOf":[{"type":"string"},{"type":"integer"}]}}}"#, r#"{"v":1.5}"#).unwrap(),
            "- at '/v': 'anyOf' failed\n  - at '/v': got number, want string\n  - at '/v': got number, want integer\n"
        );
        assert_eq!(check(r#"{"properties":{"r":{"type":"integer"}}}"#, r#"{"r":1}"#), None);
        assert_eq!(
            check(r#"{"properties":{"p":{"pattern":"^x"}}}"#, r#"{"p":"abc"}"#).unwrap(),
            "- at '/p': 'abc' does not match pattern '^x'\n"
        );
    }
}
