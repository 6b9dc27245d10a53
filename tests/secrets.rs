//! Planted secrets never come out: registry passwords (from stdin or a Docker config) in no
//! output or error, Helm release values masked in `status` and redacted in `snapshot
//! --redact-values`, and absent from every `check`/`plan`/`runbook` format.

mod support;

use std::path::Path;

use base64::Engine;
use serde_json::json;
use support::http::{Response, Server};
use support::{run, run_with_stdin};
use testkit::release::encode_secret;
use testkit::scenario::{list_yaml, scenario};

const PASSWORD: &str = "s3cr3t-Planted-Registry-Pa55";
const VALUE_SECRET: &str = "planted-release-value-9f8e7d";

fn all_output(out: &std::process::Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

#[test]
fn registry_credentials_never_printed() {
    let server = Server::start(|_| {
        Response::new(401, r#"{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}"#)
            .header("WWW-Authenticate", "Basic realm=\"test\"")
    });
    let home = tempfile::tempdir().unwrap();
    let repo = format!("oci://{}/charts/tiny", server.base());
    for args in [
        vec!["versions", repo.as_str(), "--plain-http", "--username", "me", "--password-stdin"],
        vec!["pull", repo.as_str(), "--version", "1.0.0", "--plain-http", "--username", "me", "--password-stdin", "--format", "json"],
    ] {
        let out = run_with_stdin(home.path(), &args, Some(PASSWORD));
        assert_eq!(out.status.code(), Some(2));
        assert!(!all_output(&out).contains(PASSWORD), "{}", all_output(&out));
    }
    // From a Docker config file.
    let docker = home.path().join(".docker");
    std::fs::create_dir_all(&docker).unwrap();
    let auth = base64::engine::general_purpose::STANDARD.encode(format!("me:{PASSWORD}"));
    std::fs::write(docker.join("config.json"), json!({"auths": {server.base(): {"auth": auth}}}).to_string()).unwrap();
    let out = run(home.path(), &["versions", &repo, "--plain-http"]);
    assert_eq!(out.status.code(), Some(2));
    let text = all_output(&out);
    assert!(!text.contains(PASSWORD) && !text.contains(&auth), "{text}");
    // The server saw the credential (so it was really used), the output did not.
    assert!(server.requests().iter().any(|r| r.header("authorization").is_some()));
}

fn planted_snapshot(dir: &Path) -> String {
    let mut objects = scenario("helm-2.2.1").unwrap();
    let release = json!({"name": "kubeflow-trainer", "namespace": "kubeflow-system", "version": 3,
        "info": {"status": "deployed"}, "chart": {"metadata": {"name": "kubeflow-trainer", "version": "2.2.1", "appVersion": "2.2.1"}, "values": {"apiToken": VALUE_SECRET}},
        "config": {"storage": {"password": VALUE_SECRET, "accessKey": VALUE_SECRET}, "manager": {"replicas": 1}}, "manifest": ""});
    objects.push(encode_secret(&release, true));
    let path = dir.join("planted.yaml");
    std::fs::write(&path, list_yaml(objects)).unwrap();
    path.to_string_lossy().into_owned()
}

#[test]
fn release_values_masked_and_redacted() {
    let home = tempfile::tempdir().unwrap();
    let snap = planted_snapshot(home.path());
    for format in ["text", "json"] {
        let out = run(home.path(), &["status", "--snapshot", &snap, "--format", format]);
        assert!(out.status.success(), "{}", all_output(&out));
        assert!(!all_output(&out).contains(VALUE_SECRET), "status {format}: {}", all_output(&out));
        assert!(all_output(&out).contains("<redacted>"), "status {format} shows the masked key");
    }
    let file = home.path().join("redacted.json");
    let out = run(home.path(), &["snapshot", "--snapshot", &snap, "--redact-values", "-o", file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", all_output(&out));
    let state = trainer_audit::cluster::snapshot::read_file(&file).unwrap();
    for o in state.objects.iter().filter(|o| o["metadata"]["name"].as_str().is_some_and(|n| n.starts_with("sh.helm.release"))) {
        let decoded = trainer_audit::cluster::release::release_json(o).unwrap().to_string();
        assert!(!decoded.contains(VALUE_SECRET), "{decoded}");
    }
}

#[test]
#[ignore = "needs the corpus: TRAINER_AUDIT_CORPUS=DIR cargo test -- --include-ignored"]
fn check_plan_runbook_never_show_release_values() {
    let corpus = support::corpus();
    let home = tempfile::tempdir().unwrap();
    let snap = planted_snapshot(home.path());
    let to = corpus.join("charts/kubeflow-trainer-2.3.0.tgz");
    let from = corpus.join("charts/kubeflow-trainer-2.2.1.tgz");
    let (to, from) = (to.to_str().unwrap(), from.to_str().unwrap());
    let base = ["--snapshot", &snap, "--chart", to, "--from-chart", from];
    let mut runs: Vec<Vec<&str>> = Vec::new();
    for format in ["text", "json", "sarif", "markdown"] {
        runs.push([&["check"][..], &base[..], &["--format", format]].concat());
    }
    for format in ["text", "json", "markdown"] {
        runs.push([&["plan"][..], &base[..], &["--format", format]].concat());
    }
    runs.push([&["runbook"][..], &base[..]].concat());
    for args in runs {
        let out = run(home.path(), &args);
        assert_ne!(out.status.code(), Some(2), "{args:?}: {}", all_output(&out));
        assert!(!all_output(&out).contains(VALUE_SECRET), "{args:?} printed a release value");
    }
}
