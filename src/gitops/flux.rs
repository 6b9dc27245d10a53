//! Flux `HelmRelease` (helm.toolkit.fluxcd.io v2; v2beta1/v2beta2 read with v2's meaning and a
//! note) and the sources it names: `spec.chart.spec` with a `HelmRepository` (type `oci`, or an
//! HTTPS index we name but do not read) or `spec.chartRef` to an `OCIRepository` or a
//! `HelmChart`. Values follow helm-controller (fluxcd/pkg chartutil `ChartValuesFromReferences`,
//! used by helm-controller v1.6.3): `valuesFrom` merged in order, `spec.values` on top, and a
//! `targetPath` value winning over both. Defaults from helm-controller v1.6.3
//! api/v2/helmrelease_types.go: `install.crds` Create, `upgrade.crds` Skip, drift detection
//! disabled, upgrade remediation strategy rollback; the release name is
//! `[<targetNamespace>-]<name>`, shortened past 53 characters (internal/release/name.go).

use sha2::{Digest, Sha256};

use super::model::{EngineOption, Ignored, Location, ObjectKey, Problem, Reference, VersionKind};
use super::postbuild::{data_of, Applied};
use super::tree::{Doc, Tree};
use super::values::{Placement, Values};
use super::{classify, is_trainer, Found};
use crate::engine::Engine;

pub const GROUP: &str = "helm.toolkit.fluxcd.io";
pub use super::envsubst::REDACTED;
const SOURCE_GROUP: &str = "source.toolkit.fluxcd.io";

/// Where the chart comes from, as far as the tree tells.
struct Chart {
    chart: String,
    repository: Option<String>,
    written: Option<String>,
    version: Option<String>,
    version_at: Location,
    kind: VersionKind,
    digest: Option<String>,
    /// The document and position of the version scalar, to trace a substituted variable.
    version_pos: Option<(usize, super::yaml::Pos)>,
}

pub fn read(tree: &Tree, applied: &Applied, found: &mut Found) {
    for (index, doc) in tree.docs.iter().enumerate() {
        if !doc.is(GROUP, "HelmRelease") {
            continue;
        }
        let mut touched = vec![index];
        let mut problems = Vec::new();
        let mut notes = Vec::new();
        if doc.version() != "v2" {
            notes.push(format!(
                "{} is a deprecated API version; its fields are read with helm.toolkit.fluxcd.io/v2 meanings",
                doc.api_version
            ));
        }
        let Some(mut chart) = chart(tree, index, doc, &mut touched, &mut problems, &mut notes) else { continue };
        if let Some((name, at)) = chart.version_pos.and_then(|(i, pos)| applied.definition(i, pos)) {
            notes.push(format!("the version comes from ${{{name}}} (Flux post-build substitution) written at {at}"));
            chart.version_at = at.clone();
        }
        let key = ObjectKey { kind: "HelmRelease".into(), namespace: doc.namespace.clone(), name: doc.name.clone() };
        if !is_trainer(&chart.chart, chart.repository.as_deref().or(chart.written.as_deref())) {
            found.ignored.push(Ignored { engine: Engine::Flux, object: key, chart: chart.chart, at: doc.loc(doc.node.at) });
            continue;
        }
        let values = values(tree, doc, &mut touched, &mut problems);
        for i in touched {
            problems.extend(applied.problems_of(i).cloned());
        }
        problems.sort();
        problems.dedup();
        let target_ns = doc.node.str_at(&["spec", "targetNamespace"]);
        let release = doc.node.str_at(&["spec", "releaseName"]).map(str::to_string).unwrap_or_else(|| match target_ns {
            Some(ns) => format!("{ns}-{}", doc.name),
            None => doc.name.clone(),
        });
        found.references.push(Reference {
            engine: Engine::Flux,
            object: key,
            at: doc.loc(doc.node.at),
            repository: chart.repository,
            repository_written: chart.written,
            chart: chart.chart,
            version: chart.version,
            version_kind: chart.kind,
            version_at: chart.version_at,
            digest: chart.digest,
            release_name: Some(shorten(&release)),
            release_namespace: target_ns.map(str::to_string).or_else(|| doc.namespace.clone()),
            value_origins: values.origins.clone(),
            value_locations: values.leaves.clone(),
            values: values.to_json(),
            options: options(doc),
            problems,
            notes,
        });
    }
}

fn chart(
    tree: &Tree,
    index: usize,
    doc: &Doc,
    touched: &mut Vec<usize>,
    problems: &mut Vec<Problem>,
    notes: &mut Vec<String>,
) -> Option<Chart> {
    if let Some(spec) = doc.node.path(&["spec", "chart", "spec"]) {
        let chart = spec.str_at(&["chart"]).unwrap_or("").to_string();
        let version_pos = spec.get("version").map(|v| (index, v.at));
        let (version, version_kind, version_at) = match spec.get("version").and_then(|v| v.text().map(|t| (t, v.at))) {
            Some((v, at)) => (Some(v.to_string()), classify(v, &doc.loc(at), problems), doc.loc(at)),
            None => (None, VersionKind::Latest, doc.loc_of(&["spec", "chart", "spec", "chart"])),
        };
        if spec.get("valuesFiles").is_some() {
            notes.push("spec.chart.spec.valuesFiles are read from inside the chart package: not included in the values here".into());
        }
        let kind = spec.str_at(&["sourceRef", "kind"]).unwrap_or("HelmRepository");
        let name = spec.str_at(&["sourceRef", "name"]).unwrap_or("");
        let ns = spec.str_at(&["sourceRef", "namespace"]).or(doc.namespace.as_deref());
        let (repository, written) = helm_repository(tree, doc, kind, name, ns, &chart, touched, problems);
        return Some(Chart { chart, repository, written, version, version_at, kind: version_kind, digest: None, version_pos });
    }
    let chart_ref = doc.node.path(&["spec", "chartRef"])?;
    let kind = chart_ref.str_at(&["kind"]).unwrap_or("");
    let name = chart_ref.str_at(&["name"]).unwrap_or("");
    let ns = chart_ref.str_at(&["namespace"]).or(doc.namespace.as_deref());
    let ref_at = doc.loc(chart_ref.at);
    let Some((source_index, source)) = find(tree, kind, name, ns) else {
        problems.push(Problem::at(
            format!("spec.chartRef names {kind} {name}, which is not in this tree: chart and version unknown"),
            ref_at.clone(),
        ));
        return Some(Chart {
            chart: name.to_string(),
            repository: None,
            written: None,
            version: None,
            version_at: ref_at,
            kind: VersionKind::Latest,
            digest: None,
            version_pos: None,
        });
    };
    touched.push(source_index);
    match kind {
        "OCIRepository" => Some(oci_repository(source_index, source, problems)),
        "HelmChart" => {
            let spec = source.node.get("spec")?;
            let chart = spec.str_at(&["chart"]).unwrap_or("").to_string();
            let version_pos = spec.get("version").map(|v| (source_index, v.at));
            let (version, kind, version_at) = match spec.get("version").and_then(|v| v.text().map(|t| (t, v.at))) {
                Some((v, at)) => (Some(v.to_string()), classify(v, &source.loc(at), problems), source.loc(at)),
                None => (None, VersionKind::Latest, source.loc(spec.at)),
            };
            let src_kind = spec.str_at(&["sourceRef", "kind"]).unwrap_or("HelmRepository");
            let src_name = spec.str_at(&["sourceRef", "name"]).unwrap_or("");
            let (repository, written) =
                helm_repository(tree, source, src_kind, src_name, source.namespace.as_deref(), &chart, touched, problems);
            Some(Chart { chart, repository, written, version, version_at, kind, digest: None, version_pos })
        }
        other => {
            problems.push(Problem::at(
                format!("spec.chartRef kind {other} is not read by trainer-audit (OCIRepository and HelmChart are)"),
                ref_at,
            ));
            None
        }
    }
}

fn find<'a>(tree: &'a Tree, kind: &str, name: &str, ns: Option<&str>) -> Option<(usize, &'a Doc)> {
    let doc = tree.find(SOURCE_GROUP, kind, name, ns)?;
    let index = tree.docs.iter().position(|d| std::ptr::eq(d, doc))?;
    Some((index, doc))
}

/// The chart's OCI reference from a `HelmRepository` (type `oci`); an HTTPS index is named only.
#[allow(clippy::too_many_arguments)]
fn helm_repository(
    tree: &Tree,
    doc: &Doc,
    kind: &str,
    name: &str,
    ns: Option<&str>,
    chart: &str,
    touched: &mut Vec<usize>,
    problems: &mut Vec<Problem>,
) -> (Option<String>, Option<String>) {
    let at = doc.loc_of(&["spec", "chart", "spec", "sourceRef"]);
    if kind != "HelmRepository" {
        problems.push(Problem::at(format!("the chart comes from {kind} {name}: charts in Git or bucket sources are not read"), at));
        return (None, Some(format!("{kind}/{name}")));
    }
    let Some((index, repo)) = find(tree, kind, name, ns) else {
        problems.push(Problem::at(format!("HelmRepository {name} is not in this tree: the chart's repository is unknown"), at));
        return (None, None);
    };
    touched.push(index);
    let url = repo.node.str_at(&["spec", "url"]).unwrap_or("").trim_end_matches('/').to_string();
    let oci = repo.node.str_at(&["spec", "type"]) == Some("oci") || url.starts_with("oci://");
    if oci {
        let reference = format!("{url}/{chart}");
        check_reference(&reference, &repo.loc_of(&["spec", "url"]), problems);
        (Some(reference), None)
    } else {
        problems.push(Problem::at(
            format!("HelmRepository {name} is an HTTPS chart index ({url}): trainer-audit reads OCI repositories only (Trainer publishes oci://ghcr.io/kubeflow/charts/kubeflow-trainer)"),
            repo.loc_of(&["spec", "url"]),
        ));
        (None, Some(url))
    }
}

fn check_reference(reference: &str, at: &Location, problems: &mut Vec<Problem>) {
    if let Err(e) = chart_source::reference::OciRef::parse(reference) {
        problems.push(Problem::at(e.to_string(), at.clone()));
    }
}

/// `spec.ref`: digest over semver over tag; `latest` when none (source-controller v1.9.1 docs).
fn oci_repository(index: usize, source: &Doc, problems: &mut Vec<Problem>) -> Chart {
    let url = source.node.str_at(&["spec", "url"]).unwrap_or("").trim_end_matches('/').to_string();
    check_reference(&url, &source.loc_of(&["spec", "url"]), problems);
    let chart = url.rsplit('/').next().unwrap_or("").to_string();
    let field = |k: &str| source.node.path(&["spec", "ref", k]).and_then(|n| n.text().map(|t| (t.to_string(), source.loc(n.at))));
    let version_pos = ["digest", "semver", "tag"].iter().find_map(|k| source.node.path(&["spec", "ref", k])).map(|n| (index, n.at));
    let (version, kind, version_at, digest) = if let Some((d, at)) = field("digest") {
        (None, VersionKind::Digest, at, Some(d))
    } else if let Some((s, at)) = field("semver") {
        let kind = classify(&s, &at, problems);
        (Some(s), if kind == VersionKind::Exact { VersionKind::Exact } else { VersionKind::Range }, at, None)
    } else if let Some((t, at)) = field("tag") {
        (Some(t), VersionKind::Exact, at, None)
    } else {
        (Some("latest".into()), VersionKind::Latest, source.loc(source.node.at), None)
    };
    Chart { chart, repository: Some(url), written: None, version, version_at, kind, digest, version_pos }
}

/// `valuesFrom` in order, `spec.values` on top, `targetPath` values re-applied last.
fn values(tree: &Tree, doc: &Doc, touched: &mut Vec<usize>, problems: &mut Vec<Problem>) -> Values {
    let mut values = Values::default();
    let mut target_paths: Vec<(String, bool, Location)> = Vec::new();
    for item in doc.node.path(&["spec", "valuesFrom"]).map(|n| n.items()).unwrap_or(&[]) {
        let at = doc.loc(item.at);
        let kind = item.str_at(&["kind"]).unwrap_or("");
        let name = item.str_at(&["name"]).unwrap_or("");
        let key = item.str_at(&["valuesKey"]).unwrap_or("values.yaml");
        let optional = item.bool_at(&["optional"]).unwrap_or(false);
        let target = item.str_at(&["targetPath"]);
        if kind != "ConfigMap" && kind != "Secret" {
            problems.push(Problem::at(format!("valuesFrom kind {kind:?} is not ConfigMap or Secret: helm-controller refuses it"), at));
            continue;
        }
        let Some((text, place)) = values_source(tree, doc, kind, name, key, touched) else {
            let generated = super::kustomize::generated(tree, kind, name).is_some();
            if generated {
                problems.push(Problem::at(
                    format!("valuesFrom {kind} {name} (generated by kustomize) has no key {key:?} that trainer-audit can read"),
                    at,
                ));
            } else if tree.find("", kind, name, doc.namespace.as_deref()).is_some() {
                if !optional {
                    problems
                        .push(Problem::at(format!("valuesFrom {kind} {name} has no key {key:?}: helm-controller fails the release"), at));
                }
            } else if !optional {
                problems.push(Problem::at(format!("valuesFrom {kind} {name} is not in this tree: the values it holds are unknown"), at));
            }
            continue;
        };
        match target {
            Some(path) => {
                // helm-controller hands `path=value` to Helm's strvals (quoted values as strings).
                let quoted =
                    text.len() >= 2 && ((text.starts_with('"') && text.ends_with('"')) || (text.starts_with('\'') && text.ends_with('\'')));
                let value = if kind == "Secret" {
                    REDACTED
                } else if quoted {
                    text.trim_matches(['"', '\''])
                } else {
                    text.as_str()
                };
                let assignment = format!("{path}={value}");
                if let Err(e) = values.set(&assignment, quoted, &place.at) {
                    problems.push(Problem::at(format!("valuesFrom {kind} {name} targetPath {path}: {e}"), at.clone()));
                }
                target_paths.push((assignment, quoted, place.at.clone()));
            }
            None => {
                let mut these = Values::default();
                match these.merge_text(&text, &place) {
                    Ok(()) if kind == "Secret" => values.merge_values(these.redacted(REDACTED)),
                    Ok(()) => values.merge_values(these),
                    Err(e) => problems.push(Problem::at(format!("valuesFrom {kind} {name} key {key}: {e}"), place.at.clone())),
                }
            }
        }
    }
    if let Some(inline) = doc.node.path(&["spec", "values"]) {
        values.merge_node(inline, &doc.file);
    }
    for (assignment, quoted, at) in target_paths {
        let _ = values.set(&assignment, quoted, &at);
    }
    values
}

/// The text under `key` of the ConfigMap/Secret `name`, from the tree or a kustomize generator,
/// and where it is written.
fn values_source(tree: &Tree, doc: &Doc, kind: &str, name: &str, key: &str, touched: &mut Vec<usize>) -> Option<(String, Placement)> {
    if let Some(obj) = tree.find("", kind, name, doc.namespace.as_deref()) {
        if let Some(i) = tree.docs.iter().position(|d| std::ptr::eq(d, obj)) {
            touched.push(i);
        }
        let text = data_of(obj).remove(key)?;
        let field = if obj.kind == "Secret" && obj.node.path(&["stringData", key]).is_some() { "stringData" } else { "data" };
        let node = obj.node.path(&[field, key]);
        let at = node.map(|n| obj.loc(n.at)).unwrap_or_else(|| obj.loc(obj.node.at));
        // Base64 data has no lines to map; a block scalar does.
        let place = match node.filter(|_| field == "stringData" || obj.kind == "ConfigMap") {
            Some(n) => Placement::scalar(&obj.file, tree.texts.get(&obj.file).map(String::as_str), n),
            None => Placement { file: obj.file.clone(), offset: None, at },
        };
        return Some((text, place));
    }
    super::kustomize::generated(tree, kind, name)?.data.remove(key)
}

fn options(doc: &Doc) -> std::collections::BTreeMap<String, EngineOption> {
    let mut out = std::collections::BTreeMap::new();
    let mut opt = |name: &str, path: &[&str], default: Option<&str>| {
        let mut full = vec!["spec"];
        full.extend_from_slice(path);
        match doc.node.path(&full).and_then(|n| n.text().map(|t| (t.to_string(), n.at))) {
            Some((value, at)) => {
                out.insert(name.to_string(), EngineOption::set(value, doc.loc(at)));
            }
            None => {
                if let Some(d) = default {
                    out.insert(name.to_string(), EngineOption::default(d));
                }
            }
        }
    };
    let skip_crds = doc.node.bool_at(&["spec", "install", "skipCRDs"]) == Some(true);
    opt("install.crds", &["install", "crds"], Some(if skip_crds { "Skip" } else { "Create" }));
    opt("upgrade.crds", &["upgrade", "crds"], Some("Skip"));
    opt("install.disableHooks", &["install", "disableHooks"], Some("false"));
    opt("upgrade.disableHooks", &["upgrade", "disableHooks"], Some("false"));
    opt("install.disableTakeOwnership", &["install", "disableTakeOwnership"], None);
    opt("upgrade.disableTakeOwnership", &["upgrade", "disableTakeOwnership"], None);
    opt("install.serverSideApply", &["install", "serverSideApply"], None);
    opt("upgrade.serverSideApply", &["upgrade", "serverSideApply"], None);
    opt("install.remediation.retries", &["install", "remediation", "retries"], Some("0"));
    opt("upgrade.remediation.retries", &["upgrade", "remediation", "retries"], Some("0"));
    opt("upgrade.remediation.strategy", &["upgrade", "remediation", "strategy"], Some("rollback"));
    opt("upgrade.force", &["upgrade", "force"], None);
    opt("driftDetection.mode", &["driftDetection", "mode"], Some("disabled"));
    opt("storageNamespace", &["storageNamespace"], None);
    if !out.contains_key("storageNamespace") {
        if let Some(ns) = &doc.namespace {
            out.insert("storageNamespace".into(), EngineOption::default(ns.clone()));
        }
    }
    out
}

/// helm-controller's `ShortenName`: past 53 characters, the first 40, a dash and 12 hex
/// characters of the SHA-256 of the whole name.
pub fn shorten(name: &str) -> String {
    if name.len() <= 53 {
        return name.to_string();
    }
    let hex: String = Sha256::digest(name.as_bytes()).iter().map(|b| format!("{b:02x}")).collect();
    let cut: String = name.chars().take(40).collect();
    format!("{cut}-{}", &hex[..12])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gitops::scan_texts;

    const HR: &str = "apiVersion: helm.toolkit.fluxcd.io/v2beta2\nkind: HelmRelease\nmetadata: {name: t, namespace: ns}\nspec:\n  chart:\n    spec:\n      chart: kubeflow-trainer\n      version: '>=2.2.0 <2.4.0'\n      sourceRef: {kind: HelmRepository, name: kf}\n  valuesFrom:\n    - kind: Secret\n      name: creds\n    - kind: ConfigMap\n      name: absent\n      optional: true\n    - kind: ConfigMap\n      name: gone\n";

    #[test]
    fn https_repositories_ranges_secrets_and_missing_references() {
        let scan = scan_texts(&[
            ("hr.yaml", HR),
            ("repo.yaml", "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata: {name: kf, namespace: ns}\nspec: {url: https://charts.example.com}\n"),
            ("secret.yaml", "apiVersion: v1\nkind: Secret\nmetadata: {name: creds, namespace: ns}\nstringData:\n  values.yaml: |\n    token: s3cret\n"),
        ]);
        let r = &scan.references[0];
        assert_eq!(r.version_kind, VersionKind::Range);
        assert_eq!(r.repository, None);
        assert_eq!(r.repository_written.as_deref(), Some("https://charts.example.com"));
        assert!(r.notes.iter().any(|n| n.contains("v2beta2")));
        // Secret content never reaches the output; its shape does.
        assert_eq!(r.values, serde_json::json!({"token": REDACTED}));
        assert!(!serde_json::to_string(&scan).unwrap().contains("s3cret"));
        let messages: Vec<&str> = r.problems.iter().map(|p| p.message.as_str()).collect();
        assert!(messages.iter().any(|m| m.contains("HTTPS chart index")), "{messages:?}");
        assert!(messages.iter().any(|m| m.contains("ConfigMap gone is not in this tree")), "{messages:?}");
        assert!(!messages.iter().any(|m| m.contains("absent")), "{messages:?}");
        assert_eq!(r.release_name.as_deref(), Some("t"));
        assert_eq!(r.options["install.crds"], EngineOption::default("Create"));
    }

    #[test]
    fn target_path_values_win_over_inline_values() {
        let hr = "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: t, namespace: ns}\nspec:\n  targetNamespace: kf\n  chartRef: {kind: OCIRepository, name: oci}\n  valuesFrom:\n    - {kind: ConfigMap, name: cm, valuesKey: tag, targetPath: image.tag}\n  values:\n    image: {tag: inline, pull: Always}\n";
        let scan = scan_texts(&[
            ("hr.yaml", hr),
            ("oci.yaml", "apiVersion: source.toolkit.fluxcd.io/v1\nkind: OCIRepository\nmetadata: {name: oci, namespace: ns}\nspec:\n  url: oci://ghcr.io/kubeflow/charts/kubeflow-trainer\n  ref: {semver: '2.3.x', digest: 'sha256:aaaa'}\n"),
            ("cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm, namespace: ns}\ndata: {tag: v2.3.0}\n"),
        ]);
        let r = &scan.references[0];
        assert_eq!(r.values, serde_json::json!({"image": {"tag": "v2.3.0", "pull": "Always"}}));
        assert_eq!(r.version_kind, VersionKind::Digest);
        assert_eq!(r.digest.as_deref(), Some("sha256:aaaa"));
        assert_eq!(r.release_name.as_deref(), Some("kf-t"));
        assert_eq!(r.release_namespace.as_deref(), Some("kf"));
    }

    #[test]
    fn long_release_names_are_shortened_as_helm_controller_does() {
        // The cases of helm-controller v1.6.3 internal/release/name_test.go.
        assert_eq!(
            shorten("release-name-with-very-long-name-which-is-longer-than-53-characters"),
            "release-name-with-very-long-name-which-i-788ca0d0d7b0"
        );
        assert_eq!(
            shorten("another-release-name-with-very-long-name-which-is-longer-than-53-characters"),
            "another-release-name-with-very-long-name-7e72150d5a36"
        );
        assert_eq!(shorten("trainer"), "trainer");
    }
}
