//! CustomResourceDefinitions as an upgrade sees them: names, scope, served and storage
//! versions, where the chart keeps them (`crds/` or templates), the keep policy, the apply size,
//! and each version's schema flattened to property paths (`spec.trainer.numProcPerNode`, `[]`
//! for array items, `{}` for map values).

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value as Json;

use crate::objects::{str_at, Object, Origin};

/// The annotation budget of one object (`TotalAnnotationSizeLimitB`): client-side apply copies
/// the whole object into `kubectl.kubernetes.io/last-applied-configuration`.
pub const ANNOTATION_BUDGET: usize = 262_144;

#[derive(Debug, Clone, Serialize)]
pub struct Crd {
    /// `<plural>.<group>`.
    pub name: String,
    pub group: String,
    pub kind: String,
    pub plural: String,
    pub scope: String,
    pub versions: Vec<CrdVersion>,
    pub origin: Origin,
    pub source: String,
    /// `helm.sh/resource-policy` annotation, when set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource_policy: Option<String>,
    pub json_size: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct CrdVersion {
    pub name: String,
    pub served: bool,
    pub storage: bool,
    /// Property path → what the schema says about it.
    #[serde(skip)]
    pub schema: BTreeMap<String, SchemaField>,
}

/// One property of a structural schema.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SchemaField {
    /// `string`, `integer`, `object`, `array`, `boolean`, `number`, or `int-or-string`.
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub enumeration: Vec<Json>,
    pub required: bool,
    /// Bounds, lengths, pattern, format and CEL rules, as written.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub validation: BTreeMap<String, Json>,
}

const VALIDATION_KEYS: &[&str] = &[
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "pattern",
    "format",
    "x-kubernetes-validations",
];

impl Crd {
    pub fn from_object(object: &Object) -> Option<Crd> {
        if object.identity.kind != "CustomResourceDefinition" {
            return None;
        }
        let spec = object.body.get("spec")?;
        let versions = spec
            .get("versions")
            .and_then(Json::as_array)
            .map(|vs| {
                vs.iter()
                    .map(|v| {
                        let mut schema = BTreeMap::new();
                        if let Some(root) = v.pointer("/schema/openAPIV3Schema") {
                            flatten(root, "", &mut schema);
                        }
                        CrdVersion {
                            name: str_at(v, &["name"]).to_string(),
                            served: v.get("served").and_then(Json::as_bool).unwrap_or(false),
                            storage: v.get("storage").and_then(Json::as_bool).unwrap_or(false),
                            schema,
                        }
                    })
                    .collect()
            })
            .unwrap_or_default();
        Some(Crd {
            name: object.identity.name.clone(),
            group: str_at(spec, &["group"]).to_string(),
            kind: str_at(spec, &["names", "kind"]).to_string(),
            plural: str_at(spec, &["names", "plural"]).to_string(),
            scope: str_at(spec, &["scope"]).to_string(),
            versions,
            origin: object.origin,
            source: object.source.clone(),
            resource_policy: object.annotation("helm.sh/resource-policy").map(str::to_string),
            json_size: object.json_size,
        })
    }

    /// The storage version's schema (the one stored objects are pruned against), else the first.
    pub fn storage_schema(&self) -> Option<&BTreeMap<String, SchemaField>> {
        self.versions.iter().find(|v| v.storage).or(self.versions.first()).map(|v| &v.schema)
    }

    pub fn over_annotation_budget(&self) -> bool {
        self.json_size > ANNOTATION_BUDGET
    }

    pub fn keeps_on_delete(&self) -> bool {
        self.resource_policy.as_deref().is_some_and(|p| p.split(',').any(|p| p.trim() == "keep"))
    }
}

fn join(prefix: &str, segment: &str) -> String {
    if prefix.is_empty() {
        segment.to_string()
    } else if segment.starts_with('[') || segment.starts_with('{') {
        format!("{prefix}{segment}")
    } else {
        format!("{prefix}.{segment}")
    }
}

/// Walks `properties`, `items` and schema-valued `additionalProperties`.
fn flatten(schema: &Json, path: &str, out: &mut BTreeMap<String, SchemaField>) {
    let required: Vec<&str> =
        schema.get("required").and_then(Json::as_array).map(|r| r.iter().filter_map(Json::as_str).collect()).unwrap_or_default();
    if let Some(props) = schema.get("properties").and_then(Json::as_object) {
        for (name, child) in props {
            let child_path = join(path, name);
            out.insert(child_path.clone(), field(child, required.contains(&name.as_str())));
            flatten(child, &child_path, out);
        }
    }
    if let Some(items) = schema.get("items").filter(|i| i.is_object()) {
        let child_path = join(path, "[]");
        out.insert(child_path.clone(), field(items, false));
        flatten(items, &child_path, out);
    }
    if let Some(values) = schema.get("additionalProperties").filter(|i| i.is_object()) {
        let child_path = join(path, "{}");
        out.insert(child_path.clone(), field(values, false));
        flatten(values, &child_path, out);
    }
}

fn field(schema: &Json, required: bool) -> SchemaField {
    let int_or_string = schema.get("x-kubernetes-int-or-string").and_then(Json::as_bool).unwrap_or(false);
    let kind = if int_or_string { "int-or-string".to_string() } else { str_at(schema, &["type"]).to_string() };
    let enumeration = schema.get("enum").and_then(Json::as_array).cloned().unwrap_or_default();
    let validation = VALIDATION_KEYS.iter().filter_map(|k| schema.get(*k).map(|v| (k.to_string(), v.clone()))).collect();
    SchemaField { kind, enumeration, required, validation }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flattens_properties_items_and_maps() {
        let schema = serde_json::json!({
            "type": "object",
            "required": ["spec"],
            "properties": {
                "spec": {"type": "object", "properties": {
                    "n": {"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]},
                    "list": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string", "enum": ["a", "b"]}}}},
                    "labels": {"type": "object", "additionalProperties": {"type": "string", "maxLength": 63}}
                }}
            }
        });
        let mut out = BTreeMap::new();
        flatten(&schema, "", &mut out);
        let paths: Vec<&str> = out.keys().map(String::as_str).collect();
        assert_eq!(paths, ["spec", "spec.labels", "spec.labels{}", "spec.list", "spec.list[]", "spec.list[].name", "spec.n"]);
        assert!(out["spec"].required);
        assert_eq!(out["spec.n"].kind, "int-or-string");
        assert_eq!(out["spec.list[].name"].enumeration.len(), 2);
        assert_eq!(out["spec.labels{}"].validation["maxLength"], 63);
    }
}
