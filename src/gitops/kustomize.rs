//! kustomize `kustomization.yaml` files: `helmCharts` entries (fields as in kustomize
//! api/types/helmchartargs.go: `name`, `repo`, `version`, `releaseName`, `namespace`,
//! `valuesFile`, `additionalValuesFiles`, `valuesInline`, `valuesMerge`, `includeCRDs`,
//! `skipHooks`, `skipTests`) and `configMapGenerator`/`secretGenerator` outputs, which Flux
//! `valuesFrom` may name. Values follow kustomize v5.8.1's HelmChartInflationGenerator:
//! `valuesInline` over `valuesFile` (`override`, the default), under it (`merge`) or alone
//! (`replace`); `additionalValuesFiles` are later `-f` files. A chart already present under
//! `helmGlobals.chartHome` (default `charts`) is used as found, whatever the version says.

use std::collections::BTreeMap;

use super::model::{EngineOption, Ignored, Location, ObjectKey, Problem, Reference, VersionKind};
use super::tree::{dir_of, join, Doc, Tree};
use super::values::{Placement, Values};
use super::{classify, is_trainer, Found};
use crate::engine::Engine;

const NAMES: [&str; 3] = ["kustomization.yaml", "kustomization.yml", "Kustomization"];

pub fn is_kustomization(doc: &Doc) -> bool {
    let base = doc.file.rsplit('/').next().unwrap_or("");
    NAMES.contains(&base) && (doc.kind.is_empty() || doc.kind == "Kustomization" && doc.group() == "kustomize.config.k8s.io")
}

/// What a generator makes: each key's text and where it is written.
pub struct Generated {
    pub data: BTreeMap<String, (String, Placement)>,
}

/// The ConfigMap (or Secret) a `configMapGenerator` (`secretGenerator`) entry named `name`
/// makes, from its `literals` and YAML `files` in the tree.
pub fn generated(tree: &Tree, kind: &str, name: &str) -> Option<Generated> {
    let field = if kind == "Secret" { "secretGenerator" } else { "configMapGenerator" };
    for doc in tree.docs.iter().filter(|d| is_kustomization(d)) {
        let dir = dir_of(&doc.file);
        for entry in doc.node.get(field).map(|n| n.items()).unwrap_or(&[]) {
            if entry.str_at(&["name"]) != Some(name) {
                continue;
            }
            let mut data = BTreeMap::new();
            for lit in entry.get("literals").map(|n| n.items()).unwrap_or(&[]) {
                if let Some((k, v)) = lit.text().and_then(|t| t.split_once('=')) {
                    let place = Placement { file: doc.file.clone(), offset: None, at: doc.loc(lit.at) };
                    data.insert(k.to_string(), (v.to_string(), place));
                }
            }
            for file in entry.get("files").map(|n| n.items()).unwrap_or(&[]) {
                let Some(spec) = file.text() else { continue };
                let (key, rel) = match spec.split_once('=') {
                    Some((k, p)) => (k.to_string(), p),
                    None => (spec.rsplit('/').next().unwrap_or(spec).to_string(), spec),
                };
                if let Some((path, text)) = join(dir, rel).and_then(|p| tree.texts.get(&p).map(|t| (p, t))) {
                    data.insert(key, (text.clone(), Placement::file(&path)));
                }
            }
            return Some(Generated { data });
        }
    }
    None
}

/// A kustomization's `namespace:` given to the objects of the files and directories its
/// `resources` list (kustomize sets it on every namespaced object it emits). Cluster-scoped
/// kinds are recognised by name only (`Namespace`, `Cluster…`, CRDs).
pub fn apply_namespaces(tree: &mut Tree) {
    let mut assignments: Vec<(String, String)> = Vec::new();
    for doc in tree.docs.iter().filter(|d| is_kustomization(d)) {
        let Some(ns) = doc.node.str_at(&["namespace"]) else { continue };
        for entry in doc.node.get("resources").map(|n| n.items()).unwrap_or(&[]) {
            if let Some(path) = entry.text().filter(|t| !t.contains("://")).and_then(|t| join(dir_of(&doc.file), t)) {
                assignments.push((path, ns.to_string()));
            }
        }
    }
    // Outer kustomizations apply last, as kustomize applies the outermost namespace last.
    assignments.sort_by_key(|(path, _)| std::cmp::Reverse(path.matches('/').count()));
    for (path, ns) in assignments {
        for doc in tree.docs.iter_mut() {
            let covered = doc.file == path || doc.file.starts_with(&format!("{path}/"));
            let cluster_scoped = doc.kind == "Namespace" || doc.kind.starts_with("Cluster") || doc.kind == "CustomResourceDefinition";
            if covered && !cluster_scoped && !doc.kind.is_empty() {
                doc.namespace = Some(ns.clone());
            }
        }
    }
}

pub fn read(tree: &Tree, found: &mut Found) {
    for doc in tree.docs.iter().filter(|d| is_kustomization(d)) {
        let chart_home = doc.node.str_at(&["helmGlobals", "chartHome"]).unwrap_or("charts");
        for (i, item) in doc.node.get("helmCharts").map(|n| n.items()).unwrap_or(&[]).iter().enumerate() {
            let chart = item.str_at(&["name"]).unwrap_or("").to_string();
            let repo = item.str_at(&["repo"]).map(|r| r.trim_end_matches('/').to_string());
            let release = item.str_at(&["releaseName"]).map(str::to_string);
            let namespace = item.str_at(&["namespace"]).map(str::to_string);
            let label = release.clone().unwrap_or_else(|| if chart.is_empty() { format!("#{i}") } else { chart.clone() });
            let key = ObjectKey { kind: "helmCharts".into(), namespace: None, name: format!("{}#{label}", doc.file) };
            let at = doc.loc(item.at);
            if !is_trainer(&chart, repo.as_deref()) {
                found.ignored.push(Ignored { engine: Engine::Kustomize, object: key, chart, at });
                continue;
            }
            let mut problems = Vec::new();
            let mut notes = Vec::new();
            let (repository, written) = match &repo {
                Some(r) if r.starts_with("oci://") => {
                    let reference = format!("{r}/{chart}");
                    if let Err(e) = chart_source::reference::OciRef::parse(&reference) {
                        problems.push(Problem::at(e.to_string(), doc.loc(item.get("repo").map(|n| n.at).unwrap_or(item.at))));
                    }
                    (Some(reference), None)
                }
                Some(r) => {
                    problems.push(Problem::at(
                        format!("repo {r} is an HTTPS chart index: trainer-audit reads OCI repositories only (Trainer publishes oci://ghcr.io/kubeflow/charts)"),
                        doc.loc(item.get("repo").map(|n| n.at).unwrap_or(item.at)),
                    ));
                    (None, Some(r.clone()))
                }
                None => (None, None),
            };
            let local = join(dir_of(&doc.file), &format!("{chart_home}/{chart}/Chart.yaml")).filter(|p| tree.texts.contains_key(p));
            if let Some(path) = &local {
                problems.push(Problem::at(
                    format!("kustomize uses the chart already at {} as found and does not pull the version written here", dir_of(path)),
                    at.clone(),
                ));
            } else if repo.is_none() {
                problems.push(Problem::at("no repo and no local chart under the chart home: kustomize cannot find this chart", at.clone()));
            }
            let (version, version_kind, version_at) = match item.get("version").and_then(|v| v.text().map(|t| (t, v.at))) {
                Some((v, vat)) => (Some(v.to_string()), classify(v, &doc.loc(vat), &mut problems), doc.loc(vat)),
                None => (None, VersionKind::Latest, at.clone()),
            };
            if release.is_none() {
                notes.push("no releaseName: kustomize passes --generate-name to helm template".into());
            }
            let values = values(tree, doc, item, &mut problems, &mut notes);
            found.references.push(Reference {
                engine: Engine::Kustomize,
                object: key,
                at,
                repository,
                repository_written: written,
                chart,
                version,
                version_kind,
                version_at,
                digest: item.str_at(&["digest"]).map(str::to_string),
                release_name: release,
                release_namespace: namespace,
                value_origins: values.origins.clone(),
                value_locations: values.leaves.clone(),
                values: values.to_json(),
                options: options(doc, item),
                problems,
                notes,
            });
        }
    }
}

fn load_file(tree: &Tree, doc: &Doc, rel: &str, at: Location, problems: &mut Vec<Problem>) -> Option<Values> {
    let Some(path) = join(dir_of(&doc.file), rel).filter(|p| tree.texts.contains_key(p)) else {
        problems.push(Problem::at(format!("values file {rel} is not in this tree: the values it holds are unknown"), at));
        return None;
    };
    let text = tree.texts.get(&path)?;
    let mut values = Values::default();
    let place = Placement::file(&path);
    if let Err(e) = values.merge_text(text, &place) {
        problems.push(Problem::at(format!("values file {rel}: {e}"), at));
        return None;
    }
    Some(values)
}

fn values(tree: &Tree, doc: &Doc, item: &super::yaml::Node, problems: &mut Vec<Problem>, notes: &mut Vec<String>) -> Values {
    let mode = item.str_at(&["valuesMerge"]).unwrap_or("override");
    let mut inline = Values::default();
    if let Some(node) = item.get("valuesInline") {
        inline.merge_node(node, &doc.file);
    }
    let file = item.get("valuesFile").and_then(|n| n.text().map(|t| (t.to_string(), doc.loc(n.at))));
    let file_values = file.and_then(|(rel, at)| load_file(tree, doc, &rel, at, problems));
    let mut out = match (mode, file_values) {
        ("replace", _) => inline,
        ("merge", Some(mut f)) => {
            let mut base = inline;
            base.merge_values(std::mem::take(&mut f));
            base
        }
        ("merge", None) => {
            if !inline.map.is_empty() {
                notes.push("valuesMerge: merge keeps the chart's own defaults over valuesInline: inline keys the chart already sets do not take effect".into());
            }
            inline
        }
        (_, Some(mut f)) => {
            f.merge_values(inline);
            f
        }
        (_, None) => inline,
    };
    if !["override", "merge", "replace"].contains(&mode) {
        problems
            .push(Problem::at(format!("valuesMerge {mode:?} is not merge, override or replace: kustomize refuses it"), doc.loc_of(&[])));
    }
    for extra in item.get("additionalValuesFiles").map(|n| n.items()).unwrap_or(&[]) {
        if let Some(rel) = extra.text() {
            if let Some(v) = load_file(tree, doc, rel, doc.loc(extra.at), problems) {
                out.merge_values(v);
            }
        }
    }
    out
}

fn options(doc: &Doc, item: &super::yaml::Node) -> BTreeMap<String, EngineOption> {
    let mut out = BTreeMap::new();
    for (name, default) in [
        ("includeCRDs", Some("false")),
        ("skipHooks", Some("false")),
        ("skipTests", Some("false")),
        ("valuesMerge", Some("override")),
        ("kubeVersion", None),
    ] {
        match item.get(name).and_then(|n| n.text().map(|t| (t.to_string(), n.at))) {
            Some((v, at)) => {
                out.insert(name.to_string(), EngineOption::set(v, doc.loc(at)));
            }
            None => {
                if let Some(d) = default {
                    out.insert(name.to_string(), EngineOption::default(d));
                }
            }
        }
    }
    out
}
