//! The runbook: Markdown an on-call engineer follows during the change — what it was made from,
//! summary, findings, backups, numbered steps with this cluster's names filled in, verification,
//! rollback notes, and what not to do. Every command lives in an `sh` block, pinned to the
//! kubeconfig context the runbook was made from, and none waits for a person.

use crate::audit::finding::{Finding, FixLine, Phase, Severity};
use crate::plan::Plan;
use crate::shell::quote;

/// `runbook`'s report: the plan, its notes, and what it was made from (printed as Markdown
/// here, as a page by `html_runbook`).
pub struct Runbook {
    pub plan: Plan,
    pub notes: Vec<String>,
    pub made: Made,
}

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
                || before == "if"
                || before.ends_with(" if") && out.ends_with(' ')
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

/// What the Backups block saves, into `$BACKUP_DIR` (set in the same block): the objects of every
/// Trainer CRD the cluster holds, then those CRDs (one the cluster lacks — an uninstall deleted
/// it — has nothing to save, and naming it would stop the block).
fn backups(crds: &[crate::plan::HeldCrd]) -> Vec<String> {
    let mut out: Vec<String> = crds
        .iter()
        .map(|c| {
            let plural = c.name.split('.').next().unwrap_or(&c.name);
            let all = if c.namespaced { " -A" } else { "" };
            format!("kubectl get {}{all} -o yaml > \"$BACKUP_DIR\"/{}.yaml", quote(&c.name), quote(plural))
        })
        .collect();
    if !crds.is_empty() {
        // TrainJobs first, then the namespaced runtimes before the cluster-scoped ones.
        let mut names: Vec<&crate::plan::HeldCrd> = crds.iter().collect();
        names.sort_by_key(|c| (crate::plan::crd_rank(&c.name).0 != 0, !c.namespaced, c.name.clone()));
        let names: Vec<String> = names.iter().map(|c| quote(&c.name)).collect();
        out.push(format!("kubectl get crd {} -o yaml > \"$BACKUP_DIR\"/crds.yaml", names.join(" ")));
    }
    out
}

/// `$BACKUP_DIR` in a block after the one that sets it: a shell where it is unset stops there
/// instead of writing to `/`.
const IN_BACKUP_DIR: &str = "\"${BACKUP_DIR:?}\"/";

/// A fix command as the runbook runs it: what it writes goes into `$BACKUP_DIR` (a relative
/// `> FILE`, the migration's `trainer-backup/` files), and the directory the Backups block
/// made is not made again (None).
fn into_backup_dir(command: &str) -> Option<String> {
    // The directory the migration rules' commands write to (audit::kinds::migrate).
    let dir = "trainer-backup";
    if command == format!("mkdir -p {dir}") {
        return None;
    }
    let mut c = command.replace(&format!(" {dir}/"), &format!(" {IN_BACKUP_DIR}"));
    if let Some(at) = c.rfind(" > ") {
        let file = &c[at + 3..];
        let relative = !file.is_empty() && !file.contains(' ') && !file.starts_with(['/', '$', '"', '~', '&']);
        if relative {
            c = format!("{}{IN_BACKUP_DIR}{file}", &c[..at + 3]);
        }
    }
    Some(c)
}

/// The read a copy into `$BACKUP_DIR` saves (the command without its file): a fix's copy of a
/// read the Backups block already saved is that backup, whatever its file is called.
fn step_key(command: &str) -> &str {
    match command.rfind(" > ") {
        Some(at) if command[at + 3..].starts_with("\"$BACKUP_DIR\"/") || command[at + 3..].starts_with(IN_BACKUP_DIR) => &command[..at],
        _ => command,
    }
}

/// The commands already run, and under what: each step runs once in a runbook. The Backups
/// block's copies are known by their reads (a fix's copy of the same read is that backup); a
/// fix's commands by their whole text (a working copy to edit is not a backup).
struct Seen {
    backups: Vec<(String, String)>,
    fixes: Vec<(String, String)>,
}

impl Seen {
    /// The Backups block's copies, before any fix.
    fn backups(crds: &[crate::plan::HeldCrd]) -> Seen {
        let backups = backups(crds)
            .iter()
            .map(|c| (step_key(c).to_string(), format!("Backups, as `{}`", c.rsplit(" > ").next().unwrap_or_default().replace('"', ""))))
            .collect();
        Seen { backups, fixes: Vec::new() }
    }

    /// Where `command` ran already, if it did.
    fn earlier(&self, command: &str) -> Option<&String> {
        let read = step_key(command);
        let by_read = if read == command { None } else { self.backups.iter().find(|(r, _)| r == read) };
        by_read.or_else(|| self.fixes.iter().find(|(c, _)| c == command)).map(|(_, by)| by)
    }
}

/// The fixes of `findings`, in order, under a numbered step: one entry per rule naming every
/// subject, with its one fix; a command an earlier entry or the Backups block ran (over the whole
/// runbook) is not run again, and the entry says where it ran. A fix's restore commands are not
/// run here (that would undo the change before the upgrade): the entry says where they are, and
/// they are returned for the section after the last step.
fn settle(findings: &[&Finding], seen: &mut Seen, out: &mut String) -> Vec<String> {
    let mut restores = Vec::new();
    let mut entries: Vec<(&Finding, Vec<&Finding>)> = Vec::new();
    for f in findings {
        match entries.iter_mut().find(|(e, _)| e.id == f.id && e.severity == f.severity) {
            Some((_, members)) => members.push(f),
            None => entries.push((f, vec![f])),
        }
    }
    for (f, members) in entries {
        let mut subjects: Vec<String> = members.iter().map(|m| format!("`{}`", m.subject)).collect();
        subjects.dedup();
        out.push_str(&format!("   - **{}** {} — {}\n\n", f.id, subjects.join(", "), f.title));
        let by = format!("{} {}", f.id, subjects[0]);
        let mut repeated: Vec<String> = Vec::new();
        let mut restored = false;
        let mut lines: Vec<FixLine> = super::fix::merged(&members)
            .into_iter()
            .filter_map(|l| match l {
                FixLine::Restore(c) => {
                    restored = true;
                    if !restores.contains(&c) {
                        restores.push(c);
                    }
                    None
                }
                FixLine::Text(t) if t == crate::audit::finding::RESTORE_HEAD => None,
                FixLine::Command(c) => {
                    let c = into_backup_dir(&c)?;
                    match seen.earlier(&c).cloned() {
                        Some(earlier) => {
                            if !repeated.contains(&earlier) {
                                repeated.push(earlier);
                            }
                            None
                        }
                        None => {
                            seen.fixes.push((c.clone(), by.clone()));
                            Some(FixLine::Command(c))
                        }
                    }
                }
                text => Some(text),
            })
            .collect();
        for earlier in repeated {
            lines.push(FixLine::Text(format!("(Its command ran above, under {earlier}.)")));
        }
        if restored {
            lines.push(FixLine::Text(format!(
                "(What this changes for the upgrade is put back after the last step: see *{RESTORE_SECTION}*.)"
            )));
        }
        super::fix::markdown(&lines, "     ", out);
    }
    restores
}

/// The runbook's section that undoes what fixes changed for the upgrade only.
const RESTORE_SECTION: &str = "After the last step: restore what was relaxed";

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
        out.push_str(&format!("### Step {} ({} → {})\n\n", s.number, s.from, s.to));
        // A list, not a table: the fixes (commands in `sh` blocks) are under the steps.
        if s.preconditions.is_empty() {
            out.push_str("None.\n");
        }
        for f in &s.preconditions {
            out.push_str(&format!("- {} **{}** `{}`: {}\n", f.severity.as_str(), f.id, f.subject, f.message));
        }
        out.push('\n');
    }
    out.push_str(&format!(
        "## Backups (before anything else)\n\nRun the blocks of this runbook in order and in one shell: every copy goes to `$BACKUP_DIR`, set here once (a new directory each time, so a second run never overwrites the first copies).\n\n```sh\nBACKUP_DIR=\"$PWD/trainer-backup-$(date -u +%Y%m%dT%H%M%SZ)\"\nmkdir -p \"$BACKUP_DIR\"\necho \"backups in $BACKUP_DIR\"\n{}",
        backups(&p.held_crds).iter().map(|c| format!("{c}\n")).collect::<String>()
    ));
    // Only a Helm release has values and history to save: `helm get values` of an install that
    // is not one fails ("Error: release: not found") and stops the block (rehearsed).
    if p.method.has_helm_release() {
        out.push_str(&format!(
            "helm get values {qrelease} -n {qns} -o yaml > \"$BACKUP_DIR\"/{values_file}\nhelm history {qrelease} -n {qns} > \"$BACKUP_DIR\"/history.txt\n"
        ));
    }
    out.push_str("```\n");
    let mut n = 0;
    // A command another finding's fix already ran (one PSA relabel for both hook Jobs, one
    // backup of an object) is not run twice, in any step: the repeat says where it is.
    let mut seen = Seen::backups(&p.held_crds);
    // What the fixes change for the upgrade only, put back after the last step.
    let mut restores: Vec<String> = Vec::new();
    out.push_str("\n## Steps\n");
    for s in &p.steps {
        out.push_str(&format!("\n### {} {} → {}\n\n", if s.direction == "downgrade" { "Downgrade" } else { "Upgrade" }, s.from, s.to));
        // Preconditions come in the order their fixes are done (the rules' phases); what is done
        // after the upgrade (a Terminating runtime still stuck) comes after it.
        let (after, before): (Vec<&Finding>, Vec<&Finding>) =
            s.preconditions.iter().filter(|f| f.severity <= Severity::Warning).partition(|f| f.phase == Phase::After);
        if !before.is_empty() {
            n += 1;
            out.push_str(&format!("{n}. Settle the findings for this step, in this order:\n\n"));
            for r in settle(&before, &mut seen, &mut out) {
                if !restores.contains(&r) {
                    restores.push(r);
                }
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
        if !after.is_empty() {
            n += 1;
            out.push_str(&format!("{n}. After the upgrade:\n\n"));
            for r in settle(&after, &mut seen, &mut out) {
                if !restores.contains(&r) {
                    restores.push(r);
                }
            }
        }
        n += 1;
        out.push_str(&format!("{n}. Verify before going on:\n\n   ```sh\n"));
        for c in &s.verify {
            out.push_str(&format!("   {c}\n"));
        }
        out.push_str("   ```\n\n");
        out.push_str(&format!("   Rollback{}: {}\n", if s.rollback_dangerous { " (**dangerous**)" } else { "" }, s.rollback));
    }
    // What a fix changed for the upgrade only (a Pod Security label relaxed for the hooks) is put
    // back once, after the last step, as the fix says.
    if !restores.is_empty() {
        out.push_str(&format!(
            "\n## {RESTORE_SECTION}\n\nThe fixes above changed these for the upgrade only; put them back:\n\n```sh\n{}```\n",
            restores.iter().map(|r| format!("{r}\n")).collect::<String>()
        ));
    }
    let templated = p
        .steps
        .last()
        .and_then(|s| helm_render::version::parse_lenient(&s.to))
        .is_some_and(|v| v.major > 2 || (v.major == 2 && v.minor >= 3));
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
        let guarded = crate::plan::keep_guarded("helm upgrade r c", &["trainjobs.trainer.kubeflow.org"]);
        let pinned = made.pin(&guarded);
        assert!(pinned.starts_with("unkept=$(kubectl --context 'prod east' get crd "), "{pinned}");
        assert!(pinned.ends_with("else helm --kube-context 'prod east' upgrade r c; fi"), "{pinned}");
        assert!(pinned.contains("lack helm.sh/resource-policy=keep"), "text is left alone: {pinned}");
        assert_eq!(made.pin("echo kubectl get"), "echo kubectl get");
        assert_eq!(
            made.pin("if kubectl get x | grep -q y; then kubectl patch x; fi"),
            "if kubectl --context 'prod east' get x | grep -q y; then kubectl --context 'prod east' patch x; fi"
        );
        assert_eq!(made.pin("diff kubectl"), "diff kubectl");
        assert_eq!(made.pin("trainer-audit snapshot -o f.yaml"), "trainer-audit snapshot --context 'prod east' -o f.yaml");
        assert_eq!(made.pin("trainer-audit migrate --snapshot f.yaml"), "trainer-audit migrate --snapshot f.yaml");
        assert_eq!(Made::default().pin("kubectl get x"), "kubectl get x");
        let text = "prose kubectl get x\n```sh\nkubectl get x\n```\n";
        assert_eq!(pinned_text(text, &made), "prose kubectl get x\n```sh\nkubectl --context 'prod east' get x\n```\n");
    }

    #[test]
    fn copies_go_to_the_backup_dir_and_a_backup_runs_once() {
        assert_eq!(into_backup_dir("mkdir -p trainer-backup"), None);
        assert_eq!(
            into_backup_dir("kubectl get clustertrainingruntime x -o yaml > x.yaml").unwrap(),
            "kubectl get clustertrainingruntime x -o yaml > \"${BACKUP_DIR:?}\"/x.yaml"
        );
        assert_eq!(
            into_backup_dir("trainer-audit migrate --snapshot trainer-backup/s.yaml --chart /c -o trainer-backup/m.yaml").unwrap(),
            "trainer-audit migrate --snapshot \"${BACKUP_DIR:?}\"/s.yaml --chart /c -o \"${BACKUP_DIR:?}\"/m.yaml"
        );
        assert_eq!(into_backup_dir("kubectl get x > /abs/x.yaml").unwrap(), "kubectl get x > /abs/x.yaml");
        let held = |name: &str, namespaced| crate::plan::HeldCrd { name: name.into(), namespaced };
        let crds = [
            held("trainjobs.trainer.kubeflow.org", true),
            held("clustertrainingruntimes.trainer.kubeflow.org", false),
            held("trainingruntimes.trainer.kubeflow.org", true),
        ];
        // The lines of every Trainer install's Backups block (as they were before they followed
        // the CRDs the cluster holds).
        assert_eq!(
            backups(&crds),
            [
                "kubectl get trainjobs.trainer.kubeflow.org -A -o yaml > \"$BACKUP_DIR\"/trainjobs.yaml",
                "kubectl get clustertrainingruntimes.trainer.kubeflow.org -o yaml > \"$BACKUP_DIR\"/clustertrainingruntimes.yaml",
                "kubectl get trainingruntimes.trainer.kubeflow.org -A -o yaml > \"$BACKUP_DIR\"/trainingruntimes.yaml",
                "kubectl get crd trainjobs.trainer.kubeflow.org trainingruntimes.trainer.kubeflow.org clustertrainingruntimes.trainer.kubeflow.org -o yaml > \"$BACKUP_DIR\"/crds.yaml",
            ]
        );
        assert_eq!(backups(&crds[..1]).len(), 2);
        assert!(backups(&[]).is_empty(), "no CRD held: nothing to back up, nothing named");
        let mut seen = Seen::backups(&crds);
        // A fix's copy of what the Backups block saved is that backup.
        let trainjobs = into_backup_dir("kubectl get trainjobs.trainer.kubeflow.org -A -o yaml > tj-backup.yaml").unwrap();
        assert_eq!(seen.earlier(&trainjobs).map(String::as_str), Some("Backups, as `$BACKUP_DIR/trainjobs.yaml`"));
        // A working copy of one object (to edit) is not the same step as its backup.
        let backup = into_backup_dir("kubectl get clustertrainingruntime x -o yaml > x.yaml").unwrap();
        seen.fixes.push((backup.clone(), "TA-RT-001".into()));
        let working = into_backup_dir("kubectl get clustertrainingruntime x -o yaml > x-local.yaml").unwrap();
        assert_eq!(seen.earlier(&working), None);
        assert_eq!(seen.earlier(&backup).map(String::as_str), Some("TA-RT-001"));
    }
}
