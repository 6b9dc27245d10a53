//! The OpenAPI value validation kube-apiserver runs on a custom resource: a port of
//! `k8s.io/kube-openapi/pkg/validation/validate` (type, anyOf/allOf/oneOf/not, string, format,
//! number, slice, enum and object validators, in that order per node) and of
//! `kubeOpenAPIResultToFieldErrors` in apiextensions-apiserver, which turns each result into the
//! `field.Error` the API server prints. Each error remembers the schema node that raised it so
//! [`super::ratchet`] can decide whether an update keeps it.

use regex::Regex;
use serde_json::Value;

use super::fielderr::{go_float, go_quote, BadValue, ErrorKind, FieldError};
use super::structural::{Additional, Schema};

/// One step of a path into an object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seg {
    Key(String),
    Index(usize),
}

/// A schema error and the node (as path segments from the root) whose validator raised it.
#[derive(Debug, Clone)]
pub struct NodeError {
    pub error: FieldError,
    pub node: Vec<Seg>,
}

/// A schema `pattern` that does not compile, worded as Go's `regexp` words it:
/// `error parsing regexp: <reason>: `<pattern>``. The reason differs by engine, so it is ours.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("error parsing regexp: {}: `{pattern}`", reason(.error))]
pub struct PatternError {
    pub pattern: String,
    #[source]
    pub error: regex::Error,
}

fn reason(e: &regex::Error) -> String {
    e.to_string().lines().last().unwrap_or("invalid").trim().to_string()
}

/// kube-openapi uses Go's RE2 `regexp`; Rust's `regex` shares its syntax and linear-time matching.
pub fn compile_pattern(p: &str) -> Result<Regex, PatternError> {
    Regex::new(p).map_err(|error| PatternError { pattern: p.to_string(), error })
}

/// The Go kind a decoded JSON value has in `map[string]interface{}`.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Null,
    Bool,
    Int,
    Float,
    Str,
    Array,
    Object,
}

fn kind(v: &Value) -> Kind {
    match v {
        Value::Null => Kind::Null,
        Value::Bool(_) => Kind::Bool,
        Value::Number(n) if n.is_i64() => Kind::Int,
        // Integers above int64 decode as float64 in Go (json.Number.Int64 fails).
        Value::Number(_) => Kind::Float,
        Value::String(_) => Kind::Str,
        Value::Array(_) => Kind::Array,
        Value::Object(_) => Kind::Object,
    }
}

/// One step of the walk's current path, borrowed from the value walked (made a [`Seg`] only
/// when an error is kept: a copy of each key was a tenth of the walk).
#[derive(Clone, Copy)]
enum Step<'v> {
    Key(&'v str),
    Index(usize),
}

/// Walks one value against one schema.
pub struct Walker<'v> {
    pub errors: Vec<NodeError>,
    path: Vec<Step<'v>>,
    /// The kube-openapi path string of the current node ("" at the root): one buffer, each
    /// child appends its step and takes it off again.
    pstr: String,
}

impl<'v> Walker<'v> {
    pub fn new(_root: &Schema) -> Self {
        Walker { errors: Vec::new(), path: Vec::new(), pstr: String::new() }
    }

    /// The current path as segments.
    fn node(&self) -> Vec<Seg> {
        self.path
            .iter()
            .map(|s| match s {
                Step::Key(k) => Seg::Key((*k).to_string()),
                Step::Index(i) => Seg::Index(*i),
            })
            .collect()
    }

    fn field(&self, name: &str) -> String {
        let n = name.strip_prefix('.').unwrap_or(name);
        if n.is_empty() {
            "<nil>".to_string()
        } else {
            n.to_string()
        }
    }

    fn push(&mut self, kind: ErrorKind, name: &str, value: BadValue, detail: String) {
        let error = FieldError::new(kind, self.field(name), value, detail);
        self.errors.push(NodeError { error, node: self.node() });
    }

    /// An error without a `*errors.Validation` type: kube-apiserver reports it at the nil path.
    fn push_plain(&mut self, detail: String) {
        let error = FieldError::invalid("<nil>", BadValue::Str(String::new()), detail);
        self.errors.push(NodeError { error, node: self.node() });
    }

    /// Enters a property (`.key`, or `key` at the root unless `dotted`); returns what
    /// [`Walker::leave`] needs.
    fn enter_key(&mut self, key: &'v str, dotted: bool) -> usize {
        let len = self.pstr.len();
        self.path.push(Step::Key(key));
        if dotted || len != 0 {
            self.pstr.push('.');
        }
        self.pstr.push_str(key);
        len
    }

    fn enter_index(&mut self, i: usize) -> usize {
        use std::fmt::Write;
        let len = self.pstr.len();
        self.path.push(Step::Index(i));
        let _ = write!(self.pstr, "[{i}]");
        len
    }

    fn leave(&mut self, len: usize) {
        self.path.pop();
        self.pstr.truncate(len);
    }

    /// `SchemaValidator.Validate`.
    pub fn validate(&mut self, s: &Schema, v: &'v Value) {
        let types: &[&str] = if s.int_or_string {
            &["integer", "string"]
        } else if s.ty.is_empty() {
            &[]
        } else {
            std::slice::from_ref(match s.ty.as_str() {
                "object" => &"object",
                "array" => &"array",
                "string" => &"string",
                "integer" => &"integer",
                "number" => &"number",
                "boolean" => &"boolean",
                _ => &"",
            })
        };
        let k = kind(v);
        let format = s.format.as_deref().unwrap_or("");
        let type_applies = !types.is_empty() || !format.is_empty();
        if k == Kind::Null {
            if type_applies && !types.is_empty() && !s.nullable {
                let p = self.pstr.clone();
                let joined = types.join(",");
                self.push(
                    ErrorKind::TypeInvalid,
                    &p,
                    BadValue::Str("null".into()),
                    format!("{p} in body must be of type {joined}: \"null\""),
                );
            }
            self.check_enum(s, v);
            return;
        }
        if type_applies {
            self.check_type(types, format, v, k);
        }
        if !s.any_of.is_empty() || !s.all_of.is_empty() || !s.one_of.is_empty() || s.not.is_some() {
            self.check_props(s, v);
        }
        if let Value::String(text) = v {
            self.check_string(s, text);
            if !format.is_empty() && super::format::known(format) && !super::format::valid(format, text) {
                let p = self.pstr.clone();
                self.push(
                    ErrorKind::TypeInvalid,
                    &p,
                    BadValue::Str(text.clone()),
                    format!("{p} in body must be of type {format}: {}", go_quote(text)),
                );
            }
        }
        if matches!(k, Kind::Int | Kind::Float) {
            self.check_number(types, format, s, v, k);
        }
        if let Value::Array(items) = v {
            self.check_slice(s, items);
        }
        self.check_enum(s, v);
        if let Value::Object(m) = v {
            self.check_object(s, m);
        }
    }

    fn check_type(&mut self, types: &[&str], format: &str, v: &Value, k: Kind) {
        let (sch, data_format) = match k {
            Kind::Bool => ("boolean", ""),
            Kind::Str => ("string", ""),
            Kind::Int => ("integer", "int64"),
            Kind::Float => ("number", "float64"),
            Kind::Array => ("array", ""),
            Kind::Object => ("object", ""),
            Kind::Null => ("null", ""),
        };
        let contains = |t: &str| types.contains(&t);
        let is_float_int = sch == "number" && v.as_f64().is_some_and(is_json_integer) && contains("integer");
        let is_int_float = sch == "integer" && contains("number");
        if k != Kind::Str
            && k != Kind::Array
            && !format.is_empty()
            && !(contains(sch) || data_format == format || is_float_int || is_int_float)
        {
            let p = self.pstr.clone();
            let detail = format!("{p} in body must be of type {format}: {}", go_quote(data_format));
            self.push(ErrorKind::TypeInvalid, &p, BadValue::Str(data_format.into()), detail);
            return;
        }
        if !(contains("number") || contains("integer") || format.is_empty()) && matches!(k, Kind::Str | Kind::Array) {
            return;
        }
        if !(contains(sch) || is_float_int || is_int_float) {
            let p = self.pstr.clone();
            let joined = types.join(",");
            let detail = format!("{p} in body must be of type {joined}: {}", go_quote(sch));
            self.push(ErrorKind::TypeInvalid, &p, BadValue::Str(sch.into()), detail);
        }
    }

    /// `schemaPropsValidator`: the failing branch reported is the first one (kube-openapi keeps the
    /// one with the most matched validators; for the int-or-string pairs CRDs use they tie).
    fn check_props(&mut self, s: &Schema, v: &'v Value) {
        let p = self.pstr.clone();
        if !s.any_of.is_empty() {
            let mut first_failure: Option<Vec<NodeError>> = None;
            let mut ok = false;
            for sub in &s.any_of {
                let errs = self.sub_errors(sub, v);
                if errs.is_empty() {
                    ok = true;
                    break;
                }
                first_failure.get_or_insert(errs);
            }
            if !ok {
                self.push_plain(format!("{} must validate at least one schema (anyOf)", go_quote(&p)));
                self.errors.extend(first_failure.unwrap_or_default());
            }
        }
        if !s.one_of.is_empty() {
            let mut valid = 0;
            let mut first_failure: Option<Vec<NodeError>> = None;
            for sub in &s.one_of {
                let errs = self.sub_errors(sub, v);
                if errs.is_empty() {
                    valid += 1;
                } else if valid == 0 {
                    first_failure.get_or_insert(errs);
                }
            }
            if valid != 1 {
                let extra = if valid == 0 { "Found none valid".to_string() } else { format!("Found {valid} valid alternatives") };
                self.push_plain(format!("{} must validate one and only one schema (oneOf). {extra}", go_quote(&p)));
                if valid == 0 {
                    self.errors.extend(first_failure.unwrap_or_default());
                }
            }
        }
        if !s.all_of.is_empty() {
            let mut valid = 0;
            for sub in &s.all_of {
                let errs = self.sub_errors(sub, v);
                if errs.is_empty() {
                    valid += 1;
                }
                self.errors.extend(errs);
            }
            if valid != s.all_of.len() {
                let extra = if valid == 0 { ". None validated" } else { "" };
                self.push_plain(format!("{} must validate all the schemas (allOf){extra}", go_quote(&p)));
            }
        }
        if let Some(not) = &s.not {
            if self.sub_errors(not, v).is_empty() {
                self.push_plain(format!("{} must not validate the schema (not)", go_quote(&p)));
            }
        }
    }

    fn sub_errors(&mut self, sub: &Schema, v: &'v Value) -> Vec<NodeError> {
        let before = self.errors.len();
        self.validate(sub, v);
        self.errors.split_off(before)
    }

    fn check_string(&mut self, s: &Schema, text: &str) {
        if s.max_length.is_none() && s.min_length.is_none() && s.pattern.is_none() {
            return;
        }
        let p = self.pstr.clone();
        let len = text.chars().count() as i64;
        if let Some(max) = s.max_length {
            if len > max {
                let mut e = FieldError::too_long(self.field(&p), max);
                e.value = BadValue::Str("<value omitted>".into());
                self.errors.push(NodeError { error: e, node: self.node() });
                return;
            }
        }
        if let Some(min) = s.min_length {
            if len < min {
                self.push(ErrorKind::Invalid, &p, BadValue::Str(text.into()), format!("{p} in body should be at least {min} chars long"));
                return;
            }
        }
        if let Some((pattern, compiled)) = &s.pattern {
            match compiled {
                Ok(re) if re.is_match(text) => {}
                Ok(_) => self.push(ErrorKind::Invalid, &p, BadValue::Str(text.into()), format!("{p} in body should match '{pattern}'")),
                Err(e) => self.push(
                    ErrorKind::Invalid,
                    &p,
                    BadValue::Str(text.into()),
                    format!("{p} in body should match '{pattern}, but pattern is invalid: {e}'"),
                ),
            }
        }
    }

    fn check_number(&mut self, types: &[&str], format: &str, s: &Schema, v: &Value, k: Kind) {
        // The format only counts when exactly one type is given (numberValidator in schema.go).
        let (tname, fmt_) = match types {
            ["integer"] => ("integer", if format == "int32" || format == "int64" { format } else { "" }),
            ["number"] => ("number", if format == "float" || format == "double" { format } else { "" }),
            _ => ("", ""),
        };
        let data = Num::of(v, k);
        let in_range_here = in_range(&data, tname, fmt_);
        if in_range_here && s.multiple_of.is_none() && s.minimum.is_none() && s.maximum.is_none() {
            return;
        }
        let p = self.pstr.clone();
        if !in_range_here {
            self.push_plain(range_error("Checked", tname, fmt_, &p));
        }
        let value = BadValue::of_json(v);
        if let Some(m) = s.multiple_of {
            let bound = Num::Float(m);
            let native = in_range(&bound, tname, fmt_);
            let bad = if m <= 0.0 {
                Some(format!("factor MultipleOf declared for {p} must be positive: {}", go_float(m)))
            } else if native && data.is_int() {
                let f = m as i64;
                let d = data.as_i64();
                (f <= 0 || d.checked_rem(f).is_some_and(|r| r != 0)).then(|| format!("{p} in body should be a multiple of {f}"))
            } else {
                let d = data.as_f64();
                let mult = if m < 1.0 { 1.0 / m * d } else { d / m };
                (!is_json_integer(mult)).then(|| format!("{p} in body should be a multiple of {}", go_float(m)))
            };
            if let Some(detail) = bad {
                self.push(ErrorKind::Invalid, &p, value.clone(), detail);
            }
        }
        let bound_text = |b: f64, native: bool, data: &Num| -> String {
            if native && data.is_int() {
                (b as i64).to_string()
            } else {
                go_float(b)
            }
        };
        if let Some(min) = s.minimum {
            let native = in_range(&Num::Float(min), tname, fmt_);
            let fails = if native && data.is_int() {
                let (d, b) = (data.as_i64(), min as i64);
                if s.exclusive_minimum {
                    d <= b
                } else {
                    d < b
                }
            } else {
                let d = data.as_f64();
                if s.exclusive_minimum {
                    d <= min
                } else {
                    d < min
                }
            };
            if fails {
                let rel = if s.exclusive_minimum { "greater than" } else { "greater than or equal to" };
                self.push(ErrorKind::Invalid, &p, value.clone(), format!("{p} in body should be {rel} {}", bound_text(min, native, &data)));
            }
        }
        if let Some(max) = s.maximum {
            let native = in_range(&Num::Float(max), tname, fmt_);
            let fails = if native && data.is_int() {
                let (d, b) = (data.as_i64(), max as i64);
                if s.exclusive_maximum {
                    d >= b
                } else {
                    d > b
                }
            } else {
                let d = data.as_f64();
                if s.exclusive_maximum {
                    d >= max
                } else {
                    d > max
                }
            };
            if fails {
                let rel = if s.exclusive_maximum { "less than" } else { "less than or equal to" };
                self.push(ErrorKind::Invalid, &p, value, format!("{p} in body should be {rel} {}", bound_text(max, native, &data)));
            }
        }
    }

    fn check_slice(&mut self, s: &Schema, items: &'v [Value]) {
        if let Some(it) = &s.items {
            for (i, item) in items.iter().enumerate() {
                let saved = self.enter_index(i);
                self.validate(it, item);
                self.leave(saved);
            }
        }
        if s.min_items.is_none() && s.max_items.is_none() && !s.unique_items {
            return;
        }
        let p = self.pstr.clone();
        let n = items.len() as i64;
        if let Some(min) = s.min_items {
            if n < min {
                self.push(ErrorKind::Invalid, &p, BadValue::Int(n), format!("{p} in body should have at least {min} items"));
            }
        }
        if let Some(max) = s.max_items {
            if n > max {
                let e = FieldError::too_many(self.field(&p), n, max);
                self.errors.push(NodeError { error: e, node: self.node() });
            }
        }
        if s.unique_items && has_duplicates(items) {
            self.push(ErrorKind::Invalid, &p, BadValue::Str(String::new()), format!("{p} in body shouldn't contain duplicates"));
        }
    }

    fn check_enum(&mut self, s: &Schema, v: &Value) {
        let Some(values) = &s.enumeration else { return };
        if values.is_empty() || values.iter().any(|e| json_equal(v, e)) {
            return;
        }
        let p = self.pstr.clone();
        let valid: Vec<String> = values
            .iter()
            .map(|e| match e {
                Value::String(s) => s.clone(),
                other => serde_json::to_string(other).unwrap_or_default(),
            })
            .collect();
        let e = FieldError::not_supported(self.field(&p), BadValue::of_json(v), &valid);
        self.errors.push(NodeError { error: e, node: self.node() });
    }

    fn check_object(&mut self, s: &Schema, m: &'v serde_json::Map<String, Value>) {
        let n = m.len() as i64;
        if let Some(min) = s.min_properties {
            if n < min {
                let p = self.pstr.clone();
                self.push(ErrorKind::Invalid, &p, BadValue::Int(n), format!("{p} in body should have at least {min} properties"));
            }
        }
        if let Some(max) = s.max_properties {
            if n > max {
                let e = FieldError::too_many(self.field(&self.pstr), n, max);
                self.errors.push(NodeError { error: e, node: self.node() });
            }
        }
        match &s.additional {
            Some(Additional::Allows(false)) => {
                for k in m.keys() {
                    if !s.properties.contains_key(k) {
                        let p = self.pstr.clone();
                        self.push(ErrorKind::Invalid, &p, BadValue::Str(k.clone()), format!("{p}.{k} in body is a forbidden property"));
                    }
                }
            }
            Some(Additional::Schema(a)) => {
                for (k, v) in m {
                    if !s.properties.contains_key(k) {
                        // kube-openapi joins additional properties with a dot at the root too.
                        let saved = self.enter_key(k, true);
                        self.validate(a, v);
                        self.leave(saved);
                    }
                }
            }
            _ => {}
        }
        // The properties present, in the schema's (sorted) order: found from whichever side is
        // smaller, since objects set a few of the many fields a Kubernetes schema declares.
        if m.len() < s.properties.len() {
            let mut found: Vec<(&'v String, &Schema, &'v Value)> = Vec::with_capacity(m.len());
            found.extend(m.iter().filter_map(|(k, v)| s.properties.get(k).map(|c| (k, c, v))));
            found.sort_unstable_by(|a, b| a.0.cmp(b.0));
            for (name, child, v) in found {
                let saved = self.enter_key(name, false);
                self.validate(child, v);
                self.leave(saved);
            }
        } else {
            for (name, child) in &s.properties {
                if let Some((name, v)) = m.get_key_value(name) {
                    let saved = self.enter_key(name, false);
                    self.validate(child, v);
                    self.leave(saved);
                }
            }
        }
        for k in &s.required {
            if !m.contains_key(k) {
                let e = FieldError::required(self.field(&format!("{}.{k}", self.pstr)), "");
                self.errors.push(NodeError { error: e, node: self.node() });
            }
        }
    }
}

#[derive(Clone, Copy)]
enum Num {
    Int(i64),
    Float(f64),
}

impl Num {
    fn of(v: &Value, k: Kind) -> Num {
        match (k, v.as_i64()) {
            (Kind::Int, Some(i)) => Num::Int(i),
            _ => Num::Float(v.as_f64().unwrap_or(0.0)),
        }
    }
    fn is_int(&self) -> bool {
        matches!(self, Num::Int(_))
    }
    fn as_i64(&self) -> i64 {
        match self {
            Num::Int(i) => *i,
            Num::Float(f) => *f as i64,
        }
    }
    fn as_f64(&self) -> f64 {
        match self {
            Num::Int(i) => *i as f64,
            Num::Float(f) => *f,
        }
    }
}

/// `IsValueValidAgainstRange`: the value's decimal form must parse as the type/format.
fn in_range(n: &Num, tname: &str, format: &str) -> bool {
    // Integers without text (what the text would say), and types the text cannot fail.
    match (n, tname, format) {
        (Num::Int(i), "integer", "int32") => return i32::try_from(*i).is_ok(),
        (Num::Int(_), "integer", _) => return true,
        (_, "integer", _) | (_, _, "float") => {}
        _ => return true,
    }
    let text = match n {
        Num::Int(i) => i.to_string(),
        Num::Float(f) => format_float_f(*f),
    };
    match tname {
        "integer" => match format {
            "int32" => text.parse::<i32>().is_ok(),
            _ => text.parse::<i64>().is_ok(),
        },
        _ => match format {
            "float" => text.parse::<f32>().is_ok_and(|f| f.is_finite()),
            _ => true,
        },
    }
}

/// `strconv.FormatFloat(f, 'f', -1, 64)`.
fn format_float_f(f: f64) -> String {
    let s = format!("{f}");
    s
}

fn range_error(prefix: &str, tname: &str, format: &str, path: &str) -> String {
    if format.is_empty() {
        format!("{prefix} value must be of type {tname} (default format) in {path}")
    } else {
        format!("{prefix} value must be of type {tname} with format {format} in {path}")
    }
}

fn is_json_integer(f: f64) -> bool {
    f.is_finite() && f == f.trunc() && f.abs() < 9_007_199_254_740_992.0
}

/// `reflect.DeepEqual` after converting the data to the enum value's Go type.
pub fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(i), Some(j)) => i == j,
            _ => x.as_f64() == y.as_f64(),
        },
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_equal(a, b)),
        (Value::Object(x), Value::Object(y)) => x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| json_equal(v, w))),
        _ => a == b,
    }
}

/// Deep equality as Go's `reflect.DeepEqual` on decoded JSON (int64 and float64 differ).
pub fn deep_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(i), Some(j)) => i == j,
            (None, None) => x.as_f64() == y.as_f64(),
            _ => false,
        },
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(a, b)| deep_equal(a, b)),
        (Value::Object(x), Value::Object(y)) => x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| deep_equal(v, w))),
        _ => a == b,
    }
}

fn has_duplicates(items: &[Value]) -> bool {
    items.iter().enumerate().any(|(i, a)| items[..i].iter().any(|b| deep_equal(a, b)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube_version::KubeVersion;
    use serde_json::json;

    fn run(schema: Value, v: Value) -> Vec<String> {
        let s = Schema::parse(&schema, &KubeVersion::new(1, 36)).unwrap();
        let mut w = Walker::new(&s);
        w.validate(&s, &v);
        w.errors.into_iter().map(|e| e.error.to_string()).collect()
    }

    fn obj(props: Value) -> Value {
        json!({"type":"object","properties": props})
    }

    #[test]
    fn types() {
        assert_eq!(
            run(obj(json!({"n":{"type":"integer"}})), json!({"n":"string"})),
            ["n: Invalid value: \"string\": n in body must be of type integer: \"string\""]
        );
        assert!(run(obj(json!({"n":{"type":"integer"}})), json!({"n":2.0})).is_empty(), "2.0 is an integer");
        assert!(run(obj(json!({"n":{"type":"number"}})), json!({"n":2})).is_empty());
        assert_eq!(
            run(obj(json!({"n":{"x-kubernetes-int-or-string":true}})), json!({"n":true})),
            ["n: Invalid value: \"boolean\": n in body must be of type integer,string: \"boolean\""]
        );
        assert_eq!(
            run(obj(json!({"n":{"type":"integer","format":"int32"}})), json!({"n":3000000000i64})),
            ["<nil>: Invalid value: \"\": Checked value must be of type integer with format int32 in n"]
        );
    }

    #[test]
    fn bounds_lengths_items() {
        let s = obj(json!({
            "i":{"type":"integer","minimum":1,"maximum":10,"exclusiveMaximum":true},
            "f":{"type":"number","maximum":1.5},
            "s":{"type":"string","minLength":2,"maxLength":3,"pattern":"^a"},
            "l":{"type":"array","minItems":2,"maxItems":3,"uniqueItems":true,"items":{"type":"integer"}},
            "e":{"type":"string","enum":["a","b"]},
            "o":{"type":"object","minProperties":1,"maxProperties":1,"additionalProperties":{"type":"string"}},
            "r":{"type":"object","required":["x"]}
        }));
        let mut got = run(s.clone(), json!({"i":10,"f":2.5,"s":"abcd","l":[1,1,1,1],"e":"c","o":{"a":"1","b":"2"},"r":{}}));
        got.sort();
        assert_eq!(
            got,
            [
                "e: Unsupported value: \"c\": supported values: \"a\", \"b\"",
                "f: Invalid value: 2.5: f in body should be less than or equal to 1.5",
                "i: Invalid value: 10: i in body should be less than 10",
                "l: Invalid value: \"\": l in body shouldn't contain duplicates",
                "l: Too many: 4: must have at most 3 items",
                "o: Too many: 2: must have at most 1 item",
                "r.x: Required value",
                "s: Too long: may not be more than 3 bytes",
            ]
        );
        let mut got = run(s, json!({"i":0,"s":"b","l":[1],"o":{}}));
        got.sort();
        assert_eq!(
            got,
            [
                "i: Invalid value: 0: i in body should be greater than or equal to 1",
                "l: Invalid value: 1: l in body should have at least 2 items",
                "o: Invalid value: 0: o in body should have at least 1 properties",
                "s: Invalid value: \"b\": s in body should be at least 2 chars long",
            ]
        );
    }

    #[test]
    fn formats_and_any_of() {
        assert_eq!(
            run(obj(json!({"t":{"type":"string","format":"date-time"}})), json!({"t":"soon"})),
            ["t: Invalid value: \"soon\": t in body must be of type date-time: \"soon\""]
        );
        let ios = json!({"q":{"x-kubernetes-int-or-string":true,"anyOf":[{"type":"integer"},{"type":"string"}],
            "pattern":"^[0-9]+$"}});
        assert!(run(obj(ios.clone()), json!({"q":5})).is_empty());
        assert_eq!(run(obj(ios), json!({"q":"x"})), ["q: Invalid value: \"x\": q in body should match '^[0-9]+$'"]);
    }

    #[test]
    fn node_paths_are_recorded() {
        let s = Schema::parse(
            &obj(json!({"a":{"type":"array","items":{"type":"object","properties":{"b":{"type":"string"}}}}})),
            &KubeVersion::new(1, 36),
        )
        .unwrap();
        let v = json!({"a":[{"b":1}]});
        let mut w = Walker::new(&s);
        w.validate(&s, &v);
        assert_eq!(w.errors[0].error.field, "a[0].b");
        assert_eq!(w.errors[0].node, vec![Seg::Key("a".into()), Seg::Index(0), Seg::Key("b".into())]);
    }
}
