//! What changes between two rendered chart versions, for the people reviewing an upgrade:
//! CRDs (where they live, versions, schema paths, types, enums, validation), runtimes (content
//! and delivery), default values, RBAC grants, images, hooks and subcharts. Every list is
//! sorted, so the same two charts always give the same diff.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::Value as Json;

use crate::inventory::crd::Crd;
use crate::inventory::paths::{collapse, Collapsed};
use crate::inventory::runtime::Runtime;
use crate::inventory::schema_compare::{compare, FieldChange};
use crate::inventory::{ChartSummary, Inventory};
use crate::objects::Origin;

#[derive(Debug, Clone, Serialize)]
pub struct ChartDiff {
    pub from: ChartSummary,
    pub to: ChartSummary,
    pub crds: Vec<CrdChange>,
    pub runtimes: Vec<RuntimeChange>,
    pub values: ValuesDiff,
    pub rbac: AddedRemoved,
    pub images: Vec<ImageChange>,
    pub hooks: AddedRemoved,
    pub subcharts: Vec<VersionChange>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct AddedRemoved {
    pub added: Vec<String>,
    pub removed: Vec<String>,
}

impl AddedRemoved {
    fn of(from: BTreeSet<String>, to: BTreeSet<String>) -> AddedRemoved {
        AddedRemoved { added: to.difference(&from).cloned().collect(), removed: from.difference(&to).cloned().collect() }
    }

    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty()
    }
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    Added,
    Removed,
    Changed,
}

#[derive(Debug, Clone, Serialize)]
pub struct Change<T> {
    pub from: T,
    pub to: T,
}

#[derive(Debug, Clone, Serialize)]
pub struct PathChange {
    pub path: String,
    pub from: Json,
    pub to: Json,
}

#[derive(Debug, Clone, Serialize)]
pub struct CrdChange {
    pub name: String,
    pub kind: String,
    pub status: Status,
    /// `crds/` ↔ templates: a CRD moving into templates becomes a release object Helm must adopt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub moved: Option<Change<Origin>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub served: Option<Change<Vec<String>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub storage: Option<Change<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keep: Option<Change<bool>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub json_size: Option<Change<usize>>,
    pub schema_added: Vec<Collapsed>,
    pub schema_removed: Vec<Collapsed>,
    /// Type changes (`int-or-string` → `integer`).
    pub types: Vec<PathChange>,
    pub enums: Vec<PathChange>,
    pub validation: Vec<PathChange>,
    pub required: Vec<PathChange>,
}

impl CrdChange {
    pub fn is_empty(&self) -> bool {
        matches!(self.status, Status::Changed)
            && self.moved.is_none()
            && self.served.is_none()
            && self.storage.is_none()
            && self.keep.is_none()
            && self.schema_added.is_empty()
            && self.schema_removed.is_empty()
            && self.types.is_empty()
            && self.enums.is_empty()
            && self.validation.is_empty()
            && self.required.is_empty()
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct RuntimeChange {
    pub kind: String,
    pub name: String,
    pub status: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delivery: Option<Change<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub images: Option<Change<Vec<String>>>,
    /// Unified diff of the rendered object (labels that only carry the chart version left out).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub diff: String,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct ValuesDiff {
    pub added: Vec<Collapsed>,
    pub removed: Vec<Collapsed>,
    pub changed: Vec<PathChange>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ImageChange {
    pub repository: String,
    pub from: Vec<String>,
    pub to: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct VersionChange {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
}

impl ChartDiff {
    pub fn compute(from: &Inventory, to: &Inventory) -> ChartDiff {
        ChartDiff {
            from: from.chart.clone(),
            to: to.chart.clone(),
            crds: crd_changes(from, to),
            runtimes: runtime_changes(from, to),
            values: values_diff(&from.values, &to.values),
            rbac: AddedRemoved::of(grants(from), grants(to)),
            images: image_changes(from, to),
            hooks: AddedRemoved::of(hooks(from), hooks(to)),
            subcharts: subchart_changes(from, to),
        }
    }
}

fn crd_changes(from: &Inventory, to: &Inventory) -> Vec<CrdChange> {
    let by_name = |inv: &Inventory| -> BTreeMap<String, Crd> { inv.crds.iter().map(|c| (c.name.clone(), c.clone())).collect() };
    let (old, new) = (by_name(from), by_name(to));
    let names: BTreeSet<&String> = old.keys().chain(new.keys()).collect();
    let mut out = Vec::new();
    for name in names {
        let change = match (old.get(name), new.get(name)) {
            (Some(a), Some(b)) => compare_crds(a, b),
            (None, Some(b)) => whole_crd(b, Status::Added),
            (Some(a), None) => whole_crd(a, Status::Removed),
            (None, None) => continue,
        };
        if !change.is_empty() {
            out.push(change);
        }
    }
    out
}

fn whole_crd(crd: &Crd, status: Status) -> CrdChange {
    CrdChange {
        name: crd.name.clone(),
        kind: crd.kind.clone(),
        status,
        moved: None,
        served: None,
        storage: None,
        keep: None,
        json_size: None,
        schema_added: Vec::new(),
        schema_removed: Vec::new(),
        types: Vec::new(),
        enums: Vec::new(),
        validation: Vec::new(),
        required: Vec::new(),
    }
}

fn served(crd: &Crd) -> Vec<String> {
    crd.versions.iter().filter(|v| v.served).map(|v| v.name.clone()).collect()
}

fn storage(crd: &Crd) -> String {
    crd.versions.iter().find(|v| v.storage).map(|v| v.name.clone()).unwrap_or_default()
}

fn changed<T: PartialEq + Clone>(a: T, b: T) -> Option<Change<T>> {
    (a != b).then_some(Change { from: a, to: b })
}

fn compare_crds(a: &Crd, b: &Crd) -> CrdChange {
    let empty = BTreeMap::new();
    let schemas = compare(a.storage_schema().unwrap_or(&empty), b.storage_schema().unwrap_or(&empty));
    let (pa, pb) = (schemas.old_paths(), schemas.new_paths());
    let mut types = Vec::new();
    let mut enums = Vec::new();
    let mut validation = Vec::new();
    let mut required = Vec::new();
    for FieldChange { path, old: fa, new: fb } in &schemas.changed {
        let path = path.to_string();
        if fa.kind != fb.kind {
            types.push(PathChange { path: path.clone(), from: Json::from(fa.kind.clone()), to: Json::from(fb.kind.clone()) });
        }
        if fa.enumeration != fb.enumeration {
            enums.push(PathChange { path: path.clone(), from: Json::from(fa.enumeration.clone()), to: Json::from(fb.enumeration.clone()) });
        }
        if fa.validation != fb.validation {
            let to_json = |m: &BTreeMap<String, Json>| Json::Object(m.clone().into_iter().collect());
            validation.push(PathChange { path: path.clone(), from: to_json(&fa.validation), to: to_json(&fb.validation) });
        }
        if fa.required != fb.required {
            required.push(PathChange { path, from: Json::from(fa.required), to: Json::from(fb.required) });
        }
    }
    CrdChange {
        name: b.name.clone(),
        kind: b.kind.clone(),
        status: Status::Changed,
        moved: changed(a.origin, b.origin),
        served: changed(served(a), served(b)),
        storage: changed(storage(a), storage(b)),
        keep: changed(a.keeps_on_delete(), b.keeps_on_delete()),
        json_size: changed(a.json_size, b.json_size),
        schema_added: collapse(&schemas.added, &pa),
        schema_removed: collapse(&schemas.removed, &pb),
        types,
        enums,
        validation,
        required,
    }
}

/// A runtime as YAML for diffing, without the labels that only carry the chart's version.
fn runtime_yaml(r: &Runtime) -> String {
    let mut body = r.body.clone();
    if let Some(labels) = body.pointer_mut("/metadata/labels").and_then(Json::as_object_mut) {
        labels.remove("helm.sh/chart");
        labels.remove("app.kubernetes.io/version");
        if labels.is_empty() {
            if let Some(meta) = body.pointer_mut("/metadata").and_then(Json::as_object_mut) {
                meta.remove("labels");
            }
        }
    }
    crate::objects::yaml_of(&body).map(|y| if y.ends_with('\n') { y } else { format!("{y}\n") }).unwrap_or_default()
}

fn runtime_changes(from: &Inventory, to: &Inventory) -> Vec<RuntimeChange> {
    let key = |r: &Runtime| (r.kind.clone(), r.namespace.clone(), r.name.clone());
    let old: BTreeMap<_, &Runtime> = from.runtimes.iter().map(|r| (key(r), r)).collect();
    let new: BTreeMap<_, &Runtime> = to.runtimes.iter().map(|r| (key(r), r)).collect();
    let keys: BTreeSet<_> = old.keys().chain(new.keys()).cloned().collect();
    let images = |r: &Runtime| r.images.iter().map(|i| i.reference.clone()).collect::<Vec<_>>();
    let mut out = Vec::new();
    for k in keys {
        let change = match (old.get(&k), new.get(&k)) {
            (Some(a), Some(b)) => {
                let (ya, yb) = (runtime_yaml(a), runtime_yaml(b));
                let diff = if ya == yb {
                    String::new()
                } else {
                    similar::TextDiff::from_lines(&ya, &yb)
                        .unified_diff()
                        .context_radius(2)
                        .header(&format!("{} {}", from.chart.version, a.name), &format!("{} {}", to.chart.version, b.name))
                        .to_string()
                };
                let delivery = changed(a.delivery.describe(), b.delivery.describe());
                let images = changed(images(a), images(b));
                if diff.is_empty() && delivery.is_none() && images.is_none() {
                    continue;
                }
                RuntimeChange { kind: k.0.clone(), name: k.2.clone(), status: Status::Changed, delivery, images, diff }
            }
            (None, Some(b)) => RuntimeChange {
                kind: k.0.clone(),
                name: k.2.clone(),
                status: Status::Added,
                delivery: Some(Change { from: "-".into(), to: b.delivery.describe() }),
                images: None,
                diff: String::new(),
            },
            (Some(a), None) => RuntimeChange {
                kind: k.0.clone(),
                name: k.2.clone(),
                status: Status::Removed,
                delivery: Some(Change { from: a.delivery.describe(), to: "-".into() }),
                images: None,
                diff: String::new(),
            },
            (None, None) => continue,
        };
        out.push(change);
    }
    out
}

fn values_diff(from: &BTreeMap<String, Json>, to: &BTreeMap<String, Json>) -> ValuesDiff {
    let (pa, pb): (BTreeSet<String>, BTreeSet<String>) = (from.keys().cloned().collect(), to.keys().cloned().collect());
    let added: BTreeSet<String> = pb.difference(&pa).cloned().collect();
    let removed: BTreeSet<String> = pa.difference(&pb).cloned().collect();
    let changed = pa
        .intersection(&pb)
        .filter(|p| from[*p] != to[*p])
        .map(|p| PathChange { path: p.clone(), from: from[p].clone(), to: to[p].clone() })
        .collect();
    ValuesDiff { added: collapse(&added, &pa), removed: collapse(&removed, &pb), changed }
}

fn grants(inv: &Inventory) -> BTreeSet<String> {
    inv.roles
        .iter()
        .flat_map(|role| {
            let label = if role.kind == "ClusterRole" {
                format!("ClusterRole/{}", role.name)
            } else {
                format!("Role/{}/{}", role.namespace, role.name)
            };
            role.rules.iter().flat_map(|r| r.grants()).map(move |g| format!("{label}: {g}")).collect::<Vec<_>>()
        })
        .collect()
}

fn hooks(inv: &Inventory) -> BTreeSet<String> {
    inv.hooks.iter().map(|h| format!("{} [{}]", h.identity, h.events.join(","))).collect()
}

fn image_changes(from: &Inventory, to: &Inventory) -> Vec<ImageChange> {
    let by_repo = |inv: &Inventory| -> BTreeMap<String, BTreeSet<String>> {
        let mut m: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for u in &inv.images {
            m.entry(u.image.repository.clone()).or_default().insert(u.image.reference.clone());
        }
        m
    };
    let (a, b) = (by_repo(from), by_repo(to));
    let repos: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    repos
        .into_iter()
        .filter_map(|repo| {
            let (x, y) = (a.get(repo).cloned().unwrap_or_default(), b.get(repo).cloned().unwrap_or_default());
            (x != y).then(|| ImageChange { repository: repo.clone(), from: x.into_iter().collect(), to: y.into_iter().collect() })
        })
        .collect()
}

fn subchart_changes(from: &Inventory, to: &Inventory) -> Vec<VersionChange> {
    let names: BTreeSet<&String> = from.chart.subcharts.keys().chain(to.chart.subcharts.keys()).collect();
    names
        .into_iter()
        .filter_map(|n| {
            let (a, b) = (from.chart.subcharts.get(n).cloned(), to.chart.subcharts.get(n).cloned());
            (a != b).then(|| VersionChange { name: n.clone(), from: a, to: b })
        })
        .collect()
}
