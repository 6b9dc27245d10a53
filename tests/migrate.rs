//! `trainer-audit migrate` through the real binary, on the fixtures in tests/fixtures/migrate:
//! `-f` input → List, diff and JSON formats, the pre-CRD patch script, snapshots as input, the
//! legacy path, validation against a target chart's CRDs (a hand-written 2.2+-shaped stand-in,
//! `target-chart/`), and bad input (exit 2, nothing written).

mod support;

use std::path::{Path, PathBuf};

use serde_json::Value as Json;
use support::{run, stderr, stdout};

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/migrate").join(name).display().to_string()
}

/// The stand-in target chart (the 2.2+ CRD shape) the converted objects are validated against.
fn target() -> String {
    fixture("target-chart")
}

/// `trainer-audit migrate ARGS --chart <the stand-in target>`.
fn migrate(home: &Path, args: &[&str]) -> std::process::Output {
    let target = target();
    let mut all = vec!["migrate"];
    all.extend_from_slice(args);
    all.extend(["--chart", target.as_str()]);
    run(home, &all)
}

fn home() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

fn items(list: &Json) -> Vec<&Json> {
    list["items"].as_array().unwrap().iter().collect()
}

fn find<'a>(list: &'a Json, kind: &str, name: &str) -> Option<&'a Json> {
    items(list).into_iter().find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
}

/// The report with this binary's path replaced, so snapshots do not depend on the build dir.
fn report(out: &std::process::Output) -> String {
    stderr(out).replace(env!("CARGO_BIN_EXE_trainer-audit"), "trainer-audit").replace(&fixture(""), "FIXTURES/")
}

#[test]
fn trainer_2_1_files_to_a_list() {
    let h = home();
    let out = migrate(h.path(), &["--manifests", &fixture("trainer-2.1.yaml"), "--format", "json"]);
    assert_eq!(out.status.code(), Some(1), "losses and a refusal make exit 1: {}", stderr(&out));
    let list: Json = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(list["kind"], "List");
    let names: Vec<&str> = items(&list).iter().map(|o| o["metadata"]["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["torch-gpu", "auto-job", "cpu-job", "llm-finetune", "inherits-four", "torch-elastic"]);
    let llm = find(&list, "TrainJob", "llm-finetune").unwrap();
    assert_eq!(llm["spec"]["trainer"]["numProcPerNode"], 8);
    assert!(llm["spec"].get("podTemplateOverrides").is_none() && llm["spec"].get("labels").is_none());
    assert!(llm.get("status").is_none());
    for field in ["resourceVersion", "uid", "managedFields"] {
        assert!(llm["metadata"].get(field).is_none(), "{field} stripped");
    }
    assert!(llm["metadata"].get("annotations").is_none(), "last-applied dropped, and the empty map with it");
    let patches = llm["spec"]["runtimePatches"].as_array().unwrap();
    assert_eq!(patches.len(), 2, "two overrides of job node → two ordered patches");
    assert_eq!(patches[0]["trainingRuntimeSpec"]["template"]["metadata"]["labels"]["cost-center"], "ml-42");
    assert_eq!(find(&list, "TrainJob", "cpu-job").unwrap()["spec"]["trainer"]["numProcPerNode"], 2);
    assert_eq!(find(&list, "TrainJob", "inherits-four").unwrap()["spec"]["trainer"]["numProcPerNode"], 4);
    assert!(find(&list, "TrainJob", "gpu-no-gpus").is_none(), "refused");
    assert!(find(&list, "TrainJob", "already-fine").is_none(), "needs nothing");
    assert_eq!(find(&list, "TrainingRuntime", "torch-elastic").unwrap()["spec"]["mlPolicy"], serde_json::json!({"torch": {}}));
    insta::assert_snapshot!("migrate_trainer_2_1_report", report(&out));
}

#[test]
fn diff_format_and_before_crds_script() {
    let h = home();
    let out = migrate(h.path(), &["--manifests", &fixture("trainer-2.1.yaml"), "--format", "diff"]);
    let diff = stdout(&out);
    assert!(diff.contains("--- a/TrainJob/team-a/llm-finetune\n+++ b/TrainJob/team-a/llm-finetune\n"), "{diff}");
    assert!(diff.contains("-    numProcPerNode: gpu\n") && diff.contains("+    numProcPerNode: 8\n"), "{diff}");
    assert!(diff.contains("-  podTemplateOverrides:\n") && diff.contains("+  runtimePatches:\n"), "{diff}");
    assert!(!diff.contains("gpu-no-gpus"), "refused objects have no diff");

    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("before.sh");
    let out = migrate(
        h.path(),
        &["--manifests", &fixture("trainer-2.1.yaml"), "--before-crds", "--context", "prod's", "-o", script.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(1));
    let text = std::fs::read_to_string(&script).unwrap();
    assert!(text.starts_with("#!/bin/sh\n"));
    assert!(text.contains(
        r#"kubectl --context 'prod'\''s' patch trainjob.trainer.kubeflow.org/llm-finetune --namespace team-a --type json -p '[{"op":"test","path":"/spec/trainer/numProcPerNode","value":"gpu"},{"op":"replace","path":"/spec/trainer/numProcPerNode","value":8}]'"#
    ), "{text}");
    assert!(!text.contains("gpu-no-gpus") && !text.contains("already-fine"));
    // The report names the command that prints the List, runnable as printed.
    assert!(
        report(&out).contains("| kubectl --context 'prod'\\''s' apply --server-side --field-manager=trainer-audit-migrate -f -"),
        "{}",
        report(&out)
    );
}

#[test]
fn a_snapshot_is_cluster_input() {
    let h = home();
    let out = migrate(h.path(), &["--snapshot", &fixture("trainer-2.1.yaml")]);
    let objects = trainer_audit::migrate::input::parse(&stdout(&out), "stdout").unwrap();
    let kinds: Vec<&str> = objects.iter().map(|o| o["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["TrainJob"; 4], "stored runtimes need no write");
    assert!(report(&out).contains("TrainingRuntime team-a/torch-elastic: converted (reported only)"));
    assert!(report(&out).contains("before the controller upgrade"));
}

#[test]
fn legacy_pytorchjobs() {
    let h = home();
    let out = migrate(h.path(), &["--legacy", "--suspend", "--manifests", &fixture("pytorchjobs.yaml")]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let list: Json = trainer_audit::migrate::input::parse(&stdout(&out), "stdout").map(|v| serde_json::json!({"items": v})).unwrap();
    let simple = find(&list, "TrainJob", "pytorch-simple").unwrap();
    assert_eq!(simple["spec"]["trainer"]["numNodes"], 2);
    assert_eq!(simple["spec"]["runtimeRef"]["name"], "torch-distributed");
    assert_eq!(simple["spec"]["suspend"], true);
    let bert = find(&list, "TrainJob", "bert-ddp").unwrap();
    assert_eq!(bert["spec"]["trainer"]["numNodes"], 3);
    assert_eq!(bert["spec"]["trainer"]["numProcPerNode"], 4);
    assert!(find(&list, "TFJob", "tf-mnist").is_none());
    insta::assert_snapshot!("migrate_legacy_report", report(&out));
}

#[test]
fn bad_input_exits_2_and_writes_nothing() {
    let h = home();
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.yaml");
    std::fs::write(&bad, "apiVersion: v1\nkind: [\n").unwrap();
    let target: PathBuf = dir.path().join("out.yaml");
    let out = migrate(h.path(), &["--manifests", bad.to_str().unwrap(), "-o", target.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains(&format!("{}: invalid YAML", bad.display())), "{}", stderr(&out));
    assert!(!target.exists());
    let out = migrate(h.path(), &["--manifests", &fixture("trainer-2.1.yaml"), "--patch-manager", "nodomain"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--patch-manager \"nodomain\" is not a domain-prefixed path"));
    let out = migrate(h.path(), &["--manifests", "/nonexistent.yaml"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn nothing_to_do_is_exit_0() {
    let h = home();
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("fine.yaml");
    std::fs::write(&f, "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: a}\nspec: {runtimeRef: {name: r}, trainer: {numProcPerNode: 2}}\n").unwrap();
    let out = migrate(h.path(), &["--manifests", f.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "apiVersion: v1\nitems: []\nkind: List\n");
}

#[test]
fn legacy_jobs_come_through_a_snapshot() {
    // The cluster reader keeps kubeflow.org/v1 jobs (conditions only of their status).
    let h = home();
    let dir = tempfile::tempdir().unwrap();
    let snap = dir.path().join("snap.yaml");
    let job = std::fs::read_to_string(fixture("pytorchjobs.yaml")).unwrap();
    let first = job.split("\n---\n").next().unwrap();
    std::fs::write(
        &snap,
        format!(
            "{first}\nstatus:\n  conditions:\n  - {{type: Succeeded, status: \"True\"}}\n  replicaStatuses: {{Master: {{succeeded: 1}}}}\n"
        ),
    )
    .unwrap();
    let out = migrate(h.path(), &["--legacy", "--snapshot", snap.to_str().unwrap()]);
    assert!(stdout(&out).contains("name: pytorch-simple"), "{}", stderr(&out));
    assert!(report(&out).contains("the PyTorchJob is Succeeded: applying the TrainJob starts the training again"), "{}", report(&out));
}

#[test]
fn converted_objects_are_validated_against_the_target_crds() {
    let h = home();
    let dir = tempfile::tempdir().unwrap();
    // numNodes 0 is below the target's minimum: the conversion is refused with the API server's words.
    let f = dir.path().join("jobs.yaml");
    std::fs::write(
        &f,
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: zero, namespace: ns}\n\
         spec: {runtimeRef: {name: r}, trainer: {numNodes: 0, numProcPerNode: cpu, resourcesPerNode: {requests: {cpu: '3'}}}}\n\
         ---\napiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: fine, namespace: ns}\n\
         spec: {runtimeRef: {name: r}, trainer: {numNodes: 2, numProcPerNode: cpu, resourcesPerNode: {requests: {cpu: '3'}}}}\n",
    )
    .unwrap();
    let out = migrate(h.path(), &["--manifests", f.to_str().unwrap(), "--kube-version", "1.33"]);
    assert_eq!(out.status.code(), Some(1), "a rejection refuses the object: {}", stderr(&out));
    let text = stderr(&out);
    assert!(text.contains("at Kubernetes 1.33: 1 accepted, 1 rejected\n"), "{text}");
    assert!(
        text.contains("  rejected  TrainJob ns/zero: spec.trainer.numNodes: Invalid value: 0: spec.trainer.numNodes in body should be greater than or equal to 1\n"),
        "{text}"
    );
    let names: Vec<String> = trainer_audit::migrate::input::parse(&stdout(&out), "stdout")
        .unwrap()
        .iter()
        .map(|o| o["metadata"]["name"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(names, ["fine"]);
}

#[test]
fn an_unreachable_default_target_is_exit_2() {
    let h = home();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_trainer-audit"))
        .args(["migrate", "--manifests", &fixture("trainer-2.1.yaml"), "--timeout", "2"])
        .env_clear()
        .env("HOME", h.path())
        .env("TRAINER_AUDIT_CACHE_DIR", h.path().join("cache"))
        .env("TRAINER_AUDIT_REPO", "oci://127.0.0.1:9/charts/kubeflow-trainer")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stdout(&out).is_empty(), "nothing written");
    assert!(stderr(&out).contains("127.0.0.1:9"), "{}", stderr(&out));
}
