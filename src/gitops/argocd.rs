//! Argo CD `Application` (argoproj.io/v1alpha1), single `spec.source` or multi-source
//! `spec.sources`, read as Argo CD v3.5.1 renders Helm (reposerver/repository/repository.go
//! `helmTemplate`; docs/user-guide/helm.md): value files in order, then `helm.valuesObject` — or
//! `helm.values` when there is no valuesObject (`ValuesYAML`) — then `parameters`, the plain
//! ones as `--set` and the `forceString` ones as `--set-string` after them. The release name
//! is `helm.releaseName` or the Application's name; the namespace `helm.namespace` or
//! `destination.namespace`. A chart comes from an OCI registry when `repoURL` has no scheme
//! (`ghcr.io/kubeflow/charts` with `chart`) or is `oci://…` (an OCI source, Argo CD 3.1+).
//! `$ref/path` value files of multi-source Applications are looked up in this tree, taken to be
//! the checkout of the `ref` source's repository. ApplicationSets are named, not expanded.
//! Sync options and `ignoreDifferences` are kept as engine options.

use std::collections::BTreeMap;

use super::model::{EngineOption, Ignored, Location, ObjectKey, Problem, Reference, VersionKind};
use super::tree::{normalize, Doc, Tree};
use super::values::{Placement, Values};
use super::yaml::Node;
use super::{classify, is_trainer, Found};
use crate::engine::context::{IGNORE_DIFFERENCES, PATH_SEPARATOR};
use crate::engine::Engine;

pub const GROUP: &str = "argoproj.io";

/// Sync options the audit reasons about; they are listed with their default when unset.
const SYNC_OPTIONS: [&str; 4] = ["ServerSideApply", "Replace", "SkipDryRunOnMissingResource", "CreateNamespace"];

pub fn read(tree: &Tree, applied: &super::postbuild::Applied, found: &mut Found) {
    for (index, doc) in tree.docs.iter().enumerate() {
        if doc.is(GROUP, "ApplicationSet") {
            if mentions_trainer(&doc.node) {
                found.problems.push(Problem::at(
                    format!("ApplicationSet {} generates Applications for kubeflow-trainer; ApplicationSets are not expanded: check the Applications it generates", doc.name),
                    doc.loc(doc.node.at),
                ));
            }
            continue;
        }
        if !doc.is(GROUP, "Application") {
            continue;
        }
        let sources: Vec<&Node> = match (doc.node.path(&["spec", "sources"]), doc.node.path(&["spec", "source"])) {
            (Some(list), _) if !list.items().is_empty() => list.items().iter().collect(),
            (_, Some(single)) => vec![single],
            _ => continue,
        };
        let multi = sources.len() > 1 || doc.node.path(&["spec", "sources"]).is_some();
        let trainer: Vec<&Node> = sources.iter().copied().filter(|s| source_is_trainer(s)).collect();
        for source in sources.iter().filter(|s| s.get("chart").is_some() && !source_is_trainer(s)) {
            let key = ObjectKey { kind: "Application".into(), namespace: doc.namespace.clone(), name: doc.name.clone() };
            let chart = source.str_at(&["chart"]).unwrap_or("").to_string();
            found.ignored.push(Ignored { engine: Engine::Argocd, object: key, chart, at: doc.loc(source.at) });
        }
        for (n, source) in trainer.iter().enumerate() {
            let name = if trainer.len() > 1 { format!("{}#{n}", doc.name) } else { doc.name.clone() };
            let key = ObjectKey { kind: "Application".into(), namespace: doc.namespace.clone(), name };
            let mut reference = reference(tree, doc, source, &sources, multi, key);
            reference.problems.extend(applied.problems_of(index).cloned());
            reference.problems.sort();
            reference.problems.dedup();
            found.references.push(reference);
        }
    }
}

fn mentions_trainer(node: &Node) -> bool {
    match &node.kind {
        super::yaml::Kind::Scalar { text, .. } => text == "kubeflow-trainer" || text.ends_with("/kubeflow-trainer"),
        super::yaml::Kind::Seq(items) => items.iter().any(mentions_trainer),
        super::yaml::Kind::Map(entries) => entries.iter().any(|(_, v)| mentions_trainer(v)),
    }
}

fn source_is_trainer(source: &Node) -> bool {
    let chart = source.str_at(&["chart"]).unwrap_or("");
    let repo = source.str_at(&["repoURL"]).unwrap_or("");
    if chart.is_empty() {
        repo.starts_with("oci://") && is_trainer("", Some(repo))
    } else {
        is_trainer(chart, Some(repo))
    }
}

fn reference(tree: &Tree, doc: &Doc, source: &Node, all: &[&Node], multi: bool, key: ObjectKey) -> Reference {
    let mut problems = Vec::new();
    let mut notes = Vec::new();
    let repo = source.str_at(&["repoURL"]).unwrap_or("").trim_end_matches('/').to_string();
    let chart_field = source.str_at(&["chart"]).map(str::to_string);
    let repo_at = doc.loc(source.get("repoURL").map(|n| n.at).unwrap_or(source.at));
    let (repository, written, chart) = match (&chart_field, repo.split_once("://")) {
        (None, Some(("oci", _))) => {
            notes.push("an oci:// repoURL without chart is an OCI source, which Argo CD supports from 3.1".into());
            let chart = repo.rsplit('/').next().unwrap_or("").to_string();
            (Some(repo.clone()), None, chart)
        }
        (Some(chart), Some(("oci", _))) => (Some(format!("{repo}/{chart}")), None, chart.clone()),
        (Some(chart), None) => (Some(format!("oci://{repo}/{chart}")), None, chart.clone()),
        (chart, _) => {
            problems.push(Problem::at(
                format!("repoURL {repo} is an HTTPS chart index: trainer-audit reads OCI repositories only (Trainer publishes oci://ghcr.io/kubeflow/charts)"),
                repo_at.clone(),
            ));
            (None, Some(repo.clone()), chart.clone().unwrap_or_default())
        }
    };
    if let Some(r) = &repository {
        if let Err(e) = chart_source::reference::OciRef::parse(r) {
            problems.push(Problem::at(e.to_string(), repo_at.clone()));
        }
    }
    let (version, version_kind, version_at) = match source.get("targetRevision").and_then(|n| n.text().map(|t| (t, n.at))) {
        Some((v, at)) => (Some(v.to_string()), classify(v, &doc.loc(at), &mut problems), doc.loc(at)),
        None => (None, VersionKind::Latest, doc.loc(source.at)),
    };
    let helm = source.get("helm");
    let helm_str = |k: &str| helm.and_then(|h| h.str_at(&[k])).map(str::to_string);
    let values = values(tree, doc, helm, all, multi, &mut problems, &mut notes);
    Reference {
        engine: Engine::Argocd,
        object: key,
        at: doc.loc(doc.node.at),
        repository,
        repository_written: written,
        chart,
        version,
        version_kind,
        version_at,
        digest: None,
        release_name: helm_str("releaseName").or_else(|| Some(doc.name.clone())),
        release_namespace: helm_str("namespace").or_else(|| doc.node.str_at(&["spec", "destination", "namespace"]).map(str::to_string)),
        value_origins: values.origins.clone(),
        value_locations: values.leaves.clone(),
        values: values.to_json(),
        options: options(doc, helm),
        problems,
        notes,
    }
}

fn values(
    tree: &Tree,
    doc: &Doc,
    helm: Option<&Node>,
    all: &[&Node],
    multi: bool,
    problems: &mut Vec<Problem>,
    notes: &mut Vec<String>,
) -> Values {
    let mut values = Values::default();
    let Some(helm) = helm else { return values };
    for file in helm.get("valueFiles").map(|n| n.items()).unwrap_or(&[]) {
        let Some(path) = file.text() else { continue };
        let at = doc.loc(file.at);
        match value_file(tree, path, all, multi, &at, notes) {
            Ok(Some((resolved, text))) => {
                let place = Placement::file(&resolved);
                if let Err(e) = values.merge_text(text, &place) {
                    problems.push(Problem::at(format!("value file {path}: {e}"), at));
                }
            }
            Ok(None) => {}
            Err(message) => {
                let ignore = helm.bool_at(&["ignoreMissingValueFiles"]) == Some(true);
                problems.push(Problem::at(if ignore { format!("{message} (ignoreMissingValueFiles is set)") } else { message }, at));
            }
        }
    }
    if let Some(object) = helm.get("valuesObject").filter(|n| n.is_map()) {
        values.merge_node(object, &doc.file);
        if helm.get("values").is_some() {
            notes.push("helm.values is ignored because helm.valuesObject is set".into());
        }
    } else if let Some(node) = helm.get("values") {
        if node.is_map() {
            values.merge_node(node, &doc.file);
        } else if let Some(text) = node.text() {
            let place = Placement::scalar(&doc.file, tree.texts.get(&doc.file).map(String::as_str), node);
            if let Err(e) = values.merge_text(text, &place) {
                problems.push(Problem::at(format!("helm.values: {e}"), doc.loc(node.at)));
            }
        }
    }
    // Argo CD keeps parameters in two maps, so a repeated name keeps its last value and every
    // --set comes before every --set-string.
    let params = helm.get("parameters").map(|n| n.items()).unwrap_or(&[]);
    for strings in [false, true] {
        let mut last: BTreeMap<String, (String, Location)> = BTreeMap::new();
        for p in params.iter().filter(|p| p.bool_at(&["forceString"]).unwrap_or(false) == strings) {
            if let Some(name) = p.str_at(&["name"]) {
                let value = p.path(&["value"]).and_then(Node::text).unwrap_or("").to_string();
                last.insert(name.to_string(), (value, doc.loc(p.at)));
            }
        }
        for (name, (value, at)) in last {
            if let Err(e) = values.set(&format!("{name}={value}"), strings, &at) {
                problems.push(Problem::at(format!("helm.parameters {name}: {e}"), at));
            }
        }
    }
    if helm.get("fileParameters").is_some() {
        problems.push(Problem::at("helm.fileParameters are not read: the values they set are unknown", doc.loc(helm.at)));
    }
    values
}

/// A value file's tree path and text; Ok(None) when the file is missing and that is allowed.
fn value_file<'a>(
    tree: &'a Tree,
    path: &str,
    all: &[&Node],
    multi: bool,
    at: &Location,
    notes: &mut Vec<String>,
) -> Result<Option<(String, &'a String)>, String> {
    if path.contains("://") {
        return Err(format!("value file {path} is a URL: its values are unknown"));
    }
    if path.contains(['*', '?', '[']) {
        return Err(format!("value file pattern {path} is not expanded: its values are unknown"));
    }
    let Some(rest) = path.strip_prefix('$') else {
        return Err(format!("value file {path} is read from inside the chart package, not from this tree: its values are unknown"));
    };
    let (name, rel) = rest.split_once('/').unwrap_or((rest, ""));
    let Some(source) = all.iter().find(|s| s.str_at(&["ref"]) == Some(name)) else {
        return Err(format!("value file {path} names ${name}, but no source has ref: {name}"));
    };
    if !multi {
        return Err(format!("value file {path} uses a $ref outside spec.sources"));
    }
    let resolved = normalize(rel).ok_or_else(|| format!("value file {path} climbs out of its repository"))?;
    let repo = source.str_at(&["repoURL"]).unwrap_or("?");
    match tree.texts.get(&resolved) {
        Some(text) => {
            notes.push(format!("${name} ({repo}) is taken to be this tree: {path} read from {resolved}"));
            Ok(Some((resolved, text)))
        }
        None => Err(format!("value file {path} ({repo}) is not at {resolved} in this tree: its values are unknown ({at})")),
    }
}

fn options(doc: &Doc, helm: Option<&Node>) -> BTreeMap<String, EngineOption> {
    let mut out = BTreeMap::new();
    let list = doc.node.path(&["spec", "syncPolicy", "syncOptions"]);
    for item in list.map(|n| n.items()).unwrap_or(&[]) {
        if let Some((k, v)) = item.text().and_then(|t| t.split_once('=')) {
            out.insert(format!("syncOptions.{k}"), EngineOption::set(v, doc.loc(item.at)));
        }
    }
    for name in SYNC_OPTIONS {
        out.entry(format!("syncOptions.{name}")).or_insert_with(|| EngineOption::default("false"));
    }
    if let Some(auto) = doc.node.path(&["spec", "syncPolicy", "automated"]) {
        out.insert("syncPolicy.automated".into(), EngineOption::set("true", doc.loc(auto.at)));
        for k in ["prune", "selfHeal"] {
            let opt = match auto.get(k).and_then(|n| n.text().map(|t| (t, n.at))) {
                Some((v, at)) => EngineOption::set(v, doc.loc(at)),
                None => EngineOption::default("false"),
            };
            out.insert(format!("syncPolicy.automated.{k}"), opt);
        }
    } else {
        out.insert("syncPolicy.automated".into(), EngineOption::default("false"));
    }
    ignore_differences(doc, &mut out);
    for k in ["skipCrds", "skipSchemaValidation", "skipTests"] {
        let opt = match helm.and_then(|h| h.get(k)).and_then(|n| n.text().map(|t| (t, n.at))) {
            Some((v, at)) => EngineOption::set(v, doc.loc(at)),
            None => EngineOption::default("false"),
        };
        out.insert(format!("helm.{k}"), opt);
    }
    out
}

/// `spec.ignoreDifferences` (argo-cd v3.5.1 docs/user-guide/diffing.md, "Application Level
/// Configuration"): the paths each entry leaves out of the diff, as option
/// `ignoreDifferences.<group>/<kind>[/<name>]` whose value lists its `jqPathExpressions` and
/// `jsonPointers` (then `managedFieldsManagers=<m>`), as [`crate::engine::EngineContext::ignored_paths`] reads
/// them. Nothing is listed when the Application has none.
fn ignore_differences(doc: &Doc, out: &mut BTreeMap<String, EngineOption>) {
    let entries = doc.node.path(&["spec", "ignoreDifferences"]).map(|n| n.items()).unwrap_or(&[]);
    for entry in entries {
        let field = |k: &str| entry.str_at(&[k]).unwrap_or("");
        let mut key = format!("{IGNORE_DIFFERENCES}{}/{}", field("group"), field("kind"));
        if !field("name").is_empty() {
            key.push('/');
            key.push_str(field("name"));
        }
        let list = |k: &str| -> Vec<String> {
            entry.get(k).map(|n| n.items()).unwrap_or(&[]).iter().filter_map(|n| n.text()).map(str::to_string).collect()
        };
        let mut paths = list("jqPathExpressions");
        paths.extend(list("jsonPointers"));
        paths.extend(list("managedFieldsManagers").into_iter().map(|m| format!("managedFieldsManagers={m}")));
        if paths.is_empty() {
            continue;
        }
        let option = out.entry(key).or_insert_with(|| EngineOption::set("", doc.loc(entry.at)));
        for path in paths {
            if !option.value.is_empty() {
                option.value.push_str(PATH_SEPARATOR);
            }
            option.value.push_str(&path);
        }
    }
}

/// The Argo CD version the tree installs, from an `argocd` image tag, a kustomize `images`
/// entry, or a remote manifests reference pinned to a tag.
pub fn version(tree: &Tree, found: &mut Found) {
    let patterns = [
        r"argoproj/argocd:v(\d+\.\d+\.\d+)",
        r"argoproj/argo-cd/+manifests/[^\s?]*\?ref=v(\d+\.\d+\.\d+)",
        r"argoproj/argo-cd/v(\d+\.\d+\.\d+)/manifests/",
    ];
    let regexes: Vec<regex::Regex> = patterns.iter().filter_map(|p| regex::Regex::new(p).ok()).collect();
    let mut seen: BTreeMap<String, Location> = BTreeMap::new();
    for (file, text) in &tree.texts {
        for re in &regexes {
            for caps in re.captures_iter(text) {
                if let (Some(whole), Some(v)) = (caps.get(0), caps.get(1)) {
                    let line = text[..whole.start()].matches('\n').count() as u32 + 1;
                    seen.entry(v.as_str().to_string()).or_insert(Location { file: file.clone(), line, column: 1 });
                }
            }
        }
    }
    for doc in tree.docs.iter().filter(|d| super::kustomize::is_kustomization(d)) {
        for image in doc.node.get("images").map(|n| n.items()).unwrap_or(&[]) {
            let named = image.str_at(&["name"]).is_some_and(|n| n.ends_with("argoproj/argocd"));
            if let (true, Some(tag)) = (named, image.get("newTag")) {
                if let Some(v) = tag.text().and_then(|t| t.strip_prefix('v')) {
                    seen.insert(v.to_string(), doc.loc(tag.at));
                }
            }
        }
    }
    match seen.len() {
        0 => {}
        1 => {
            if let Some((v, at)) = seen.into_iter().next() {
                found.argocd_version = Some(v);
                found.argocd_version_at = Some(at);
            }
        }
        _ => {
            let list: Vec<String> = seen.iter().map(|(v, at)| format!("{v} ({at})")).collect();
            found.problems.push(Problem {
                message: format!("the tree names several Argo CD versions: {}; the version is taken as unknown", list.join(", ")),
                at: None,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::gitops::scan_texts;

    const APP: &str = "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: t, namespace: argocd}\nspec:\n  source:\n    repoURL: oci://ghcr.io/kubeflow/charts/kubeflow-trainer\n    path: .\n    targetRevision: 2.3.0\n    helm:\n      valueFiles: [values-prod.yaml]\n      values: 'a: 1'\n      valuesObject: {b: 2}\n      parameters:\n        - {name: c, value: 'true', forceString: true}\n        - {name: c, value: 'false'}\n        - {name: d, value: '1'}\n        - {name: d, value: '2'}\n  destination: {namespace: kf}\n";

    #[test]
    fn precedence_of_values_object_and_parameters() {
        let scan = scan_texts(&[("app.yaml", APP)]);
        let r = &scan.references[0];
        assert_eq!(r.repository.as_deref(), Some("oci://ghcr.io/kubeflow/charts/kubeflow-trainer"));
        // valuesObject replaces values; a repeated parameter keeps its last value; --set-string
        // comes after --set.
        assert_eq!(r.values, serde_json::json!({"b": 2, "c": "true", "d": 2}));
        assert!(r.notes.iter().any(|n| n.contains("helm.values is ignored")));
        assert!(r.notes.iter().any(|n| n.contains("3.1")));
        assert!(r.problems.iter().any(|p| p.message.contains("inside the chart package")), "{:?}", r.problems);
        assert_eq!(r.release_name.as_deref(), Some("t"));
        assert_eq!(r.release_namespace.as_deref(), Some("kf"));
    }

    #[test]
    fn ignore_differences_are_kept_per_group_and_kind() {
        let app = APP.replace(
            "  destination: {namespace: kf}\n",
            "  destination: {namespace: kf}\n  ignoreDifferences:\n    - group: admissionregistration.k8s.io\n      kind: MutatingWebhookConfiguration\n      jqPathExpressions: ['.webhooks[]?.clientConfig.caBundle']\n    - {group: apps, kind: Deployment, name: web, jsonPointers: [/spec/replicas, /spec/x]}\n    - {group: apps, kind: Deployment, name: web, managedFieldsManagers: [kube-controller-manager]}\n    - {group: apps, kind: StatefulSet}\n",
        );
        let scan = scan_texts(&[("app.yaml", &app)]);
        let options = &scan.references[0].options;
        assert_eq!(
            options["ignoreDifferences.admissionregistration.k8s.io/MutatingWebhookConfiguration"].value,
            ".webhooks[]?.clientConfig.caBundle"
        );
        assert_eq!(
            options["ignoreDifferences.apps/Deployment/web"].value,
            "/spec/replicas; /spec/x; managedFieldsManagers=kube-controller-manager"
        );
        assert!(!options.contains_key("ignoreDifferences.apps/StatefulSet"), "an entry without paths ignores nothing");
        let plain = scan_texts(&[("app.yaml", APP)]);
        assert!(!plain.references[0].options.keys().any(|k| k.starts_with("ignoreDifferences.")));
    }

    #[test]
    fn several_argocd_versions_are_a_problem() {
        let scan = scan_texts(&[
            ("a.yaml", "image: quay.io/argoproj/argocd:v2.14.1\n"),
            ("b/kustomization.yaml", "resources:\n  - github.com/argoproj/argo-cd/manifests/cluster-install?ref=v3.0.0\n"),
        ]);
        assert_eq!(scan.argocd_version, None);
        assert!(scan.problems.iter().any(|p| p.message.contains("2.14.1") && p.message.contains("3.0.0")));
    }
}
