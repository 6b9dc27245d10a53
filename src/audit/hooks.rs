//! The GitOps hook review (`trainer-audit hooks`): for every hook, when Helm runs it and what
//! each engine does with it, plus findings about what hooks do at run time (network, forced
//! apply, deletes, privileges, bounds, image pinning) and chart-level CRD facts that matter to
//! GitOps (apply size, keep policy).

use serde::Serialize;

use super::finding::{sort_findings, Finding, Severity};
use super::gitops::{argocd_delete_policy, argocd_phase, behaviour, ArgoPhase, Engine};
use crate::inventory::crd::ANNOTATION_BUDGET;
use crate::inventory::hook::HookInfo;
use crate::inventory::Inventory;
use crate::kube::workload::{ImageRef, Pin};
use crate::kube::Origin;

const FACTS: &str = "../shared/docs/trainer-upgrade.md §3";
const GITOPS: &str = "../shared/docs/peers-and-gitops.md Part B";
const PSS: &str = "https://kubernetes.io/docs/concepts/security/pod-security-standards/ (restricted)";

#[derive(Debug, Clone, Serialize)]
pub struct HookReview {
    pub hook: HookInfo,
    pub helm: String,
    pub argocd: Vec<ArgoPhase>,
    pub argocd_delete_policies: Vec<String>,
    /// What the selected engine does with it.
    pub engine: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct CrdSize {
    pub name: String,
    pub origin: Origin,
    pub json_size: usize,
    pub over_budget: bool,
    pub keep: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct HooksReport {
    pub chart: String,
    pub version: String,
    pub engine: Engine,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub argocd_version: Option<String>,
    pub hooks: Vec<HookReview>,
    pub crds: Vec<CrdSize>,
    pub findings: Vec<Finding>,
}

pub fn review(inventory: &Inventory, engine: Engine, argocd: Option<&semver::Version>) -> HooksReport {
    let mut findings = Vec::new();
    let mut hooks = Vec::new();
    for hook in &inventory.hooks {
        findings.extend(hook_findings(hook, engine, argocd));
        hooks.push(HookReview {
            helm: behaviour(Engine::Helm, &hook.events, hook.weight, None),
            argocd: hook.events.iter().map(|e| argocd_phase(e, argocd)).collect(),
            argocd_delete_policies: if hook.delete_policies.is_empty() {
                vec!["BeforeHookCreation (Argo CD's default)".into()]
            } else {
                hook.delete_policies.iter().map(|p| argocd_delete_policy(p).unwrap_or("unknown").to_string()).collect()
            },
            engine: behaviour(engine, &hook.events, hook.weight, argocd),
            hook: hook.clone(),
        });
    }
    // Argo CD applies crds/ with --include-crds, so they count there; Helm and Flux never apply
    // them with client-side apply, kustomize leaves them out by default.
    let crds: Vec<CrdSize> = inventory
        .crds
        .iter()
        .filter(|c| c.origin != Origin::CrdsDir || engine == Engine::Argocd)
        .map(|c| CrdSize {
            name: c.name.clone(),
            origin: c.origin,
            json_size: c.json_size,
            over_budget: c.over_annotation_budget(),
            keep: c.keeps_on_delete(),
        })
        .collect();
    for crd in inventory.crds.iter().filter(|c| c.origin != Origin::CrdsDir || engine == Engine::Argocd) {
        if crd.over_annotation_budget() {
            findings.push(Finding {
                id: "TA-CRD-001".into(),
                severity: if matches!(engine, Engine::Argocd | Engine::Kustomize) { Severity::Error } else { Severity::Warning },
                title: "CRD too large for client-side apply".into(),
                subject: format!("CustomResourceDefinition/{}", crd.name),
                location: crd.source.clone(),
                message: format!(
                    "{} is {} bytes as compact JSON, over the {ANNOTATION_BUDGET}-byte annotation budget: client-side `kubectl apply` and Argo CD's default apply fail with \"metadata.annotations: Too long\" (Helm's own apply is not affected)",
                    crd.name, crd.json_size
                ),
                evidence: vec![format!("json_size={} budget={ANNOTATION_BUDGET}", crd.json_size)],
                fix: "apply it server-side: Argo CD `ServerSideApply=true` (or `Replace=true`) on the Application or this resource; `kubectl apply --server-side` by hand".into(),
                source: format!("{FACTS} (CRD size); {GITOPS} B.4"),
            });
        }
        if crd.origin == Origin::Template && !crd.keeps_on_delete() {
            findings.push(Finding {
                id: "TA-CRD-002".into(),
                severity: Severity::Warning,
                title: "Templated CRD without helm.sh/resource-policy: keep".into(),
                subject: format!("CustomResourceDefinition/{}", crd.name),
                location: crd.source.clone(),
                message: format!(
                    "{} is a release object without `helm.sh/resource-policy: keep`: `helm uninstall`, a rollback to a chart without it, or a GitOps prune deletes the CRD and every {} with it",
                    crd.name, crd.kind
                ),
                evidence: vec![format!("origin=templates resource-policy={}", crd.resource_policy.as_deref().unwrap_or("<none>"))],
                fix: format!(
                    "before any uninstall or rollback: kubectl annotate crd {} helm.sh/resource-policy=keep; under Argo CD also set `argocd.argoproj.io/sync-options: Delete=false`",
                    crd.name
                ),
                source: format!("{FACTS} (no keep policy)"),
            });
        }
    }
    sort_findings(&mut findings);
    HooksReport {
        chart: inventory.chart.name.clone(),
        version: inventory.chart.version.clone(),
        engine,
        argocd_version: argocd.map(|v| v.to_string()),
        hooks,
        crds,
        findings,
    }
}

/// What a hook rule says whatever it finds: id, title, fix and source.
struct HookRule<'a> {
    id: &'a str,
    title: &'a str,
    fix: &'a str,
    source: &'a str,
}

fn finding(hook: &HookInfo, rule: HookRule<'_>, severity: Severity, message: String, evidence: Vec<String>) -> Finding {
    Finding {
        id: rule.id.into(),
        severity,
        title: rule.title.into(),
        subject: hook.identity.to_string(),
        location: hook.source.clone(),
        message,
        evidence,
        fix: rule.fix.into(),
        source: rule.source.into(),
    }
}

/// Lines of the hook's script matching `pattern`, trimmed.
fn lines_matching(script: &str, pattern: &regex::Regex) -> Vec<String> {
    script.lines().map(str::trim).filter(|l| !l.starts_with('#') && pattern.is_match(l)).map(str::to_string).collect()
}

fn hook_findings(hook: &HookInfo, engine: Engine, argocd: Option<&semver::Version>) -> Vec<Finding> {
    let mut out = Vec::new();
    let script = hook.script();
    let name = &hook.identity.name;
    let packages = regex::Regex::new(
        r"\b(apk\s+add|apt-get\s+install|apt\s+install|yum\s+install|dnf\s+install|microdnf\s+install|pip3?\s+install|curl|wget)\b",
    )
    .expect("static pattern");
    let downloads = lines_matching(&script, &packages);
    if !downloads.is_empty() {
        out.push(finding(
            hook,
            HookRule { id: "TA-HOOK-001", title: "Hook installs or downloads software at run time", fix: "mirror the packages into an image you control and point the hook's image values at it (for Trainer 2.3: runtimes.installer.image.*), or allow egress for this Job", source: FACTS },
            Severity::Warning,
            format!("{name} fetches software when it runs: it needs egress to package mirrors and fails in air-gapped clusters or behind strict egress policies"),
            downloads,
        ));
    }
    let forced = lines_matching(&script, &regex::Regex::new(r"--force-conflicts").expect("static pattern"));
    if !forced.is_empty() {
        out.push(finding(
            hook,
            HookRule { id: "TA-HOOK-002", title: "Hook applies with --force-conflicts", fix: "keep local changes out of the objects this hook owns (copy them to differently named objects), or disable the hook's objects and manage them yourself", source: &format!("{FACTS}; {GITOPS} B.4 (server-side apply)") },
            Severity::Warning,
            format!("{name} runs server-side apply with --force-conflicts: it takes ownership of fields other managers own, so local edits to the objects it applies are overwritten on every run"),
            forced,
        ));
    }
    let mut deletes = lines_matching(&script, &regex::Regex::new(r"\bkubectl\b.*\bdelete\b").expect("static pattern"));
    if !deletes.is_empty() {
        // A prune loop selects in its `for … in $(kubectl get … -l X)` line, not in the delete.
        let loops = lines_matching(&script, &regex::Regex::new(r"^for\b.*\bkubectl\b.*\bget\b").expect("static pattern"));
        deletes.splice(0..0, loops.iter().cloned());
        let selectors: Vec<String> = deletes
            .iter()
            .flat_map(|l| {
                regex::Regex::new(r"(?:--selector[= ]|-l\s+)(\S+)")
                    .expect("static pattern")
                    .captures_iter(l)
                    .map(|c| c[1].to_string())
                    .collect::<Vec<_>>()
            })
            .collect();
        let looped = !loops.is_empty();
        let what = if selectors.is_empty() { String::new() } else { format!(" selecting {}", selectors.join(", ")) };
        out.push(finding(
            hook,
            HookRule {
                id: "TA-HOOK-003",
                title: if looped { "Hook prunes objects in a delete loop" } else { "Hook deletes objects" },
                fix: "check that no object you manage carries the selected labels; back up the selected objects before upgrading",
                source: FACTS,
            },
            Severity::Info,
            format!(
                "{name} deletes objects{what}{}: anything carrying that selection is removed, including objects you labelled yourself",
                if looped { " in a loop over what it finds" } else { "" }
            ),
            deletes,
        ));
    }
    if !hook.has_security_context() {
        out.push(finding(
            hook,
            HookRule { id: "TA-HOOK-004", title: "Hook has no securityContext", fix: "run the release namespace at the `baseline` level or label it to allow the hook, or patch the hook with a post-renderer to set runAsNonRoot, drop ALL capabilities, seccompProfile RuntimeDefault", source: &format!("{FACTS}; {PSS}") },
            Severity::Warning,
            format!("{name} sets no securityContext: it runs as the image's user (root for most base images) and is rejected in namespaces enforcing the `restricted` Pod Security level"),
            vec!["securityContext: <none> (pod and containers)".into()],
        ));
    } else if !hook.runs_as_non_root() {
        out.push(finding(
            hook,
            HookRule {
                id: "TA-HOOK-004",
                title: "Hook may run as root",
                fix: "set runAsNonRoot: true (and a non-root user) on the hook's pod",
                source: PSS,
            },
            Severity::Warning,
            format!("{name} does not set runAsNonRoot or a non-zero runAsUser; the `restricted` Pod Security level rejects it"),
            vec!["runAsNonRoot: <unset>".into()],
        ));
    }
    if hook.identity.kind == "Job" && (hook.backoff_limit.is_none() || hook.active_deadline_seconds.is_none()) {
        let mut missing = Vec::new();
        if hook.backoff_limit.is_none() {
            missing.push("backoffLimit (defaults to 6 retries)");
        }
        if hook.active_deadline_seconds.is_none() {
            missing.push("activeDeadlineSeconds (no time limit)");
        }
        out.push(finding(
            hook,
            HookRule {
                id: "TA-HOOK-005",
                title: "Hook Job is not bounded",
                fix: "pass --timeout to helm and watch the Job; a stuck hook Job can be deleted by hand",
                source: FACTS,
            },
            Severity::Info,
            format!(
                "{name} sets no {}: a failing hook retries and Helm waits up to its --timeout, holding the release in pending-*",
                missing.join(" and no ")
            ),
            missing.iter().map(|m| format!("{m}: <unset>")).collect(),
        ));
    }
    for c in &hook.containers {
        let image = ImageRef::parse(&c.image);
        if image.pin != Pin::Digest {
            out.push(finding(
                hook,
                HookRule {
                    id: "TA-HOOK-006",
                    title: "Hook image not pinned by digest",
                    fix: "pin the image by digest (repository@sha256:…) through the chart's image values",
                    source: FACTS,
                },
                if image.pin == Pin::Tag { Severity::Info } else { Severity::Warning },
                format!(
                    "{name} container {} uses {}: a tag can move, so the hook may run different software than was reviewed",
                    c.name, c.image
                ),
                vec![format!("image={} pin={:?}", c.image, image.pin).to_lowercase()],
            ));
        }
    }
    let destructive: Vec<String> = hook
        .grants
        .iter()
        .filter(|g| !g.rule.destructive_verbs().is_empty())
        .map(|g| format!("{}: {} on {}", g.role, g.rule.verbs.join(","), g.rule.resources.join(",")))
        .collect();
    if !destructive.is_empty() {
        out.push(finding(
            hook,
            HookRule {
                id: "TA-HOOK-007",
                title: "Hook service account may delete objects",
                fix: "review what the hook deletes (see TA-HOOK-003) and back up those objects before upgrading",
                source: FACTS,
            },
            Severity::Warning,
            format!(
                "{name} runs as {} which the chart grants delete rights; a wrong selector or script bug removes objects cluster-wide",
                hook.service_account
            ),
            destructive,
        ));
    }
    let delete_events: Vec<&String> = hook.events.iter().filter(|e| e.ends_with("-delete")).collect();
    if !delete_events.is_empty() {
        let (severity, message) = match engine {
            Engine::Kustomize => (
                Severity::Error,
                format!(
                    "{name} is a delete hook; kustomize helmCharts applies it as a plain object, so it runs at install and on every apply"
                ),
            ),
            Engine::Argocd => {
                let unsupported: Vec<String> = delete_events
                    .iter()
                    .map(|e| argocd_phase(e, argocd))
                    .filter(|p| p.supported != Some(true))
                    .map(|p| format!("{} needs Argo CD ≥ {}", p.event, p.since.unwrap_or("?")))
                    .collect();
                if unsupported.is_empty() {
                    (Severity::Info, format!("{name} runs when the Argo CD Application is deleted"))
                } else {
                    (
                        Severity::Warning,
                        format!("{name} is a delete hook Argo CD may never run ({}): cleanup it does is skipped", unsupported.join("; ")),
                    )
                }
            }
            Engine::Helm | Engine::Flux => (Severity::Info, format!("{name} runs on uninstall ({})", hook.events.join(", "))),
        };
        out.push(finding(
            hook,
            HookRule { id: "TA-HOOK-008", title: "Delete hook", fix: match engine {
                Engine::Kustomize => "set `skipHooks: true` in the helmCharts entry (and run the cleanup by hand at uninstall)",
                Engine::Argocd => "use Argo CD ≥ 3.3.0 for pre-delete hooks (≥ 2.10.0 for post-delete), or run the cleanup by hand before deleting the Application",
                _ => "nothing to change; know that uninstall runs it",
            }, source: GITOPS },
            severity,
            message,
            vec![format!("helm.sh/hook: {}", hook.events.join(","))],
        ));
    }
    if engine == Engine::Argocd {
        let phases: Vec<ArgoPhase> = hook.events.iter().map(|e| argocd_phase(e, argocd)).collect();
        if phases.iter().all(|p| p.phase.is_none()) {
            out.push(finding(
                hook,
                HookRule {
                    id: "TA-HOOK-009",
                    title: "Hook never applied by Argo CD",
                    fix: "run it by hand when needed, or add an argocd.argoproj.io/hook annotation",
                    source: GITOPS,
                },
                Severity::Warning,
                format!("{name} carries only hook events Argo CD does not support ({}): Argo CD never applies it", hook.events.join(", ")),
                vec![format!("helm.sh/hook: {}", hook.events.join(","))],
            ));
        }
    }
    out
}
