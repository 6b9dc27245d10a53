//! What reading a GitOps tree yields: one `Reference` per Trainer chart reference, with the file
//! and line of each value it came from, the merged user values, the engine's options and the
//! problems (values that cannot be known from the files). These types are the library's output
//! and the JSON the `gitops` command prints, so field names are part of the interface.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value as Json;

use crate::engine::Engine;

/// A place in the tree: a path relative to the tree root (with `/`), 1-based line and column.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Location {
    pub file: String,
    pub line: u32,
    pub column: u32,
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}

/// The GitOps object that carries a reference; base and head references are matched on it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct ObjectKey {
    pub kind: String,
    pub namespace: Option<String>,
    pub name: String,
}

impl std::fmt::Display for ObjectKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.namespace {
            Some(ns) => write!(f, "{} {}/{}", self.kind, ns, self.name),
            None => write!(f, "{} {}", self.kind, self.name),
        }
    }
}

/// How the version field selects a chart version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum VersionKind {
    /// One exact version.
    Exact,
    /// A semver range, resolved against the repository's tags at reconcile time.
    Range,
    /// A digest pin; the version is whatever the digest holds.
    Digest,
    /// No version: the engine takes the latest (Flux `*`, OCIRepository `latest`).
    Latest,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Reference {
    pub engine: Engine,
    pub object: ObjectKey,
    /// Where the object starts.
    pub at: Location,
    /// `oci://host/path/kubeflow-trainer`, when the chart comes from an OCI registry.
    pub repository: Option<String>,
    /// The repository as written, when it is not an OCI reference (an HTTPS index, say).
    pub repository_written: Option<String>,
    pub chart: String,
    /// Version or range as written (after substitution); None when unset.
    pub version: Option<String>,
    pub version_kind: VersionKind,
    /// Where the version is written (the object itself when it is unset).
    pub version_at: Location,
    pub digest: Option<String>,
    pub release_name: Option<String>,
    pub release_namespace: Option<String>,
    /// The user values as the engine hands them to Helm (chart defaults not included).
    pub values: Json,
    /// The origin of each top-level key of `values` (the last source that set it).
    pub value_origins: BTreeMap<String, Location>,
    /// The origin of each leaf of `values` by flattened key path (`manager.replicas`).
    pub value_locations: BTreeMap<String, Location>,
    /// Engine options: sync options, CRD policies, hook switches… with defaults filled in.
    pub options: BTreeMap<String, EngineOption>,
    /// Values or facts the files do not settle.
    pub problems: Vec<Problem>,
    /// Remarks that are not problems (deprecated API versions, defaults taken).
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EngineOption {
    pub value: String,
    /// True when the file does not set it and the engine's default applies.
    pub default: bool,
    pub at: Option<Location>,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Problem {
    pub message: String,
    pub at: Option<Location>,
}

/// A chart reference that is not Trainer's (listed in verbose output only).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Ignored {
    pub engine: Engine,
    pub object: ObjectKey,
    pub chart: String,
    pub at: Location,
}

/// Everything read from one tree.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct Scan {
    pub references: Vec<Reference>,
    pub ignored: Vec<Ignored>,
    /// The Argo CD version the tree installs, when it tells (an image tag or a manifests ref).
    pub argocd_version: Option<String>,
    pub argocd_version_at: Option<Location>,
    /// Files and objects that could not be read, and objects the reader does not expand.
    pub problems: Vec<Problem>,
    pub files_read: usize,
}

impl EngineOption {
    pub fn set(value: impl Into<String>, at: Location) -> EngineOption {
        EngineOption { value: value.into(), default: false, at: Some(at) }
    }

    pub fn default(value: impl Into<String>) -> EngineOption {
        EngineOption { value: value.into(), default: true, at: None }
    }
}

impl Problem {
    pub fn at(message: impl Into<String>, at: Location) -> Problem {
        Problem { message: message.into(), at: Some(at) }
    }
}
