//! The upgrade path: from the installed version to the target through every stop the upgrade
//! gates require (the latest release matching the gate's `via`, e.g. the newest 2.3.x), and for
//! each step the findings to settle first and the commands for the detected deployment method
//! (`engine::commands`), how to verify it, and what a rollback would do.

pub mod named;

use serde::Serialize;

use crate::audit::finding::{Finding, Severity};
use crate::audit::rules::{Applicable, Rule, Scope};
use crate::audit::verdict::{Counts, Decision};
use crate::engine::{commands, Method};

/// The versions to upgrade through, ending with `to` (none when `to` is what is installed:
/// there is nothing to plan). `available` are the repository's release versions; an empty list
/// means only the target is known (a local chart). A downgrade is one step, never routed.
pub fn path(
    rules: &[Rule],
    from: &semver::Version,
    to: &semver::Version,
    available: &[semver::Version],
) -> Result<Vec<semver::Version>, String> {
    let mut stops = Vec::new();
    if from == to {
        return Ok(stops);
    }
    let mut current = from.clone();
    for _ in 0..8 {
        let when = Applicable { scope: Scope::Upgrade, versions: Some((&current, to)), engine: None, cluster: true };
        let gate = rules.iter().filter(|r| r.applicable(&when)).find_map(|r| Some((r, r.check.as_ref()?.gate()?)));
        let Some((gate, constraint)) = gate else { break };
        let via = constraint.to_string();
        let stop = available.iter().filter(|v| v.pre.is_empty() && constraint.matches(v) && *v > &current && *v < to).max().cloned();
        let Some(stop) = stop else {
            return Err(format!("{} → {to} must pass through {via} ({}), and the repository has no such release", current, gate.id));
        };
        stops.push(stop.clone());
        current = stop;
    }
    stops.push(to.clone());
    Ok(stops)
}

#[derive(Debug, Clone, Serialize)]
pub struct Step {
    pub number: usize,
    pub from: String,
    pub to: String,
    /// `upgrade`, or `downgrade` (a target below what it starts from).
    pub direction: &'static str,
    /// Findings at warning or above for this hop, to settle first, in the order their fixes are
    /// done (the rules' phases: back up, CRDs, objects, values, upgrade).
    pub preconditions: Vec<Finding>,
    /// What a person does that is not a command (edit a GitOps object, remove a kustomization).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub manual: Vec<String>,
    /// Shell commands, each complete and quoted.
    pub upgrade: Vec<String>,
    /// Shell commands that check the step worked.
    pub verify: Vec<String>,
    pub rollback: String,
    pub rollback_dangerous: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    pub release: String,
    pub namespace: String,
    pub method: Method,
    pub from: String,
    pub to: String,
    pub repository: String,
    pub steps: Vec<Step>,
    /// The release namespace's `pod-security.kubernetes.io/enforce` label before the change
    /// (None: not set): a fix that relaxes it is undone to this value after the last step.
    #[serde(rename = "podSecurity", skip_serializing_if = "Option::is_none")]
    pub pod_security: Option<String>,
    /// `plan --fail-on`: the level the verdict is decided at (None: error, and `plan` exits 0).
    #[serde(skip)]
    pub fail_on: Option<Severity>,
    /// The Trainer CRDs the cluster holds: what the runbook backs up (objects, then the CRDs).
    #[serde(skip)]
    pub held_crds: Vec<HeldCrd>,
    /// The release is uninstalled and the first step installs it afresh: nothing is "already at"
    /// the target.
    #[serde(skip)]
    pub reinstall: bool,
}

/// A Trainer CRD the cluster holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldCrd {
    /// `<plural>.<group>`.
    pub name: String,
    pub namespaced: bool,
}

/// Where a Trainer CRD comes in commands that list several (TrainJobs first, then the runtimes;
/// any other after them, by name).
pub fn crd_rank(name: &str) -> (usize, String) {
    let plural = name.split('.').next().unwrap_or(name);
    let rank = ["trainjobs", "clustertrainingruntimes", "trainingruntimes"].iter().position(|p| *p == plural).unwrap_or(3);
    (rank, name.to_string())
}

impl Plan {
    /// The plan's verdict: blocked while any step has a finding at `--fail-on` (error when it is
    /// not given: then a plan is not a gate and `plan` exits 0 either way; `check` is the gate).
    pub fn decision(&self) -> Decision {
        let counts = Counts::of(self.steps.iter().flat_map(|s| s.preconditions.iter()));
        let from = (!self.reinstall).then_some(self.from.as_str());
        Decision::at(counts, self.fail_on, from, Some(&self.to))
    }
}

/// The label a Pod Security relaxation changes.
pub const PSA_ENFORCE: &str = "pod-security.kubernetes.io/enforce";

pub struct StepContext<'a> {
    pub release: &'a str,
    pub namespace: &'a str,
    pub method: Method,
    pub repository: &'a str,
    /// Flags that reach the repository (` --plain-http`), written after it in Helm commands.
    pub registry_flags: &'a str,
    /// The user's value flags as the shell takes them (` -f values.yaml --set a=b`), each with a
    /// leading space.
    pub value_flags: &'a str,
    /// The values the upgrade applies (the release's, then the flags): keys the target renamed
    /// are carried to their new names (`audit::renames`).
    pub user_values: &'a serde_json::Value,
    /// How the first step's Helm command reaches the release (later steps upgrade what it made).
    pub start: commands::HelmStart,
    /// The Trainer CRDs the cluster holds (by [`crd_rank`]).
    pub held_crds: &'a [HeldCrd],
    /// The GitOps object owning the release, from its engine's labels: (namespace, name).
    pub owner: Option<(&'a str, &'a str)>,
}

/// The Trainer controller Deployment a rendered chart holds (its name follows the release name:
/// `<release>-kubeflow-trainer-controller-manager` unless the release name contains the chart's).
pub fn manager_deployment(chart: &crate::inventory::Inventory) -> Option<&crate::objects::Object> {
    chart.objects.iter().filter(|o| o.identity.kind == "Deployment").find(|o| {
        crate::objects::workload::containers(&o.body)
            .iter()
            .any(|c| crate::objects::workload::ImageRef::parse(&c.image).repository.ends_with("trainer-controller-manager"))
    })
}

/// The step's commands for this deployment method. `target` is the step's target chart rendered
/// for this release: every object a command names comes from it (or from the cluster), never
/// from a default name.
pub fn step(
    ctx: &StepContext,
    number: usize,
    from: &semver::Version,
    to: &semver::Version,
    target: &crate::inventory::Inventory,
    findings: Vec<Finding>,
) -> Step {
    let mut values = ctx.value_flags.to_string();
    let carried = crate::audit::renames::carried(ctx.user_values, from, to);
    for arg in &carried {
        values.push_str(&format!(" --set-string {}", crate::shell::quote(arg)));
    }
    let s = commands::Step {
        release: ctx.release,
        namespace: ctx.namespace,
        repository: ctx.repository,
        registry_flags: ctx.registry_flags,
        values: &values,
        from,
        to,
        start: if number == 1 { ctx.start } else { commands::HelmStart::Upgrade },
        owner: ctx.owner,
    };
    // What taking objects over needs, as the rules that found them declare.
    let adoption = findings.iter().filter_map(|f| f.adopt).max();
    let templated = |v: &semver::Version| v.major > 2 || (v.major == 2 && v.minor >= 3);
    let down = to < from;
    let (mut manual, mut upgrade) = ctx.method.upgrade(&s, adoption);
    if !carried.is_empty() && ctx.method.hands_values_to_helm() {
        let renamed: Vec<String> = crate::audit::renames::crossed(from, to).iter().map(|r| format!("{} → {}", r.from, r.to)).collect();
        manual.push(format!("Rename in the values the engine hands to Helm: {} (the {to} chart ignores the old name)", renamed.join(", ")));
    }
    if down {
        // The CRDs are asked to keep only where Helm would delete one: TA-DIR-001 is then an
        // error (its variants crds-kept, crds-rendered and crds-outside are where none is).
        let keep = if deletes_crds(&findings) { ", the CRDs keep-annotated" } else { "" };
        manual.insert(
            0,
            format!("This is a downgrade ({from} → {to}): run it only after the fixes above (backups taken{keep}), and only if {to} is really meant"),
        );
        // Helm deletes the templated CRDs on the way down unless the live ones keep (TA-DIR-001):
        // the Helm command runs only when every Trainer CRD carries the policy.
        if templated(from) && !templated(to) {
            let crds: Vec<&str> = ctx.held_crds.iter().map(|c| c.name.as_str()).collect();
            upgrade = upgrade.into_iter().map(|c| if c.starts_with("helm ") { keep_guarded(&c, &crds) } else { c }).collect();
        }
    }
    let ns = crate::shell::quote(ctx.namespace);
    let mut verify = vec![ctx.method.status(&s)];
    if let Some(manager) = manager_deployment(target) {
        let q = crate::shell::quote;
        let manager_ns = if manager.identity.namespace.is_empty() { ns.clone() } else { q(&manager.identity.namespace) };
        verify.push(format!("kubectl -n {manager_ns} rollout status deployment/{} --timeout=5m", q(&manager.identity.name)));
    }
    // The target's Trainer CRDs (the cluster's when the target leaves them out: crds.enabled off).
    let mut crds: Vec<String> =
        target.crds.iter().filter(|c| c.group == crate::cluster::catalog::TRAINER_GROUP).map(|c| c.name.clone()).collect();
    if crds.is_empty() {
        crds = ctx.held_crds.iter().map(|c| c.name.clone()).collect();
    }
    crds.sort_by_key(|c| crd_rank(c));
    crds.dedup();
    if !crds.is_empty() {
        verify.push(format!("kubectl get crd {}", crds.iter().map(|c| crate::shell::quote(c)).collect::<Vec<_>>().join(" ")));
    }
    verify.push("kubectl get clustertrainingruntimes".to_string());
    if to.major == 2 && to.minor >= 3 {
        // The installer hook Job (Helm deletes it once it succeeds).
        verify.push(format!("kubectl -n {ns} get jobs -l app.kubernetes.io/component=runtimes-installer"));
    }
    let crds_move = !templated(from) && templated(to);
    let (rollback, dangerous) = ctx.method.rollback(&s, crds_move, templated(from));
    let mut preconditions: Vec<Finding> = findings.into_iter().filter(|f| f.severity <= Severity::Warning).collect();
    preconditions.sort_by(|a, b| (a.phase, a.severity, &a.id, &a.subject).cmp(&(b.phase, b.severity, &b.id, &b.subject)));
    Step {
        number,
        from: from.to_string(),
        to: to.to_string(),
        direction: if down { "downgrade" } else { "upgrade" },
        preconditions,
        manual,
        upgrade,
        verify,
        rollback,
        rollback_dangerous: dangerous,
    }
}

/// The rule that says what a downgrade deletes.
const DOWNGRADE_RULE: &str = "TA-DIR-001";

/// Whether a step's findings say Helm deletes a CRD on the way down: the downgrade rule is an
/// error only then.
fn deletes_crds(findings: &[Finding]) -> bool {
    findings.iter().any(|f| f.id == DOWNGRADE_RULE && f.severity == Severity::Error)
}

/// `command` run only when every Trainer CRD the cluster holds (`crds`, which a downgrade from a
/// templated-CRD chart would delete) carries `helm.sh/resource-policy: keep`; otherwise it prints
/// which do not and fails, without running it (one line: pasted into a shell, the command cannot
/// run after a failed check).
pub fn keep_guarded(command: &str, crds: &[&str]) -> String {
    if crds.is_empty() {
        return command.to_string();
    }
    let crds = crds.iter().map(|c| crate::shell::quote(c)).collect::<Vec<_>>().join(" ");
    format!(
        "unkept=$(kubectl get crd {crds} -o jsonpath='{{range .items[*]}}{{.metadata.name}}={{.metadata.annotations.helm\\.sh/resource-policy}}{{\"\\n\"}}{{end}}' | grep -v '=keep$' || true); \
         if [ -n \"$unkept\" ]; then echo \"downgrade stopped: these CRDs lack helm.sh/resource-policy=keep and Helm would delete them with every TrainJob and runtime (TA-DIR-001): $unkept\" >&2; false; else {command}; fi"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> semver::Version {
        semver::Version::parse(s).unwrap()
    }

    #[test]
    fn gates_route_through_the_latest_stop() {
        let rules = crate::audit::rules::load(None).unwrap();
        let available: Vec<semver::Version> = ["2.2.1", "2.3.0", "2.3.1", "2.3.2-rc.0", "2.4.0"].iter().map(|s| v(s)).collect();
        assert_eq!(path(&rules, &v("2.2.1"), &v("2.4.0"), &available).unwrap(), [v("2.3.1"), v("2.4.0")]);
        assert_eq!(path(&rules, &v("2.3.0"), &v("2.4.0"), &available).unwrap(), [v("2.4.0")]);
        assert_eq!(path(&rules, &v("2.2.1"), &v("2.3.1"), &available).unwrap(), [v("2.3.1")]);
        assert!(path(&rules, &v("2.1.0"), &v("2.4.0"), &[v("2.4.0")]).unwrap_err().contains("~2.3"));
    }

    #[test]
    fn same_version_plans_nothing_and_a_downgrade_is_one_guarded_step() {
        let rules = crate::audit::rules::load(None).unwrap();
        assert!(path(&rules, &v("2.3.0"), &v("2.3.0"), &[]).unwrap().is_empty());
        assert_eq!(path(&rules, &v("2.3.0"), &v("2.2.1"), &[v("2.2.1"), v("2.3.0")]).unwrap(), [v("2.2.1")]);
        let held = [HeldCrd { name: "trainjobs.trainer.kubeflow.org".into(), namespaced: true }];
        let ctx = StepContext {
            release: "kubeflow-trainer",
            namespace: "kubeflow-system",
            method: Method::Helm,
            repository: "oci://r/kubeflow-trainer",
            registry_flags: "",
            value_flags: "",
            user_values: &serde_json::Value::Null,
            start: Default::default(),
            held_crds: &held,
            owner: None,
        };
        let down = step(&ctx, 1, &v("2.3.0"), &v("2.2.1"), &Default::default(), Vec::new());
        assert_eq!(down.direction, "downgrade");
        assert!(down.manual[0].starts_with("This is a downgrade (2.3.0 → 2.2.1)"), "{:?}", down.manual);
        let command = &down.upgrade[0];
        assert!(command.starts_with("unkept=$(kubectl get crd ") && command.contains("else helm upgrade kubeflow-trainer "), "{command}");
        // Below the templated-CRD line nothing is deleted with the CRDs: no guard.
        let patch = step(&ctx, 1, &v("2.2.1"), &v("2.2.0"), &Default::default(), Vec::new());
        assert!(patch.upgrade[0].starts_with("helm upgrade "), "{}", patch.upgrade[0]);
        assert_eq!(step(&ctx, 1, &v("2.2.1"), &v("2.3.0"), &Default::default(), Vec::new()).direction, "upgrade");
    }

    /// The guard runs the command only when every Trainer CRD keeps (stand-in kubectl).
    #[test]
    fn the_keep_guard_runs_the_command_only_when_every_crd_keeps() {
        let dir = tempfile::tempdir().unwrap();
        let kubectl = dir.path().join("kubectl");
        let run = |policies: &str| {
            std::fs::write(&kubectl, format!("#!/bin/sh\nprintf '{policies}'\n")).unwrap();
            std::fs::set_permissions(&kubectl, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
            let path = format!("{}:{}", dir.path().display(), std::env::var("PATH").unwrap_or_default());
            std::process::Command::new("bash")
                .args(["-euo", "pipefail", "-c", &keep_guarded("echo downgrading", &["a.x", "b.x"])])
                .env("PATH", path)
                .output()
                .unwrap()
        };
        let all = run("a=keep\\nb=keep\\nc=keep\\n");
        assert!(all.status.success() && String::from_utf8_lossy(&all.stdout).contains("downgrading"), "{all:?}");
        let one = run("a=keep\\nb=\\nc=keep\\n");
        assert!(!one.status.success() && !String::from_utf8_lossy(&one.stdout).contains("downgrading"), "{one:?}");
        assert!(
            String::from_utf8_lossy(&one.stderr).contains("downgrade stopped: these CRDs lack helm.sh/resource-policy=keep"),
            "{one:?}"
        );
    }

    #[test]
    fn a_renamed_value_is_carried_under_its_new_name() {
        let user = serde_json::json!({"manager": {"annotations": {"prometheus.io/scrape": "true"}}});
        let ctx = StepContext {
            release: "kubeflow-trainer",
            namespace: "kubeflow-system",
            method: Method::Helm,
            repository: "oci://r/kubeflow-trainer",
            registry_flags: "",
            value_flags: "",
            user_values: &user,
            start: Default::default(),
            held_crds: &[],
            owner: None,
        };
        let s = step(&ctx, 1, &v("2.1.0"), &v("2.3.0"), &Default::default(), Vec::new());
        let arg = crate::shell::quote("manager.podAnnotations.prometheus\\.io/scrape=true");
        assert!(s.upgrade[0].contains(&format!(" --reset-then-reuse-values --set-string {arg} --wait")), "{}", s.upgrade[0]);
        assert!(!step(&ctx, 1, &v("2.2.1"), &v("2.3.0"), &Default::default(), Vec::new()).upgrade[0].contains("--set-string"));
    }

    #[test]
    fn helm_commands_reach_the_repository_with_its_flags() {
        let mut ctx = StepContext {
            release: "kubeflow-trainer",
            namespace: "kubeflow-system",
            method: Method::Helm,
            repository: "oci://127.0.0.1:5000/kubeflow/charts/kubeflow-trainer",
            registry_flags: " --plain-http",
            value_flags: "",
            user_values: &serde_json::Value::Null,
            start: Default::default(),
            held_crds: &[],
            owner: None,
        };
        let s = step(&ctx, 1, &v("2.3.0"), &v("2.3.1"), &Default::default(), Vec::new());
        assert_eq!(
            s.upgrade,
            ["helm upgrade kubeflow-trainer oci://127.0.0.1:5000/kubeflow/charts/kubeflow-trainer --plain-http --version 2.3.1 -n kubeflow-system --reset-then-reuse-values --wait --timeout 10m"]
        );
        ctx.method = Method::Kubectl;
        assert!(step(&ctx, 1, &v("2.2.0"), &v("2.3.0"), &Default::default(), Vec::new()).upgrade[0]
            .contains("kubeflow-trainer --plain-http --version 2.3.0"));
    }

    #[test]
    fn kubectl_installs_are_forced_helm_releases_only_on_a_conflict() {
        let ctx = StepContext {
            release: "kubeflow-trainer",
            namespace: "kubeflow-system",
            method: Method::Kubectl,
            repository: "oci://r/kubeflow-trainer",
            registry_flags: "",
            value_flags: "",
            user_values: &serde_json::Value::Null,
            start: Default::default(),
            held_crds: &[],
            owner: None,
        };
        // Each finding takes over objects as its rule declares (`adopt:`).
        let rules = crate::audit::rules::load(None).unwrap();
        let finding = |id: &str| Finding {
            id: id.into(),
            severity: Severity::Error,
            title: String::new(),
            subject: String::new(),
            location: String::new(),
            message: String::new(),
            evidence: Vec::new(),
            fix: String::new(),
            commands: Vec::new(),
            restore: Vec::new(),
            fix_lines: Vec::new(),
            adopt: rules.iter().find(|r| r.id == id).and_then(|r| r.adopt),
            source: String::new(),
            expect: Vec::new(),
            phase: Default::default(),
            variant: None,
        };
        // A kubectl/kustomize install is always taken over with --force-conflicts (its apply
        // manager owns fields); a Helm release only when check found a conflict.
        let adopt = step(&ctx, 1, &v("2.2.0"), &v("2.3.0"), &Default::default(), vec![finding("TA-OWN-002")]);
        assert!(adopt.upgrade[0].ends_with("--take-ownership --force-conflicts --wait --timeout 10m"), "{}", adopt.upgrade[0]);
        let helm = StepContext { method: Method::Helm, ..ctx };
        let adopt = step(&helm, 1, &v("2.2.0"), &v("2.3.0"), &Default::default(), vec![finding("TA-OWN-001")]);
        assert!(adopt.upgrade[0].ends_with("--take-ownership --wait --timeout 10m"), "{}", adopt.upgrade[0]);
        let force = step(&ctx, 1, &v("2.2.0"), &v("2.3.0"), &Default::default(), vec![finding("TA-OWN-002"), finding("TA-OWN-003")]);
        assert!(force.upgrade[0].ends_with("--take-ownership --force-conflicts --wait --timeout 10m"), "{}", force.upgrade[0]);
        let force = step(&helm, 1, &v("2.3.0"), &v("2.3.1"), &Default::default(), vec![finding("TA-OWN-003")]);
        assert!(force.upgrade[0].contains("--reset-then-reuse-values --take-ownership --force-conflicts --wait"), "{}", force.upgrade[0]);
    }

    /// A Flux HelmRelease is reconciled by its own name and namespace (its objects' labels), which
    /// need not be the Helm release's.
    #[test]
    fn a_flux_helmrelease_is_named_as_its_objects_label_it() {
        let ctx = StepContext {
            release: "ml-platform-trainer",
            namespace: "ml-platform",
            method: Method::FluxHelm,
            repository: "oci://r/kubeflow-trainer",
            registry_flags: "",
            value_flags: "",
            user_values: &serde_json::Value::Null,
            start: Default::default(),
            held_crds: &[],
            owner: Some(("flux-system", "trainer")),
        };
        let s = step(&ctx, 1, &v("2.3.0"), &v("2.3.1"), &Default::default(), Vec::new());
        assert_eq!(s.upgrade, ["flux reconcile helmrelease trainer -n flux-system --with-source"]);
        assert!(s.manual[0].contains("in the HelmRelease flux-system/trainer"), "{:?}", s.manual);
        let unlabelled = step(&StepContext { owner: None, ..ctx }, 1, &v("2.3.0"), &v("2.3.1"), &Default::default(), Vec::new());
        assert_eq!(unlabelled.upgrade, ["flux reconcile helmrelease ml-platform-trainer -n ml-platform --with-source"]);
    }
}
