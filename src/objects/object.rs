//! Rendered documents as objects: each one read once into JSON (as the API server would see
//! it), with its identity (group, kind, namespace, name), where it came from, and its size as
//! the compact JSON that client-side apply stores in `last-applied-configuration`.

use serde::Serialize;
use serde_json::Value as Json;

use super::{is_namespaced, str_at, to_serde};
use gotmpl::Value;
use helm_render::json::{to_json, COMPACT};
use helm_render::yaml::read_documents;

/// How an object reaches the cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Origin {
    /// A release object from `templates/`: Helm creates, upgrades, adopts and deletes it.
    Template,
    /// A Helm hook from `templates/`: run at its events, never part of the release.
    Hook,
    /// A file in a chart's `crds/`: created on first install only, never upgraded or deleted.
    CrdsDir,
}

/// Group, kind, namespace and name: what the API server keys an object by.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Identity {
    pub group: String,
    pub kind: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    pub name: String,
}

/// `Kind/name`, or `Kind/namespace/name` when namespaced: how every report names an object (the
/// group is left out: the kinds the tool reports are unambiguous, and commands that need the
/// group spell the resource out themselves).
impl std::fmt::Display for Identity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.namespace.is_empty() {
            write!(f, "{}/{}", self.kind, self.name)
        } else {
            write!(f, "{}/{}/{}", self.kind, self.namespace, self.name)
        }
    }
}

/// One rendered object.
#[derive(Debug, Clone, Serialize)]
pub struct Object {
    pub identity: Identity,
    pub api_version: String,
    /// Template or `crds/` path it came from.
    pub source: String,
    pub origin: Origin,
    /// Bytes of the object as compact JSON (Go's `json.Marshal`, sorted keys, HTML-escaped).
    pub json_size: usize,
    #[serde(skip)]
    pub body: Json,
}

impl Object {
    /// Reads one YAML document; None for empty documents and non-objects (Helm would not apply
    /// them either).
    pub fn from_yaml(text: &str, source: &str, origin: Origin, default_namespace: &str) -> Option<Object> {
        let docs = read_documents(text).ok()?;
        let value = docs.into_iter().next()?;
        let Value::Map(_) = &value else { return None };
        let json_size = to_json(&value, &COMPACT).map(|s| s.len()).unwrap_or(0);
        let body = to_serde(&value);
        let api_version = str_at(&body, &["apiVersion"]).to_string();
        let group = api_version.rsplit_once('/').map(|(g, _)| g.to_string()).unwrap_or_default();
        let kind = str_at(&body, &["kind"]).to_string();
        let namespace = match str_at(&body, &["metadata", "namespace"]) {
            "" if is_namespaced(&kind) => default_namespace.to_string(),
            ns => ns.to_string(),
        };
        let name = str_at(&body, &["metadata", "name"]).to_string();
        Some(Object {
            identity: Identity { group, kind, namespace, name },
            api_version,
            source: source.to_string(),
            origin,
            json_size,
            body,
        })
    }

    pub fn annotation(&self, key: &str) -> Option<&str> {
        self.body.pointer("/metadata/annotations").and_then(|a| a.get(key)).and_then(Json::as_str)
    }

    pub fn label(&self, key: &str) -> Option<&str> {
        self.body.pointer("/metadata/labels").and_then(|a| a.get(key)).and_then(Json::as_str)
    }
}

/// Every document of a multi-document YAML text as objects.
pub fn objects_in(text: &str, source: &str, origin: Origin, default_namespace: &str) -> Vec<Object> {
    helm_render::manifest::split_manifest_slices(text)
        .into_iter()
        .filter_map(|doc| Object::from_yaml(doc, source, origin, default_namespace))
        .collect()
}
