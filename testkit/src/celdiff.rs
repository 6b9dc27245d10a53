//! The differential of trainer-audit's CRD-write verdict against the API server's own: the
//! JSON `crdcel` prints (the CRD validation of one Kubernetes version run in process:
//! `tests/controlplane/cmd/crdcel`) read back and compared, rule by rule (estimated cost, its
//! factors, whether it compiles) and write by write (create, unchanged re-apply, changed
//! re-apply, upgrade from an earlier file's CRD: the refusal messages).

use std::collections::BTreeMap;

use kube_validate::crd_write::{self, CrdWrite, IssueKind};
use kube_validate::Validator;
use kube_version::KubeVersion;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct Report {
    pub kubernetes: String,
    pub compatibility: String,
    pub crds: Vec<CrdReport>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CrdReport {
    pub file: String,
    pub name: String,
    pub versions: Vec<VersionReport>,
    pub create: Vec<String>,
    pub reapply_unchanged: Vec<String>,
    pub reapply_changed: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upgrade_from: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upgrade: Option<Vec<String>>,
    /// A real server's answer to the unchanged re-apply sent as a server-side apply (what Helm 4
    /// sends by default), when observed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reapply_server_side: Option<Vec<String>>,
    /// A real server refused the create, so nothing was stored to re-apply over: the re-applies
    /// were not attempted (`crdcel` judges them over the CRD as if it were stored).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub not_stored: bool,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct VersionReport {
    pub name: String,
    pub rules: Vec<RuleReport>,
    pub total: u64,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RuleReport {
    pub path: String,
    pub rule: String,
    pub max_cost: u64,
    pub cardinality: u64,
    pub cost: u64,
    #[serde(default, rename = "messageExpressionCost")]
    pub message_cost: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// How a recorded report names a rule: a digest of its text (recordings keep no third-party
/// rule text).
pub fn rule_key(rule: &str) -> String {
    let digest = Sha256::digest(rule.as_bytes());
    let hex: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// A server message with the rule text it may quote left out (`Invalid value: …` becomes
/// `Invalid value: (rule)`): what a recording keeps.
fn redact_message(m: &str) -> String {
    match m.find(": Invalid value: ") {
        Some(at) => format!("{}: Invalid value: (rule)", &m[..at]),
        None => match m.find(": Required value: ") {
            Some(at) => format!("{}: Required value: (rule)", &m[..at]),
            None => m.to_string(),
        },
    }
}

/// The report as a recording keeps it: rules by [`rule_key`], errors and messages without the
/// rule texts they quote.
pub fn redacted(mut report: Report) -> Report {
    for c in &mut report.crds {
        for v in &mut c.versions {
            for r in &mut v.rules {
                r.rule = rule_key(&r.rule);
                if r.error.is_some() {
                    r.error = Some("does not compile".into());
                }
            }
        }
        for list in [&mut c.create, &mut c.reapply_unchanged, &mut c.reapply_changed] {
            *list = list.iter().map(|m| redact_message(m)).collect();
        }
        for list in [&mut c.upgrade, &mut c.reapply_server_side].into_iter().flatten() {
            *list = list.iter().map(|m| redact_message(m)).collect();
        }
    }
    report
}

/// The generated CEL corpus, by the file names the differential gives `crdcel`.
pub fn generated() -> Vec<(String, Value)> {
    crate::celcorpus::crds()
        .into_iter()
        .map(|c| (format!("generated/{}.json", c["metadata"]["name"].as_str().unwrap_or("crd")), c))
        .collect()
}

/// The CRDs every corpus chart renders (templates and `crds/`, default values), charts in
/// version order, as `corpus/<chart>/<crd>.json`.
pub fn corpus_crds(corpus: &std::path::Path) -> Result<Vec<(String, Value)>, String> {
    let dir = corpus.join("charts");
    let mut charts: Vec<std::path::PathBuf> = std::fs::read_dir(&dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "tgz"))
        .collect();
    charts.sort_by_key(|p| {
        let name = p.file_stem().and_then(|s| s.to_str()).unwrap_or("").trim_start_matches("kubeflow-trainer-").to_string();
        semver::Version::parse(&name).ok()
    });
    let mut out = Vec::new();
    for chart in charts {
        let request = trainer_audit::upgrade::Request { chart: Some(chart.display().to_string()), ..Default::default() };
        let crds = trainer_audit::upgrade::crds::chart_crds(&request).map_err(|e| format!("{}: {e}", chart.display()))?;
        let stem = chart.file_stem().and_then(|s| s.to_str()).unwrap_or("chart").to_string();
        for crd in crds.crds {
            let name = crd["metadata"]["name"].as_str().unwrap_or("crd").to_string();
            out.push((format!("corpus/{stem}/{name}.json"), crd));
        }
    }
    Ok(out)
}

/// What the comparison found.
#[derive(Debug, Default)]
pub struct Comparison {
    /// Rules compared, and those whose estimate (or compile verdict) agreed.
    pub rules: usize,
    pub rules_agreed: usize,
    /// CRD writes compared (create, re-applies, upgrades), and those whose verdict agreed.
    pub writes: usize,
    pub writes_agreed: usize,
    pub disagreements: Vec<String>,
}

impl Comparison {
    pub fn summary(&self) -> String {
        format!(
            "{} of {} rule estimates agreed, {} of {} CRD write verdicts agreed",
            self.rules_agreed, self.rules, self.writes_agreed, self.writes
        )
    }
}

/// The CRD as `crdcel` changes it for the changed re-apply: every version's root description
/// edited (the schema differs, no rule does).
pub fn changed(crd: &Value) -> Value {
    let mut c = crd.clone();
    if let Some(versions) = c.pointer_mut("/spec/versions").and_then(Value::as_array_mut) {
        for v in versions {
            if let Some(root) = v.pointer_mut("/schema/openAPIV3Schema").and_then(Value::as_object_mut) {
                let d = root.get("description").and_then(Value::as_str).unwrap_or("").to_string();
                root.insert("description".into(), Value::String(format!("{d} (changed)")));
            }
        }
    }
    c
}

/// A server message's field path in trainer-audit's notation (`spec.a[*].b`, `<root>`) and
/// what it says: the cost messages word for word, any other rule error as `compile`.
pub fn normalise(message: &str) -> (String, String) {
    let (path, rest) = message.split_once(": ").unwrap_or((message, ""));
    let mut out = String::new();
    let tail = path.split_once("openAPIV3Schema").map_or("", |(_, t)| t);
    let mut rest_path = tail;
    while !rest_path.is_empty() {
        if let Some(r) = rest_path.strip_prefix(".properties[") {
            let end = r.find(']').unwrap_or(r.len());
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&r[..end]);
            rest_path = r.get(end + 1..).unwrap_or("");
        } else if let Some(r) = rest_path.strip_prefix(".items") {
            out.push_str("[*]");
            rest_path = r;
        } else if let Some(r) = rest_path.strip_prefix(".additionalProperties") {
            out.push_str("[*]");
            rest_path = r;
        } else {
            break;
        }
    }
    if out.is_empty() {
        out = "<root>".into();
    }
    let what = match rest.strip_prefix("Forbidden: ") {
        Some(m) => m.to_string(),
        None => "compile".to_string(),
    };
    (out, what)
}

fn ours(issues: &[crd_write::CrdIssue]) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = issues
        .iter()
        .map(|i| (i.path.clone(), if i.kind == IssueKind::Compile { "compile".to_string() } else { i.message.clone() }))
        .collect();
    v.sort();
    v.dedup_by(|a, b| a.1 == "compile" && a == b);
    v
}

fn theirs(messages: &[String]) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = messages.iter().map(|m| normalise(m)).collect();
    v.sort();
    v.dedup_by(|a, b| a.1 == "compile" && a == b);
    v
}

/// Compares `report` with trainer-audit on the CRDs it was made from (`files`: the file name
/// `crdcel` was given → the CRD).
pub fn compare(report: &Report, files: &BTreeMap<String, Value>) -> Comparison {
    let mut c = Comparison::default();
    let Ok(kube) = KubeVersion::parse(&report.kubernetes) else {
        c.disagreements.push(format!("crdcel reports Kubernetes {:?}", report.kubernetes));
        return c;
    };
    for r in &report.crds {
        let Some(crd) = files.get(&r.file) else {
            c.disagreements.push(format!("{}: not one of the CRDs given", r.file));
            continue;
        };
        for v in &r.versions {
            let Ok(validator) = Validator::from_crd(crd, Some(&v.name), kube.minor_version()) else {
                c.disagreements.push(format!("{} {}: trainer-audit cannot compile the version", r.name, v.name));
                continue;
            };
            let mut mine: BTreeMap<(String, String), Vec<kube_validate::cel::cost::RuleCost>> = BTreeMap::new();
            for (path, rule, cost) in crd_write::rule_costs(&validator) {
                mine.entry((path, rule)).or_default().push(cost);
            }
            let mut seen: BTreeMap<(String, String), usize> = BTreeMap::new();
            for g in &v.rules {
                c.rules += 1;
                let key = (g.path.clone(), g.rule.clone());
                let n = seen.entry(key.clone()).or_default();
                let ours = match mine.get(&key) {
                    Some(list) => list.get(*n).copied(),
                    // A recording names the rule by its digest.
                    None => {
                        mine.iter().find(|((p, r), _)| *p == g.path && rule_key(r) == g.rule).and_then(|(_, list)| list.get(*n).copied())
                    }
                };
                *n += 1;
                let at = format!("{} {} {} `{}`", r.name, v.name, g.path, g.rule);
                match (ours, &g.error) {
                    (None, _) => c.disagreements.push(format!("{at}: trainer-audit has no such rule")),
                    (Some(_), Some(_)) => c.rules_agreed += 1, // compile verdicts are compared below, per write
                    (Some(o), None) if !o.exact => c.disagreements.push(format!("{at}: trainer-audit's estimate is inexact")),
                    (Some(o), None)
                        if (o.max_cost, o.cardinality, o.cost, o.message_cost) == (g.max_cost, g.cardinality, g.cost, g.message_cost) =>
                    {
                        c.rules_agreed += 1
                    }
                    (Some(o), None) => c.disagreements.push(format!(
                        "{at}: cost {} = {} x {} (message {}), the server's {} = {} x {} (message {})",
                        o.cost, o.max_cost, o.cardinality, o.message_cost, g.cost, g.max_cost, g.cardinality, g.message_cost
                    )),
                }
            }
        }
        let edited = changed(crd);
        let mut writes: Vec<(&str, &Value, CrdWrite, &[String])> = vec![("create", crd, CrdWrite::Create, &r.create)];
        if !r.not_stored {
            writes.push(("unchanged re-apply", crd, CrdWrite::Update(crd), &r.reapply_unchanged));
            writes.push(("changed re-apply", &edited, CrdWrite::Update(crd), &r.reapply_changed));
        }
        let old = r.upgrade_from.as_ref().and_then(|f| files.get(f));
        if let (Some(old), Some(upgrade)) = (old, &r.upgrade) {
            writes.push(("upgrade", crd, CrdWrite::Update(old), upgrade));
        }
        if let Some(ssa) = &r.reapply_server_side {
            writes.push(("unchanged server-side apply", crd, CrdWrite::Update(crd), ssa));
        }
        for (what, new, write, server) in writes {
            c.writes += 1;
            let mine = match crd_write::issues(new, &kube, write) {
                Ok(i) => ours(&i),
                Err(e) => {
                    c.disagreements.push(format!("{} {what}: {e}", r.name));
                    continue;
                }
            };
            let theirs = theirs(server);
            if mine == theirs {
                c.writes_agreed += 1;
            } else {
                c.disagreements.push(format!("{} {what}: trainer-audit says {mine:?}, the server {theirs:?}", r.name));
            }
        }
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_paths_read_as_ours() {
        let m = "spec.validation.openAPIV3Schema.properties[spec].properties[display].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of 1.006634x (x)";
        assert_eq!(normalise(m), ("spec.display".into(), "estimated rule cost exceeds budget by factor of 1.006634x (x)".into()));
        let m = "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[l].items.additionalProperties.x-kubernetes-validations[2].rule: Invalid value: \"object\": compilation failed: ERROR";
        assert_eq!(normalise(m), ("spec.l[*][*]".into(), "compile".into()));
        let m = "spec.validation.openAPIV3Schema: Forbidden: x-kubernetes-validations estimated rule cost total";
        assert_eq!(normalise(m).0, "<root>");
    }
}
