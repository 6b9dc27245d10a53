//! Rehearsal of `migrate` on the shared real control plane (`testkit::controlplane`: etcd +
//! kube-apiserver 1.36.1, no controllers, no webhooks): Trainer 2.1.0 CRDs and objects, the
//! `--before-crds` patches, the 2.3.0 CRDs applied server-side, the converted List (validated
//! by trainer-audit against the 2.3.0 chart's CRDs) applied server-side, and the objects read
//! back with the user's data present; then legacy PyTorchJobs converted, validated both by a
//! server-side dry run through the library's `TargetSchema` seam and by trainer-audit's own
//! validator (which must agree), and created. Needs the control-plane binaries (`cargo xtask
//! controlplane`) and `TRAINER_AUDIT_CORPUS`; without the binaries it prints SKIPPED (and fails
//! under CI).

mod support;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Output;

use kube_validate::stored::CrdSet;
use kube_version::KubeVersion;
use serde_json::{json, Value as Json};
use testkit::controlplane::ControlPlane;
use trainer_audit::migrate::{self, output, Options, SchemaVerdict, Source};

struct Cluster {
    cp: ControlPlane,
}

impl Cluster {
    fn kubectl_in(&self, args: &[&str], stdin: Option<&str>) -> Output {
        self.cp.kubectl(&self.cp.admin_kubeconfig, args, stdin)
    }

    fn kubectl(&self, args: &[&str]) -> Output {
        self.kubectl_in(args, None)
    }

    fn ok(&self, args: &[&str], stdin: Option<&str>) -> String {
        let out = self.kubectl_in(args, stdin);
        assert!(out.status.success(), "kubectl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn get(&self, kind: &str, ns: &str, name: &str) -> Json {
        serde_json::from_str(&self.ok(&["get", kind, "-n", ns, name, "-o", "json"], None)).unwrap()
    }
}

/// The CRDs shipped in `crds/` of a corpus chart.
fn crds_from_crds_dir(chart: &Path) -> String {
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(std::fs::File::open(chart).unwrap()));
    let mut out = String::new();
    for entry in archive.entries().unwrap() {
        let mut entry = entry.unwrap();
        let path = entry.path().unwrap().display().to_string();
        if path.contains("/crds/trainer.kubeflow.org_") {
            out.push_str("---\n");
            entry.read_to_string(&mut out).unwrap();
        }
    }
    out
}

/// The 2.3 CRDs, which are templates (`templates/crd/`), rendered by trainer-audit itself.
fn crds_rendered(home: &Path, chart: &Path) -> String {
    let mut args = vec!["render".to_string(), chart.display().to_string()];
    for kind in ["trainjobs", "trainingruntimes", "clustertrainingruntimes"] {
        args.extend(["-s".into(), format!("templates/crd/trainer.kubeflow.org_{kind}.yaml")]);
    }
    let out = support::run(home, &args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(out.status.success(), "{}", support::stderr(&out));
    support::stdout(&out)
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/migrate").join(name)
}

#[test]
#[ignore = "needs TRAINER_AUDIT_CORPUS (the real 2.1.0 and 2.3.0 CRDs) and the control-plane binaries"]
fn rehearsal_2_1_to_2_3_and_legacy() {
    let corpus = support::corpus();
    let Some(cp) = testkit::controlplane::fresh_or_skip("rehearsal_2_1_to_2_3_and_legacy") else { return };
    let bin = cp.bin.clone();
    let cp = Cluster { cp };
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let charts = corpus.join("charts");
    let target = charts.join("kubeflow-trainer-2.3.0.tgz");
    let target = target.to_str().unwrap();
    cp.ok(&["apply", "--server-side", "-f", "-"], Some(&crds_from_crds_dir(&charts.join("kubeflow-trainer-2.1.0.tgz"))));
    for ns in ["team-a", "team-b", "ml"] {
        cp.ok(&["create", "namespace", ns], None);
    }
    // The 2.1 objects as a user created them (the fixture is `kubectl get` output).
    let objects = migrate::input::read_files(&[fixture("trainer-2.1.yaml")]).unwrap();
    let create: Vec<Json> = objects.iter().map(output::stripped).collect();
    cp.ok(&["create", "-f", "-"], Some(&json!({"apiVersion": "v1", "kind": "List", "items": create}).to_string()));

    // 1. Patches while the 2.1 CRDs are installed, run exactly as printed.
    let script = work.path().join("before-crds.sh");
    let out = support::run(
        home.path(),
        &[
            "migrate",
            "--manifests",
            fixture("trainer-2.1.yaml").to_str().unwrap(),
            "--chart",
            target,
            "--before-crds",
            "-o",
            script.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", support::stderr(&out));
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let ran = std::process::Command::new("sh").arg(&script).env("PATH", path).env("KUBECONFIG", &cp.cp.admin_kubeconfig).output().unwrap();
    assert!(ran.status.success(), "{}", String::from_utf8_lossy(&ran.stderr));

    // 2. The 2.3.0 CRDs, server-side. 3. The converted List, server-side.
    cp.ok(
        &["apply", "--server-side", "--force-conflicts", "-f", "-"],
        Some(&crds_rendered(home.path(), &charts.join("kubeflow-trainer-2.3.0.tgz"))),
    );
    let list = work.path().join("list.yaml");
    let out = support::run(
        home.path(),
        &[
            "migrate",
            "--manifests",
            fixture("trainer-2.1.yaml").to_str().unwrap(),
            "--chart",
            target,
            "--kube-version",
            "1.36",
            "-o",
            list.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    // trainer-audit's verdict on the List, which the API server then accepts object by object.
    let report = support::stderr(&out);
    let summary = report.lines().find(|l| l.starts_with("validated against")).unwrap_or_default().to_string();
    assert!(summary.contains("at Kubernetes 1.36:") && summary.contains(" 0 rejected"), "{report}");
    cp.ok(&["apply", "--server-side", "--field-manager=trainer-audit-migrate", "-f", list.to_str().unwrap()], None);

    // The user's data is there, where 2.3 reads it.
    let llm = cp.get("trainjob", "team-a", "llm-finetune");
    assert_eq!(llm["spec"]["trainer"]["numProcPerNode"], 8);
    assert_eq!(llm["spec"]["trainer"]["image"], "registry.example.com/llm:1.4");
    assert_eq!(llm["metadata"]["labels"]["app"], "llm");
    let patches = &llm["spec"]["runtimePatches"];
    assert_eq!(
        patches[0]["trainingRuntimeSpec"]["template"]["metadata"],
        json!({"labels": {"cost-center": "ml-42"}, "annotations": {"owner": "alice"}})
    );
    let pod = &patches[0]["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"];
    assert_eq!(pod["spec"]["serviceAccountName"], "llm-trainer");
    assert_eq!(pod["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"], "llm-data");
    assert_eq!(pod["spec"]["containers"][0]["volumeMounts"][0]["mountPath"], "/data");
    assert_eq!(pod["metadata"]["labels"]["sidecar.istio.io/inject"], "false");
    assert_eq!(
        patches[1]["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["nodeSelector"],
        json!({"zone": "eu-1"})
    );
    assert!(llm["spec"].get("podTemplateOverrides").is_none());
    assert_eq!(cp.get("trainjob", "team-a", "cpu-job")["spec"]["trainer"]["numProcPerNode"], 2);
    assert_eq!(cp.get("trainjob", "team-b", "inherits-four")["spec"]["trainer"]["numProcPerNode"], 4);
    assert!(cp.get("trainjob", "team-a", "auto-job")["spec"]["trainer"].get("numProcPerNode").is_none());
    // The refused one shows why it was refused: the API server takes no write to it at all.
    let stuck = cp.kubectl(&["label", "trainjob", "-n", "team-b", "gpu-no-gpus", "x=y"]);
    assert!(!stuck.status.success());
    assert!(
        String::from_utf8_lossy(&stuck.stderr).contains("invalid data, expected int, got string"),
        "{}",
        String::from_utf8_lossy(&stuck.stderr)
    );

    // Legacy: converted through the library with the API server as the target-schema check.
    let legacy = migrate::input::read_files(&[fixture("pytorchjobs.yaml")]).unwrap();
    let dry_run = |o: &Json, _: Option<&Json>| {
        let out = cp.kubectl_in(&["create", "--dry-run=server", "-o", "json", "-f", "-"], Some(&o.to_string()));
        if out.status.success() {
            SchemaVerdict::Accepted { pruned: Vec::new(), unevaluated: Vec::new() }
        } else {
            SchemaVerdict::Rejected { errors: vec![String::from_utf8_lossy(&out.stderr).trim().to_string()], pruned: Vec::new() }
        }
    };
    let m = migrate::migrate(&legacy, &Options::new(true, Source::Files), &dry_run);
    let accepted = m.conversions.iter().filter(|c| matches!(c.schema, SchemaVerdict::Accepted { .. })).count();
    assert_eq!(accepted, 2, "{:#?}", m.conversions.iter().map(|c| (&c.id.name, &c.schema)).collect::<Vec<_>>());
    // trainer-audit's validator over the same 2.3.0 CRDs gives the API server's verdicts.
    let crds: Vec<Json> = serde_yaml_documents(&crds_rendered(home.path(), &charts.join("kubeflow-trainer-2.3.0.tgz")));
    let ours = CrdSet::new(crds.iter(), KubeVersion::new(1, 36));
    let by_us = migrate::migrate(&legacy, &Options::new(true, Source::Files), &ours);
    for (server, us) in m.conversions.iter().zip(&by_us.conversions) {
        assert_eq!(
            matches!(server.schema, SchemaVerdict::Accepted { .. }),
            matches!(us.schema, SchemaVerdict::Accepted { .. }),
            "{}: api-server {:?}, trainer-audit {:?}",
            us.id,
            server.schema,
            us.schema
        );
    }
    cp.ok(&["apply", "--server-side", "--field-manager=trainer-audit-migrate", "-f", "-"], Some(&output::list(&m).to_string()));
    let bert = cp.get("trainjob", "ml", "bert-ddp");
    assert_eq!(bert["spec"]["trainer"]["numNodes"], 3);
    assert_eq!(bert["spec"]["trainer"]["env"][1]["valueFrom"]["secretKeyRef"]["name"], "hf");
    let pod =
        &bert["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"];
    assert_eq!(pod["spec"]["nodeSelector"]["gpu-pool"], "a100");
    assert_eq!(pod["spec"]["volumes"][1]["emptyDir"]["medium"], "Memory");
    assert_eq!(cp.get("trainjob", "ml", "pytorch-simple")["spec"]["trainer"]["numNodes"], 2);
}

/// The documents of a multi-document YAML stream, as JSON (what `trainer-audit render` prints).
fn serde_yaml_documents(text: &str) -> Vec<Json> {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("crds.yaml");
    std::fs::write(&file, text).unwrap();
    migrate::input::read_files(&[file]).unwrap()
}

/// 2.2.0's runtime CRDs carry Kubernetes 1.35's PodSpec.workloadRef; 2.3.0's (like 2.2.1's) carry
/// 1.36's schedulingGroup instead. A runtime stored under 2.2.0 with workloadRef, applied as it
/// is under the 2.3.0 CRDs, is refused (`unknown field`); `migrate` removes the field (reported
/// lost) and its List is accepted by `kubectl apply --server-side` with default validation.
#[test]
#[ignore = "needs TRAINER_AUDIT_CORPUS (the real 2.2.0 and 2.3.0 CRDs) and the control-plane binaries"]
fn workload_ref_of_2_2_0_runtimes_is_removed_and_the_list_applies() {
    let corpus = support::corpus();
    let Some(cp) = testkit::controlplane::fresh_or_skip("workload_ref_of_2_2_0_runtimes_is_removed_and_the_list_applies") else { return };
    let cp = Cluster { cp };
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let charts = corpus.join("charts");
    let input = fixture("trainer-2.2.0-workload-ref.yaml");
    cp.ok(&["apply", "--server-side", "-f", "-"], Some(&crds_from_crds_dir(&charts.join("kubeflow-trainer-2.2.0.tgz"))));
    cp.ok(&["create", "namespace", "team-a"], None);
    let objects = migrate::input::read_files(std::slice::from_ref(&input)).unwrap();
    let create: Vec<Json> = objects.iter().map(output::stripped).collect();
    let list = json!({"apiVersion": "v1", "kind": "List", "items": create}).to_string();
    // Under 2.2.0 the field is the runtime's own.
    cp.ok(&["create", "-f", "-"], Some(&list));
    assert_eq!(
        cp.get("trainingruntime", "team-a", "gang-torch")["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
            ["spec"]["workloadRef"]["podGroup"],
        "workers"
    );

    cp.ok(
        &["apply", "--server-side", "--force-conflicts", "-f", "-"],
        Some(&crds_rendered(home.path(), &charts.join("kubeflow-trainer-2.3.0.tgz"))),
    );
    // As it is, the 2.3.0 API refuses it.
    let as_is = cp.kubectl_in(&["apply", "--server-side", "--field-manager=trainer-audit-migrate", "-f", "-"], Some(&list));
    assert!(!as_is.status.success(), "the 2.3.0 CRD took workloadRef");
    assert!(String::from_utf8_lossy(&as_is.stderr).contains("workloadRef"), "{}", String::from_utf8_lossy(&as_is.stderr));

    let converted = work.path().join("list.yaml");
    let target = charts.join("kubeflow-trainer-2.3.0.tgz");
    let out = support::run(
        home.path(),
        &[
            "migrate",
            "--manifests",
            input.to_str().unwrap(),
            "--chart",
            target.to_str().unwrap(),
            "--kube-version",
            "1.36",
            "-o",
            converted.to_str().unwrap(),
        ],
    );
    let report = support::stderr(&out);
    assert!(report.contains("workloadRef") && report.contains("schedulingGroup"), "{report}");
    cp.ok(&["apply", "--server-side", "--field-manager=trainer-audit-migrate", "-f", converted.to_str().unwrap()], None);
    let spec = cp.get("trainingruntime", "team-a", "gang-torch");
    let pod = &spec["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"];
    assert!(pod.get("workloadRef").is_none(), "{pod}");
    assert_eq!(pod["containers"][0]["name"], "node");
}
