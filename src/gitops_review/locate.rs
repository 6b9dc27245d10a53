//! Where in the GitOps tree a finding belongs, so a reviewer sees it on the line the pull request
//! changed: a value the target chart does not know at the line that sets it; a finding about an
//! engine option at that option's line when the change touches it; anything else at the changed
//! version line (else the first changed value or option, else the reference's version line). The
//! engine options and Argo CD version a finding depends on are kept as related locations.

use serde::Serialize;

use crate::audit::finding::Finding;
use crate::audit::rules::Rule;
use crate::engine::Engine;
use crate::gitops::compare::Change;
use crate::gitops::{Location, Reference, Scan};

/// Another place that explains a finding (the option it depends on).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Related {
    pub at: Location,
    pub what: String,
}

/// A finding placed in the GitOps tree.
#[derive(Debug, Clone, Serialize)]
pub struct LocatedFinding {
    #[serde(flatten)]
    pub finding: Finding,
    /// The GitOps file and line it is reported at (relative to the tree root).
    pub at: Location,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub related: Vec<Related>,
    /// `engine Kind namespace/name` of the reference it is about.
    pub reference: String,
}

/// The engine options a kind's outcome depends on, by engine.
fn options_of(kind: &str, engine: Engine) -> &'static [&'static str] {
    match (kind, engine) {
        ("crds-not-applied", Engine::Flux) => &["upgrade.crds", "install.crds"],
        ("crds-not-applied", Engine::Argocd) => &["helm.skipCrds"],
        ("crds-not-applied", Engine::Kustomize) => &["includeCRDs"],
        ("adopt-refused", Engine::Flux) => &["upgrade.disableTakeOwnership"],
        ("hooks-skipped", Engine::Flux) => &["upgrade.disableHooks", "install.disableHooks"],
        ("hooks-skipped", Engine::Kustomize) | ("hook-delete-event", Engine::Kustomize) => &["skipHooks"],
        ("replace-runtime-fields", _) => &["syncOptions.Replace"],
        ("crd-size", Engine::Argocd) => &["syncOptions.ServerSideApply", "syncOptions.Replace"],
        _ => &[],
    }
}

/// The line a change is best commented on: the version's, else a value's, else an option's.
fn changed_line(r: &Reference, change: Option<&Change>) -> Location {
    let Some(c) = change else { return r.version_at.clone() };
    c.version
        .as_ref()
        .and_then(|v| v.at.clone())
        .or_else(|| c.values.iter().find_map(|v| v.at.clone()))
        .or_else(|| c.options.iter().find_map(|o| o.at.clone()))
        .unwrap_or_else(|| r.version_at.clone())
}

/// Where the values set `path` (a leaf, the first leaf under it, or its top-level key).
fn value_line(r: &Reference, path: &str) -> Option<Location> {
    if let Some(at) = r.value_locations.get(path) {
        return Some(at.clone());
    }
    let under = |k: &&String| k.starts_with(&format!("{path}.")) || k.starts_with(&format!("{path}["));
    if let Some((_, at)) = r.value_locations.iter().find(|(k, _)| under(k)) {
        return Some(at.clone());
    }
    let top = path.split(['.', '[']).next().unwrap_or(path);
    r.value_origins.get(top).cloned()
}

pub fn locate(finding: Finding, rules: &[Rule], r: &Reference, change: Option<&Change>, head: &Scan) -> LocatedFinding {
    let kind = rules.iter().find(|rule| rule.id == finding.id).map(|rule| rule.kind.as_str()).unwrap_or("");
    let mut at = changed_line(r, change);
    let mut related = Vec::new();
    if kind == "values-unknown-key" || kind == "values-removed-key" {
        if let Some(line) = finding.subject.strip_prefix("values ").and_then(|path| value_line(r, path)) {
            at = line;
        }
    }
    for name in options_of(kind, r.engine) {
        let Some(option) = r.options.get(*name) else { continue };
        let Some(option_at) = &option.at else { continue };
        related.push(Related { at: option_at.clone(), what: format!("{name}: {}", option.value) });
        let changed = change.is_some_and(|c| c.options.iter().any(|o| o.name == *name && o.at.is_some()));
        if changed {
            at = option_at.clone();
        }
    }
    if r.engine == Engine::Argocd && kind.starts_with("hook-") {
        if let (Some(v), Some(v_at)) = (&head.argocd_version, &head.argocd_version_at) {
            related.push(Related { at: v_at.clone(), what: format!("Argo CD version {v}") });
        }
    }
    LocatedFinding { finding, at, related, reference: format!("{} {}", r.engine.as_str(), r.object) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gitops::compare::{Field, Status, ValueChange};
    use crate::gitops::{ObjectKey, VersionKind};

    fn at(file: &str, line: u32) -> Location {
        Location { file: file.into(), line, column: 1 }
    }

    fn reference() -> Reference {
        Reference {
            engine: Engine::Flux,
            object: ObjectKey { kind: "HelmRelease".into(), namespace: None, name: "t".into() },
            at: at("hr.yaml", 1),
            repository: None,
            repository_written: None,
            chart: "kubeflow-trainer".into(),
            version: Some("2.3.0".into()),
            version_kind: VersionKind::Exact,
            version_at: at("hr.yaml", 9),
            digest: None,
            release_name: None,
            release_namespace: None,
            values: serde_json::json!({}),
            value_origins: [("manager".to_string(), at("values.yaml", 1))].into(),
            value_locations: [("manager.a.b".to_string(), at("values.yaml", 3)), ("manager.c".to_string(), at("values.yaml", 5))].into(),
            options: Default::default(),
            problems: vec![],
            notes: vec![],
        }
    }

    #[test]
    fn values_are_found_by_leaf_subtree_or_top_level_key() {
        let r = reference();
        assert_eq!(value_line(&r, "manager.c"), Some(at("values.yaml", 5)));
        assert_eq!(value_line(&r, "manager.a"), Some(at("values.yaml", 3)), "the first leaf under a folded path");
        assert_eq!(value_line(&r, "manager.zzz"), Some(at("values.yaml", 1)), "else the top-level key");
        assert_eq!(value_line(&r, "other"), None);
    }

    #[test]
    fn a_change_is_commented_on_its_version_else_its_values_else_its_options() {
        let r = reference();
        let field = |name: &str, line: u32| Field { name: name.into(), from: None, to: None, at: Some(at("hr.yaml", line)) };
        let mut change = Change {
            engine: Engine::Flux,
            object: r.object.clone(),
            status: Status::Changed,
            at: r.at.clone(),
            version: None,
            repository: None,
            release_name: None,
            release_namespace: None,
            values: vec![ValueChange { path: "manager.c".into(), from: None, to: None, at: Some(at("values.yaml", 5)) }],
            options: vec![field("upgrade.crds", 12)],
        };
        assert_eq!(changed_line(&r, Some(&change)), at("values.yaml", 5));
        change.version = Some(field("version", 9));
        assert_eq!(changed_line(&r, Some(&change)), at("hr.yaml", 9));
        change.version = None;
        change.values.clear();
        assert_eq!(changed_line(&r, Some(&change)), at("hr.yaml", 12));
        assert_eq!(changed_line(&r, None), at("hr.yaml", 9), "no base: the version line");
    }
}
