//! The project's scenario clusters, as objects: what `snapshots/*.yaml` hold (written by
//! `cargo xtask snapshots`, checked against this code by the tests) and the large generated
//! states the benchmarks read. Each scenario is a small but faithful picture of one way
//! Trainer is installed (Helm, kustomize, Argo CD): ownership labels,
//! annotations and field managers as each tool leaves them, Helm release records encoded as
//! Helm stores them, runtimes with finalizers, TrainJobs using fields of their version.

use serde_json::{json, Value as Json};

use crate::release::encode_secret;
use trainer_audit::cluster::CLUSTER_INFO_API_VERSION;

/// (file stem, what it shows).
pub const SCENARIOS: &[(&str, &str)] = &[
    ("helm-2.2.1", "Helm release of 2.2.1 (upgraded from 2.2.0) with the built-in runtimes as release objects"),
    ("helm-2.1.0", "Helm release of 2.1.0 with manager.labels set, TrainJobs using fields 2.2 removed"),
    ("kustomize-2.2.0", "kustomize (kubectl server-side apply) install of 2.2.0, no Helm metadata"),
    ("helm-2.3.0", "healthy Helm release of 2.3.0, runtimes applied by the installer hook"),
    ("argocd-2.2.1", "Argo CD application rendering the 2.2.1 chart (no Helm release record)"),
    (
        "neighbours-2.1.0",
        "Helm release of 2.1.0 beside Kueue 0.17.0 (built for Trainer 2.2), a coscheduling runtime without scheduler-plugins, and the Training Operator with legacy jobs in namespaces at every migration state",
    ),
];

pub const NAMESPACE: &str = "kubeflow-system";
const RELEASE: &str = "kubeflow-trainer";

#[derive(Clone, Copy, PartialEq)]
enum Tool {
    Helm,
    Kustomize,
    ArgoCd,
}

struct Ctx {
    tool: Tool,
    version: &'static str,
}

impl Ctx {
    fn labels(&self, component: &str) -> Json {
        let mut l = json!({"app.kubernetes.io/name": "kubeflow-trainer", "app.kubernetes.io/component": component});
        if self.tool != Tool::Kustomize {
            l["app.kubernetes.io/managed-by"] = json!("Helm");
            l["helm.sh/chart"] = json!(format!("kubeflow-trainer-{}", self.version));
            l["app.kubernetes.io/instance"] = json!(RELEASE);
        } else {
            l["app.kubernetes.io/part-of"] = json!("kubeflow");
        }
        l
    }

    /// Metadata of an object the tool applied (release object for Helm).
    fn meta(&self, name: &str, namespace: Option<&str>, component: &str, release_object: bool) -> Json {
        let mut m = json!({"name": name, "labels": self.labels(component), "creationTimestamp": "2026-06-20T10:00:00Z"});
        if let Some(ns) = namespace {
            m["namespace"] = json!(ns);
        }
        match self.tool {
            Tool::Helm if release_object => {
                m["annotations"] = json!({"meta.helm.sh/release-name": RELEASE, "meta.helm.sh/release-namespace": NAMESPACE});
                m["managedFields"] = json!([{"manager": "helm", "operation": "Update", "apiVersion": "v1"}]);
            }
            Tool::Helm => m["managedFields"] = json!([{"manager": "helm", "operation": "Update", "apiVersion": "v1"}]),
            Tool::Kustomize => m["managedFields"] = json!([{"manager": "kubectl", "operation": "Apply", "apiVersion": "v1"}]),
            Tool::ArgoCd => {
                let kind_group = if namespace.is_some() { format!("{NAMESPACE}/{name}") } else { name.to_string() };
                m["annotations"] = json!({"argocd.argoproj.io/tracking-id": format!("kubeflow-trainer:{component}:{kind_group}")});
                m["managedFields"] = json!([{"manager": "argocd-controller", "operation": "Apply", "apiVersion": "v1"}]);
            }
        }
        m
    }
}

fn crd(ctx: &Ctx, plural: &str, kind: &str, group: &str, version: &str, scope: &str, release_object: bool) -> Json {
    let mut meta = ctx.meta(&format!("{plural}.{group}"), None, "crd", release_object);
    if !release_object {
        // CRDs from crds/ are created once, without the chart's labels.
        meta["labels"] = json!({});
    }
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": meta,
        "spec": {
            "group": group,
            "names": {"kind": kind, "listKind": format!("{kind}List"), "plural": plural, "singular": kind.to_ascii_lowercase()},
            "scope": scope,
            "versions": [{"name": version, "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]
        },
        "status": {"storedVersions": [version]}
    })
}

fn trainer_crds(ctx: &Ctx, templated: bool) -> Vec<Json> {
    vec![
        crd(ctx, "trainjobs", "TrainJob", "trainer.kubeflow.org", "v1alpha1", "Namespaced", templated),
        crd(ctx, "trainingruntimes", "TrainingRuntime", "trainer.kubeflow.org", "v1alpha1", "Namespaced", templated),
        crd(ctx, "clustertrainingruntimes", "ClusterTrainingRuntime", "trainer.kubeflow.org", "v1alpha1", "Cluster", templated),
        crd(ctx, "jobsets", "JobSet", "jobset.x-k8s.io", "v1alpha2", "Namespaced", false),
    ]
}

fn deployment(ctx: &Ctx, selector: Json) -> Json {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": ctx.meta("kubeflow-trainer-controller-manager", Some(NAMESPACE), "manager", true),
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": selector},
            "template": {
                "metadata": {"labels": selector},
                "spec": {"serviceAccountName": "kubeflow-trainer-controller-manager",
                    "containers": [{"name": "manager", "image": format!("ghcr.io/kubeflow/trainer/trainer-controller-manager:v{}", ctx.version)}]}
            }
        }
    })
}

fn runtime(ctx: &Ctx, name: &str, framework: &str, image: &str, in_use: bool, installer: bool) -> Json {
    let mut meta = ctx.meta(name, None, "runtime", !installer);
    meta["labels"]["trainer.kubeflow.org/framework"] = json!(framework);
    if installer {
        meta["labels"]["trainer.kubeflow.org/managed-by"] = json!("runtimes-installer");
        meta["labels"]["trainer.kubeflow.org/webhook-validation"] = json!("disabled");
        meta["managedFields"] = json!([{"manager": "kubectl", "operation": "Apply", "apiVersion": "trainer.kubeflow.org/v1alpha1"}]);
    }
    if in_use {
        meta["finalizers"] = json!(["trainer.kubeflow.org/resource-in-use"]);
    }
    json!({
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "ClusterTrainingRuntime",
        "metadata": meta,
        "spec": {"mlPolicy": {"numNodes": 1, "torch": {}}, "template": {"spec": {"replicatedJobs": [{"name": "node", "template": {"spec": {"template": {"spec": {
            "containers": [{"name": "node", "image": image}]}}}}}]}}}
    })
}

/// `count` TrainJobs spread over `namespaces` namespaces (`team-000`…), round-robin over runtimes.
pub fn trainjobs(count: usize, namespaces: usize, runtimes: &[&str], legacy_fields: bool) -> Vec<Json> {
    (0..count)
        .map(|i| {
            let ns = format!("team-{:03}", i % namespaces.max(1));
            let mut spec = json!({
                "runtimeRef": {"apiGroup": "trainer.kubeflow.org", "kind": "ClusterTrainingRuntime", "name": runtimes[i % runtimes.len()]},
                "trainer": {"numNodes": 2, "numProcPerNode": 4, "resourcesPerNode": {"limits": {"nvidia.com/gpu": 4}}}
            });
            if legacy_fields && i % 2 == 0 {
                spec["trainer"]["numProcPerNode"] = json!("auto");
                spec["podTemplateOverrides"] = json!([{"targetJobs": [{"name": "node"}], "spec": {"nodeSelector": {"pool": "gpu"}}}]);
            }
            json!({
                "apiVersion": "trainer.kubeflow.org/v1alpha1",
                "kind": "TrainJob",
                "metadata": {"name": format!("job-{i:05}"), "namespace": ns, "creationTimestamp": "2026-06-21T08:00:00Z"},
                "spec": spec,
                "status": {"conditions": [{"type": "Complete", "status": if i % 3 == 0 { "False" } else { "True" }, "reason": "Generated", "message": "generated"}]}
            })
        })
        .collect()
}

fn namespaces(restricted: bool, count: usize) -> Vec<Json> {
    let mut out = vec![json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE, "labels": if restricted {
        json!({"kubernetes.io/metadata.name": NAMESPACE, "pod-security.kubernetes.io/enforce": "restricted"})
    } else { json!({"kubernetes.io/metadata.name": NAMESPACE}) }}})];
    out.extend((0..count).map(|i| {
        let name = format!("team-{i:03}");
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name}}})
    }));
    out
}

fn public_configmap(ctx: &Ctx) -> Json {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": ctx.meta("kubeflow-trainer-public", Some(NAMESPACE), "public", true),
        "data": {"kubeflow_trainer_version": format!("v{}", ctx.version)}})
}

/// The release manifest Helm stores: each release object as a `# Source:` block.
fn manifest(objects: &[&Json]) -> String {
    objects
        .iter()
        .map(|o| {
            let yaml = trainer_audit::objects::yaml_of(o).unwrap_or_default();
            // Each document ends its own line: a `---` glued to the last line would merge two
            // documents into one.
            format!(
                "---\n# Source: kubeflow-trainer/templates/{}.yaml\n{}\n",
                o["kind"].as_str().unwrap_or("object").to_ascii_lowercase(),
                yaml.trim_end()
            )
        })
        .collect()
}

fn release_record(version: &str, revision: i64, status: &str, user_values: Json, release_objects: &[&Json]) -> Json {
    let release = json!({
        "name": RELEASE,
        "info": {"first_deployed": "2026-03-20T10:00:00Z", "last_deployed": format!("2026-06-{:02}T10:00:00Z", 10 + revision), "description": if revision == 1 { "Install complete" } else { "Upgrade complete" }, "status": status},
        "chart": {"metadata": {"name": "kubeflow-trainer", "version": version, "appVersion": version, "apiVersion": "v2"}, "values": {}, "templates": [], "files": []},
        "config": user_values,
        "manifest": manifest(release_objects),
        "version": revision,
        "namespace": NAMESPACE
    });
    encode_secret(&release, true)
}

fn cluster_info(version: &str) -> Json {
    json!({"apiVersion": CLUSTER_INFO_API_VERSION, "kind": "ClusterInfo", "serverVersion": version, "capturedAt": "2026-11-30T09:00:00Z"})
}

const TORCH_22: &str = "pytorch/pytorch:2.10.0-cuda12.8-cudnn9-runtime";
const TORCH_23: &str = "pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime";

/// The objects of one scenario (ClusterInfo first), or None for an unknown name.
pub fn scenario(name: &str) -> Option<Vec<Json>> {
    // What the charts render (2.1 adds manager.labels to it; 2.2+ use manager.selectorLabels).
    let selector_22 = json!({"app.kubernetes.io/name": "kubeflow-trainer", "app.kubernetes.io/instance": "kubeflow-trainer", "app.kubernetes.io/part-of": "kubeflow", "app.kubernetes.io/component": "manager"});
    Some(match name {
        "helm-2.2.1" | "argocd-2.2.1" => {
            let argo = name.starts_with("argocd");
            let ctx = Ctx { tool: if argo { Tool::ArgoCd } else { Tool::Helm }, version: "2.2.1" };
            let mut objects = vec![cluster_info("v1.33.4")];
            objects.extend(trainer_crds(&ctx, false));
            let deployment = deployment(&ctx, selector_22);
            let torch = runtime(&ctx, "torch-distributed", "torch", TORCH_22, true, false);
            let deepspeed =
                runtime(&ctx, "deepspeed-distributed", "deepspeed", "ghcr.io/kubeflow/trainer/deepspeed-runtime:v2.2.1", false, false);
            let public = public_configmap(&ctx);
            if !argo {
                let values = json!({"runtimes": {"torchDistributed": {"enabled": true}, "deepspeedDistributed": {"enabled": true}}});
                objects.push(release_record("2.2.0", 1, "superseded", values.clone(), &[&deployment]));
                objects.push(release_record("2.2.1", 2, "deployed", values, &[&public, &deployment, &torch, &deepspeed]));
            }
            objects.extend([deployment, torch.clone(), deepspeed, public]);
            // The Helm scenario's namespace enforces Pod Security `restricted`.
            objects.extend(namespaces(!argo, 2));
            objects.extend(trainjobs(4, 2, &["torch-distributed"], false));
            objects
        }
        "helm-2.1.0" => {
            let ctx = Ctx { tool: Tool::Helm, version: "2.1.0" };
            let mut objects = vec![cluster_info("v1.31.2")];
            objects.extend(trainer_crds(&ctx, false));
            // manager.labels set: 2.1 used them as the Deployment selector.
            let selector = json!({"app.kubernetes.io/name": "kubeflow-trainer", "app.kubernetes.io/instance": "kubeflow-trainer", "app.kubernetes.io/part-of": "kubeflow", "app.kubernetes.io/component": "manager", "team": "ml-platform"});
            let deployment = deployment(&ctx, selector);
            let values = json!({"manager": {"labels": {"team": "ml-platform"}, "annotations": {"prometheus.io/scrape": "true"}}});
            objects.push(release_record("2.1.0", 1, "deployed", values, &[&deployment]));
            objects.push(deployment);
            let user_ctx = Ctx { tool: Tool::Kustomize, version: "2.1.0" };
            let mut custom = runtime(&user_ctx, "torch-custom", "torch", "pytorch/pytorch:2.7.1-cuda12.6-cudnn9-runtime", true, false);
            custom["metadata"]["labels"] = json!({"trainer.kubeflow.org/framework": "torch"});
            custom["spec"]["mlPolicy"]["torch"] = json!({"numProcPerNode": "auto", "elasticPolicy": {"minNodes": 1, "maxNodes": 4}});
            objects.push(custom);
            objects.extend(namespaces(false, 2));
            objects.extend(trainjobs(6, 2, &["torch-custom"], true));
            objects
        }
        "kustomize-2.2.0" => {
            let ctx = Ctx { tool: Tool::Kustomize, version: "2.2.0" };
            let mut objects = vec![cluster_info("v1.32.5")];
            for mut c in trainer_crds(&ctx, true) {
                c["metadata"]["labels"] = json!({"app.kubernetes.io/part-of": "kubeflow"});
                objects.push(c);
            }
            let selector = json!({"app.kubernetes.io/name": "trainer", "app.kubernetes.io/component": "manager", "app.kubernetes.io/part-of": "kubeflow"});
            objects.push(deployment(&ctx, selector));
            objects.push(runtime(&ctx, "torch-distributed", "torch", TORCH_22, true, false));
            objects.push(public_configmap(&ctx));
            objects.extend(namespaces(false, 1));
            objects.extend(trainjobs(3, 1, &["torch-distributed"], false));
            objects
        }
        "helm-2.3.0" => {
            let ctx = Ctx { tool: Tool::Helm, version: "2.3.0" };
            let mut objects = vec![cluster_info("v1.33.4")];
            let crds = trainer_crds(&ctx, true);
            let deployment = deployment(&ctx, selector_22);
            let public = public_configmap(&ctx);
            let torch = runtime(&ctx, "torch-distributed", "torch", TORCH_23, true, true);
            let values = json!({"runtimes": {"torchDistributed": {"enabled": true}}});
            let mut release_objects: Vec<&Json> = crds.iter().take(3).collect();
            release_objects.extend([&public, &deployment]);
            objects.push(release_record("2.2.1", 1, "superseded", values.clone(), &[&deployment]));
            objects.push(release_record("2.3.0", 2, "deployed", values, &release_objects));
            objects.extend(crds);
            objects.extend([deployment, public, torch]);
            objects.extend(namespaces(false, 2));
            objects.extend(trainjobs(4, 2, &["torch-distributed"], false));
            objects
        }
        "neighbours-2.1.0" => {
            let mut objects = scenario("helm-2.1.0")?;
            // The 2.1 TrainJob CRD: podTemplateOverrides, no runtimePatches (what Kueue 0.17 writes).
            let open = json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true});
            let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
                "runtimeRef": open, "trainer": open, "podTemplateOverrides": {"type": "array", "items": open}}}, "status": open}});
            for o in objects.iter_mut().filter(|o| o["metadata"]["name"] == "trainjobs.trainer.kubeflow.org") {
                o["spec"]["versions"][0]["schema"]["openAPIV3Schema"] = schema.clone();
            }
            // Queued through Kueue: team-000 has the LocalQueue, team-001 does not.
            for o in objects
                .iter_mut()
                .filter(|o| o["kind"] == "TrainJob" && (o["metadata"]["name"] == "job-00000" || o["metadata"]["name"] == "job-00001"))
            {
                o["metadata"]["labels"] = json!({"kueue.x-k8s.io/queue-name": "team-queue"});
            }
            objects.extend(neighbours_2_1_0());
            objects
        }
        _ => return None,
    })
}

/// A neighbour CRD with its served versions (storage: the last).
fn neighbour_crd(plural: &str, kind: &str, group: &str, versions: &[&str]) -> Json {
    let versions: Vec<Json> = versions
        .iter()
        .enumerate()
        .map(|(i, v)| json!({"name": v, "served": true, "storage": i + 1 == versions.len(), "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}))
        .collect();
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": format!("{plural}.{group}")},
        "spec": {"group": group, "names": {"kind": kind, "plural": plural}, "scope": "Namespaced", "versions": versions}})
}

fn neighbour_deployment(namespace: &str, name: &str, labels: Json, image: &str) -> Json {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}}, "template": {"metadata": {"labels": {"app": name}},
            "spec": {"containers": [{"name": "manager", "image": image, "args": ["--leader-elect"]}]}}},
        "status": {"replicas": 1, "readyReplicas": 1}})
}

/// A Training Operator v1 job; `state` is its last condition (`Running`, `Succeeded`, `Failed`).
pub fn legacy_job(kind: &str, namespace: &str, name: &str, state: &str) -> Json {
    let replicas = match kind {
        "PyTorchJob" => "pytorchReplicaSpecs",
        "TFJob" => "tfReplicaSpecs",
        _ => "replicaSpecs",
    };
    json!({"apiVersion": "kubeflow.org/v1", "kind": kind, "metadata": {"name": name, "namespace": namespace, "creationTimestamp": "2026-05-02T08:00:00Z"},
        "spec": {replicas: {"Master": {"replicas": 1, "restartPolicy": "OnFailure", "template": {"spec": {"containers": [
            {"name": "pytorch", "image": "docker.io/kubeflowkatib/pytorch-mnist:v1beta1-45c5727", "command": ["python3", "/opt/mnist.py"]}]}}}}},
        "status": {"conditions": [{"type": "Created", "status": "True"}, {"type": state, "status": "True"}]}})
}

/// `count` Training Operator v1 jobs over `namespaces` namespaces (`team-000`…), a mix of
/// kinds, every fourth running (for the benchmarks).
pub fn legacy_jobs(count: usize, namespaces: usize) -> Vec<Json> {
    const KINDS: &[&str] = &["PyTorchJob", "PyTorchJob", "TFJob", "MPIJob", "XGBoostJob", "JAXJob"];
    (0..count)
        .map(|i| {
            let state = if i % 4 == 0 { "Running" } else { "Succeeded" };
            legacy_job(KINDS[i % KINDS.len()], &format!("team-{:03}", i % namespaces.max(1)), &format!("legacy-{i:05}"), state)
        })
        .collect()
}

/// Kueue 0.17.0 with a LocalQueue, a coscheduling ClusterTrainingRuntime (scheduler-plugins is
/// absent), the Training Operator and its jobs: team-000 and team-001 run both kinds of job,
/// legacy-lab only legacy jobs, archive has only finished ones.
fn neighbours_2_1_0() -> Vec<Json> {
    let mut objects = vec![
        neighbour_crd("clusterqueues", "ClusterQueue", "kueue.x-k8s.io", &["v1beta1", "v1beta2"]),
        neighbour_crd("localqueues", "LocalQueue", "kueue.x-k8s.io", &["v1beta1", "v1beta2"]),
        neighbour_crd("workloads", "Workload", "kueue.x-k8s.io", &["v1beta1", "v1beta2"]),
        neighbour_deployment(
            "kueue-system",
            "kueue-controller-manager",
            json!({"control-plane": "controller-manager"}),
            "registry.k8s.io/kueue/kueue:v0.17.0",
        ),
        json!({"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "LocalQueue", "metadata": {"name": "team-queue", "namespace": "team-000"}, "spec": {"clusterQueue": "cluster-queue"}}),
        json!({"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "ClusterTrainingRuntime", "metadata": {"name": "torch-gang", "labels": {"trainer.kubeflow.org/framework": "torch"}},
            "spec": {"mlPolicy": {"numNodes": 2, "torch": {}}, "podGroupPolicy": {"coscheduling": {"scheduleTimeoutSeconds": 120}},
                "template": {"spec": {"replicatedJobs": [{"name": "node", "template": {"spec": {"template": {"spec": {
                    "containers": [{"name": "node", "image": "pytorch/pytorch:2.7.1-cuda12.6-cudnn9-runtime"}]}}}}}]}}}}),
        neighbour_deployment(
            "kubeflow",
            "training-operator",
            json!({"control-plane": "kubeflow-training-operator"}),
            "kubeflow/training-operator:v1-855e096",
        ),
    ];
    for (plural, kind) in [
        ("pytorchjobs", "PyTorchJob"),
        ("tfjobs", "TFJob"),
        ("mpijobs", "MPIJob"),
        ("xgboostjobs", "XGBoostJob"),
        ("paddlejobs", "PaddleJob"),
        ("jaxjobs", "JAXJob"),
    ] {
        objects.push(neighbour_crd(plural, kind, "kubeflow.org", &["v1"]));
    }
    for ns in ["kubeflow", "legacy-lab", "archive"] {
        objects.push(
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns, "labels": {"kubernetes.io/metadata.name": ns}}}),
        );
    }
    objects.extend([
        legacy_job("PyTorchJob", "team-000", "mnist-a", "Running"),
        legacy_job("PyTorchJob", "team-000", "mnist-b", "Succeeded"),
        legacy_job("TFJob", "team-001", "resnet", "Running"),
        legacy_job("PyTorchJob", "legacy-lab", "bert", "Running"),
        legacy_job("MPIJob", "legacy-lab", "hvd", "Failed"),
        legacy_job("PyTorchJob", "archive", "old", "Succeeded"),
    ]);
    objects
}

/// A list of objects as `kubectl get -o yaml` writes a List.
pub fn list_yaml(items: Vec<Json>) -> String {
    let list = json!({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items});
    trainer_audit::objects::yaml_of(&list).unwrap_or_default()
}

/// The text of `snapshots/<name>.yaml`.
pub fn scenario_yaml(name: &str) -> Option<String> {
    let (_, what) = SCENARIOS.iter().find(|(n, _)| *n == name)?;
    Some(format!(
        "# Scenario {name}: {what}.\n# Generated by `cargo xtask snapshots`; edit testkit/src/scenario.rs, not this file.\n{}",
        list_yaml(scenario(name)?)
    ))
}

/// A large cluster of every shape the per-object checks tell apart, for the test that pins
/// `check` and `status` reports over it (tests/large_cluster.rs): the `neighbours-2.1.0`
/// scenario (Kueue with one LocalQueue, the Training Operator) plus `count` TrainJobs in
/// `namespaces` namespaces cycling through valid ones, 2.1 fields `migrate` converts, retyped
/// and unknown fields, names the CRD's rules refuse, Kueue queue labels with and without a
/// LocalQueue, jobs managed elsewhere or finished, a missing runtime, runtime patches, invalid
/// storage URIs; `count / 2` legacy jobs of every kind; and a ConfigMap quota that cannot hold
/// the runtime snapshots in one namespace.
pub fn varied_cluster(count: usize, namespaces: usize) -> Vec<Json> {
    let mut objects = scenario("neighbours-2.1.0").unwrap_or_default();
    objects.extend((0..namespaces).map(|i| {
        let name = format!("team-{i:03}");
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name}}})
    }));
    objects.extend(varied_trainjobs(count, namespaces));
    objects.extend(legacy_jobs(count / 2, namespaces));
    objects.push(
        json!({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "configmaps", "namespace": "team-002", "uid": "q-1"},
        "spec": {"hard": {"count/configmaps": "12", "pods": "40"}},
        "status": {"hard": {"count/configmaps": "12", "pods": "40"}, "used": {"count/configmaps": "3", "pods": "1"}}}),
    );
    objects
}

fn varied_trainjobs(count: usize, namespaces: usize) -> Vec<Json> {
    (0..count)
        .map(|i| {
            let ns = format!("team-{:03}", i % namespaces.max(1));
            let runtime = ["torch-distributed", "deepspeed-distributed", "torch-gang"][i % 3];
            let mut job = json!({
                "apiVersion": "trainer.kubeflow.org/v1alpha1",
                "kind": "TrainJob",
                "metadata": {"name": format!("run-{i:05}"), "namespace": ns, "creationTimestamp": "2026-06-21T08:00:00Z", "uid": format!("uid-{i}"),
                    "managedFields": [{"apiVersion": "trainer.kubeflow.org/v1alpha1", "manager": "kubectl-client-side-apply", "operation": "Update",
                        "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:trainer": {}}}, "time": "2026-06-21T08:00:00Z"}]},
                "spec": {
                    "runtimeRef": {"apiGroup": "trainer.kubeflow.org", "kind": "ClusterTrainingRuntime", "name": runtime},
                    "trainer": {"numNodes": 1 + i % 4, "numProcPerNode": 4, "image": format!("ghcr.io/example/train:{}", i % 7),
                        "args": ["--epochs", format!("{}", i % 5)], "resourcesPerNode": {"limits": {"nvidia.com/gpu": 4}}}
                },
                "status": {"conditions": [{"type": "Created", "status": "True", "reason": "Created", "message": "created", "lastTransitionTime": "2026-06-21T08:00:01Z"}],
                    "jobsStatus": [{"name": "node", "active": 1, "ready": 1, "succeeded": 0, "failed": 0, "suspended": 0}]}
            });
            match i % 12 {
                1 => {
                    job["spec"]["trainer"]["numProcPerNode"] = json!("auto");
                    job["spec"]["podTemplateOverrides"] = json!([{"targetJobs": [{"name": "node"}], "spec": {"nodeSelector": {"pool": "gpu"}}}]);
                }
                2 => job["spec"]["trainer"]["numProcPerNode"] = json!("gpu"),
                3 => job["metadata"]["labels"] = json!({"kueue.x-k8s.io/queue-name": if i % 24 == 3 { "team-queue" } else { "missing-queue" }}),
                4 => job["spec"]["managedBy"] = json!("kueue.x-k8s.io/multikueue"),
                5 => job["status"]["conditions"] = json!([{"type": "Complete", "status": "True", "reason": "Done", "message": "done"}]),
                6 => job["spec"]["runtimeRef"]["name"] = json!("no-such-runtime"),
                7 => job["spec"]["extra"] = json!({"note": i}),
                8 => job["metadata"]["name"] = json!(format!("Run.{i:05}")),
                9 => job["spec"]["initializer"] = json!({"dataset": {"storageUri": if i % 24 == 9 { "not-a-uri" } else { "hf://datasets/org/set" }}}),
                10 => job["spec"]["runtimePatches"] = json!([{"manager": "kueue.x-k8s.io/manager", "trainingRuntimeSpec": {"template": {"spec": {"replicatedJobs": [
                    {"name": "node", "template": {"spec": {"template": {"spec": {"containers": [{"name": "node", "env": [{"name": "A", "value": "1"}]}]}}}}}]}}}}]),
                11 => {
                    job["spec"]["suspend"] = json!(true);
                    job["spec"]["trainer"]["env"] = json!([{"name": "PET_NNODES", "value": "2"}]);
                }
                _ => {}
            }
            job
        })
        .collect()
}

/// A TrainJob of about 1 KB as a team would write one (initializers, env, resources, labels),
/// varied by `i`: the objects of `cargo bench --bench validate` and `cargo xtask bench validate`.
pub fn realistic_trainjob(i: usize) -> Json {
    json!({
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": format!("job-{i}"), "namespace": "default",
            "labels": {"team": format!("team-{}", i % 17), "kueue.x-k8s.io/queue-name": "gpu"},
            "annotations": {"owner": "ml-platform", "ticket": format!("ML-{i}")}},
        "spec": {
            "runtimeRef": {"name": "torch-distributed", "apiGroup": "trainer.kubeflow.org", "kind": "ClusterTrainingRuntime"},
            "suspend": i.is_multiple_of(5),
            "initializer": {
                "dataset": {"storageUri": format!("hf://datasets/org/set-{}", i % 100),
                    "env": [{"name": "HF_TOKEN", "value": "redacted"}]},
                "model": {"storageUri": "hf://models/meta/llama"}
            },
            "trainer": {
                "image": "ghcr.io/example/train:1.2.3",
                "command": ["torchrun", "train.py"],
                "args": ["--epochs", "3", "--lr", "0.0001", "--batch", format!("{}", 8 << (i % 4))],
                "env": [{"name": "NCCL_DEBUG", "value": "WARN"}, {"name": "RUN", "value": format!("{i}")}],
                "numNodes": 1 + (i % 8),
                "numProcPerNode": 8,
                "resourcesPerNode": {"limits": {"nvidia.com/gpu": 8, "memory": "512Gi", "cpu": "64"},
                    "requests": {"nvidia.com/gpu": 8, "memory": "480Gi", "cpu": "60"}}
            },
            "labels": {"app": "train"},
            "annotations": {"note": "bench"}
        }
    })
}
