//! `namespace-quota`: everything the upgrade creates in each namespace it writes into, against
//! that namespace's ResourceQuotas and LimitRanges (`cluster::quota`): Helm's new release record,
//! the target's release objects the release does not hold yet (2.3.0's runtimes ConfigMap, its
//! installer's ServiceAccount and RBAC…), the upgrade's hook Jobs and the Pod each runs, and the
//! Pods of the Deployments it rolls out (any change to the Pod template: `maxSurge` of them
//! beside the running ones, with a new ReplicaSet) or creates. A fresh install over an
//! uninstalled release creates it all, even at the version it had. Helm runs pre-upgrade hooks, applies the release, waits for the rollout, then runs
//! post-upgrade hooks (helm v4.2.3 `pkg/action/upgrade.go` L458-L515); a replaced Pod still
//! counts against `pods` and compute quotas until it is gone, so the rollout's and the hooks'
//! Pods are charged together. Object counts are never freed on the way: Helm deletes what the
//! target drops only after it created and updated the rest (`pkg/kube/client.go` Update).
//!
//! A hit when a quota cannot hold the sum (the base words); variant `unset-resources` when a Pod
//! sets no CPU or memory request or limit a quota in its namespace tracks (the quota admission
//! refuses it whatever the room, "failed quota: … must specify"); variant `limit-range` when a
//! LimitRange refuses a Pod after its defaults. Objects of kinds the tool does not read (most
//! ConfigMaps, Secrets, ServiceAccounts, Roles) are taken as new when the release does not hold
//! them: the evidence says so.

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;
use serde_json::Value as Json;

use super::{Check, Hit};
use crate::audit::input::CheckInput;
use crate::cluster::quota::{limit_ranges, object_usage, show, surge, Amount, Pod, Quota};
use crate::objects::{str_at, Origin};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {}

/// Kinds a cluster state keeps, so their absence from it means they do not exist.
const READ_KINDS: &[&str] = &["Deployment", "CustomResourceDefinition", "ClusterTrainingRuntime", "TrainingRuntime", "Namespace"];

/// What creates a Pod the upgrade makes (in the namespace of its [`Creation`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum PodOwner {
    /// A Deployment's ReplicaSet: a new Deployment's, or a rollout's (its surge Pods).
    Deployment(String),
    /// A hook Job.
    HookJob(String),
}

/// One create the upgrade makes in a namespace.
pub(super) struct Creation {
    /// `ConfigMap kubeflow-system/x (a new release object)`.
    pub(super) what: String,
    usage: BTreeMap<String, Amount>,
    /// For a Pod, what admission reads of it.
    pod: Option<Pod>,
    /// For a Pod, what creates it.
    pub(super) owner: Option<PodOwner>,
    /// Taken as new though the tool cannot read whether it exists.
    assumed: bool,
    /// For a Pod: the values key its template reads its resources from.
    resources: Option<String>,
    /// A 2.3 runtime snapshot ConfigMap (what `configmap-quota`, TA-NB-005, reports alone).
    pub(super) snapshot: bool,
}

impl Creation {
    fn new(what: String, usage: BTreeMap<String, Amount>) -> Creation {
        Creation { what, usage, pod: None, owner: None, assumed: false, resources: None, snapshot: false }
    }

    /// What it is charged under `key` (0 when nothing), in nano-units.
    pub(super) fn charged(&self, key: &str) -> Amount {
        self.usage.get(key).copied().unwrap_or(0)
    }
}

/// Whether the upgrade brings the 2.3 controller's runtime snapshots: a controller that makes
/// them (2.3 and later, pre-releases included) replaces one that does not.
pub(super) fn brings_snapshots(input: &CheckInput) -> bool {
    (input.from.major, input.from.minor) < (2, 3) && (input.to.major, input.to.minor) >= (2, 3)
}

/// The runtime snapshot ConfigMaps the target's controller creates in `namespace`, one per
/// TrainJob it reconciles (`cluster::legacy::no_runtime_snapshot`), as one creation.
fn snapshots(input: &CheckInput, namespace: &str) -> Option<Creation> {
    if !brings_snapshots(input) {
        return None;
    }
    let n = input
        .state
        .trainjobs()
        .filter(|tj| str_at(tj, &["metadata", "namespace"]) == namespace && crate::cluster::legacy::no_runtime_snapshot(tj).is_none())
        .count();
    (n > 0).then(|| {
        let mut usage = object_usage("", "ConfigMap", &Json::Null);
        usage.values_mut().for_each(|v| *v *= n as Amount);
        let mut c = Creation::new(
            format!("{} (the 2.3 controller's, one per TrainJob it reconciles)", super::counted(n, "runtime snapshot ConfigMap")),
            usage,
        );
        c.snapshot = true;
        c
    })
}

/// The Pod template spec of a Deployment or a Job.
fn template(body: &Json) -> Option<&Json> {
    body.pointer("/spec/template/spec")
}

/// The containers' images, commands and args: what a rollout changes on an upgrade.
fn workload_shape(body: &Json) -> Vec<(String, String, String, String)> {
    crate::objects::workload::containers(body)
        .into_iter()
        .map(|c| (c.name.clone(), c.image.clone(), c.command.join(" "), c.args.join(" ")))
        .collect()
}

/// The release records Helm writes in the release namespace before it applies anything (helm
/// v4.2.3 `pkg/action/upgrade.go` L410-L413 and `install.go` L465, `Releases.Create`): one per
/// Helm command the upgrade runs (a rollback first makes two), stored as the release's own
/// records are (a Secret under Helm's default driver, a ConfigMap under `configmap`).
fn release_records(input: &CheckInput, namespace: &str) -> Option<Creation> {
    if namespace != input.namespace || input.engine() != crate::engine::Engine::Helm {
        return None;
    }
    let (kind, commands, last) = match input.release {
        Some(r) => {
            let commands = if matches!(r.route(), crate::cluster::release::Route::Rollback { .. }) { 2 } else { 1 };
            (if r.current.driver == "ConfigMap" { "ConfigMap" } else { "Secret" }, commands, r.current.revision)
        }
        None => ("Secret", 1, 0),
    };
    let mut usage = object_usage("", kind, &Json::Null);
    usage.values_mut().for_each(|v| *v *= commands);
    let names: Vec<String> = (1..=commands).map(|i| format!("sh.helm.release.v1.{}.v{}", input.release_name, last + i as i64)).collect();
    Some(Creation::new(format!("{kind} {namespace}/{} (the release record Helm writes first)", names.join(", ")), usage))
}

/// Whether applying the target's Deployment over the live one makes a new ReplicaSet. The
/// Deployment controller names a ReplicaSet by a hash of the whole Pod template (k8s v1.36.1
/// `pkg/controller/deployment/sync.go` `getNewReplicaSet`, `controller.ComputeHash`), so any
/// change Helm's patch makes to the live template rolls out: a field the target sets that the
/// live template lacks or holds otherwise (a subchart's `helm.sh/chart` label, a config-hash
/// annotation, an image set by hand), or a label or annotation the revision Helm patches from
/// set and the target drops. A template already as the target renders it (the re-run of a
/// failed upgrade, which applied it) does not roll out again.
fn rolls_out(base: &[crate::objects::Object], live: &Json, target: &crate::objects::Object) -> bool {
    if workload_shape(live) != workload_shape(&target.body) {
        return true;
    }
    let (Some(wanted), have) = (target.body.pointer("/spec/template"), live.pointer("/spec/template")) else { return false };
    if sets_otherwise(wanted, have) {
        return true;
    }
    let id = &target.identity;
    let Some(before) = base
        .iter()
        .find(|o| o.identity.kind == id.kind && o.identity.namespace == id.namespace && o.identity.name == id.name)
        .and_then(|o| o.body.pointer("/spec/template/metadata"))
    else {
        return false;
    };
    ["labels", "annotations"].iter().any(|field| {
        let at = |t: Option<&Json>| t.and_then(|t| t.get(*field)).and_then(Json::as_object).cloned().unwrap_or_default();
        let (before, after, live) = (at(Some(before)), at(wanted.get("metadata")), at(have.and_then(|h| h.get("metadata"))));
        before.keys().any(|k| !after.contains_key(k) && live.contains_key(k))
    })
}

/// Whether `have` (a live object's part) lacks a field `want` (a rendered one's) sets, or holds
/// it otherwise; scalars compare as text (the API server stores the chart's `cpu: 2` as `"2"`),
/// what the server adds (defaults) is not a difference.
fn sets_otherwise(want: &Json, have: Option<&Json>) -> bool {
    let text = |v: &Json| match v {
        Json::String(s) => Some(s.clone()),
        Json::Number(n) => Some(n.to_string()),
        Json::Bool(b) => Some(b.to_string()),
        _ => None,
    };
    match (want, have) {
        (Json::Null, _) => false,
        (Json::Object(w), Some(Json::Object(h))) => w.iter().any(|(k, v)| sets_otherwise(v, h.get(k))),
        (Json::Object(w), _) => !w.is_empty(),
        (Json::Array(w), Some(Json::Array(h))) => w.len() != h.len() || w.iter().zip(h).any(|(a, b)| sets_otherwise(a, Some(b))),
        (Json::Array(w), _) => !w.is_empty(),
        (scalar, Some(h)) => text(scalar) != text(h),
        (_, None) => true,
    }
}

/// What the upgrade creates in `namespace`, in the order it is created: Helm's (its release
/// record, pre-upgrade hooks, the release and its rollouts, post-upgrade hooks), then the target
/// controller's runtime snapshots.
pub(super) fn creations(input: &CheckInput, namespace: &str) -> Vec<Creation> {
    let held: BTreeSet<(String, String, String)> = input.release_objects().into_iter().collect();
    let base = input.release.map(|r| r.upgrade_objects()).unwrap_or_default();
    let mut out: Vec<Creation> = release_records(input, namespace).into_iter().collect();
    let pods = |out: &mut Vec<Creation>, by: PodOwner, owner: &str, source: &str, spec: &Json, n: u64| {
        for i in 0..n {
            let pod = Pod::from_spec(owner.to_string(), spec);
            let what = if n > 1 { format!("Pod {} of {owner}", i + 1) } else { format!("the Pod of {owner}") };
            let mut c = Creation::new(what, pod.usage());
            c.resources = super::namespace_pod_security::chart_value(input, source, "resources");
            c.pod = Some(pod);
            c.owner = Some(by.clone());
            out.push(c);
        }
    };
    // Pre-upgrade (pre-install) hooks, then the release, then post-upgrade (post-install) ones.
    let (pre, post) = if input.release.is_some() { ("pre-upgrade", "post-upgrade") } else { ("pre-install", "post-install") };
    let hooks = |event: &'static str| {
        input.target.hooks.iter().filter(move |h| h.identity.namespace == namespace && h.events.iter().any(|e| e == event))
    };
    let hook = |out: &mut Vec<Creation>, h: &crate::inventory::hook::HookInfo, event: &str| {
        let id = &h.identity;
        out.push(Creation::new(
            format!("{} {namespace}/{} (a {event} hook)", id.kind, id.name),
            object_usage(&id.group, &id.kind, &h.body),
        ));
        if id.kind == "Job" {
            if let Some(spec) = template(&h.body) {
                let parallel = h.body.pointer("/spec/parallelism").and_then(Json::as_u64).unwrap_or(1).max(1);
                pods(
                    out,
                    PodOwner::HookJob(id.name.clone()),
                    &format!("hook Job {namespace}/{}", id.name),
                    &h.source,
                    spec,
                    parallel.min(8),
                );
            }
        }
    };
    for h in hooks(pre) {
        hook(&mut out, h, pre);
    }
    for o in input.target.objects.iter().filter(|o| o.origin == Origin::Template && o.identity.namespace == namespace) {
        let id = &o.identity;
        let key = (id.kind.clone(), id.namespace.clone(), id.name.clone());
        let live = input.live(&id.kind, namespace, &id.name);
        let readable = READ_KINDS.contains(&id.kind.as_str());
        // New: not in the cluster, as read; or, for a kind the tool does not read, not held by
        // the release (then taken as new, and said so).
        if live.is_none() && (readable || !held.contains(&key)) {
            let mut c = Creation::new(
                format!("{} {namespace}/{} (a new release object)", id.kind, id.name),
                object_usage(&id.group, &id.kind, &o.body),
            );
            c.assumed = !readable;
            out.push(c);
        }
        if id.kind != "Deployment" {
            continue;
        }
        let Some(spec) = template(&o.body) else { continue };
        match live {
            None => {
                let replicas = o.body.pointer("/spec/replicas").and_then(Json::as_u64).unwrap_or(1);
                out.push(Creation::new(
                    format!("a ReplicaSet of Deployment {namespace}/{}", id.name),
                    object_usage("apps", "ReplicaSet", &Json::Null),
                ));
                let by = PodOwner::Deployment(id.name.clone());
                pods(&mut out, by, &format!("Deployment {namespace}/{}", id.name), &o.source, spec, replicas.min(64));
            }
            Some(l) if rolls_out(&base, l, o) => {
                out.push(Creation::new(
                    format!("the new ReplicaSet of Deployment {namespace}/{} (its rollout)", id.name),
                    object_usage("apps", "ReplicaSet", &Json::Null),
                ));
                let (by, owner) = (PodOwner::Deployment(id.name.clone()), format!("Deployment {namespace}/{} (rollout surge)", id.name));
                pods(&mut out, by, &owner, &o.source, spec, surge(&o.body).min(64));
            }
            Some(_) => {}
        }
    }
    for h in hooks(post) {
        hook(&mut out, h, post);
    }
    out.extend(snapshots(input, namespace));
    out
}

/// The namespaces the release writes into (its objects' and hooks').
pub(super) fn release_namespaces<'a>(input: &'a CheckInput) -> BTreeSet<&'a str> {
    let mut namespaces: BTreeSet<&str> = input.target.objects.iter().map(|o| o.identity.namespace.as_str()).collect();
    namespaces.extend(input.target.hooks.iter().map(|h| h.identity.namespace.as_str()));
    namespaces.remove("");
    namespaces
}

/// Whether what [`creations`] lists is created only if the upgrade runs at all: already at the
/// target, the plan still prints the upgrade when an error stands there, and Helm runs it as any
/// other (helm v4.2.3 `pkg/action/upgrade.go` `prepareUpgrade` L221-L344 has no same-chart
/// shortcut): a new release record, the hooks and their Pods again, a patch of each object that
/// changes nothing it already holds (a rollout only where the live template differs). So a hit
/// on what it creates stands only beside another error (`Hit::if_upgrade_runs`); unless Helm
/// cannot start there by itself: a fresh install over an uninstalled release creates it all
/// again, a rollback then the upgrade runs the hooks again, and the plan always prints those.
/// The one rule for every kind that reads [`creations`].
pub(super) fn created_if_upgrade_runs(input: &CheckInput) -> bool {
    let helm_starts = input.release.is_none_or(|r| matches!(r.route(), crate::cluster::release::Route::Upgrade { .. }));
    input.from == input.to && helm_starts
}

impl Check for Params {
    fn check(&self, input: &CheckInput) -> Vec<Hit> {
        let if_upgrade_runs = created_if_upgrade_runs(input);
        let mut hits = self.hits(input);
        for h in &mut hits {
            h.if_upgrade_runs = if_upgrade_runs;
        }
        hits
    }
}

impl Params {
    fn hits(&self, input: &CheckInput) -> Vec<Hit> {
        let mut hits = Vec::new();
        for ns in release_namespaces(input) {
            let quotas: Vec<Quota> =
                input.state.of_kind("ResourceQuota").filter(|q| str_at(q, &["metadata", "namespace"]) == ns).map(Quota::read).collect();
            let ranges: Vec<&Json> = input.state.of_kind("LimitRange").filter(|l| str_at(l, &["metadata", "namespace"]) == ns).collect();
            if quotas.is_empty() && ranges.is_empty() {
                continue;
            }
            let mut made = creations(input, ns);
            // LimitRanges first (they default, then bound, every Pod), then the quotas' rules for
            // Pods. A Pod a LimitRange refuses still counts against the quotas below: the fix of
            // that refusal (a wider range, other resources) makes it, and a quota it then
            // overflows is the next refusal (explorer seed 7 state 3670: LimitRange max.cpu=1 and
            // a requests.cpu quota 4/5, both in the release namespace).
            let mut refused: BTreeSet<usize> = BTreeSet::new();
            for c in made.iter_mut() {
                let Some(pod) = c.pod.as_mut() else { continue };
                let refusals = limit_ranges(pod, &ranges);
                c.usage = pod.usage();
                for (range, message) in &refusals {
                    hits.push(
                        Hit::new(format!("LimitRange/{ns}/{range}"), format!("LimitRange {ns}/{range} refuses {}: {message}", c.what))
                            .var("namespace", ns)
                            .var("limit_range", range.as_str())
                            .var("pod", c.what.clone())
                            .var("resources", c.resources.clone().unwrap_or_else(|| "the chart's resources value for it".into()))
                            .evidence(format!("{}: {}", c.what, pod_resources(pod)))
                            .variant("limit-range"),
                    );
                }
            }
            for q in &quotas {
                let tracks = q.tracks();
                for (i, c) in made.iter().enumerate() {
                    let Some(pod) = c.pod.as_ref().filter(|p| q.matches_pod(p)) else { continue };
                    let missing = pod.missing(&tracks);
                    if missing.is_empty() {
                        continue;
                    }
                    refused.insert(i);
                    let must: Vec<String> = missing.iter().map(|(r, cs)| format!("{r} for: {}", cs.join(","))).collect();
                    hits.push(
                        Hit::new(
                            format!("ResourceQuota/{ns}/{}", q.name),
                            format!(
                                "ResourceQuota {ns}/{} tracks {} and {} sets none for some container: its create is refused (\"failed quota: {}: must specify {}\"){}",
                                q.name,
                                missing.keys().cloned().collect::<Vec<_>>().join(", "),
                                c.what,
                                q.name,
                                must.join("; "),
                                consequence(&c.what)
                            ),
                        )
                        .var("quota", q.name)
                        .var("namespace", ns)
                        .var("pod", c.what.clone())
                        .var("resources", c.resources.clone().unwrap_or_else(|| "the chart's resources value for it".into()))
                        .evidence(format!("{}: {}", c.what, pod_resources(pod)))
                        .variant("unset-resources"),
                    );
                }
            }
            for q in &quotas {
                let mut delta: BTreeMap<&str, (Amount, Vec<&Creation>)> = BTreeMap::new();
                for (i, c) in made.iter().enumerate() {
                    let applies = match &c.pod {
                        Some(p) => q.matches_pod(p) && !refused.contains(&i),
                        None => q.matches_object(),
                    };
                    if !applies {
                        continue;
                    }
                    for (key, amount) in &c.usage {
                        if q.hard.contains_key(key) && *amount != 0 {
                            let e = delta.entry(key.as_str()).or_default();
                            e.0 += amount;
                            e.1.push(c);
                        }
                    }
                }
                let mut over = Vec::new();
                let mut patch = serde_json::Map::new();
                let mut evidence = Vec::new();
                for (key, (amount, by)) in &delta {
                    let (hard, used) = (q.hard[*key], q.used.get(*key).copied().unwrap_or(0));
                    let snapshots: Amount = by.iter().filter(|c| c.snapshot).map(|c| c.charged(key)).sum();
                    // The runtime snapshots alone overflow it: TA-NB-005 (`configmap-quota`)
                    // says so, with the total this key needs.
                    if used + amount <= hard || used + snapshots > hard {
                        continue;
                    }
                    over.push(format!("{key}: {} used of {}, the upgrade adds {}", show(key, used), show(key, hard), show(key, *amount)));
                    patch.insert(key.to_string(), Json::String(show(key, used + amount)));
                    let assumed = by.iter().any(|c| c.assumed);
                    evidence.push(format!(
                        "{key}: {}{}",
                        by.iter().map(|c| format!("{} (+{})", c.what, show(key, c.charged(key)))).collect::<Vec<_>>().join(", "),
                        if assumed {
                            " — objects of kinds trainer-audit does not read are taken as new when the release does not hold them"
                        } else {
                            ""
                        }
                    ));
                }
                if over.is_empty() {
                    continue;
                }
                // What is refused: Pods and rollouts' ReplicaSets (their controllers retry, Helm
                // waits), or Helm's own creates (it fails at once).
                let refused: Vec<&Creation> =
                    delta.iter().filter(|(k, _)| patch.contains_key(**k)).flat_map(|(_, (_, by))| by.iter().copied()).collect();
                let replica_set = |c: &Creation| c.what.contains("ReplicaSet of Deployment");
                let pods_only = refused.iter().all(|c| c.pod.is_some());
                let rollouts_only = refused.iter().all(|c| c.pod.is_some() || replica_set(c));
                let mut h = Hit::new(
                    format!("ResourceQuota/{ns}/{}", q.name),
                    format!(
                        "ResourceQuota {ns}/{} cannot hold what the upgrade creates in {ns} ({}): what exceeds it is refused (\"exceeded quota: {}\"){}",
                        q.name,
                        over.join("; "),
                        q.name,
                        if pods_only {
                            ": the rollout or hook Pods are not created, and helm upgrade --wait fails at its --timeout"
                        } else if rollouts_only {
                            ": the Deployment's new ReplicaSet is not created, its rollout never starts, and helm upgrade --wait fails at its --timeout"
                        } else {
                            ": helm upgrade fails on it"
                        }
                    ),
                )
                .var("quota", q.name)
                .var("namespace", ns)
                .var("patch", Json::Object(serde_json::Map::from_iter([("spec".to_string(), serde_json::json!({"hard": patch}))])).to_string());
                h.evidence.push(format!(
                    "ResourceQuota {ns}/{}: hard {}{}",
                    q.name,
                    q.hard.iter().map(|(k, v)| format!("{k}={}", show(k, *v))).collect::<Vec<_>>().join(", "),
                    if q.synced { String::new() } else { " (no status yet: usage taken as 0; until the quota controller fills it, the API server refuses every create it covers)".into() }
                ));
                h.evidence.extend(evidence);
                hits.push(h);
            }
        }
        hits
    }
}

/// What happens when the API server refuses a create: Helm fails on its own objects, a controller
/// keeps retrying a Pod (and Helm waits).
fn consequence(what: &str) -> &'static str {
    if what.contains("hook Job") {
        ": the hook Job never completes, and helm upgrade fails at its --timeout"
    } else {
        ": the Deployment never rolls out, and helm upgrade --wait fails at its --timeout"
    }
}

/// A Pod's containers' requests and limits, as admission sees them.
fn pod_resources(pod: &Pod) -> String {
    let one = |name: &str, r: &crate::cluster::quota::Resources| {
        let list = |m: &BTreeMap<String, Amount>| {
            if m.is_empty() {
                "none".to_string()
            } else {
                m.iter().map(|(k, v)| format!("{k}={}", show(k, *v))).collect::<Vec<_>>().join(",")
            }
        };
        format!("container {name} requests {} limits {}", list(&r.requests), list(&r.limits))
    };
    let mut parts: Vec<String> = pod.containers.iter().chain(&pod.init_containers).map(|(n, r)| one(n, r)).collect();
    if !pod.defaulted.is_empty() {
        parts.push(format!("defaulted: {}", pod.defaulted.join("; ")));
    }
    parts.join("; ")
}
