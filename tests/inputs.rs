//! Inputs that are not what they say are refused (issue 20 §1, §3): exit 2, the input named and
//! what was found, nothing printed on standard output; and the verdict every output carries
//! (§4). On the scenario snapshots and the small stand-in charts: no corpus needed.

mod support;

use std::path::Path;

use support::{run, stderr, stdout};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn path(rel: &str) -> String {
    Path::new(ROOT).join(rel).to_string_lossy().into_owned()
}

fn snapshot(name: &str) -> String {
    path(&format!("snapshots/{name}.yaml"))
}

/// The 2.3.0 and 2.2.0 stand-ins of the Trainer chart, and a chart that is not Trainer's.
fn to() -> String {
    path("tests/rules/charts/to")
}
fn from_220() -> String {
    path("tests/rules/charts/from")
}
fn not_trainer() -> String {
    path("tests/fixtures/charts/not-trainer")
}

/// Runs and asserts a refusal: exit 2, nothing on stdout, stderr naming every `names`.
fn refused(args: &[&str], names: &[&str]) -> String {
    let home = tempfile::tempdir().unwrap();
    let out = run(home.path(), args);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{args:?} was not refused:\n{}\n{err}", stdout(&out));
    assert!(stdout(&out).is_empty(), "a refused run printed a report: {}", stdout(&out));
    for n in names {
        assert!(err.contains(n), "{args:?}: the error does not name {n:?}: {err}");
    }
    err
}

/// The snapshot text without its ClusterInfo item (a plain `kubectl get -o yaml` List).
fn without_cluster_info(text: &str) -> String {
    let mut out = Vec::new();
    let mut skipping = false;
    for line in text.lines() {
        if line.starts_with("- ") {
            skipping = false;
        }
        if line.starts_with("- apiVersion: trainer-audit.dev/") {
            skipping = true;
        }
        if !skipping {
            out.push(line);
        }
    }
    out.join("\n") + "\n"
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

#[test]
fn a_namespace_or_release_without_a_trainer_install_is_refused_listing_the_installs() {
    for command in ["check", "plan", "runbook"] {
        let s = snapshot("helm-2.2.1");
        let err = refused(&[command, "--snapshot", &s, "--chart", &to(), "-n", "nope"], &["namespace nope", "holds no Trainer install"]);
        assert!(err.contains("kubeflow-system/kubeflow-trainer (Helm, 2.2.1)"), "{command}: the installs found are listed: {err}");
        refused(
            &[command, "--snapshot", &s, "--chart", &to(), "--release", "nope"],
            &["release nope", "kubeflow-system/kubeflow-trainer (Helm, 2.2.1)"],
        );
    }
    // A kustomize install has no release: its namespace is checked, a release name is the one to create.
    let k = snapshot("kustomize-2.2.0");
    refused(
        &["check", "--snapshot", &k, "--chart", &to(), "-n", "nope"],
        &["namespace nope", "kubeflow-system/kubeflow-trainer-controller-manager"],
    );
    let home = tempfile::tempdir().unwrap();
    let out = run(home.path(), &["check", "--snapshot", &k, "--chart", &to(), "--from-chart", &from_220(), "--release", "new-release"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stdout(&out).contains("kubeflow-system/new-release"), "{}", stdout(&out));
}

#[test]
fn a_fleet_member_without_the_install_fails_alone() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("fleet");
    std::fs::create_dir(&dir).unwrap();
    std::fs::copy(snapshot("helm-2.2.1"), dir.join("a.yaml")).unwrap();
    let other = std::fs::read_to_string(snapshot("helm-2.2.1")).unwrap().replace("kubeflow-system", "team-ml");
    std::fs::write(dir.join("b.yaml"), other).unwrap();
    let d = dir.to_string_lossy().into_owned();
    let out = run(home.path(), &["check", "--snapshot", &d, "--chart", &to(), "-n", "team-ml", "--format", "jsonl"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let docs: Vec<serde_json::Value> = stdout(&out).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(docs[0]["verdict"], "failed", "{docs:?}");
    assert!(docs[0]["failure"].as_str().unwrap().contains("namespace team-ml holds no Trainer install"), "{docs:?}");
    assert_eq!(docs[1]["verdict"], "blocked", "the other member goes on: {docs:?}");
}

#[test]
fn charts_that_are_not_trainers_or_not_the_installed_version_are_refused() {
    let s = snapshot("helm-2.2.1");
    for command in ["check", "plan", "runbook"] {
        refused(
            &[command, "--snapshot", &s, "--chart", &not_trainer()],
            &[&not_trainer(), "kuberay-operator 1.1.0", "not kubeflow-trainer"],
        );
        refused(&[command, "--snapshot", &s, "--chart", &to(), "--from-chart", &not_trainer()], &[&not_trainer(), "kuberay-operator"]);
        refused(
            &[command, "--snapshot", &s, "--chart", &to(), "--from-chart", &from_220()],
            &["--from-chart", "2.2.0", "installed version is 2.2.1"],
        );
    }
}

#[test]
fn from_that_contradicts_the_cluster_is_refused_and_stays_for_a_cluster_that_cannot_tell() {
    let s = snapshot("helm-2.2.1");
    refused(
        &["check", "--snapshot", &s, "--chart", &to(), "--from", "9.9.9"],
        &["--from 9.9.9", "Helm release kubeflow-system/kubeflow-trainer", "2.2.1"],
    );
    let a = snapshot("argocd-2.2.1");
    refused(&["check", "--snapshot", &a, "--chart", &to(), "--from", "2.2.0"], &["--from 2.2.0", "controller image", "2.2.1"]);
    // The same version is no contradiction.
    let home = tempfile::tempdir().unwrap();
    let out = run(home.path(), &["check", "--snapshot", &s, "--chart", &to(), "--from", "2.2.1"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    // A cluster that tells no version (its controller image has no version tag) takes --from.
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(snapshot("kustomize-2.2.0"))
        .unwrap()
        .replace("trainer-controller-manager:v2.2.0", "trainer-controller-manager@sha256:0123")
        .replace("kubeflow_trainer_version: v2.2.0", "kubeflow_trainer_version: ''");
    let untold = write(dir.path(), "untold.yaml", &text);
    let out = run(home.path(), &["check", "--snapshot", &untold, "--chart", &to()]);
    assert_eq!(out.status.code(), Some(2));
    let out = run(home.path(), &["check", "--snapshot", &untold, "--chart", &to(), "--from", "2.2.0", "--from-chart", &from_220()]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stdout(&out).contains("2.2.0 → 2.3.0"), "{}", stdout(&out));
}

#[test]
fn engine_options_for_another_engine_are_refused() {
    refused(&["hooks", &to(), "--argocd-version", "3.2.1"], &["--argocd-version 3.2.1", "--engine helm"]);
    refused(&["hooks", &to(), "--engine", "flux", "--argocd-version", "3.2.1"], &["--engine flux"]);
    let home = tempfile::tempdir().unwrap();
    let out = run(home.path(), &["hooks", &to(), "--engine", "argocd", "--argocd-version", "3.2.1"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn an_unknown_kubernetes_version_is_asked_for_and_a_contradicting_one_named() {
    let dir = tempfile::tempdir().unwrap();
    let bare = write(dir.path(), "bare.yaml", &without_cluster_info(&std::fs::read_to_string(snapshot("helm-2.2.1")).unwrap()));
    for command in ["check", "plan", "runbook"] {
        refused(&[command, "--snapshot", &bare, "--chart", &to()], &["Kubernetes version is unknown", "--kube-version"]);
    }
    let head = path("tests/fixtures/gitops/flux-oci/head");
    refused(&["gitops", &head, "--charts", &path("tests/rules/charts"), "--snapshot", &bare], &["HelmRelease", "--kube-version"]);
    let home = tempfile::tempdir().unwrap();
    let out = run(home.path(), &["check", "--snapshot", &bare, "--chart", &to(), "--kube-version", "1.33", "--format", "json"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let report: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(report["inputs"]["kubernetes"], "1.33 (--kube-version)", "the version as given");
    assert!(!stdout(&out).contains("assumed"), "one version for every part of the run, none assumed");
    // A --kube-version the cluster's own ClusterInfo contradicts.
    refused(
        &["check", "--snapshot", &snapshot("helm-2.2.1"), "--chart", &to(), "--kube-version", "1.29"],
        &["--kube-version 1.29", "contradicts"],
    );
    // Installed CRDs whose CEL compiles only from Kubernetes 1.32 cannot exist on a 1.31 server.
    let quiet = std::fs::read_to_string(path("tests/rules/TA-K8S-001/quiet.yaml")).unwrap();
    let field = "                name:\n                  type: string\n";
    assert!(quiet.contains(field));
    let cel = "                template:\n                  type: object\n                  properties:\n                    metadata:\n                      type: object\n                      properties:\n                        namespace: {type: string}\n                  x-kubernetes-validations:\n                  - rule: \"!has(self.metadata.namespace)\"\n";
    let newer = write(dir.path(), "cel.yaml", &without_cluster_info(&quiet.replace(field, &format!("{field}{cel}"))));
    refused(
        &["check", "--snapshot", &newer, "--chart", &to(), "--kube-version", "1.31"],
        &["--kube-version 1.31", "trainjobs.trainer.kubeflow.org", "1.32"],
    );
    let out = run(home.path(), &["check", "--snapshot", &newer, "--chart", &to(), "--from-chart", &from_220(), "--kube-version", "1.32"]);
    assert!(matches!(out.status.code(), Some(0 | 1)), "{}", stderr(&out));
}

/// `status` and `migrate` do not refuse a cluster that tells no Kubernetes version (an overview,
/// a conversion), but they say which version they validated at, that it is not the cluster's
/// and why, and how to give the right one; with --kube-version nothing is assumed.
#[test]
fn status_and_migrate_say_which_kubernetes_version_they_assumed_and_why() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let bare = write(dir.path(), "bare.yaml", &without_cluster_info(&std::fs::read_to_string(snapshot("helm-2.2.1")).unwrap()));
    let status = run(home.path(), &["status", "--snapshot", &bare]);
    assert!(matches!(status.status.code(), Some(0 | 1)), "{}", stderr(&status));
    let text = stdout(&status);
    assert!(
        text.contains("at Kubernetes 1.36 (assumed, not the cluster's: it told no version and no --kube-version was given")
            && text.contains("pass --kube-version"),
        "{text}"
    );
    let given = run(home.path(), &["status", "--snapshot", &bare, "--kube-version", "1.33"]);
    assert!(!stdout(&given).contains("assumed"), "{}", stdout(&given));
    let manifests = path("tests/fixtures/migrate/trainer-2.1.yaml");
    let target = path("tests/fixtures/migrate/target-chart");
    let migrate = run(home.path(), &["migrate", "--manifests", &manifests, "--chart", &target]);
    let report = stderr(&migrate);
    assert!(
        report.contains("at Kubernetes 1.36 (assumed, not the cluster's: no --kube-version was given and manifests carry none"),
        "{report}"
    );
    let migrate = run(home.path(), &["migrate", "--manifests", &manifests, "--chart", &target, "--kube-version", "1.33"]);
    assert!(!stderr(&migrate).contains("assumed"), "{}", stderr(&migrate));
}

#[test]
fn checks_that_did_not_run_fail_the_gate() {
    let home = tempfile::tempdir().unwrap();
    let q = path("tests/rules/TA-K8S-001/quiet.yaml");
    let out = run(home.path(), &["check", "--snapshot", &q, "--chart", &to(), "--format", "json"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let report: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let skipped = report["findings"].as_array().unwrap().iter().find(|f| f["id"] == "TA-READ-002").expect("TA-READ-002");
    assert!(skipped["message"].as_str().unwrap().contains("TA-RT-003"), "{skipped}");
    assert!(skipped["fix"].as_str().unwrap().contains("--from-chart") && skipped["fix"].as_str().unwrap().contains("--repo"));
    assert_eq!(report["verdict"], "blocked");
    assert!(report["notes"].as_array().unwrap().iter().all(|n| !n.as_str().unwrap().contains("skipped")), "no more a note");
}

#[test]
fn gitops_without_any_trainer_reference_and_an_empty_fleet_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("tree");
    std::fs::create_dir(&tree).unwrap();
    let t = tree.to_string_lossy().into_owned();
    refused(&["gitops", &t], &[&t, "no Kubeflow Trainer reference", "HelmRelease", "Application", "helmCharts"]);
    std::fs::write(
        tree.join("hr.yaml"),
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: kuberay\n  namespace: ray\nspec:\n  chart:\n    spec:\n      chart: kuberay-operator\n      version: 1.1.0\n      sourceRef:\n        kind: HelmRepository\n        name: kuberay\n",
    )
    .unwrap();
    refused(&["gitops", &t, "--snapshot", &snapshot("helm-2.2.1")], &["no Kubeflow Trainer reference", "other charts"]);
    let empty = dir.path().join("fleet");
    std::fs::create_dir(&empty).unwrap();
    let e = empty.to_string_lossy().into_owned();
    let to = to();
    for command in ["check", "plan", "status"] {
        let mut args = vec![command, "--snapshot", &e];
        if command != "status" {
            args.extend(["--chart", to.as_str()]);
        }
        refused(&args, &[&e, "holds no"]);
    }
}

#[test]
fn the_verdict_leads_every_output_in_the_same_words() {
    let home = tempfile::tempdir().unwrap();
    let (s, to) = (snapshot("helm-2.2.1"), to());
    let base = ["--snapshot", s.as_str(), "--chart", to.as_str()];
    let with = |command: &str, extra: &[&str]| {
        let mut args = vec![command];
        args.extend(base.iter().copied());
        args.extend(extra);
        let out = run(home.path(), &args);
        (out.status.code(), stdout(&out))
    };
    let (code, text) = with("check", &[]);
    assert_eq!(code, Some(1));
    let first = text.lines().next().unwrap();
    assert!(first.starts_with("blocked: ") && first.contains(" errors, ") && first.ends_with(" warnings"), "{text}");
    let (_, json) = with("check", &["--format", "json"]);
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(report["verdict"], "blocked");
    assert_eq!(report["failOn"], "error");
    assert!(report["counts"]["error"].as_u64().unwrap() > 0);
    assert_eq!(format!("blocked: {} errors, {} warnings", report["counts"]["error"], report["counts"]["warning"]), first);
    assert!(report["inputs"]["installed"].as_str().unwrap().contains("Helm release kubeflow-system/kubeflow-trainer"), "{report}");
    assert_eq!(report["inputs"]["kubernetes"], "v1.33.4 (the cluster's)");
    let (_, md) = with("check", &["--format", "markdown"]);
    assert!(md.contains(&format!("**Verdict: {first}**")), "{md}");
    let (code, plan) = with("plan", &[]);
    let no_gate = format!("{first} (exit 0: not a gate without --fail-on)");
    assert_eq!((code, plan.lines().next()), (Some(0), Some(no_gate.as_str())), "plan says it in the same words, and that it is no gate");
    let (_, plan_json) = with("plan", &["--format", "json"]);
    let plan_json: serde_json::Value = serde_json::from_str(&plan_json).unwrap();
    assert_eq!(
        (plan_json["verdict"].as_str(), plan_json["gates"].as_bool()),
        (Some("blocked"), Some(false)),
        "a plan without --fail-on says it does not gate"
    );
    assert!(plan_json["plan"]["steps"].is_array());
    // A warning-only gate is ready and says so; the same version is "already at".
    let same = run(home.path(), &["check", "--snapshot", &snapshot("helm-2.3.0"), "--chart", &to, "--fail-on", "error"]);
    let line = stdout(&same);
    let line = line.lines().next().unwrap();
    assert!(line == "already at 2.3.0" || line.starts_with("blocked: ") && line.ends_with("(already at 2.3.0)"), "{line}");
}

#[test]
fn check_sarif_locates_every_result_and_fills_every_placeholder() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    // The repository being scanned: the snapshot and a values file inside it.
    std::fs::copy(snapshot("helm-2.2.1"), work.path().join("cluster.yaml")).unwrap();
    std::fs::write(work.path().join("values.yaml"), "manager:\n  annotations: {a: b}\n").unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_trainer-audit"))
        .args(["check", "--snapshot", "cluster.yaml", "-f", "values.yaml", "--chart", &to(), "--format", "sarif"])
        .current_dir(work.path())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let sarif: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let run0 = &sarif["runs"][0];
    let results = run0["results"].as_array().unwrap();
    assert!(!results.is_empty());
    let mut lines = 0;
    for r in results {
        let loc = &r["locations"][0]["physicalLocation"];
        let uri = loc["artifactLocation"]["uri"].as_str().unwrap_or_else(|| panic!("no location: {r}"));
        assert!(!uri.starts_with('/') && !uri.is_empty(), "relative to the repository: {uri}");
        let file = work.path().join(uri);
        assert!(file.exists() || Path::new(&to()).join(uri.split_once('/').map(|x| x.1).unwrap_or(uri)).exists(), "{uri} exists");
        if uri == "cluster.yaml" && loc["region"]["startLine"].as_u64().unwrap_or(0) > 1 {
            lines += 1;
        }
    }
    assert!(lines > 0, "live objects are placed at their snapshot line: {results:?}");
    for rule in run0["tool"]["driver"]["rules"].as_array().unwrap() {
        let help = rule["help"]["text"].as_str().unwrap_or("");
        let unfilled = help
            .split('{')
            .skip(1)
            .any(|rest| rest.split('}').next().is_some_and(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_lowercase() || c == '_')));
        assert!(!unfilled, "unfilled placeholder in {}: {help}", rule["id"]);
    }
    let invocation = &run0["invocations"][0];
    assert_eq!(invocation["properties"]["verdict"], "blocked");
    assert_eq!(invocation["exitCode"], 1);
    assert!(invocation["properties"]["summary"].as_str().unwrap().starts_with("blocked: "));
}

/// `--to` from a `--repo` that serves another chart is refused before anything is audited.
#[test]
fn a_repository_serving_another_chart_is_refused() {
    use support::http::{Response, Server};
    let layer = support::tiny_chart("kuberay-operator", "1.1.0");
    let config = support::chart_config("kuberay-operator", "1.1.0");
    let manifest = support::chart_manifest(&config, &layer);
    let repo = "/v2/ray/kuberay-operator";
    let routes: Vec<(String, Vec<u8>, &'static str)> = vec![
        (format!("{repo}/tags/list"), br#"{"name":"ray/kuberay-operator","tags":["1.1.0"]}"#.to_vec(), "application/json"),
        (format!("{repo}/manifests/1.1.0"), manifest, support::MANIFEST_TYPE),
        (format!("{repo}/blobs/{}", support::sha256(&config)), config, "application/octet-stream"),
        (format!("{repo}/blobs/{}", support::sha256(&layer)), layer, "application/octet-stream"),
    ];
    let server = Server::start(move |req| match routes.iter().find(|(path, _, _)| path == req.path()) {
        Some((_, body, kind)) => Response::new(200, body.clone()).header("Content-Type", kind),
        None => Response::new(404, "{}"),
    });
    let oci = format!("oci://{}/ray/kuberay-operator", server.base());
    let s = snapshot("helm-2.2.1");
    for command in ["check", "plan"] {
        refused(
            &[command, "--snapshot", &s, "--to", "1.1.0", "--repo", &oci, "--plain-http"],
            &[&oci, "kuberay-operator 1.1.0", "not kubeflow-trainer"],
        );
    }
}
