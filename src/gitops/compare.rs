//! A head scan against a base scan: per Trainer reference, matched on the GitOps object's
//! (kind, namespace, name), the version change, the values changes as flattened key paths, the
//! engine option changes, and references added or removed. Each change carries the head
//! location a reviewer would comment on (the removed ones, the base location).

use serde::Serialize;
use serde_json::Value as Json;

use super::model::{Location, ObjectKey, Reference, Scan};
use super::values::flatten;
use crate::engine::Engine;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Added,
    Removed,
    Changed,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    pub changes: Vec<Change>,
    /// References present and identical on both sides.
    pub unchanged: Vec<ObjectKey>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    pub engine: Engine,
    pub object: ObjectKey,
    pub status: Status,
    pub at: Location,
    pub version: Option<Field>,
    pub repository: Option<Field>,
    pub release_name: Option<Field>,
    pub release_namespace: Option<Field>,
    pub values: Vec<ValueChange>,
    pub options: Vec<Field>,
}

/// A scalar that differs; `name` says which for option lists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Field {
    pub name: String,
    pub from: Option<String>,
    pub to: Option<String>,
    pub at: Option<Location>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ValueChange {
    pub path: String,
    pub from: Option<Json>,
    pub to: Option<Json>,
    /// Where the head sets the top-level key (None when the key was removed).
    pub at: Option<Location>,
}

pub fn compare(base: &Scan, head: &Scan) -> Comparison {
    let mut changes = Vec::new();
    let mut unchanged = Vec::new();
    for h in &head.references {
        match base.references.iter().find(|b| b.object == h.object) {
            None => changes.push(added_or_removed(h, Status::Added)),
            Some(b) => match diff(b, h) {
                Some(change) => changes.push(change),
                None => unchanged.push(h.object.clone()),
            },
        }
    }
    for b in &base.references {
        if !head.references.iter().any(|h| h.object == b.object) {
            changes.push(added_or_removed(b, Status::Removed));
        }
    }
    changes.sort_by(|a, b| (a.engine, &a.object).cmp(&(b.engine, &b.object)));
    Comparison { changes, unchanged }
}

fn added_or_removed(r: &Reference, status: Status) -> Change {
    let side = |v: Option<String>| if status == Status::Added { (None, v) } else { (v, None) };
    let field = |name: &str, v: Option<String>, at: Option<Location>| {
        let (from, to) = side(v);
        Some(Field { name: name.into(), from, to, at })
    };
    Change {
        engine: r.engine,
        object: r.object.clone(),
        status,
        at: r.at.clone(),
        version: field("version", r.version.clone(), Some(r.version_at.clone())),
        repository: field("repository", r.repository.clone().or(r.repository_written.clone()), None),
        release_name: None,
        release_namespace: None,
        values: Vec::new(),
        options: Vec::new(),
    }
}

fn field(name: &str, from: &Option<String>, to: &Option<String>, at: Option<Location>) -> Option<Field> {
    (from != to).then(|| Field { name: name.into(), from: from.clone(), to: to.clone(), at })
}

fn diff(b: &Reference, h: &Reference) -> Option<Change> {
    let version_of = |r: &Reference| r.version.clone().or_else(|| r.digest.clone());
    let version = field("version", &version_of(b), &version_of(h), Some(h.version_at.clone()));
    let repo_of = |r: &Reference| r.repository.clone().or(r.repository_written.clone());
    let repository = field("repository", &repo_of(b), &repo_of(h), Some(h.at.clone()));
    let release_name = field("release name", &b.release_name, &h.release_name, Some(h.at.clone()));
    let release_namespace = field("release namespace", &b.release_namespace, &h.release_namespace, Some(h.at.clone()));
    let (fb, fh) = (flatten(&b.values), flatten(&h.values));
    let mut values = Vec::new();
    let origin = |path: &str| h.value_locations.get(path).cloned().or_else(|| Some(h.at.clone()));
    for (path, to) in &fh {
        if fb.get(path) != Some(to) {
            values.push(ValueChange { path: path.clone(), from: fb.get(path).cloned(), to: Some(to.clone()), at: origin(path) });
        }
    }
    for (path, from) in &fb {
        if !fh.contains_key(path) {
            values.push(ValueChange { path: path.clone(), from: Some(from.clone()), to: None, at: None });
        }
    }
    values.sort_by(|x, y| x.path.cmp(&y.path));
    let mut options = Vec::new();
    let names: std::collections::BTreeSet<&String> = b.options.keys().chain(h.options.keys()).collect();
    for name in names {
        let from = b.options.get(name).map(|o| o.value.clone());
        let to = h.options.get(name).map(|o| o.value.clone());
        let at = h.options.get(name).and_then(|o| o.at.clone());
        if let Some(f) = field(name, &from, &to, at) {
            options.push(f);
        }
    }
    let nothing = version.is_none()
        && repository.is_none()
        && release_name.is_none()
        && release_namespace.is_none()
        && values.is_empty()
        && options.is_empty();
    (!nothing).then(|| Change {
        engine: h.engine,
        object: h.object.clone(),
        status: Status::Changed,
        at: h.at.clone(),
        version,
        repository,
        release_name,
        release_namespace,
        values,
        options,
    })
}
