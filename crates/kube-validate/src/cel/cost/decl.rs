//! The CEL declaration of a schema node as kube-apiserver builds it for a CRD's rules
//! (k8s.io/apiserver `pkg/cel/common/schemas.go` `SchemaDeclType`, `pkg/cel/types.go`): the type
//! each node has in CEL, the most elements (characters, items, properties) it can hold and the
//! smallest size its JSON can take, from `maxLength`/`maxItems`/`maxProperties` or else from the
//! 3 MiB request limit. The cost estimator reads sizes from it by path.

use std::collections::BTreeMap;
use std::rc::Rc;

use crate::structural::{Additional, Schema};
use kube_version::KubeVersion;

/// `celconfig.MaxRequestSizeBytes` (k8s.io/apiserver `pkg/apis/cel/config.go`): 3 MiB.
pub const MAX_REQUEST_SIZE_BYTES: i64 = 3 * 1024 * 1024;
const MAX_DURATION_SIZE_JSON: i64 = 32;
const MAX_DATETIME_SIZE_JSON: i64 = 32;
const MIN_DURATION_SIZE_JSON: i64 = 3;
const JSON_DATE_SIZE: i64 = 12;
const MIN_DATETIME_SIZE_JSON: i64 = 21;
const MIN_STRING_SIZE: i64 = 2;
const MIN_BOOL_SIZE: i64 = 4;
const MIN_NUMBER_SIZE: i64 = 1;
/// `validation.DNS1123SubdomainMaxLength`: the bound 1.37 puts on `metadata.name` in CEL.
const NAME_MAX_LENGTH: i64 = 253;

/// The CEL type of a declaration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeclKind {
    List,
    Map,
    Object,
    String,
    Bytes,
    Duration,
    Timestamp,
    Bool,
    Int,
    Double,
    /// `x-kubernetes-int-or-string`.
    Dyn,
}

/// `apiservercel.DeclType`.
#[derive(Debug)]
pub struct Decl {
    pub kind: DeclKind,
    /// Object fields by escaped CEL name (`__namespace__` for `namespace`).
    pub fields: BTreeMap<String, Rc<Decl>>,
    pub elem: Option<Rc<Decl>>,
    /// A map's key type (a string declaration without a bound: `MaxElements` 0).
    pub key: Option<Rc<Decl>>,
    pub max_elements: i64,
    pub min_serialized_size: i64,
}

impl Decl {
    fn simple(kind: DeclKind, min: i64) -> Decl {
        Decl { kind, fields: BTreeMap::new(), elem: None, key: None, max_elements: 0, min_serialized_size: min }
    }
}

/// Options that change with the Kubernetes version.
#[derive(Debug, Clone, Copy)]
pub struct DeclOptions {
    /// From 1.37 a resource root's `metadata.name` is at most 253 characters in CEL (and
    /// `generateName` 252), not the request size (apiextensions-apiserver v0.37
    /// `pkg/apiserver/schema/cel/model/schemas.go` `cappedLengthStringType`).
    pub bounded_name: bool,
}

impl DeclOptions {
    pub fn for_version(v: &KubeVersion) -> DeclOptions {
        DeclOptions { bounded_name: v.at_least(1, 37) }
    }
}

/// `SchemaDeclType(s, isResourceRoot)`; `None` when the schema is not exposed to CEL.
pub fn decl_of(s: &Schema, resource_root: bool, opts: DeclOptions) -> Option<Rc<Decl>> {
    if s.int_or_string {
        let mut d = Decl::simple(DeclKind::Dyn, 1);
        d.max_elements = match s.max_length {
            Some(m) => m.max(0) * 4,
            None => MAX_REQUEST_SIZE_BYTES - 2,
        };
        return Some(Rc::new(d));
    }
    if resource_root {
        return decl_of_root(s, opts);
    }
    decl_of_node(s, opts)
}

/// `WithTypeAndObjectMeta`: a resource root always has `kind`, `apiVersion` and `metadata` with
/// `name` and `generateName`; unless the schema declares all of them, they replace what it
/// declares (only `name` and `generateName` stay under `metadata`).
fn decl_of_root(s: &Schema, opts: DeclOptions) -> Option<Rc<Decl>> {
    let is = |p: Option<&Schema>, ty: &str| p.is_some_and(|p| p.ty == ty);
    let meta = s.properties.get("metadata");
    let declared = is(s.properties.get("kind"), "string")
        && is(s.properties.get("apiVersion"), "string")
        && is(meta, "object")
        && meta.is_some_and(|m| !m.properties.is_empty())
        && is(meta.and_then(|m| m.properties.get("name")), "string")
        && is(meta.and_then(|m| m.properties.get("generateName")), "string");
    if declared {
        return decl_of_node(s, opts);
    }
    let mut root = s.clone();
    let string = Schema { ty: "string".into(), ..Schema::default() };
    root.properties.insert("kind".into(), string.clone());
    root.properties.insert("apiVersion".into(), string.clone());
    let declared_meta = |field: &str| meta.and_then(|m| m.properties.get(field)).and_then(|p| p.max_length);
    let capped = |field: &str, max: i64| {
        if !opts.bounded_name {
            return string.clone();
        }
        let max = declared_meta(field).filter(|d| *d < max).unwrap_or(max);
        Schema { ty: "string".into(), max_length: Some(max), ..Schema::default() }
    };
    let mut metadata = Schema { ty: "object".into(), ..Schema::default() };
    metadata.properties.insert("name".into(), capped("name", NAME_MAX_LENGTH));
    metadata.properties.insert("generateName".into(), capped("generateName", NAME_MAX_LENGTH - 1));
    root.properties.insert("metadata".into(), metadata);
    decl_of_node(&root, opts)
}

fn decl_of_node(s: &Schema, opts: DeclOptions) -> Option<Rc<Decl>> {
    let d = match s.ty.as_str() {
        "array" => {
            let items = s.items.as_deref()?;
            let elem = decl_of(items, items.embedded_resource, opts)?;
            let max = s.max_items.map_or_else(|| (MAX_REQUEST_SIZE_BYTES - 2) / (elem.min_serialized_size + 1), |m| m.max(0));
            Decl { kind: DeclKind::List, fields: BTreeMap::new(), elem: Some(elem), key: None, max_elements: max, min_serialized_size: 2 }
        }
        "object" => {
            if let Some(Additional::Schema(a)) = &s.additional {
                let elem = decl_of(a, a.embedded_resource, opts)?;
                let max = s.max_properties.map_or_else(|| (MAX_REQUEST_SIZE_BYTES - 2) / (elem.min_serialized_size + 6), |m| m.max(0));
                let key = Rc::new(Decl::simple(DeclKind::String, MIN_STRING_SIZE));
                Decl {
                    kind: DeclKind::Map,
                    fields: BTreeMap::new(),
                    elem: Some(elem),
                    key: Some(key),
                    max_elements: max,
                    min_serialized_size: 2,
                }
            } else {
                let mut fields = BTreeMap::new();
                let mut min = 2;
                for (name, prop) in &s.properties {
                    let Some(field) = decl_of(prop, prop.embedded_resource, opts) else { continue };
                    if s.required.iter().any(|r| r == name) && prop.default.is_none() {
                        min += name.len() as i64 + field.min_serialized_size + 4;
                    }
                    if let Some(escaped) = escape(name) {
                        fields.insert(escaped, field);
                    }
                }
                Decl { kind: DeclKind::Object, fields, elem: None, key: None, max_elements: 0, min_serialized_size: min }
            }
        }
        "string" => {
            let per_request = |fmt: Option<&str>| match fmt {
                Some("duration") => MAX_DURATION_SIZE_JSON,
                Some("date") => JSON_DATE_SIZE,
                Some("date-time") => MAX_DATETIME_SIZE_JSON,
                _ => MAX_REQUEST_SIZE_BYTES - 2,
            };
            match s.format.as_deref() {
                Some("byte") => {
                    let mut d = Decl::simple(DeclKind::Bytes, MIN_STRING_SIZE);
                    d.max_elements = s.max_length.map_or_else(|| per_request(Some("byte")), |m| m.max(0));
                    d
                }
                Some("duration") => {
                    let mut d = Decl::simple(DeclKind::Duration, MIN_DURATION_SIZE_JSON);
                    d.max_elements = per_request(Some("duration"));
                    d
                }
                Some("date") => {
                    let mut d = Decl::simple(DeclKind::Timestamp, JSON_DATE_SIZE);
                    d.max_elements = per_request(Some("date"));
                    d
                }
                Some("date-time") => {
                    let mut d = Decl::simple(DeclKind::Timestamp, MIN_DATETIME_SIZE_JSON);
                    d.max_elements = per_request(Some("date-time"));
                    d
                }
                f => {
                    let mut d = Decl::simple(DeclKind::String, MIN_STRING_SIZE);
                    d.max_elements = match (s.max_length, &s.enumeration) {
                        (Some(m), _) => m.max(0) * 4,
                        (None, Some(values)) if !values.is_empty() => {
                            values.iter().filter_map(|v| v.as_str()).map(|v| v.len() as i64).max().unwrap_or(0)
                        }
                        _ => per_request(f),
                    };
                    d
                }
            }
        }
        "boolean" => Decl::simple(DeclKind::Bool, MIN_BOOL_SIZE),
        "number" => Decl::simple(DeclKind::Double, MIN_NUMBER_SIZE),
        "integer" => Decl::simple(DeclKind::Int, MIN_NUMBER_SIZE),
        _ => return None,
    };
    Some(Rc::new(d))
}

/// CEL's reserved words (`celReservedSymbols`, k8s.io/apiserver `pkg/cel/escaping.go`).
pub const RESERVED: &[&str] = &[
    "true",
    "false",
    "null",
    "in",
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
];

/// `apiservercel.Escape`: a property name as a CEL field name, `None` when it cannot be one.
pub fn escape(name: &str) -> Option<String> {
    let first = name.chars().next()?;
    if first.is_ascii_digit() {
        return None;
    }
    if RESERVED.contains(&name) {
        return Some(format!("__{name}__"));
    }
    let mut out = String::with_capacity(name.len());
    let mut chars = name.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '_' if chars.peek() == Some(&'_') => {
                chars.next();
                out.push_str("__underscores__");
            }
            '.' => out.push_str("__dot__"),
            '-' => out.push_str("__dash__"),
            '/' => out.push_str("__slash__"),
            c if c.is_ascii_alphanumeric() || c == '_' => out.push(c),
            _ => return None,
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema(v: serde_json::Value) -> Schema {
        Schema::parse(&v, &KubeVersion::new(1, 36)).unwrap()
    }

    #[test]
    fn escapes_as_kubernetes_does() {
        assert_eq!(escape("namespace").as_deref(), Some("__namespace__"));
        assert_eq!(escape("foo-bar.baz/x").as_deref(), Some("foo__dash__bar__dot__baz__slash__x"));
        assert_eq!(escape("a__b").as_deref(), Some("a__underscores__b"));
        assert_eq!(escape("1abc"), None);
        assert_eq!(escape("a b"), None);
        assert_eq!(escape("plain_name").as_deref(), Some("plain_name"));
    }

    #[test]
    fn sizes_follow_the_bounds_or_the_request_limit() {
        let d = decl_of(
            &schema(json!({"type": "object", "required": ["a"], "properties": {
                "a": {"type": "string", "maxLength": 10},
                "b": {"type": "array", "items": {"type": "integer"}},
                "c": {"type": "object", "additionalProperties": {"type": "boolean"}, "maxProperties": 3},
                "d": {"type": "string", "enum": ["x", "long"]},
                "e": {"type": "string", "format": "date-time"}}})),
            false,
            DeclOptions { bounded_name: false },
        )
        .unwrap();
        assert_eq!(d.fields["a"].max_elements, 40, "maxLength counts runes, 4 bytes each");
        assert_eq!(d.fields["b"].max_elements, (MAX_REQUEST_SIZE_BYTES - 2) / 2);
        assert_eq!(d.fields["c"].max_elements, 3);
        assert_eq!(d.fields["d"].max_elements, 4);
        assert_eq!(d.fields["e"].kind, DeclKind::Timestamp);
        assert_eq!(d.min_serialized_size, 2 + 1 + 2 + 4, "required a: its name, \"\" and 4");
    }

    #[test]
    fn a_resource_root_gets_metadata_name_bounded_from_1_37() {
        let s = schema(json!({"type": "object", "properties": {"spec": {"type": "object"}}}));
        let old = decl_of(&s, true, DeclOptions { bounded_name: false }).unwrap();
        let new = decl_of(&s, true, DeclOptions { bounded_name: true }).unwrap();
        let name = |d: &Decl| d.fields["metadata"].fields["name"].max_elements;
        assert_eq!(name(&old), MAX_REQUEST_SIZE_BYTES - 2);
        assert_eq!(name(&new), 253 * 4);
        assert_eq!(new.fields["metadata"].fields["generateName"].max_elements, 252 * 4);
        assert!(new.fields.contains_key("kind") && new.fields.contains_key("apiVersion"));
    }
}
