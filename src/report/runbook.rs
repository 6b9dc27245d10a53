//! The runbook: Markdown an on-call engineer follows during the change — summary, findings,
//! backups, numbered steps with this cluster's names filled in, verification, rollback notes,
//! and what not to do.

use crate::audit::finding::Severity;
use crate::cluster::install::Method;
use crate::plan::Plan;

pub fn markdown(p: &Plan, notes: &[String]) -> String {
    let (ns, release) = (&p.namespace, &p.release);
    let (qns, qrelease) = (crate::shell::quote(ns), crate::shell::quote(release));
    let values_file = crate::shell::quote(&format!("values-{release}.yaml"));
    let route: Vec<&str> = p.steps.iter().map(|s| s.to.as_str()).collect();
    let mut out = format!("# Runbook: upgrade Kubeflow Trainer `{ns}/{release}` {} → {}\n\n", p.from, p.to);
    out.push_str("## Summary\n\n");
    out.push_str(&format!(
        "- Installed: {} ({})\n- Target: {}\n- Route: {} → {}\n",
        p.from,
        p.method.describe(),
        p.to,
        p.from,
        route.join(" → ")
    ));
    let blocking: usize = p.steps.iter().map(|s| s.preconditions.iter().filter(|f| f.severity == Severity::Error).count()).sum();
    out.push_str(&format!("- Blocking findings to fix first: {blocking}\n"));
    for n in notes {
        out.push_str(&format!("- {n}\n"));
    }
    out.push_str("\n## Findings\n\n");
    for s in &p.steps {
        out.push_str(&format!("### Before step {} ({} → {})\n\n", s.number, s.from, s.to));
        super::findings::markdown(&s.preconditions, &mut out);
        out.push('\n');
    }
    out.push_str("## Backups (before anything else)\n\n```sh\nmkdir -p trainer-backup\nkubectl get trainjobs.trainer.kubeflow.org -A -o yaml > trainer-backup/trainjobs.yaml\nkubectl get clustertrainingruntimes.trainer.kubeflow.org -o yaml > trainer-backup/clustertrainingruntimes.yaml\nkubectl get trainingruntimes.trainer.kubeflow.org -A -o yaml > trainer-backup/trainingruntimes.yaml\nkubectl get crd trainjobs.trainer.kubeflow.org trainingruntimes.trainer.kubeflow.org clustertrainingruntimes.trainer.kubeflow.org -o yaml > trainer-backup/crds.yaml\n");
    // Only a Helm release has values and history to save: `helm get values` of an install that
    // is not one fails ("Error: release: not found") and stops the block (rehearsed).
    if matches!(p.method, Method::Helm | Method::FluxHelm) {
        out.push_str(&format!(
            "helm get values {qrelease} -n {qns} -o yaml > trainer-backup/{values_file}\nhelm history {qrelease} -n {qns} > trainer-backup/history.txt\n"
        ));
    }
    out.push_str("```\n");
    let mut n = 0;
    out.push_str("\n## Steps\n");
    for s in &p.steps {
        out.push_str(&format!("\n### Upgrade {} → {}\n\n", s.from, s.to));
        // Preconditions come in the order their fixes are done (the rules' phases).
        let fixes: Vec<_> = s.preconditions.iter().filter(|f| f.severity <= Severity::Warning).collect();
        if !fixes.is_empty() {
            n += 1;
            out.push_str(&format!("{n}. Settle the findings for this step, in this order:\n\n"));
            for f in fixes {
                out.push_str(&format!("   - **{}** `{}` — {}\n\n", f.id, f.subject, f.title));
                super::findings::fix_markdown(f, "     ", &mut out);
            }
        }
        n += 1;
        out.push_str(&format!("{n}. Upgrade:\n\n"));
        for m in &s.manual {
            out.push_str(&format!("   - {m}\n"));
        }
        if !s.manual.is_empty() {
            out.push('\n');
        }
        if !s.upgrade.is_empty() {
            out.push_str("   ```sh\n");
            for c in &s.upgrade {
                out.push_str(&format!("   {c}\n"));
            }
            out.push_str("   ```\n\n");
        }
        n += 1;
        out.push_str(&format!("{n}. Verify before going on:\n\n   ```sh\n"));
        for c in &s.verify {
            out.push_str(&format!("   {c}\n"));
        }
        out.push_str("   ```\n\n");
        out.push_str(&format!("   Rollback{}: {}\n", if s.rollback_dangerous { " (**dangerous**)" } else { "" }, s.rollback));
    }
    let templated =
        p.steps.last().and_then(|s| crate::version::parse_lenient(&s.to)).is_some_and(|v| v.major > 2 || (v.major == 2 && v.minor >= 3));
    out.push_str("\n## Do not\n\n- Use `--reuse-values` across minor versions: it replaces the new chart's defaults with the old release's values (`crds.enabled` unset, empty installer image). Use `--reset-then-reuse-values` (Helm ≥ 3.14) as above.\n- Use `--atomic` / `--rollback-on-failure` before the live CRDs carry `helm.sh/resource-policy: keep`: the automatic rollback deletes them and every TrainJob and runtime.\n- Skip a step: 2.0, 2.1 and 2.2 must land on the latest 2.3.x before anything later.\n");
    if templated {
        out.push_str("- Uninstall the release to \"start clean\": that deletes the CRDs and all training data with them, even when the live CRDs carry `helm.sh/resource-policy: keep` (`helm uninstall` reads the policy from the stored release manifest, not from the cluster), and its pre-delete hook deletes the built-in runtimes.\n");
    } else {
        out.push_str("- Uninstall the release to \"start clean\": it deletes the built-in runtimes (release objects up to 2.2) that TrainJobs use; the CRDs from `crds/` stay.\n");
    }
    out.push_str(&format!(
        "\n_Generated by trainer-audit for {ns}/{release}; re-run `trainer-audit runbook` after any change to the cluster._\n"
    ));
    out
}
