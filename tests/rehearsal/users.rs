//! Objects like a user's, added after the from-state is installed: TrainJobs (in the from
//! version's schema, including fields later versions remove or retype), an edited built-in
//! runtime, a runtime of the user's own that carries the 2.3 installer's management label, and
//! the `trainer.kubeflow.org/resource-in-use` finalizer that the 2.0–2.2 controllers put on a
//! runtime a TrainJob uses (no Trainer controller runs here, so the rehearsal writes it as that
//! controller would: kubeflow/trainer v2.2.0 pkg/controller/clustertrainingruntime_controller.go).

use crate::lab::Lab;

/// The namespace the user's TrainJobs live in.
pub const TEAM: &str = "team-a";
pub const IN_USE: &str = "trainer.kubeflow.org/resource-in-use";

/// A TrainJob valid in the 2.2+ schema (numProcPerNode an integer), using `runtime`.
pub fn trainjob_2_2(name: &str, runtime: &str) -> String {
    format!(
        r#"apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {{name: {name}, namespace: {TEAM}}}
spec:
  runtimeRef: {{name: {runtime}}}
  trainer:
    image: registry.example.com/team-a/train:1.4
    command: [torchrun, train.py]
    numNodes: 2
    numProcPerNode: 4
"#
    )
}

/// A TrainJob in the 2.1 schema using what 2.2 removed (`podTemplateOverrides`, `labels`,
/// `annotations`) and retyped (`numProcPerNode: auto`, a string).
pub fn trainjob_2_1(name: &str, runtime: &str) -> String {
    format!(
        r#"apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {{name: {name}, namespace: {TEAM}}}
spec:
  runtimeRef: {{name: {runtime}}}
  labels: {{cost-center: research}}
  annotations: {{team-a/ticket: ML-1234}}
  trainer:
    image: registry.example.com/team-a/train:1.4
    command: [torchrun, train.py]
    numNodes: 2
    numProcPerNode: auto
  podTemplateOverrides:
  - targetJobs: [{{name: node}}]
    spec:
      nodeSelector: {{gpu-pool: a100}}
      tolerations: [{{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}}]
"#
    )
}

/// A minimal torch ClusterTrainingRuntime `name` with `mlPolicy.torch` as given (YAML flow).
pub fn torch_runtime(name: &str, torch: &str) -> String {
    format!(
        r#"apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: {name}
  labels: {{trainer.kubeflow.org/framework: torch}}
spec:
  mlPolicy:
    numNodes: 1
    torch: {torch}
  template:
    spec:
      replicatedJobs:
      - name: node
        template:
          metadata:
            labels: {{trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
          spec:
            template:
              spec:
                containers:
                - {{name: node, image: "pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime"}}
"#
    )
}

/// A 2.1-era ClusterTrainingRuntime as the user applied it from the 2.1 manifests (2.1's chart
/// has no runtimes): `mlPolicy.torch.numProcPerNode`, which 2.2 removed.
pub fn runtime_2_1(name: &str) -> String {
    torch_runtime(name, "{numProcPerNode: auto}")
}

/// A minimal torch ClusterTrainingRuntime a user writes for 2.2 and 2.3 (2.2 dropped
/// `mlPolicy.torch.numProcPerNode`: the TrainJob's trainer sets it).
pub fn runtime_2_2(name: &str) -> String {
    torch_runtime(name, "{}")
}

/// Creates the team namespace and applies `yaml` as the user would (client-side `kubectl apply`).
/// A webhook not served yet (its Pod Ready a moment before the endpointslice controller publishes
/// it) is waited for, as a user tries again; anything else fails the scenario.
pub fn apply(lab: &Lab, yaml: &str) {
    let script =
        format!("kubectl create namespace {TEAM} --dry-run=client -o yaml | kubectl apply -f -\nkubectl apply -f - <<'EOF'\n{yaml}EOF");
    let started = std::time::Instant::now();
    loop {
        let ran = lab.shell(&script);
        let unserved = ran.stderr.contains("failed calling webhook")
            && (ran.stderr.contains("no endpoints available") || ran.stderr.contains("connection refused"));
        if ran.ok() || !unserved || started.elapsed().as_secs() > 60 {
            assert!(ran.ok(), "[{}] applying the user's objects failed:\n{ran}\ncontrollers: {:#?}", lab.scenario, lab.standin_records());
            return;
        }
        std::thread::sleep(std::time::Duration::from_secs(1));
    }
}

/// The user's edit of a built-in runtime: the trainer image pointed at their mirror.
pub fn edit_builtin(lab: &Lab, runtime: &str) {
    lab.shell_ok(&format!(
        "kubectl patch clustertrainingruntime {runtime} --type=json -p '[{{\"op\":\"replace\",\"path\":\"/spec/template/spec/replicatedJobs/0/template/spec/template/spec/containers/0/image\",\"value\":\"registry.example.com/mirror/pytorch:2.10.0\"}}]'"
    ));
}

/// A runtime of the user's own made from a built-in one (`kubectl get -o yaml`, renamed, applied),
/// so it keeps the built-in's labels — from 2.3 on, the installer's management label.
pub fn own_runtime_with_installer_label(lab: &Lab, from: &str, name: &str) {
    let builtin = lab.get_json(&format!("clustertrainingruntime {from}"));
    let mut labels = builtin["metadata"]["labels"].clone();
    labels["trainer.kubeflow.org/managed-by"] = "runtimes-installer".into();
    let own = serde_json::json!({
        "apiVersion": builtin["apiVersion"], "kind": builtin["kind"],
        "metadata": {"name": name, "labels": labels},
        "spec": builtin["spec"],
    });
    lab.shell_ok(&format!("kubectl apply -f - <<'EOF'\n{own}\nEOF"));
}

/// The finalizer a 2.0–2.2 controller adds to a runtime a TrainJob references.
pub fn mark_in_use(lab: &Lab, runtime: &str) {
    lab.shell_ok(&format!(
        "kubectl patch clustertrainingruntime {runtime} --type=merge --field-manager=trainer -p '{{\"metadata\":{{\"finalizers\":[\"{IN_USE}\"]}}}}'"
    ));
}
