//! What the upgrade will do in a state, worked out once for every oracle: the target version the
//! run resolves, the revision Helm starts from (or that it installs afresh, or refuses), the
//! base and target renders, the objects the upgrade creates, and the Pods that get created while
//! it runs (hook Jobs' Pods; the surge Pod of every Deployment whose Pod template changes).

use std::collections::BTreeMap;
use std::rc::Rc;

use serde_json::Value as Json;
use trainer_audit::objects::str_at;

use super::Observed;
use crate::explore::build::Built;
use crate::explore::charts::{Charts, Rendered};
use crate::explore::generate::VERSIONS;
use crate::explore::helm::Start;
use crate::explore::printed::{helm_call, plan_commands, HelmCall, Printed};
use crate::explore::state::{Install, Op, Outcome, State};

/// A Pod the upgrade makes the API server admit.
#[derive(Debug, Clone)]
pub struct NewPod {
    /// `Job/ns/name (post-upgrade hook)`, `Deployment/ns/name (rollout surge)`.
    pub owner: String,
    /// The owner's kind and name, as findings name it (`Job/ns/name`).
    pub owner_ref: String,
    pub spec: Json,
    /// Whether it runs beside the rollouts (Deployments) or after them (post hooks).
    pub phase: Phase,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    PreHook,
    Rollout,
    PostHook,
}

pub struct Situation<'a> {
    pub state: &'a State,
    pub charts: &'a Charts,
    pub built: &'a Built,
    /// The `--to` resolved among the registry's versions (None: nothing matches).
    pub target_version: Option<String>,
    /// The plan's first `helm upgrade`/`helm install` command, parsed.
    pub command: Option<HelmCall>,
    /// What Helm does with that command (or a plain upgrade when the plan prints none) on the
    /// history as it is.
    pub start_now: Start,
    /// The same after the plan's own `helm rollback` commands ran.
    pub start: Start,
    pub base: Option<Rc<Rendered>>,
    pub target: Option<Rc<Rendered>>,
    /// The state's objects by `Kind/namespace/name`.
    pub live: BTreeMap<String, &'a Json>,
    /// Whether the plan runs an upgrade at all (a plan with nothing to do changes nothing).
    pub upgrade_runs: bool,
}

pub fn key(o: &Json) -> String {
    format!("{}/{}/{}", str_at(o, &["kind"]), str_at(o, &["metadata", "namespace"]), str_at(o, &["metadata", "name"]))
}

/// `--to` as the run resolves it: an exact version, or a range's highest release.
pub fn resolve(to: &str) -> Option<String> {
    if VERSIONS.contains(&to) {
        return Some(to.to_string());
    }
    let req = semver::VersionReq::parse(to).ok()?;
    VERSIONS
        .iter()
        .filter_map(|v| semver::Version::parse(v).ok())
        .filter(|v| v.pre.is_empty() && req.matches(v))
        .max()
        .map(|v| v.to_string())
}

/// Whether patching the `live` Pod template with the `target`'s (from `base`) changes it.
pub fn template_changes(target: Option<&Json>, live: Option<&Json>, base: Option<&Json>) -> bool {
    fn missing(want: &Json, have: Option<&Json>) -> bool {
        let text = |v: &Json| match v {
            Json::Number(n) => Some(n.to_string()),
            Json::String(s) => Some(s.clone()),
            Json::Bool(b) => Some(b.to_string()),
            _ => None,
        };
        match (want, have) {
            (Json::Null, _) => false,
            (Json::Object(w), Some(Json::Object(h))) => w.iter().any(|(k, v)| missing(v, h.get(k))),
            (Json::Array(w), Some(Json::Array(h))) => w.len() != h.len() || w.iter().zip(h).any(|(a, b)| missing(a, Some(b))),
            (Json::Object(w), _) => !w.is_empty(),
            (Json::Array(w), _) => !w.is_empty(),
            (v, Some(h)) => text(v) != text(h),
            (_, None) => true,
        }
    }
    let Some(target) = target else { return false };
    if missing(target, live) {
        return true;
    }
    ["labels", "annotations"].iter().any(|field| {
        let at = |t: Option<&Json>| {
            t.and_then(|t| t.pointer(&format!("/metadata/{field}"))).and_then(Json::as_object).cloned().unwrap_or_default()
        };
        let (before, after, now) = (at(base), at(Some(target)), at(live));
        before.keys().any(|k| !after.contains_key(k) && now.contains_key(k))
    })
}

/// The `helm rollback` commands step 1's preconditions run before its upgrade. The step's
/// `rollback` (how to undo it, `helm rollback <name> -n <ns> restores the previous revision's
/// objects…`) is not run first: read as one, it rolled a pending 2.3.1 upgrade forward.
pub fn rollbacks_first(commands: &[Printed]) -> Vec<HelmCall> {
    let after = ["plan step 1 upgrade", "plan step 1 verify", "plan step 1 rollback"];
    commands
        .iter()
        .filter(|c| c.place.starts_with("plan step 1 ") && !after.contains(&c.place.as_str()))
        .filter_map(|c| helm_call(&c.line))
        .filter(|h| h.verb == "rollback")
        .collect()
}

/// The values the upgrade renders its target with. A kustomize install's values are in no
/// release record, so the plan's adoption (`helm upgrade --install`) carries none and Helm renders
/// the target's defaults (seed 7 states 301 and 3563: a runtime the overlay's values enabled
/// rendered the installer hook in the oracle's target, not in what the printed command installs).
/// A Helm release reuses its stored values; an Argo CD Application renders with its own.
fn values_applied(state: &State) -> Json {
    match &state.install {
        Install::Kustomize(_) => Json::Object(Default::default()),
        _ => state.values_json(),
    }
}

impl<'a> Situation<'a> {
    pub fn new(state: &'a State, built: &'a Built, charts: &'a Charts, observed: &Observed) -> Result<Situation<'a>, String> {
        let target_version = resolve(&state.to);
        let commands = observed.plan.as_ref().and_then(|p| p.get("report")).map(plan_commands).unwrap_or_default();
        let command = commands
            .iter()
            .filter(|c| c.place.starts_with("plan step 1 upgrade"))
            .filter_map(|c| helm_call(&c.line))
            .find(|h| h.verb == "upgrade" || h.verb == "install");
        let install_flag = command.as_ref().is_some_and(|c| c.verb == "install" || c.flags.iter().any(|f| f == "--install" || f == "-i"));
        let start_now = match &state.install {
            Install::Helm(_) => built.history.upgrade(&state.release, install_flag),
            _ => Start::Install { replace: false },
        };
        // The plan's own `helm rollback` before its upgrade (a pending release) runs first.
        let mut history = built.history.clone();
        for rollback in rollbacks_first(&commands) {
            let to = rollback.revision.unwrap_or(0);
            let to = if to == 0 { history.last().map_or(0, |r| r.number - 1) } else { to };
            let _ = history.apply(&state.release, &Op::Rollback(to, Outcome::Ok));
        }
        let start = match &state.install {
            Install::Helm(_) => history.upgrade(&state.release, install_flag),
            _ => Start::Install { replace: false },
        };
        let values = state.values_json();
        let render = |v: &str, values: &Json| charts.render(v, &state.release, &state.namespace, values).map_err(|e| e.to_string());
        let base = match &start {
            Start::Upgrade(rev) => Some(render(&rev.version, &values)?),
            _ => None,
        };
        let target = match &target_version {
            Some(v) => Some(render(v, &values_applied(state))?),
            None => None,
        };
        let upgrade_runs = match &observed.plan {
            Some(_) => command.is_some(),
            None => base.as_ref().map(|b| b.version.as_str()) != target_version.as_deref(),
        };
        let live = built.objects.iter().map(|o| (key(o), o)).collect();
        Ok(Situation { state, charts, built, target_version, command, start_now, start, base, target, live, upgrade_runs })
    }

    /// Whether the printed command carries a flag.
    pub fn command_has(&self, flag: &str) -> bool {
        self.command.as_ref().is_some_and(|c| c.flags.iter().any(|f| f == flag))
    }

    /// The target's objects the upgrade creates: not in the base manifest (all of them for an
    /// install).
    pub fn created(&self) -> Vec<&Json> {
        let Some(target) = &self.target else { return Vec::new() };
        let base: Vec<String> = self.base.as_ref().map(|b| b.objects.iter().map(key).collect()).unwrap_or_default();
        target.objects.iter().filter(|o| !base.contains(&key(o))).collect()
    }

    /// The Pods the API server admits while the upgrade runs.
    pub fn new_pods(&self) -> Vec<NewPod> {
        let Some(target) = &self.target else { return Vec::new() };
        let installing = self.base.is_none();
        let mut out = Vec::new();
        for hook in &target.hooks {
            let events: Vec<&str> = hook["events"].as_array().into_iter().flatten().filter_map(Json::as_str).collect();
            let phase = if installing {
                if events.contains(&"pre-install") {
                    Phase::PreHook
                } else if events.contains(&"post-install") {
                    Phase::PostHook
                } else {
                    continue;
                }
            } else if events.contains(&"pre-upgrade") {
                Phase::PreHook
            } else if events.contains(&"post-upgrade") {
                Phase::PostHook
            } else {
                continue;
            };
            let Some(job) = trainer_audit::objects::objects_in(
                str_at(hook, &["manifest"]),
                "hook",
                trainer_audit::objects::Origin::Template,
                &self.state.namespace,
            )
            .into_iter()
            .next() else {
                continue;
            };
            if job.body["kind"] != "Job" {
                continue;
            }
            let owner_ref = format!("Job/{}/{}", job.identity.namespace, job.identity.name);
            out.push(NewPod {
                owner: format!("{owner_ref} ({} hook)", events.join(",")),
                owner_ref,
                spec: job.body.pointer("/spec/template/spec").cloned().unwrap_or(Json::Null),
                phase,
            });
        }
        for d in target.objects.iter().filter(|o| o["kind"] == "Deployment") {
            // Helm patches the live object (its three-way merge, or server-side apply): the
            // template changes, and the Deployment controller rolls out (its ReplicaSet is named
            // by the template's hash, k8s v1.36.1 pkg/controller/deployment/sync.go
            // getNewReplicaSet), when a field the target sets is missing or otherwise in the live
            // template, or a label or annotation the base revision set and the target drops is
            // still there. Not when the live template already is the target's (a failed upgrade
            // applied it: seen on the control plane, live seed 1 state 4).
            let live = self.live.get(&key(d)).and_then(|o| o.pointer("/spec/template"));
            let base =
                self.base.as_ref().and_then(|b| b.objects.iter().find(|o| key(o) == key(d))).and_then(|o| o.pointer("/spec/template"));
            if live.is_some() && !template_changes(d.pointer("/spec/template"), live, base) {
                continue;
            }
            let before = live;
            let owner_ref = format!("Deployment/{}/{}", str_at(d, &["metadata", "namespace"]), str_at(d, &["metadata", "name"]));
            let why = if before.is_some() { "rollout surge" } else { "new Deployment" };
            out.push(NewPod {
                owner: format!("{owner_ref} ({why})"),
                owner_ref,
                spec: d.pointer("/spec/template/spec").cloned().unwrap_or(Json::Null),
                phase: Phase::Rollout,
            });
        }
        out
    }

    /// The version the Helm start works from (None: an install).
    pub fn from_version(&self) -> Option<&str> {
        match &self.start {
            Start::Upgrade(r) => Some(&r.version),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_template_rolls_out_when_the_patch_changes_the_live_one() {
        let old = json!({"metadata": {"labels": {"app": "j", "helm.sh/chart": "jobset-0.11.0"}}, "spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": "2"}}}]}});
        let new = json!({"metadata": {"labels": {"app": "j", "helm.sh/chart": "jobset-0.12.0"}}, "spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": 2}}}]}});
        assert!(template_changes(Some(&new), Some(&old), Some(&old)), "a label the target changes");
        assert!(!template_changes(Some(&new), Some(&new), Some(&old)), "the live template is already the target's");
        let mut defaulted = new.clone();
        defaulted["spec"]["dnsPolicy"] = json!("ClusterFirst");
        assert!(!template_changes(Some(&new), Some(&defaulted), Some(&new)), "server defaults are no change");
        let dropped = json!({"metadata": {"labels": {"app": "j"}}, "spec": new["spec"].clone()});
        assert!(template_changes(Some(&dropped), Some(&new), Some(&new)), "a label the target drops");
    }

    #[test]
    fn a_kustomize_adoption_renders_the_targets_defaults() {
        let with = |install: &str| -> State {
            format!("install={install} release=kubeflow-trainer/ml-platform to=2.3.0 value=runtimes.defaultEnabled=true").parse().unwrap()
        };
        assert_eq!(values_applied(&with("kustomize@2.2.0")), serde_json::json!({}));
        let kept = serde_json::json!({"runtimes": {"defaultEnabled": true}});
        assert_eq!(values_applied(&with("helm:install@2.2.0")), kept);
        assert_eq!(values_applied(&with("argocd@2.2.0")), kept);
    }

    #[test]
    fn only_the_preconditions_rollbacks_run_before_the_upgrade() {
        let report = json!({"plan": {"steps": [{"number": 1,
            "preconditions": [{"id": "TA-REL-001", "subject": "release kubeflow-system/kubeflow-trainer",
                "commands": ["helm history kubeflow-trainer -n kubeflow-system", "helm rollback kubeflow-trainer 1 -n kubeflow-system --force-conflicts"]}],
            "upgrade": ["helm upgrade kubeflow-trainer oci://r/kubeflow-trainer --version 2.3.1 -n kubeflow-system"],
            "rollback": "helm rollback kubeflow-trainer -n kubeflow-system restores the previous revision's objects",
            "rollback_dangerous": false}]}});
        let first = rollbacks_first(&plan_commands(&report));
        assert_eq!(first.iter().map(|h| h.revision).collect::<Vec<_>>(), [Some(1)]);
    }
}
