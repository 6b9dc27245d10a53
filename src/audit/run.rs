//! Running rules: each rule that applies runs its kind, and every hit becomes a finding carrying
//! the rule's id, severity, title, source and filled-in fix (or those of the variant the hit
//! selects). `check`, `plan` and `runbook` run the upgrade rules; `hooks` runs the review rules
//! over one chart: one runner for both.

use std::collections::BTreeMap;

use super::finding::{sort_findings, with_restore_heads, Expected, Finding, FixLine};
use super::input::{ChartInput, CheckInput};
use super::kinds::Hit;
use super::rules::{Applicable, Rule, Scope, REGISTRY_FLAGS};
use kube_version::KubeVersion;

/// Findings of the upgrade rules that apply to this upgrade (`cluster`: the run has one; without,
/// only the rules whose kinds do not read it run).
pub fn run(rules: &[Rule], input: &CheckInput, cluster: bool) -> Vec<Finding> {
    let engine = input.engine();
    let mut vars: BTreeMap<String, String> = BTreeMap::new();
    vars.insert("release".into(), input.release_name.clone());
    vars.insert("namespace".into(), input.namespace.clone());
    vars.insert("from".into(), input.from.to_string());
    vars.insert("to".into(), input.to.to_string());
    vars.insert("repository".into(), input.repository.clone());
    vars.insert(REGISTRY_FLAGS.into(), input.registry_flags.clone());
    vars.insert("engine".into(), engine.as_str().to_string());
    vars.insert("unpack_chart".into(), unpack_chart(&input.repository, &input.registry_flags, &input.to, &input.target.chart.name));
    let untagged = super::citation::upgrade_notes(super::compat::get(), &input.from, &input.to);
    let (mut findings, mut if_upgrade_runs) = (Vec::new(), Vec::new());
    let when = Applicable { scope: Scope::Upgrade, versions: Some((&input.from, &input.to)), engine: Some(engine), cluster };
    for rule in rules.iter().filter(|r| r.applicable(&when)) {
        let Some(check) = &rule.check else { continue };
        for hit in check.check(input) {
            let to = if hit.if_upgrade_runs { &mut if_upgrade_runs } else { &mut findings };
            to.push(finding(rule, hit, &vars, input.state.kube_version(), &untagged));
        }
    }
    // At the installed version the plan runs the upgrade only when an error stands there: what
    // only that upgrade meets stands with it, and alone makes no upgrade to run.
    if findings.iter().any(|f| f.severity == super::finding::Severity::Error) {
        findings.extend(if_upgrade_runs);
    }
    sort_findings(&mut findings);
    findings
}

/// The command that unpacks the target chart into `trainer-audit-chart/<chart>/`: `helm pull
/// --untar` from a repository; for the local chart a run was given (`--chart`), which `helm pull`
/// cannot read, `tar` for an archive and `cp -R` for a directory, to the same layout.
fn unpack_chart(repository: &str, registry_flags: &str, to: &semver::Version, chart: &str) -> String {
    use crate::shell::quote;
    let local = std::path::Path::new(repository);
    if repository.starts_with("oci://") || !local.exists() {
        let to = to.to_string();
        format!(
            "{}{registry_flags} {}",
            crate::shell::join(["helm", "pull", repository]),
            crate::shell::join(["--version", &to, "--untar", "--untardir", "trainer-audit-chart"])
        )
    } else if local.is_dir() {
        format!("mkdir -p trainer-audit-chart && cp -R {} {}", quote(repository), quote(&format!("trainer-audit-chart/{chart}")))
    } else {
        format!("mkdir -p trainer-audit-chart && tar -xzf {} -C trainer-audit-chart", quote(repository))
    }
}

/// Findings of the review rules for one chart; `vars` names the release it is rendered as.
pub fn review(rules: &[Rule], chart: &ChartInput, vars: &BTreeMap<String, String>) -> Vec<Finding> {
    let untagged: Vec<String> = helm_render::version::parse_lenient(&chart.chart.chart.version)
        .and_then(|v| super::citation::untagged(super::compat::get(), "reviewed", &v))
        .into_iter()
        .collect();
    let mut findings = Vec::new();
    let when = Applicable { scope: Scope::Review, versions: None, engine: Some(chart.engine), cluster: true };
    for rule in rules.iter().filter(|r| r.applicable(&when)) {
        let Some(hits) = rule.check.as_ref().and_then(|c| c.review(chart)) else { continue };
        findings.extend(hits.into_iter().map(|hit| finding(rule, hit, vars, None, &untagged)));
    }
    sort_findings(&mut findings);
    findings
}

/// The hit as a finding; `kube` (the cluster's version, when known) picks the expected texts that
/// hold on it; `untagged` says which charts of the run are not Trainer release tags (their
/// Trainer citations are then the nearest tag's, and the source says so).
fn finding(rule: &Rule, hit: Hit, vars: &BTreeMap<String, String>, kube: Option<&KubeVersion>, untagged: &[String]) -> Finding {
    let variant = rule.variant(hit.variant);
    let mut vars = vars.clone();
    vars.extend(hit.vars);
    let fix_lines = Rule::fix_lines(variant.and_then(|v| v.fix.as_deref()).unwrap_or(&rule.fix), &vars);
    Finding {
        id: rule.id.clone(),
        severity: hit.severity.or(variant.and_then(|v| v.severity)).unwrap_or(rule.severity),
        title: variant.and_then(|v| v.title.clone()).unwrap_or_else(|| rule.title.clone()),
        subject: hit.subject,
        location: hit.location,
        message: hit.message,
        evidence: hit.evidence,
        fix: with_restore_heads(&fix_lines).iter().map(FixLine::text).collect::<Vec<_>>().join("\n"),
        commands: fix_lines.iter().filter_map(|l| if let FixLine::Command(c) = l { Some(c.clone()) } else { None }).collect(),
        restore: fix_lines.iter().filter_map(|l| if let FixLine::Restore(c) = l { Some(c.clone()) } else { None }).collect(),
        fix_lines,
        adopt: variant.and_then(|v| v.adopt).or(rule.adopt),
        source: super::citation::qualify(&variant.and_then(|v| v.source.clone()).unwrap_or_else(|| rule.source.clone()), untagged),
        phase: variant.and_then(|v| v.phase).unwrap_or(rule.phase),
        variant: variant.map(|_| hit.variant.unwrap_or_default().to_string()),
        expect: rule
            .expect
            .iter()
            .filter(|e| e.holds_on(kube))
            .map(|e| Expected {
                by: e.by.as_str(),
                text: e.text.clone(),
                kubernetes: e.kubernetes.as_ref().map(ToString::to_string),
                helm: e.helm.as_ref().map(ToString::to_string),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::unpack_chart;

    #[test]
    fn the_chart_is_unpacked_from_where_the_run_read_it() {
        let v = semver::Version::new(2, 3, 0);
        assert_eq!(
            unpack_chart("oci://127.0.0.1:5000/charts/kubeflow-trainer", " --plain-http", &v, "kubeflow-trainer"),
            "helm pull oci://127.0.0.1:5000/charts/kubeflow-trainer --plain-http --version 2.3.0 --untar --untardir trainer-audit-chart"
        );
        let dir = tempfile::tempdir().unwrap();
        let archive = dir.path().join("my chart.tgz");
        std::fs::write(&archive, b"").unwrap();
        let archive = archive.to_str().unwrap();
        assert_eq!(
            unpack_chart(archive, "", &v, "kubeflow-trainer"),
            format!("mkdir -p trainer-audit-chart && tar -xzf '{archive}' -C trainer-audit-chart")
        );
        let d = dir.path().to_str().unwrap();
        assert_eq!(
            unpack_chart(d, "", &v, "kubeflow-trainer"),
            format!("mkdir -p trainer-audit-chart && cp -R {} trainer-audit-chart/kubeflow-trainer", crate::shell::quote(d))
        );
    }
}
