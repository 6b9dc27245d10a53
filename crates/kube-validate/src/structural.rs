//! The structural schema of one CRD version, read from its `openAPIV3Schema` JSON into a tree the
//! validator walks once per object: types, value validations, list/map semantics, defaults and
//! the `x-kubernetes-validations` rules of each node (compiled by [`super::cel`]). Formats the
//! cluster's version does not validate are dropped here, as `StripUnsupportedFormatsPostProcessor`
//! does in apiextensions-apiserver.

use std::collections::BTreeMap;

use regex::Regex;
use serde_json::Value;

use kube_version::KubeVersion;

/// One `x-kubernetes-validations` entry as written in the CRD.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RuleSpec {
    pub rule: String,
    pub message: Option<String>,
    pub message_expression: Option<String>,
    pub field_path: Option<String>,
    pub reason: Option<String>,
    pub optional_old_self: bool,
}

/// `additionalProperties`: `false`/`true` or a schema.
#[derive(Debug, Clone)]
pub enum Additional {
    Allows(bool),
    Schema(Box<Schema>),
}

/// One schema node.
#[derive(Debug, Clone, Default)]
pub struct Schema {
    /// `type`, empty when absent (int-or-string or preserve-unknown nodes).
    pub ty: String,
    pub nullable: bool,
    pub int_or_string: bool,
    pub preserve_unknown: bool,
    pub embedded_resource: bool,
    /// The format as validated at the cluster's version, `None` when stripped.
    pub format: Option<String>,
    pub enumeration: Option<Vec<Value>>,
    pub maximum: Option<f64>,
    pub exclusive_maximum: bool,
    pub minimum: Option<f64>,
    pub exclusive_minimum: bool,
    pub multiple_of: Option<f64>,
    pub max_length: Option<i64>,
    pub min_length: Option<i64>,
    /// The pattern and its compiled form (`Err` keeps the compile error, as kube-openapi reports it).
    pub pattern: Option<(String, Result<Regex, super::openapi::PatternError>)>,
    pub max_items: Option<i64>,
    pub min_items: Option<i64>,
    pub unique_items: bool,
    pub max_properties: Option<i64>,
    pub min_properties: Option<i64>,
    pub required: Vec<String>,
    pub properties: BTreeMap<String, Schema>,
    pub additional: Option<Additional>,
    pub items: Option<Box<Schema>>,
    pub list_type: Option<String>,
    pub list_map_keys: Vec<String>,
    pub map_type: Option<String>,
    pub default: Option<Value>,
    pub any_of: Vec<Schema>,
    pub all_of: Vec<Schema>,
    pub one_of: Vec<Schema>,
    pub not: Option<Box<Schema>>,
    pub rules: Vec<RuleSpec>,
    /// Whether this node or any node below it has rules (lets the CEL walk skip subtrees).
    pub has_rules_below: bool,
    /// Whether this node or any node below it has a default.
    pub has_defaults_below: bool,
    /// Whether this node or any node below it has an `x-kubernetes-list-type` (lets the list
    /// checks skip subtrees).
    pub has_list_types_below: bool,
    /// Whether this node or any node below it is an `x-kubernetes-embedded-resource` (lets the
    /// embedded-resource checks skip subtrees).
    pub has_embedded_below: bool,
    /// The rules compiled for this cluster (filled by [`super::cel::compile_tree`]).
    pub compiled: Vec<std::sync::Arc<super::cel::CompiledRule>>,
    /// The fields of `self` the runnable compiled rules read between them (None: some rule reads
    /// more than named fields), found once when compiling rather than per object.
    pub(crate) compiled_fields: Option<std::collections::BTreeSet<String>>,
}

/// A schema that cannot be read.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SchemaError {
    #[error("schema at {path}: {what} must be {expected}")]
    WrongType { path: String, what: &'static str, expected: &'static str },
    #[error("schema at {path}: nested deeper than {max} levels")]
    TooDeep { path: String, max: usize },
}

const MAX_DEPTH: usize = 200;

impl Schema {
    /// Reads a JSONSchemaProps object; `version` decides which formats are kept.
    pub fn parse(v: &Value, version: &KubeVersion) -> Result<Schema, SchemaError> {
        parse_node(v, "", version, 0)
    }

    pub fn schema_for_property(&self, name: &str) -> Option<&Schema> {
        if let Some(s) = self.properties.get(name) {
            return Some(s);
        }
        match &self.additional {
            Some(Additional::Schema(s)) => Some(s),
            _ => None,
        }
    }

    /// The JSON type name used in CEL error values (`sts.Type`): the schema's type, `""` otherwise.
    pub fn type_name(&self) -> &str {
        &self.ty
    }
}

fn obj<'a>(v: &'a Value, path: &str) -> Result<&'a serde_json::Map<String, Value>, SchemaError> {
    v.as_object().ok_or(SchemaError::WrongType { path: path.into(), what: "a schema", expected: "an object" })
}

fn num(m: &serde_json::Map<String, Value>, key: &'static str, path: &str) -> Result<Option<f64>, SchemaError> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => Ok(n.as_f64()),
        Some(_) => Err(SchemaError::WrongType { path: path.into(), what: key, expected: "a number" }),
    }
}

fn int(m: &serde_json::Map<String, Value>, key: &'static str, path: &str) -> Result<Option<i64>, SchemaError> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => match n.as_i64() {
            Some(i) => Ok(Some(i)),
            None => Err(SchemaError::WrongType { path: path.into(), what: key, expected: "an integer" }),
        },
        Some(_) => Err(SchemaError::WrongType { path: path.into(), what: key, expected: "an integer" }),
    }
}

fn boolean(m: &serde_json::Map<String, Value>, key: &'static str, path: &str) -> Result<bool, SchemaError> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(SchemaError::WrongType { path: path.into(), what: key, expected: "a boolean" }),
    }
}

fn string(m: &serde_json::Map<String, Value>, key: &'static str, path: &str) -> Result<Option<String>, SchemaError> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(SchemaError::WrongType { path: path.into(), what: key, expected: "a string" }),
    }
}

fn parse_list(
    m: &serde_json::Map<String, Value>,
    key: &'static str,
    path: &str,
    version: &KubeVersion,
    depth: usize,
) -> Result<Vec<Schema>, SchemaError> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(a)) => {
            a.iter().enumerate().map(|(i, s)| parse_node(s, &format!("{path}.{key}[{i}]"), version, depth + 1)).collect()
        }
        Some(_) => Err(SchemaError::WrongType { path: path.into(), what: key, expected: "a list of schemas" }),
    }
}

fn parse_node(v: &Value, path: &str, version: &KubeVersion, depth: usize) -> Result<Schema, SchemaError> {
    if depth > MAX_DEPTH {
        return Err(SchemaError::TooDeep { path: path.into(), max: MAX_DEPTH });
    }
    let m = obj(v, path)?;
    let mut s = Schema {
        ty: string(m, "type", path)?.unwrap_or_default(),
        nullable: boolean(m, "nullable", path)?,
        int_or_string: boolean(m, "x-kubernetes-int-or-string", path)?,
        preserve_unknown: boolean(m, "x-kubernetes-preserve-unknown-fields", path)?,
        embedded_resource: boolean(m, "x-kubernetes-embedded-resource", path)?,
        maximum: num(m, "maximum", path)?,
        exclusive_maximum: boolean(m, "exclusiveMaximum", path)?,
        minimum: num(m, "minimum", path)?,
        exclusive_minimum: boolean(m, "exclusiveMinimum", path)?,
        multiple_of: num(m, "multipleOf", path)?,
        max_length: int(m, "maxLength", path)?,
        min_length: int(m, "minLength", path)?,
        max_items: int(m, "maxItems", path)?,
        min_items: int(m, "minItems", path)?,
        unique_items: boolean(m, "uniqueItems", path)?,
        max_properties: int(m, "maxProperties", path)?,
        min_properties: int(m, "minProperties", path)?,
        list_type: string(m, "x-kubernetes-list-type", path)?,
        map_type: string(m, "x-kubernetes-map-type", path)?,
        default: m.get("default").cloned(),
        ..Schema::default()
    };
    s.format = string(m, "format", path)?.filter(|f| format_kept(&s.ty, f, version));
    if let Some(e) = m.get("enum") {
        match e {
            Value::Array(a) => s.enumeration = Some(a.clone()),
            Value::Null => {}
            _ => return Err(SchemaError::WrongType { path: path.into(), what: "enum", expected: "a list" }),
        }
    }
    if let Some(p) = string(m, "pattern", path)? {
        let compiled = super::openapi::compile_pattern(&p);
        s.pattern = Some((p, compiled));
    }
    if let Some(r) = m.get("required") {
        match r {
            Value::Array(a) => {
                for k in a {
                    match k {
                        Value::String(k) => s.required.push(k.clone()),
                        _ => return Err(SchemaError::WrongType { path: path.into(), what: "required", expected: "a list of strings" }),
                    }
                }
            }
            Value::Null => {}
            _ => return Err(SchemaError::WrongType { path: path.into(), what: "required", expected: "a list of strings" }),
        }
    }
    if let Some(Value::Array(a)) = m.get("x-kubernetes-list-map-keys") {
        s.list_map_keys = a.iter().filter_map(|k| k.as_str().map(str::to_string)).collect();
    }
    match m.get("properties") {
        None | Some(Value::Null) => {}
        Some(Value::Object(props)) => {
            for (k, p) in props {
                let child = parse_node(p, &format!("{path}.properties[{k}]"), version, depth + 1)?;
                s.properties.insert(k.clone(), child);
            }
        }
        Some(_) => return Err(SchemaError::WrongType { path: path.into(), what: "properties", expected: "an object" }),
    }
    match m.get("additionalProperties") {
        None | Some(Value::Null) => {}
        Some(Value::Bool(b)) => s.additional = Some(Additional::Allows(*b)),
        Some(a @ Value::Object(_)) => {
            let child = parse_node(a, &format!("{path}.additionalProperties"), version, depth + 1)?;
            s.additional = Some(Additional::Schema(Box::new(child)));
        }
        Some(_) => {
            return Err(SchemaError::WrongType { path: path.into(), what: "additionalProperties", expected: "a boolean or a schema" })
        }
    }
    match m.get("items") {
        None | Some(Value::Null) => {}
        Some(i @ Value::Object(_)) => s.items = Some(Box::new(parse_node(i, &format!("{path}.items"), version, depth + 1)?)),
        Some(_) => return Err(SchemaError::WrongType { path: path.into(), what: "items", expected: "a schema" }),
    }
    s.any_of = parse_list(m, "anyOf", path, version, depth)?;
    s.all_of = parse_list(m, "allOf", path, version, depth)?;
    s.one_of = parse_list(m, "oneOf", path, version, depth)?;
    if let Some(n) = m.get("not").filter(|n| !n.is_null()) {
        s.not = Some(Box::new(parse_node(n, &format!("{path}.not"), version, depth + 1)?));
    }
    match m.get("x-kubernetes-validations") {
        None | Some(Value::Null) => {}
        Some(Value::Array(rules)) => {
            for r in rules {
                let rm = obj(r, path)?;
                s.rules.push(RuleSpec {
                    rule: string(rm, "rule", path)?.unwrap_or_default(),
                    message: string(rm, "message", path)?.filter(|m| !m.is_empty()),
                    message_expression: string(rm, "messageExpression", path)?.filter(|m| !m.is_empty()),
                    field_path: string(rm, "fieldPath", path)?.filter(|m| !m.is_empty()),
                    reason: string(rm, "reason", path)?.filter(|m| !m.is_empty()),
                    optional_old_self: boolean(rm, "optionalOldSelf", path)?,
                });
            }
        }
        Some(_) => return Err(SchemaError::WrongType { path: path.into(), what: "x-kubernetes-validations", expected: "a list" }),
    }
    let children = s
        .properties
        .values()
        .chain(s.items.as_deref())
        .chain(match &s.additional {
            Some(Additional::Schema(a)) => Some(a.as_ref()),
            _ => None,
        })
        .chain(s.all_of.iter());
    let (mut rules_below, mut defaults_below, mut lists_below) = (!s.rules.is_empty(), s.default.is_some(), s.list_type.is_some());
    let mut embedded_below = s.embedded_resource;
    for c in children {
        rules_below |= c.has_rules_below;
        defaults_below |= c.has_defaults_below;
        lists_below |= c.has_list_types_below;
        embedded_below |= c.has_embedded_below;
    }
    s.has_embedded_below = embedded_below;
    s.has_rules_below = rules_below;
    s.has_defaults_below = defaults_below;
    s.has_list_types_below = lists_below;
    Ok(s)
}

/// Formats per `supportedVersionedFormats` (apiextensions-apiserver pkg/apiserver/validation/formats.go):
/// the go-openapi set from 1.0, `k8s-short-name`/`k8s-long-name` from 1.34; integer and number
/// formats other than int32/int64 and float/double are dropped.
fn format_kept(ty: &str, format: &str, version: &KubeVersion) -> bool {
    match ty {
        "" | "string" => {
            let n = format.replace('-', "");
            const BASE: &[&str] = &[
                "bsonobjectid",
                "uri",
                "email",
                "hostname",
                "ipv4",
                "ipv6",
                "cidr",
                "mac",
                "uuid",
                "uuid3",
                "uuid4",
                "uuid5",
                "isbn",
                "isbn10",
                "isbn13",
                "creditcard",
                "ssn",
                "hexcolor",
                "rgbcolor",
                "byte",
                "password",
                "date",
                "duration",
                "datetime",
            ];
            BASE.contains(&n.as_str()) || (version.at_least(1, 34) && (n == "k8sshortname" || n == "k8slongname"))
        }
        "integer" => format == "int32" || format == "int64",
        "number" => format == "float" || format == "double",
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_nodes_and_marks_rules_below() {
        let s = Schema::parse(
            &json!({"type":"object","properties":{"a":{"type":"string","format":"k8s-short-name",
                "x-kubernetes-validations":[{"rule":"self != ''","message":"m"}]}}}),
            &KubeVersion::new(1, 33),
        )
        .unwrap();
        assert!(s.has_rules_below);
        let a = &s.properties["a"];
        assert_eq!(a.format, None, "k8s-short-name is validated from 1.34 only");
        assert_eq!(a.rules[0].message.as_deref(), Some("m"));
        let s = Schema::parse(&json!({"type":"string","format":"k8s-short-name"}), &KubeVersion::new(1, 34)).unwrap();
        assert_eq!(s.format.as_deref(), Some("k8s-short-name"));
        let s = Schema::parse(&json!({"type":"integer","format":"uint8"}), &KubeVersion::new(1, 36)).unwrap();
        assert_eq!(s.format, None);
    }

    #[test]
    fn bad_schema_is_an_error_not_a_panic() {
        let e = Schema::parse(&json!({"type":"object","properties":{"a":{"maxLength":"x"}}}), &KubeVersion::new(1, 36));
        assert!(matches!(e, Err(SchemaError::WrongType { what: "maxLength", .. })));
        assert!(Schema::parse(&json!([1]), &KubeVersion::new(1, 36)).is_err());
    }
}
