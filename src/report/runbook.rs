//! The runbook: Markdown an on-call engineer follows during the change — what it was made from,
//! summary, findings, backups, numbered steps with this cluster's names filled in, verification,
//! rollback notes, and what not to do. Every command lives in an `sh` block, pinned to the
//! kubeconfig context the runbook was made from, and none waits for a person.

use crate::audit::finding::Severity;
use crate::plan::Plan;
use crate::shell::quote;

/// What a runbook was made from: the header names it, and its commands reach the same cluster.
#[derive(Debug, Clone, Default)]
pub struct Made {
    /// `kubeconfig context "prod"`, `snapshot /abs/cluster.yaml`.
    pub from: String,
    /// The live context read, pinned into every kubectl (`--context`) and helm (`--kube-context`)
    /// command; None for a snapshot or an in-cluster read.
    pub context: Option<String>,
    /// An explicit `--kubeconfig`, absolute, pinned likewise.
    pub kubeconfig: Option<String>,
    /// When the cluster was read (a live read: now; a snapshot: its capture time, if recorded).
    pub at: Option<String>,
}

impl Made {
    /// `command` (one shell line) with every kubectl/helm invocation in it pinned.
    pub fn pin(&self, command: &str) -> String {
        if self.context.is_none() && self.kubeconfig.is_none() {
            return command.to_string();
        }
        let flags = |tool: &str| {
            let mut f = String::new();
            if let Some(k) = &self.kubeconfig {
                f.push_str(&format!(" --kubeconfig {}", quote(k)));
            }
            if let Some(c) = &self.context {
                f.push_str(&format!(" {} {}", if tool == "helm" { "--kube-context" } else { "--context" }, quote(c)));
            }
            f
        };
        let mut out = String::with_capacity(command.len() + 64);
        let mut rest = command;
        while let Some(c) = rest.chars().next() {
            // A command starts a line or follows a separator (`;`, `|`, `&&`, `$(`, `then`, `else`).
            let before = out.trim_end();
            let starts = before.is_empty()
                || [";", "|", "&&", "$(", "(", " then", " else"].iter().any(|s| before.ends_with(s))
                    && (out.len() == before.len() || before.ends_with("$(") || out.ends_with(' '));
            if starts {
                // trainer-audit takes its cluster flags after the subcommand, and only
                // `snapshot` reads the live cluster (the rest read the snapshot it wrote).
                if let Some(tool) = ["kubectl", "helm", "trainer-audit snapshot"]
                    .into_iter()
                    .find(|t| rest.strip_prefix(t).is_some_and(|r| r.starts_with(' ')))
                {
                    out.push_str(tool);
                    out.push_str(&flags(tool));
                    rest = &rest[tool.len()..];
                    continue;
                }
            }
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
        out
    }
}

/// The runbook with every command inside its `sh` blocks pinned to what it was made from.
fn pinned_text(text: &str, made: &Made) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_block = false;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") {
            in_block = trimmed.trim_end() == "```sh";
            out.push_str(line);
            continue;
        }
        if in_block {
            let indent = &line[..line.len() - trimmed.len()];
            out.push_str(indent);
            out.push_str(&made.pin(trimmed.trim_end_matches('\n')));
            out.push('\n');
        } else {
            out.push_str(line);
        }
    }
    out
}

pub fn markdown(p: &Plan, notes: &[String], made: &Made) -> String {
    pinned_text(&unpinned(p, notes, made), made)
}

fn unpinned(p: &Plan, notes: &[String], made: &Made) -> String {
    let (ns, release) = (&p.namespace, &p.release);
    let (qns, qrelease) = (crate::shell::quote(ns), crate::shell::quote(release));
    let values_file = crate::shell::quote(&format!("values-{release}.yaml"));
    let route: Vec<&str> = p.steps.iter().map(|s| s.to.as_str()).collect();
    let verb = if p.steps.iter().any(|s| s.direction == "downgrade") { "downgrade" } else { "upgrade" };
    let mut out = format!("# Runbook: {verb} Kubeflow Trainer `{ns}/{release}` {} → {}\n\n", p.from, p.to);
    out.push_str(&format!(
        "Made from {} for release `{ns}/{release}`, {} → {}, by trainer-audit {}{}.\n\n",
        if made.from.is_empty() { "the cluster" } else { &made.from },
        p.from,
        p.to,
        env!("CARGO_PKG_VERSION"),
        made.at.as_deref().map(|t| format!(", cluster read at {t}")).unwrap_or_default()
    ));
    if p.steps.is_empty() {
        out.push_str(&format!("Already at {}: there is no upgrade to run.\n", p.to));
        return out;
    }
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
        // A list, not a table: the fixes (commands in `sh` blocks) are under the steps.
        if s.preconditions.is_empty() {
            out.push_str("None.\n");
        }
        for f in &s.preconditions {
            out.push_str(&format!("- {} **{}** `{}`: {}\n", f.severity.as_str(), f.id, f.subject, f.message));
        }
        out.push('\n');
    }
    out.push_str("## Backups (before anything else)\n\n```sh\nmkdir -p trainer-backup\nkubectl get trainjobs.trainer.kubeflow.org -A -o yaml > trainer-backup/trainjobs.yaml\nkubectl get clustertrainingruntimes.trainer.kubeflow.org -o yaml > trainer-backup/clustertrainingruntimes.yaml\nkubectl get trainingruntimes.trainer.kubeflow.org -A -o yaml > trainer-backup/trainingruntimes.yaml\nkubectl get crd trainjobs.trainer.kubeflow.org trainingruntimes.trainer.kubeflow.org clustertrainingruntimes.trainer.kubeflow.org -o yaml > trainer-backup/crds.yaml\n");
    // Only a Helm release has values and history to save: `helm get values` of an install that
    // is not one fails ("Error: release: not found") and stops the block (rehearsed).
    if p.method.has_helm_release() {
        out.push_str(&format!(
            "helm get values {qrelease} -n {qns} -o yaml > trainer-backup/{values_file}\nhelm history {qrelease} -n {qns} > trainer-backup/history.txt\n"
        ));
    }
    out.push_str("```\n");
    let mut n = 0;
    out.push_str("\n## Steps\n");
    for s in &p.steps {
        out.push_str(&format!("\n### {} {} → {}\n\n", if s.direction == "downgrade" { "Downgrade" } else { "Upgrade" }, s.from, s.to));
        // Preconditions come in the order their fixes are done (the rules' phases).
        let fixes: Vec<_> = s.preconditions.iter().filter(|f| f.severity <= Severity::Warning).collect();
        if !fixes.is_empty() {
            n += 1;
            out.push_str(&format!("{n}. Settle the findings for this step, in this order:\n\n"));
            // A command another finding's fix already ran (one PSA relabel for both hook Jobs)
            // is not run twice: the repeat says where it is.
            let mut seen: Vec<(String, String)> = Vec::new();
            for f in fixes {
                out.push_str(&format!("   - **{}** `{}` — {}\n\n", f.id, f.subject, f.title));
                let mut once = f.clone();
                let mut repeated = None;
                once.fix_lines.retain(|l| match l {
                    crate::audit::finding::FixLine::Command(c) => match seen.iter().find(|(s, _)| s == c) {
                        Some((_, by)) => {
                            repeated = Some(by.clone());
                            false
                        }
                        None => {
                            seen.push((c.clone(), format!("{} `{}`", f.id, f.subject)));
                            true
                        }
                    },
                    _ => true,
                });
                if let Some(by) = repeated {
                    once.fix_lines.push(crate::audit::finding::FixLine::Text(format!("(Its command ran above, under {by}.)")));
                }
                super::findings::fix_markdown(&once, "     ", &mut out);
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
    // A fix that relaxed Pod Security on the release namespace is temporary: put back the value
    // the cluster had (TA-HOOK-101's relabel), once, after the last step.
    let relaxes = p.steps.iter().flat_map(|s| &s.preconditions).flat_map(|f| &f.commands).any(|c| {
        c.starts_with(&format!("kubectl label ns {qns} {}=", crate::plan::PSA_ENFORCE))
            || c.starts_with(&format!("kubectl label namespace {qns} {}=", crate::plan::PSA_ENFORCE))
    });
    if relaxes {
        let restore = match &p.pod_security {
            Some(level) => format!("kubectl label ns {qns} {}={} --overwrite", crate::plan::PSA_ENFORCE, quote(level)),
            None => format!("kubectl label ns {qns} {}-", crate::plan::PSA_ENFORCE),
        };
        out.push_str(&format!(
            "\n## After the last step: restore Pod Security\n\nThe namespace was relaxed for the upgrade's hooks; put back the value it had ({}):\n\n```sh\n{restore}\n```\n",
            p.pod_security.as_deref().map(|l| format!("`{}={l}`", crate::plan::PSA_ENFORCE)).unwrap_or_else(|| "no enforce label".into())
        ));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kubectl_and_helm_command_is_pinned_to_the_context() {
        let made = Made { context: Some("prod east".into()), ..Made::default() };
        assert_eq!(made.pin("kubectl get crd x"), "kubectl --context 'prod east' get crd x");
        assert_eq!(made.pin("helm status r -n ns"), "helm --kube-context 'prod east' status r -n ns");
        assert_eq!(
            made.pin("kubectl get x -o yaml | kubectl apply -f - && helm list"),
            "kubectl --context 'prod east' get x -o yaml | kubectl --context 'prod east' apply -f - && helm --kube-context 'prod east' list"
        );
        let guarded = crate::plan::keep_guarded("helm upgrade r c");
        let pinned = made.pin(&guarded);
        assert!(pinned.starts_with("unkept=$(kubectl --context 'prod east' get crd "), "{pinned}");
        assert!(pinned.ends_with("else helm --kube-context 'prod east' upgrade r c; fi"), "{pinned}");
        assert!(pinned.contains("lack helm.sh/resource-policy=keep"), "text is left alone: {pinned}");
        assert_eq!(made.pin("echo kubectl get"), "echo kubectl get");
        assert_eq!(made.pin("trainer-audit snapshot -o f.yaml"), "trainer-audit snapshot --context 'prod east' -o f.yaml");
        assert_eq!(made.pin("trainer-audit migrate --snapshot f.yaml"), "trainer-audit migrate --snapshot f.yaml");
        assert_eq!(Made::default().pin("kubectl get x"), "kubectl get x");
        let text = "prose kubectl get x\n```sh\nkubectl get x\n```\n";
        assert_eq!(pinned_text(text, &made), "prose kubectl get x\n```sh\nkubectl --context 'prod east' get x\n```\n");
    }
}
