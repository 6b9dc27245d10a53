//! A state as the objects a snapshot of that cluster holds. A Helm install is built by running
//! its history as Helm runs it ([`super::helm::History::apply`]): each operation applies the
//! chart's rendered objects with the ownership metadata Helm sets (Helm v4.2.3
//! `pkg/action/validate.go` `setMetadataVisitor`: the `app.kubernetes.io/managed-by: Helm` label
//! and the `meta.helm.sh/release-name`/`-namespace` annotations), creates the `crds/` CRDs at
//! install when absent, deletes what the diff base had and the new manifest lacks (unless
//! `helm.sh/resource-policy: keep`, `pkg/kube/client.go`), runs the 2.3 installer hook when its
//! hooks complete (the built-in runtimes, labelled `managed-by=runtimes-installer`), and stores a
//! release record per revision as Helm encodes it. The rest — neighbours, quotas, LimitRanges,
//! TrainJobs, legacy jobs — are added as their controllers leave them.

use std::collections::BTreeMap;

use serde_json::{json, Value as Json};
use trainer_audit::objects::str_at;

use super::charts::{ChartError, Charts, Rendered};
use super::helm::History;
use super::state::{Applied, ImageForm, Install, JobState, Op, Outcome, State, TrainJob};
use crate::release::encode_secret;

const CREATED: &str = "2026-06-20T10:00:00Z";
const KEEP: &str = "helm.sh/resource-policy";
pub const INSTALLER_LABEL: &str = "trainer.kubeflow.org/managed-by";
pub const IN_USE: &str = "trainer.kubeflow.org/resource-in-use";

/// What a built state holds besides its objects: the facts the oracles need.
#[derive(Debug, Default)]
pub struct Built {
    /// Every object of the snapshot (ClusterInfo first).
    pub objects: Vec<Json>,
    /// The Helm history as stored.
    pub history: History,
    /// The version whose objects run (the last one applied), if any.
    pub running: Option<String>,
    /// The state's TrainJobs that exist: none once the history deleted their CRD (an uninstall
    /// of a chart whose CRDs are release objects).
    pub trainjobs: Vec<super::state::TrainJob>,
}

fn key(o: &Json) -> String {
    format!("{}/{}/{}", str_at(o, &["kind"]), str_at(o, &["metadata", "namespace"]), str_at(o, &["metadata", "name"]))
}

fn manager_field(applied: Applied, manager: &str) -> Json {
    let operation = if applied == Applied::ServerSide { "Apply" } else { "Update" };
    json!([{"manager": manager, "operation": operation, "apiVersion": "v1", "time": CREATED}])
}

/// An object as Helm leaves it after applying it for `release` in `namespace`.
fn helm_owned(o: &Json, release: &str, namespace: &str, applied: Applied) -> Json {
    let mut o = o.clone();
    let meta = o["metadata"].as_object_mut().expect("rendered objects have metadata");
    let labels = meta.entry("labels").or_insert_with(|| json!({}));
    if !labels.is_object() {
        *labels = json!({});
    }
    labels["app.kubernetes.io/managed-by"] = json!("Helm");
    let annotations = meta.entry("annotations").or_insert_with(|| json!({}));
    if !annotations.is_object() {
        *annotations = json!({});
    }
    annotations["meta.helm.sh/release-name"] = json!(release);
    annotations["meta.helm.sh/release-namespace"] = json!(namespace);
    meta.insert("creationTimestamp".into(), json!(CREATED));
    meta.insert("managedFields".into(), manager_field(applied, "helm"));
    o
}

/// What a controller's status says once the Deployment rolled out.
fn with_status(mut o: Json) -> Json {
    if o["kind"] == "Deployment" {
        let replicas = o.pointer("/spec/replicas").and_then(Json::as_i64).unwrap_or(1);
        o["status"] = json!({"replicas": replicas, "readyReplicas": replicas, "updatedReplicas": replicas, "availableReplicas": replicas});
    }
    if o["kind"] == "CustomResourceDefinition" {
        let stored: Vec<Json> = o
            .pointer("/spec/versions")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
            .filter(|v| v["storage"] == true)
            .map(|v| v["name"].clone())
            .collect();
        o["status"] = json!({"storedVersions": stored});
    }
    o
}

struct Cluster {
    live: BTreeMap<String, Json>,
}

impl Cluster {
    fn put(&mut self, o: Json) {
        self.live.insert(key(&o), with_status(o));
    }

    /// Deletes what `base` rendered and `target` does not, unless the live object keeps.
    fn prune(&mut self, base: &Rendered, target: Option<&Rendered>) {
        let wanted: Vec<String> = target.map(|t| t.objects.iter().map(key).collect()).unwrap_or_default();
        for o in &base.objects {
            let k = key(o);
            if wanted.contains(&k) {
                continue;
            }
            let keeps = self.live.get(&k).is_some_and(|l| str_at(l, &["metadata", "annotations", KEEP]) == "keep");
            if !keeps {
                self.live.remove(&k);
            }
        }
    }

    /// The 2.3 installer hook: applies its runtimes server-side as `kubectl`, labels them, and
    /// prunes runtimes carrying its label that it no longer ships (installer-job.yaml at v2.3.0).
    fn run_installer(&mut self, rendered: &Rendered) {
        if rendered.installer_runtimes.is_empty() {
            return;
        }
        let names: Vec<&str> = rendered.installer_runtimes.iter().map(|r| str_at(r, &["metadata", "name"])).collect();
        self.live.retain(|_, o| {
            o["kind"] != "ClusterTrainingRuntime"
                || str_at(o, &["metadata", "labels", INSTALLER_LABEL]) != "runtimes-installer"
                || names.contains(&str_at(o, &["metadata", "name"]))
        });
        for r in &rendered.installer_runtimes {
            let mut r = r.clone();
            let existing = self.live.get(&key(&r)).cloned();
            r["metadata"]["labels"][INSTALLER_LABEL] = json!("runtimes-installer");
            r["metadata"]["creationTimestamp"] = json!(CREATED);
            // Server-side apply with --force-conflicts keeps what others set (annotations, finalizers).
            if let Some(e) = existing {
                for field in ["annotations", "finalizers"] {
                    if let Some(v) = e["metadata"].get(field) {
                        r["metadata"][field] = v.clone();
                    }
                }
                if let Some(labels) = e["metadata"]["labels"].as_object() {
                    for (k, v) in labels {
                        r["metadata"]["labels"].as_object_mut().expect("labels").entry(k.clone()).or_insert(v.clone());
                    }
                }
            }
            r["metadata"]["managedFields"] =
                json!([{"manager": "kubectl", "operation": "Apply", "apiVersion": "trainer.kubeflow.org/v1alpha1", "time": CREATED}]);
            self.put(r);
        }
    }

    /// The 2.3 cleanup hook at uninstall: deletes every runtime carrying the installer's label.
    fn run_cleanup(&mut self, base: &Rendered) {
        if base.installer_runtimes.is_empty() {
            return;
        }
        self.live.retain(|_, o| {
            o["kind"] != "ClusterTrainingRuntime" || str_at(o, &["metadata", "labels", INSTALLER_LABEL]) != "runtimes-installer"
        });
    }
}

/// The release JSON Helm stores for one revision.
fn release_json(state: &State, revision: i64, status: &str, rendered: &Rendered, description: &str) -> Json {
    let mut release = json!({
        "name": state.release,
        "namespace": state.namespace,
        "version": revision,
        "info": {"first_deployed": CREATED, "last_deployed": format!("2026-06-{:02}T10:00:00Z", (10 + revision).min(28)), "description": description, "status": status},
        "chart": {"metadata": {"name": "kubeflow-trainer", "version": rendered.version, "appVersion": rendered.app_version, "apiVersion": "v2"}, "values": {}, "templates": [], "files": []},
        "config": state.values_json(),
        "manifest": rendered.manifest,
        "hooks": rendered.hooks,
    });
    match state.applied {
        Applied::Helm3 => {}
        Applied::ClientSide => release["apply_method"] = json!("csa"),
        Applied::ServerSide => release["apply_method"] = json!("ssa"),
    }
    release
}

fn description(op: &Op) -> &'static str {
    match op {
        Op::Install(_, Outcome::Ok) => "Install complete",
        Op::Upgrade(_, Outcome::Ok) => "Upgrade complete",
        Op::Rollback(_, Outcome::Ok) => "Rollback complete",
        Op::Install(_, Outcome::Failed) | Op::Upgrade(_, Outcome::Failed) => "Release \"x\" failed: context deadline exceeded",
        Op::Uninstall(Outcome::Ok | Outcome::Failed) => "Uninstallation complete",
        Op::Uninstall(Outcome::Killed) => "Deletion in progress (or silently failed)",
        _ => "Preparing",
    }
}

/// The Helm install: its history run op by op; the records and live objects it leaves.
fn helm(state: &State, ops: &[Op], charts: &Charts, cluster: &mut Cluster) -> Result<(History, Vec<Json>, Option<String>), ChartError> {
    let values = state.values_json();
    let render = |v: &str| charts.render(v, &state.release, &state.namespace, &values);
    let mut history = History::default();
    // Each revision's release JSON, by number (a status change rewrites it).
    let mut records: BTreeMap<i64, (Json, std::rc::Rc<Rendered>)> = BTreeMap::new();
    let mut running: Option<String> = None;
    for op in ops {
        let applied = history.apply(&state.release, op).map_err(|e| ChartError(format!("the history {op}: Helm refuses it: {e}")))?;
        match op {
            Op::Install(..) | Op::Upgrade(..) | Op::Rollback(..) => {
                let version = applied.version.clone().expect("an install, upgrade or rollback applies a version");
                let rendered = render(&version)?;
                if matches!(op, Op::Install(..)) {
                    for crd in &rendered.crds {
                        if !cluster.live.contains_key(&key(crd)) {
                            let mut crd = crd.clone();
                            crd["metadata"]["creationTimestamp"] = json!(CREATED);
                            crd["metadata"]["managedFields"] = manager_field(state.applied, "helm");
                            cluster.put(crd);
                        }
                    }
                }
                for o in &rendered.objects {
                    let mut owned = helm_owned(o, &state.release, &state.namespace, state.applied);
                    // What the cluster already holds on the object stays (keep annotations).
                    if let Some(existing) = cluster.live.get(&key(o)) {
                        if let Some(keep) = existing.pointer("/metadata/annotations").and_then(|a| a.get(KEEP)) {
                            owned["metadata"]["annotations"][KEEP] = keep.clone();
                        }
                    }
                    cluster.put(owned);
                }
                if let Some(base) = &applied.base {
                    let base_rendered = render(&base.version)?;
                    cluster.prune(&base_rendered, Some(&rendered));
                }
                if applied.hooks_ran {
                    cluster.run_installer(&rendered);
                }
                running = Some(version);
                let last = history.last().expect("a revision").clone();
                records.insert(last.number, (release_json(state, last.number, &last.status, &rendered, description(op)), rendered));
            }
            Op::Uninstall(outcome) => {
                if let (Some(base), Outcome::Ok | Outcome::Failed) = (&applied.base, outcome) {
                    let base_rendered = render(&base.version)?;
                    cluster.run_cleanup(&base_rendered);
                    cluster.prune(&base_rendered, None);
                    running = None;
                }
                // Killed in the pre-delete hook's wait: the hook Job Helm created stays and runs to
                // its end once its Pod runs (Helm v4.2.3 `pkg/action/hooks.go` L102-L120: created,
                // then watched; only Helm deletes it, after it succeeded), so the 2.3 cleanup has
                // deleted the installer's runtimes; nothing else is deleted.
                if let (Outcome::Killed, Some(version)) = (outcome, &applied.version) {
                    cluster.run_cleanup(&*render(version)?);
                }
            }
            Op::Unknown => {}
        }
        // Statuses as Helm left them, descriptions of the revisions an operation changed.
        for r in &history.revisions {
            if let Some((json, _)) = records.get_mut(&r.number) {
                if json["info"]["status"] != r.status.as_str() {
                    json["info"]["status"] = json!(r.status);
                    if r.status == "uninstalling" || r.status == "uninstalled" {
                        json["info"]["description"] = json!(description(op));
                    }
                }
            }
        }
    }
    let secrets = records
        .values()
        .map(|(json, rendered)| {
            // The release JSON is made of the render (one per version, release, namespace and
            // values), the revision's fields and the state's apply method.
            let info = &json["info"];
            let key = format!(
                "{:p}|{}|{}|{}|{}|{}|{}",
                std::rc::Rc::as_ptr(rendered),
                json["version"],
                info["status"],
                info["description"],
                info["last_deployed"],
                json["apply_method"],
                json["config"]
            );
            charts.record(key, || encode_secret(json, true))
        })
        .collect();
    Ok((history, secrets, running))
}

/// Objects another tool applied (kustomize, Argo CD): the chart's, with that tool's metadata.
fn applied_by_tool(state: &State, version: &str, charts: &Charts, cluster: &mut Cluster, argo: bool) -> Result<(), ChartError> {
    // The kustomize overlays enable the built-in runtimes; the chart needs it asked.
    let mut values = state.values_json();
    if !argo && semver::Version::parse(version).is_ok_and(|v| v >= semver::Version::new(2, 2, 0)) {
        values["runtimes"] = json!({"torchDistributed": {"enabled": true}});
    }
    let release = state.release.as_str();
    let rendered = charts.render(version, release, &state.namespace, &values)?;
    for o in rendered.crds.iter().chain(&rendered.objects) {
        let mut o = o.clone();
        o["metadata"]["creationTimestamp"] = json!(CREATED);
        if argo {
            let id = format!(
                "{}:{}/{}:{}/{}",
                state.release,
                str_at(&o, &["apiVersion"]).split_once('/').map_or("", |(g, _)| g),
                str_at(&o, &["kind"]),
                str_at(&o, &["metadata", "namespace"]),
                str_at(&o, &["metadata", "name"])
            );
            o["metadata"]["annotations"]["argocd.argoproj.io/tracking-id"] = json!(id);
            o["metadata"]["managedFields"] =
                json!([{"manager": "argocd-controller", "operation": "Apply", "apiVersion": "v1", "time": CREATED}]);
        } else {
            if let Some(labels) = o["metadata"]["labels"].as_object_mut() {
                for helm_label in
                    ["helm.sh/chart", "app.kubernetes.io/managed-by", "app.kubernetes.io/instance", "app.kubernetes.io/version"]
                {
                    labels.remove(helm_label);
                }
            }
            o["metadata"]["managedFields"] = json!([{"manager": "kubectl", "operation": "Apply", "apiVersion": "v1", "time": CREATED}]);
        }
        cluster.put(o);
    }
    cluster.run_installer(&rendered);
    Ok(())
}

fn namespace(name: &str, psa: Option<&str>) -> Json {
    let mut labels = json!({"kubernetes.io/metadata.name": name});
    if let Some(level) = psa {
        labels["pod-security.kubernetes.io/enforce"] = json!(level);
    }
    json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels, "creationTimestamp": CREATED}})
}

/// `registry.k8s.io/kueue/kueue`-style repository of each neighbour, its namespace and the
/// Deployment its default install creates (as `cluster::neighbours` documents them upstream).
fn neighbour_install(kind: &str) -> Option<(&'static str, &'static str, &'static str, &'static str)> {
    Some(match kind {
        "kueue" => ("registry.k8s.io", "kueue/kueue", "kueue-system", "kueue-controller-manager"),
        "jobset" => ("registry.k8s.io", "jobset/jobset", "jobset-system", "jobset-controller-manager"),
        "lws" => ("registry.k8s.io", "lws/lws", "lws-system", "lws-controller-manager"),
        "volcano" => ("docker.io", "volcanosh/vc-scheduler", "volcano-system", "volcano-scheduler"),
        "scheduler-plugins" => ("registry.k8s.io", "scheduler-plugins/kube-scheduler", "scheduler-plugins", "scheduler-plugins-scheduler"),
        "training-operator" => ("docker.io", "kubeflow/training-operator", "kubeflow", "training-operator"),
        _ => return None,
    })
}

/// The CRDs each neighbour serves (name, kind, group, versions).
fn neighbour_crds(kind: &str) -> &'static [(&'static str, &'static str, &'static str, &'static [&'static str])] {
    match kind {
        "kueue" => &[
            ("clusterqueues", "ClusterQueue", "kueue.x-k8s.io", &["v1beta1", "v1beta2"]),
            ("localqueues", "LocalQueue", "kueue.x-k8s.io", &["v1beta1", "v1beta2"]),
            ("workloads", "Workload", "kueue.x-k8s.io", &["v1beta1", "v1beta2"]),
        ],
        "lws" => &[("leaderworkersets", "LeaderWorkerSet", "leaderworkerset.x-k8s.io", &["v1"])],
        "volcano" => {
            &[("podgroups", "PodGroup", "scheduling.volcano.sh", &["v1beta1"]), ("queues", "Queue", "scheduling.volcano.sh", &["v1beta1"])]
        }
        "scheduler-plugins" => &[
            ("podgroups", "PodGroup", "scheduling.x-k8s.io", &["v1alpha1"]),
            ("elasticquotas", "ElasticQuota", "scheduling.x-k8s.io", &["v1alpha1"]),
        ],
        "jobset" => &[("jobsets", "JobSet", "jobset.x-k8s.io", &["v1alpha2"])],
        "training-operator" => &[
            ("pytorchjobs", "PyTorchJob", "kubeflow.org", &["v1"]),
            ("tfjobs", "TFJob", "kubeflow.org", &["v1"]),
            ("mpijobs", "MPIJob", "kubeflow.org", &["v1"]),
        ],
        _ => &[],
    }
}

/// The image a neighbour's Deployment runs, in the state's form; `(image, version label)`.
pub fn neighbour_image(kind: &str, version: &str, form: ImageForm) -> Option<(String, Option<String>)> {
    let (registry, repository, _, _) = neighbour_install(kind)?;
    let last = repository.rsplit('/').next().unwrap_or(repository);
    let digest = "sha256:3f1b0e6c9e8a7d5b4c2a1f0e9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c";
    Some(match form {
        ImageForm::Official => (format!("{registry}/{repository}:v{version}"), None),
        ImageForm::Mirror => (format!("harbor.corp.example/mirror/{last}:v{version}"), None),
        ImageForm::Port => (format!("registry.corp.example:5000/{repository}:v{version}"), None),
        ImageForm::Digest => (format!("{registry}/{repository}@{digest}"), None),
        ImageForm::Latest => (format!("{registry}/{repository}:latest"), None),
        ImageForm::Label => (format!("harbor.corp.example/mirror/{last}@{digest}"), Some(format!("v{version}"))),
    })
}

fn neighbour_objects(state: &State) -> Vec<Json> {
    let mut out = Vec::new();
    for n in &state.neighbours {
        let Some((_, _, ns, deployment)) = neighbour_install(&n.kind) else { continue };
        let Some((image, label)) = neighbour_image(&n.kind, &n.version, n.image) else { continue };
        out.push(namespace(ns, None));
        let mut labels = json!({"app.kubernetes.io/name": n.kind, "control-plane": "controller-manager"});
        if let Some(v) = label {
            labels["app.kubernetes.io/version"] = json!(v);
        }
        out.push(json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": deployment, "namespace": ns, "labels": labels, "creationTimestamp": CREATED},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": deployment}}, "template": {"metadata": {"labels": {"app": deployment}},
                "spec": {"containers": [{"name": "manager", "image": image, "args": ["--leader-elect"]}]}}},
            "status": {"replicas": 1, "readyReplicas": 1, "availableReplicas": 1}}));
        for (plural, kind, group, versions) in neighbour_crds(&n.kind) {
            let versions: Vec<Json> = versions
                .iter()
                .enumerate()
                .map(|(i, v)| json!({"name": v, "served": true, "storage": i + 1 == versions.len(), "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}))
                .collect();
            out.push(json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                "metadata": {"name": format!("{plural}.{group}"), "creationTimestamp": CREATED},
                "spec": {"group": group, "names": {"kind": kind, "plural": plural}, "scope": "Namespaced", "versions": versions}}));
        }
    }
    if state.neighbours.iter().any(|n| n.kind == "kueue") {
        let mut queues: Vec<&str> = state.trainjobs.iter().filter(|t| t.queue.is_some()).map(|t| t.namespace.as_str()).collect();
        queues.sort();
        queues.dedup();
        for ns in queues {
            out.push(json!({"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "LocalQueue", "metadata": {"name": "user-queue", "namespace": ns}, "spec": {"clusterQueue": "cluster-queue"}}));
        }
    }
    out
}

fn quantity_json(q: &str) -> Json {
    json!(q)
}

/// What the quota controller counts for an object-count resource in `ns`: the objects of the
/// state, and the `kube-root-ca.crt` ConfigMap and `default` ServiceAccount every namespace has.
fn counted(objects: &[Json], ns: &str, resource: &str) -> u64 {
    let kind = match resource {
        "count/configmaps" | "configmaps" => "ConfigMap",
        "count/secrets" | "secrets" => "Secret",
        "count/services" | "services" => "Service",
        "count/serviceaccounts" => "ServiceAccount",
        "count/jobs.batch" => "Job",
        "count/deployments.apps" => "Deployment",
        "count/replicasets.apps" => "ReplicaSet",
        "pods" | "count/pods" => "Pod",
        _ => return 0,
    };
    let present = objects.iter().filter(|o| o["kind"] == kind && str_at(o, &["metadata", "namespace"]) == ns).count() as u64;
    // A Deployment's ReplicaSet and its Pods (one replica each here).
    let per_deployment = objects.iter().filter(|o| o["kind"] == "Deployment" && str_at(o, &["metadata", "namespace"]) == ns).count() as u64;
    present
        + match kind {
            "ConfigMap" | "ServiceAccount" => 1,
            "ReplicaSet" | "Pod" => per_deployment,
            _ => 0,
        }
}

fn quotas(state: &State, objects: &[Json]) -> Vec<Json> {
    state
        .quotas
        .iter()
        .map(|q| {
            let numbers: Vec<(String, String, String)> = q
                .hard
                .iter()
                .map(|(r, u, h)| {
                    let used = if u == "*" { counted(objects, &q.namespace, r) } else { u.parse().unwrap_or(0) };
                    match (u.as_str(), h.strip_prefix('+')) {
                        ("*", Some(n)) => (r.clone(), used.to_string(), (used + n.parse::<u64>().unwrap_or(0)).to_string()),
                        ("*", None) => (r.clone(), used.to_string(), h.clone()),
                        _ => (r.clone(), u.clone(), h.clone()),
                    }
                })
                .collect();
            let hard: serde_json::Map<String, Json> = numbers.iter().map(|(r, _, h)| (r.clone(), quantity_json(h))).collect();
            let used: serde_json::Map<String, Json> = numbers.iter().map(|(r, u, _)| (r.clone(), quantity_json(u))).collect();
            json!({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": q.name, "namespace": q.namespace, "creationTimestamp": CREATED},
                "spec": {"hard": hard}, "status": {"hard": hard, "used": used}})
        })
        .collect()
}

fn limit_ranges(state: &State) -> Vec<Json> {
    state
        .limit_ranges
        .iter()
        .map(|l| {
            let mut item = json!({"type": "Container"});
            for (field, resource, q) in &l.limits {
                item[field.as_str()][resource.as_str()] = json!(q);
            }
            // As the API server stores it (SetDefaults_LimitRangeItem).
            limit_range_defaults(&mut item);
            json!({"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": l.name, "namespace": l.namespace, "creationTimestamp": CREATED},
                "spec": {"limits": [item]}})
        })
        .collect()
}

fn trainjobs(jobs: &[TrainJob]) -> Vec<Json> {
    jobs.iter()
        .map(|t| {
            let mut spec = json!({
                "runtimeRef": {"apiGroup": "trainer.kubeflow.org", "kind": "ClusterTrainingRuntime", "name": t.runtime},
                "trainer": {"numNodes": 2, "numProcPerNode": if t.auto_procs { json!("auto") } else { json!(4) }}
            });
            if t.suspended {
                spec["suspend"] = json!(true);
            }
            if let Some(m) = &t.managed_by {
                spec["managedBy"] = json!(m);
            }
            let mut conditions = Vec::new();
            match &t.state {
                JobState::Running => {}
                JobState::Complete => conditions.push(json!({"type": "Complete", "status": "True", "reason": "JobSetCompleted", "message": "jobset completed", "lastTransitionTime": CREATED})),
                JobState::Failed(reason) => conditions.push(json!({"type": "Failed", "status": "True", "reason": reason, "message": "failed", "lastTransitionTime": CREATED})),
            }
            if t.suspended {
                conditions.push(json!({"type": "Suspended", "status": "True", "reason": "Suspended", "message": "suspended", "lastTransitionTime": CREATED}));
            }
            let mut meta = json!({"name": t.name, "namespace": t.namespace, "creationTimestamp": CREATED});
            if let Some(q) = &t.queue {
                meta["labels"] = json!({"kueue.x-k8s.io/queue-name": q});
            }
            json!({"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "metadata": meta, "spec": spec, "status": {"conditions": conditions}})
        })
        .collect()
}

/// The user's runtimes: a copy of the running chart's torch runtime (or a minimal one).
fn user_runtimes(state: &State, cluster: &Cluster) -> Vec<Json> {
    let template = cluster
        .live
        .values()
        .find(|o| o["kind"] == "ClusterTrainingRuntime" && str_at(o, &["metadata", "name"]) == "torch-distributed")
        .map(|o| o["spec"].clone())
        .unwrap_or_else(|| {
            json!({"mlPolicy": {"numNodes": 1, "torch": {}}, "template": {"spec": {"replicatedJobs": [{"name": "node", "template": {"spec": {"template": {"spec": {
                "containers": [{"name": "node", "image": "pytorch/pytorch:2.7.1-cuda12.6-cudnn9-runtime"}]}}}}}]}}})
        });
    state
        .runtimes
        .iter()
        .map(|r| {
            let mut labels = json!({"trainer.kubeflow.org/framework": "torch"});
            if r.installer_label {
                labels[INSTALLER_LABEL] = json!("runtimes-installer");
            }
            json!({"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "ClusterTrainingRuntime",
                "metadata": {"name": r.name, "labels": labels, "creationTimestamp": CREATED,
                    "managedFields": [{"manager": "kubectl-client-side-apply", "operation": "Update", "apiVersion": "trainer.kubeflow.org/v1alpha1", "time": CREATED}]},
                "spec": template})
        })
        .collect()
}

fn legacy_jobs(state: &State) -> Vec<Json> {
    state.legacy.iter().map(|l| crate::scenario::legacy_job(&l.kind, &l.namespace, &l.name, &l.state)).collect()
}

impl State {
    /// The snapshot of this state (ClusterInfo first, when the state records a version).
    pub fn build(&self, charts: &Charts) -> Result<Built, ChartError> {
        let mut cluster = Cluster { live: BTreeMap::new() };
        let (history, records, running) = match &self.install {
            Install::Helm(ops) => helm(self, ops, charts, &mut cluster)?,
            Install::Kustomize(v) => {
                applied_by_tool(self, v, charts, &mut cluster, false)?;
                (History::default(), Vec::new(), Some(v.clone()))
            }
            Install::ArgoCd(v) => {
                applied_by_tool(self, v, charts, &mut cluster, true)?;
                (History::default(), Vec::new(), Some(v.clone()))
            }
            Install::None => (History::default(), Vec::new(), None),
        };
        // The manager image set by hand (kubectl set image), unlike the release's.
        if let Some(tag) = &self.manager_image {
            for o in cluster
                .live
                .values_mut()
                .filter(|o| o["kind"] == "Deployment" && str_at(o, &["metadata", "name"]).ends_with("controller-manager"))
            {
                if let Some(c) = o.pointer_mut("/spec/template/spec/containers/0/image") {
                    let image = c.as_str().unwrap_or_default();
                    let repo = image.rsplit_once(':').map_or(image, |(r, _)| r).to_string();
                    *c = json!(format!("{repo}:{tag}"));
                }
            }
        }
        // A release that leaves the Trainer CRDs out (crds.enabled=false) runs on CRDs its user
        // applied: the running chart's, server-side, as `kubectl`.
        let has_crd = |c: &Cluster, plural: &str| c.live.contains_key(&format!("CustomResourceDefinition//{plural}.trainer.kubeflow.org"));
        if let (Some(version), false) = (&running, has_crd(&cluster, "trainjobs")) {
            let mut values = self.values_json();
            values["crds"] = json!({"enabled": true});
            let release =
                if matches!(self.install, Install::Helm(_) | Install::ArgoCd(_)) { self.release.as_str() } else { "kubeflow-trainer" };
            let rendered = charts.render(version, release, &self.namespace, &values)?;
            for crd in rendered.objects.iter().chain(&rendered.crds).filter(|o| o["kind"] == "CustomResourceDefinition") {
                let k = key(crd);
                if k.ends_with(".trainer.kubeflow.org") && !cluster.live.contains_key(&k) {
                    let mut crd = crd.clone();
                    if let Some(labels) = crd["metadata"]["labels"].as_object_mut() {
                        labels.retain(|k, _| !k.starts_with("helm.sh/") && k != "app.kubernetes.io/managed-by");
                    }
                    crd["metadata"]["creationTimestamp"] = json!(CREATED);
                    crd["metadata"]["managedFields"] =
                        json!([{"manager": "kubectl", "operation": "Apply", "apiVersion": "apiextensions.k8s.io/v1", "time": CREATED}]);
                    cluster.put(crd);
                }
            }
        }
        // What the API server deleted with a CRD is gone.
        if has_crd(&cluster, "clustertrainingruntimes") {
            for r in user_runtimes(self, &cluster) {
                cluster.put(r);
            }
        }
        let built_jobs: Vec<TrainJob> = if has_crd(&cluster, "trainjobs") { self.trainjobs.clone() } else { Vec::new() };
        // The 2.0-2.2 controller puts its finalizer on runtimes TrainJobs use; from v2.3.0-rc.0 on
        // it removes it (`pkg/controller/clustertrainingruntime_controller.go` L68-L69). The
        // TrainJobs run through the history (the live lab makes them right after the install),
        // so the controller that last ran beside them decides: the running one, else the one an
        // uninstall removed (nothing removes its finalizer then).
        let last_controller = running.clone().or_else(|| history.last().map(|r| r.version.clone()));
        let old_controller = last_controller
            .as_deref()
            .and_then(|v| semver::Version::parse(v).ok())
            .is_some_and(|v| !super::charts::makes_runtime_snapshots(v));
        if old_controller {
            for t in &built_jobs {
                let k = format!("ClusterTrainingRuntime//{}", t.runtime);
                if let Some(r) = cluster.live.get_mut(&k) {
                    r["metadata"]["finalizers"] = json!([IN_USE]);
                }
            }
        }
        let mut objects = Vec::new();
        if let Some(kube) = &self.kube {
            objects.push(json!({"apiVersion": trainer_audit::cluster::CLUSTER_INFO_API_VERSION, "kind": "ClusterInfo", "serverVersion": format!("v{kube}"), "capturedAt": "2026-11-30T09:00:00Z"}));
        }
        objects.push(namespace(&self.namespace, self.psa.as_deref()));
        for ns in self.team_namespaces() {
            objects.push(namespace(&ns, None));
        }
        objects.extend(records);
        objects.extend(cluster.live.into_values());
        objects.extend(neighbour_objects(self));
        objects.extend(limit_ranges(self));
        objects.extend(trainjobs(&built_jobs));
        objects.extend(legacy_jobs(self));
        let quotas = quotas(self, &objects);
        objects.extend(quotas);
        Ok(Built { objects, history, running, trainjobs: built_jobs })
    }
}

/// The LimitRange items as the API server stores them (`SetDefaults_LimitRangeItem`).
pub fn limit_range_defaults(item: &mut Json) {
    if item["type"] != "Container" {
        return;
    }
    for (from, into) in [("max", "default"), ("default", "defaultRequest"), ("min", "defaultRequest")] {
        let source = item[from].as_object().cloned().unwrap_or_default();
        for (k, v) in source {
            if item[into].get(&k).is_none() {
                if !item[into].is_object() {
                    item[into] = Json::Object(Default::default());
                }
                item[into][k.as_str()] = v;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The corpus charts' directory (None, said on stderr, when TRAINER_AUDIT_CORPUS is unset).
    fn corpus() -> Option<std::ffi::OsString> {
        let corpus = std::env::var_os("TRAINER_AUDIT_CORPUS").filter(|c| !c.is_empty());
        if corpus.is_none() {
            eprintln!("skipped: TRAINER_AUDIT_CORPUS is not set");
        }
        corpus
    }

    /// The campaign's caches (renders, parsed documents, encoded records) change no state: each
    /// built with one `Charts` for all is the state built alone. Needs the corpus charts.
    #[test]
    fn states_built_with_the_campaigns_caches_are_the_states_built_alone() {
        let Some(corpus) = corpus() else { return };
        let shared = Charts::new(std::path::Path::new(&corpus));
        for k in 0..24 {
            let state = State::generate(7, k);
            let alone = state.build(&Charts::new(std::path::Path::new(&corpus))).map(|b| b.objects).map_err(|e| e.to_string());
            let cached = state.build(&shared).map(|b| b.objects).map_err(|e| e.to_string());
            assert!(alone == cached, "state {k} differs when built with the caches: {state}");
        }
    }

    /// The user's TrainJobs run through the history (the live lab makes them right after the
    /// install): an interrupted 2.3 uninstall's cleanup hook has deleted the runtimes they name
    /// (live seed 1 state 48), and a 2.2 controller an uninstall removed left its finalizer on
    /// the runtime they use. Needs the corpus charts.
    #[test]
    fn the_history_runs_beside_the_users_trainjobs() {
        let Some(corpus) = corpus() else { return };
        let charts = Charts::new(std::path::Path::new(&corpus));
        let runtime = |built: &Built, name: &str| {
            built.objects.iter().find(|o| o["kind"] == "ClusterTrainingRuntime" && str_at(o, &["metadata", "name"]) == name).cloned()
        };
        let killed: State = "install=helm:install@2.3.0,uninstall-killed release=kubeflow-trainer/kubeflow-system to=2.3.0 kube=1.36.1 applied=ssa value=runtimes.torchDistributed.enabled=true tj=team-a/job-0:torch-distributed:running"
            .parse()
            .unwrap();
        let built = killed.build(&charts).unwrap();
        assert_eq!((runtime(&built, "torch-distributed"), built.trainjobs.len()), (None, 1));
        let removed: State = "install=helm:install@2.2.1,uninstall release=kubeflow-trainer/kubeflow-system to=2.3.0 kube=1.36.1 applied=ssa runtime=team-torch tj=team-a/job-0:team-torch:running"
            .parse()
            .unwrap();
        let built = removed.build(&charts).unwrap();
        assert_eq!(runtime(&built, "team-torch").unwrap()["metadata"]["finalizers"], json!([IN_USE]));
    }

    #[test]
    fn limit_range_defaults_follow_the_api_server() {
        let mut item = json!({"type": "Container", "max": {"cpu": "1"}, "min": {"memory": "256Mi"}});
        limit_range_defaults(&mut item);
        assert_eq!(item["default"], json!({"cpu": "1"}));
        assert_eq!(item["defaultRequest"], json!({"cpu": "1", "memory": "256Mi"}));
    }
}
