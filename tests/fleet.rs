//! Fleets through the real binary, without the corpus: live clusters served by the fake API
//! server (`testkit::fake_api`) with one context pointing at a closed port, snapshot directories,
//! the project's stand-in charts (`tests/rules/charts`), and an in-test registry that counts how
//! often each chart is pulled.

mod support;

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::Value as Json;
use support::http::{Response, Server};
use support::{run, stderr, stdout};
use testkit::fake_api::FakeApiServer;
use testkit::scenario::{list_yaml, scenario, trainjobs};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn charts() -> (String, String) {
    let dir = Path::new(ROOT).join("tests/rules/charts");
    (dir.join("to").to_string_lossy().into_owned(), dir.join("from").to_string_lossy().into_owned())
}

/// A fake API server holding a scenario (without the snapshot-only `ClusterInfo`).
fn serve(name: &str, extra_trainjobs: usize) -> FakeApiServer {
    let mut objects: Vec<Json> = scenario(name).unwrap().into_iter().filter(|o| o["kind"] != "ClusterInfo").collect();
    objects.extend(trainjobs(extra_trainjobs, 3, &["torch-distributed"], false));
    FakeApiServer::start(objects, &[], "v1.33.4").unwrap()
}

/// A port nothing listens on.
fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// One kubeconfig with a context per (name, server URL), current context the first.
fn kubeconfig(dir: &Path, clusters: &[(&str, String)]) -> PathBuf {
    let mut text = String::from("apiVersion: v1\nkind: Config\nclusters:\n");
    for (name, url) in clusters {
        text.push_str(&format!("- name: {name}\n  cluster:\n    server: {url}\n"));
    }
    text.push_str("users:\n- name: fake\n  user:\n    token: fake-token\ncontexts:\n");
    for (name, _) in clusters {
        text.push_str(&format!("- name: {name}\n  context:\n    cluster: {name}\n    user: fake\n"));
    }
    text.push_str(&format!("current-context: {}\n", clusters[0].0));
    let path = dir.join("kubeconfig");
    std::fs::write(&path, text).unwrap();
    path
}

fn lines(out: &std::process::Output) -> Vec<Json> {
    stdout(out).lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not one JSON document per line ({e}): {l}"))).collect()
}

/// The acceptance case of issue 16 §2: three clusters, one unreachable. Two verdicts, one named
/// failure with its reason, every report after the summary in input order, and the exit code of
/// the worst cluster (the failed one: 2).
#[test]
fn a_fleet_with_an_unreachable_cluster_reports_the_others_and_exits_with_the_worst() {
    let home = tempfile::tempdir().unwrap();
    let (east, west) = (serve("helm-2.2.1", 20), serve("helm-2.3.0", 5));
    let dead = format!("http://127.0.0.1:{}", closed_port());
    let config = kubeconfig(home.path(), &[("east", east.url()), ("lab", dead), ("west", west.url())]);
    // No --from-chart: the one stand-in chart is none of the members' installed version, which
    // each member would refuse (their chart comparisons are reported as not run, TA-READ-002).
    let (to, _) = charts();
    let k = config.to_string_lossy().into_owned();
    let base = ["check", "--kubeconfig", &k, "--all-contexts", "--chart", &to];

    let out = run(home.path(), &base);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(2), "{text}\n{}", stderr(&out));
    let table: Vec<&str> = text.lines().take_while(|l| !l.is_empty()).collect();
    assert!(table[0].starts_with("Fleet check: 3 clusters: "), "{text}");
    assert!(table[1].starts_with("CLUSTER ") && table[1].ends_with("VERDICT"), "{text}");
    let verdict = |row: &str| row.split_whitespace().last().unwrap_or("").to_string();
    let rows: Vec<(&str, String)> = table[2..5].iter().map(|r| (r.split_whitespace().next().unwrap(), verdict(r))).collect();
    assert_eq!(rows.iter().map(|(c, _)| *c).collect::<Vec<_>>(), ["east", "lab", "west"], "input order: {text}");
    assert!(["ready", "blocked"].contains(&rows[0].1.as_str()) && ["ready", "blocked"].contains(&rows[2].1.as_str()), "{text}");
    assert_eq!(rows[1].1, "failed");
    assert!(table[2].contains("2.2.1") && table[2].contains("2.3.0") && table[2].contains("Helm"), "{text}");
    let failure = table.iter().find(|l| l.starts_with("failed lab: ")).unwrap_or_else(|| panic!("no named failure: {text}"));
    assert!(failure.contains("cannot reach the Kubernetes API server"), "the reason is given: {failure}");
    // Then the reports, in input order, each as `check` prints it for one cluster.
    let sections: Vec<usize> = ["=== east ===", "=== lab ===", "=== west ==="].iter().map(|h| text.find(h).unwrap()).collect();
    assert!(sections.windows(2).all(|w| w[0] < w[1]), "{text}");
    assert!(text[sections[0]..].contains("Upgrade check: kubeflow-system/kubeflow-trainer 2.2.1 → 2.3.0"), "{text}");

    // JSON Lines: one document per cluster, the same verdicts, the failure with a null report.
    let mut json_args = base.to_vec();
    json_args.extend(["--format", "json", "--concurrency", "1"]);
    let out = run(home.path(), &json_args);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let docs = lines(&out);
    assert_eq!(docs.iter().map(|d| d["cluster"].as_str().unwrap()).collect::<Vec<_>>(), ["east", "lab", "west"]);
    for (doc, (_, verdict)) in docs.iter().zip(&rows) {
        assert_eq!(doc["schema"], "trainer-audit.dev/fleet/v1");
        assert_eq!(doc["command"], "check");
        assert_eq!(doc["verdict"].as_str(), Some(verdict.as_str()));
    }
    assert_eq!((docs[1]["exit_code"].as_u64(), docs[1]["report"].is_null()), (Some(2), true));
    assert!(docs[1]["failure"].as_str().unwrap().contains("cannot reach the Kubernetes API server"));
    assert_eq!(docs[0]["report"]["from"], "2.2.1");
    assert_eq!(docs[0]["source"]["live"]["context"], "east");

    // Without the dead cluster the exit code is the worst verdict's (blocked 1, else 0).
    let out = run(home.path(), &["check", "--kubeconfig", &k, "--context", "east", "--context", "west", "--chart", &to, "-q"]);
    let worst = rows.iter().filter(|(c, _)| *c != "lab").map(|(_, v)| if v == "blocked" { 1 } else { 0 }).max();
    assert_eq!(out.status.code(), worst, "{}", stdout(&out));
    // --quiet: only the verdict lines.
    let quiet = stdout(&out);
    assert_eq!(quiet.lines().count(), 2, "{quiet}");
    assert!(quiet.starts_with(&format!("east: {}: 2.2.1 → 2.3.0 (Helm), ", rows[0].1)), "{quiet}");
}

/// The order of the output never depends on which read finishes first, nor on --concurrency.
#[test]
fn fleet_output_is_the_same_whatever_the_concurrency() {
    let home = tempfile::tempdir().unwrap();
    let snapshots = Path::new(ROOT).join("snapshots");
    let s = snapshots.to_string_lossy().into_owned();
    let one = run(home.path(), &["status", "--snapshot", &s, "--concurrency", "1"]);
    let many = run(home.path(), &["status", "--snapshot", &s, "--concurrency", "8"]);
    assert_eq!(one.status.code(), Some(0), "{}", stderr(&one));
    assert_eq!(stdout(&one), stdout(&many));
    let text = stdout(&one);
    assert!(text.starts_with("Fleet status: 6 clusters: 6 installed\n"), "{text}");
    for name in ["argocd-2.2.1", "helm-2.1.0", "helm-2.2.1", "helm-2.3.0", "kustomize-2.2.0", "neighbours-2.1.0"] {
        assert!(text.contains(&format!("=== {} ===", snapshots.join(format!("{name}.yaml")).display())), "{name}: {text}");
    }
    let jsonl = run(home.path(), &["status", "--snapshot", &s, "--format", "jsonl", "--concurrency", "3"]);
    let docs = lines(&jsonl);
    let installed: Vec<&str> = docs.iter().map(|d| d["installed"].as_str().unwrap()).collect();
    assert_eq!(installed, ["2.2.1", "2.1.0", "2.2.1", "2.3.0", "2.2.0", "2.1.0"]);
    assert_eq!(docs[4]["method"], "kubectl");
}

/// A snapshot that cannot be read is its cluster's failure; a flag that names nothing fails the
/// run before any cluster is read; a single cluster keeps today's output.
#[test]
fn bad_members_fail_alone_and_bad_flags_fail_the_run() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("fleet");
    std::fs::create_dir(&dir).unwrap();
    std::fs::copy(Path::new(ROOT).join("snapshots/helm-2.3.0.yaml"), dir.join("a.yaml")).unwrap();
    std::fs::write(dir.join("b.yaml"), "kind: [unclosed\n").unwrap();
    let d = dir.to_string_lossy().into_owned();
    let out = run(home.path(), &["status", "--snapshot", &d, "--quiet"]);
    assert_eq!(out.status.code(), Some(2));
    let text = stdout(&out);
    let rows: Vec<&str> = text.lines().collect();
    assert_eq!(rows.len(), 2, "{text}");
    assert!(rows[0].ends_with("a.yaml: installed: 2.3.0 (Helm), 0 errors, 0 warnings"), "{text}");
    assert!(rows[1].contains("b.yaml: failed: snapshot ") && rows[1].contains("b.yaml"), "{text}");

    let empty = home.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let out = run(home.path(), &["status", "--snapshot", &empty.to_string_lossy()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stdout(&out).is_empty());
    assert!(stderr(&out).contains("holds no *.yaml"), "{}", stderr(&out));
    let a = dir.join("a.yaml").to_string_lossy().into_owned();
    let out = run(home.path(), &["status", "--snapshot", &a, "--snapshot", &a]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("named twice"), "{}", stderr(&out));
    let (to, _) = charts();
    let out = run(home.path(), &["check", "--snapshot", &d, "--chart", &to, "--format", "sarif"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("a fleet prints text, json or jsonl"), "{}", stderr(&out));
    // status --to/--chart over a fleet: every readable cluster validated against the chart's
    // CRDs (resolved once; refused for a fleet before the run went through one auditor).
    let out = run(home.path(), &["status", "--snapshot", &d, "--chart", &to, "--format", "jsonl"]);
    assert_eq!(out.status.code(), Some(2), "b.yaml fails alone: {}", stderr(&out));
    let docs = lines(&out);
    assert!(docs[0]["report"]["validation"]["against"].as_str().unwrap().starts_with(&format!("the CRDs of {to}")), "{docs:?}");
    assert_eq!(docs[1]["verdict"], "failed");
    let bad = run(home.path(), &["status", "--snapshot", &d, "--chart", &home.path().join("no-chart").to_string_lossy()]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stdout(&bad).is_empty(), "a target that cannot be read fails the run before any cluster: {}", stdout(&bad));

    // One snapshot: the single-cluster report, unchanged; jsonl gives it the fleet document.
    let single = run(home.path(), &["status", "--snapshot", &a]);
    assert!(stdout(&single).starts_with("Kubernetes"), "{}", stdout(&single));
    let jsonl = run(home.path(), &["status", "--snapshot", &a, "--format", "jsonl"]);
    let docs = lines(&jsonl);
    assert_eq!((docs.len(), docs[0]["cluster"].as_str()), (1, Some(a.as_str())));
}

/// Packs a chart directory as `helm package` lays it out, with its version set to `version`.
fn pack(dir: &Path, version: &str) -> Vec<u8> {
    let mut tar_bytes = Vec::new();
    {
        let mut builder = tar::Builder::new(&mut tar_bytes);
        for entry in walkdir::WalkDir::new(dir).sort_by_file_name() {
            let entry = entry.unwrap();
            if !entry.file_type().is_file() {
                continue;
            }
            let relative = entry.path().strip_prefix(dir).unwrap();
            let mut data = std::fs::read(entry.path()).unwrap();
            if relative == Path::new("Chart.yaml") {
                let text = String::from_utf8(data).unwrap();
                let text: String = text
                    .lines()
                    .map(|l| if l.starts_with("version:") { format!("version: {version}\n") } else { format!("{l}\n") })
                    .collect();
                data = text.into_bytes();
            }
            let mut header = tar::Header::new_gnu();
            header.set_size(data.len() as u64);
            header.set_mode(0o644);
            header.set_mtime(0);
            builder.append_data(&mut header, Path::new("kubeflow-trainer").join(relative), data.as_slice()).unwrap();
        }
        builder.finish().unwrap();
    }
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&tar_bytes).unwrap();
    gz.finish().unwrap()
}

/// The whole fleet shares one chart store: each version's manifest is fetched once and the tag
/// list once, however many clusters are checked.
#[test]
fn a_fleet_pulls_each_chart_version_once() {
    let charts = Path::new(ROOT).join("tests/rules/charts");
    let versions = [("2.2.1", pack(&charts.join("from"), "2.2.1")), ("2.3.0", pack(&charts.join("to"), "2.3.0"))];
    let mut routes: Vec<(String, Vec<u8>, &'static str)> = vec![(
        "/v2/kubeflow/charts/kubeflow-trainer/tags/list".into(),
        br#"{"name":"kubeflow/charts/kubeflow-trainer","tags":["2.2.1","2.3.0"]}"#.to_vec(),
        "application/json",
    )];
    for (version, layer) in &versions {
        let config = support::chart_config("kubeflow-trainer", version);
        let manifest = support::chart_manifest(&config, layer);
        let repo = "/v2/kubeflow/charts/kubeflow-trainer";
        routes.push((format!("{repo}/manifests/{version}"), manifest, support::MANIFEST_TYPE));
        routes.push((format!("{repo}/blobs/{}", support::sha256(&config)), config, "application/octet-stream"));
        routes.push((format!("{repo}/blobs/{}", support::sha256(layer)), layer.clone(), "application/octet-stream"));
    }
    let server = Server::start(move |req| match routes.iter().find(|(path, _, _)| path == req.path()) {
        Some((_, body, kind)) => Response::new(200, body.clone()).header("Content-Type", kind),
        None => Response::new(404, "{}"),
    });
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("fleet");
    std::fs::create_dir(&dir).unwrap();
    let snapshot = list_yaml(scenario("helm-2.2.1").unwrap());
    for name in ["a", "b", "c", "d"] {
        std::fs::write(dir.join(format!("{name}.yaml")), &snapshot).unwrap();
    }
    let repo = format!("oci://{}/kubeflow/charts/kubeflow-trainer", server.base());
    let out = run(
        home.path(),
        &["check", "--snapshot", &dir.to_string_lossy(), "--to", "2.3.0", "--repo", &repo, "--plain-http", "--format", "jsonl"],
    );
    assert!(matches!(out.status.code(), Some(0 | 1)), "{}\n{}", stdout(&out), stderr(&out));
    let docs = lines(&out);
    assert_eq!(docs.len(), 4);
    assert!(docs.iter().all(|d| d["installed"] == "2.2.1" && d["target"] == "2.3.0"), "{docs:?}");
    let asked: Vec<String> = server.requests().iter().filter(|r| r.method == "GET").map(|r| r.path().to_string()).collect();
    let count = |suffix: &str| asked.iter().filter(|p| p.ends_with(suffix)).count();
    assert_eq!(count("/tags/list"), 1, "{asked:#?}");
    assert_eq!(count("/manifests/2.2.1"), 1, "{asked:#?}");
    assert_eq!(count("/manifests/2.3.0"), 1, "{asked:#?}");
}

/// `plan` over a fleet: each cluster's plan in its JSON line, a broken snapshot that cluster's
/// failure, and the run's exit code the failed cluster's.
#[test]
fn plan_runs_over_a_fleet_and_a_broken_member_fails_alone() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("fleet");
    std::fs::create_dir(&dir).unwrap();
    for name in ["helm-2.1.0", "helm-2.2.1"] {
        std::fs::copy(Path::new(ROOT).join(format!("snapshots/{name}.yaml")), dir.join(format!("{name}.yaml"))).unwrap();
    }
    std::fs::write(dir.join("z-broken.yaml"), "items: [\n").unwrap();
    let (to, _) = charts();
    let d = dir.to_string_lossy().into_owned();
    let out = run(home.path(), &["plan", "--snapshot", &d, "--chart", &to, "--format", "jsonl"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let docs = lines(&out);
    let got: Vec<(&str, &str)> = docs.iter().map(|d| (d["installed"].as_str().unwrap_or("-"), d["verdict"].as_str().unwrap())).collect();
    // The verdict in check's words (the plans have errors to fix first); a plan exits 0 anyway.
    assert_eq!(got, [("2.1.0", "blocked"), ("2.2.1", "blocked"), ("-", "failed")], "{docs:?}");
    assert_eq!(docs.iter().map(|d| d["exit_code"].as_u64().unwrap()).collect::<Vec<_>>(), [0, 0, 2], "{docs:?}");
    assert!(docs.iter().all(|d| d["command"] == "plan"));
    assert!(docs[0]["report"]["plan"].is_object() && docs[1]["report"]["plan"].is_object(), "{docs:?}");
    assert!(docs[2]["failure"].as_str().unwrap().contains("z-broken.yaml"), "{docs:?}");
    // Without the broken member every cluster is planned: exit 0.
    std::fs::remove_file(dir.join("z-broken.yaml")).unwrap();
    let out = run(home.path(), &["plan", "--snapshot", &d, "--chart", &to, "--quiet"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out).lines().filter(|l| l.contains(": blocked: ")).count(), 2, "{}", stdout(&out));

    // `plan --fail-on` gates a fleet's lines as check's do (it was refused: "gate with check"):
    // the same verdict lines, now with the gate's exit code, for a fleet and for one cluster.
    let out = run(home.path(), &["plan", "--snapshot", &d, "--chart", &to, "--quiet", "--fail-on", "error"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(stdout(&out).lines().filter(|l| l.contains(": blocked: ")).count(), 2, "{}", stdout(&out));
    let one = dir.join("helm-2.2.1.yaml").to_string_lossy().into_owned();
    let out = run(home.path(), &["plan", "--snapshot", &one, "--chart", &to, "-q", "--fail-on", "error"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stdout(&out).contains(": blocked: "), "{}", stdout(&out));
    // At --fail-on warning the verdict is decided at that level too, not only the exit code.
    let out = run(home.path(), &["plan", "--snapshot", &one, "--chart", &to, "--format", "json", "--fail-on", "warning"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let doc: Json = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((doc["verdict"].as_str(), doc["failOn"].as_str()), (Some("blocked"), Some("warning")), "{doc}");
}

/// One run: a single cluster is a fleet of one through the same auditor, so its own report is the
/// fleet line's `report`, its exit code the line's `exit_code` (one fail decision), and an
/// unreadable single cluster is the run's error, named once, with nothing on standard output.
#[test]
fn one_cluster_is_a_fleet_of_one() {
    let home = tempfile::tempdir().unwrap();
    let (to, from) = charts();
    let snapshot = Path::new(ROOT).join("tests/rules/TA-HOOK-101/cluster.yaml").to_string_lossy().into_owned();
    let unstamped = |out: &std::process::Output| {
        let mut doc: Json = serde_json::from_str(&stdout(out)).unwrap_or_else(|e| panic!("{e}: {}", stderr(out)));
        doc.as_object_mut().unwrap().remove("schemaVersion");
        doc
    };
    for (command, gate) in [("check", &[][..]), ("plan", &["--fail-on", "warning"][..]), ("status", &["--fail-on", "warning"][..])] {
        let mut args = vec![command, "--snapshot", &snapshot];
        if command != "status" {
            args.extend(["--chart", &to, "--from-chart", &from]);
        }
        let single = run(home.path(), &[&args[..], gate, &["--format", "json"]].concat());
        let line = run(home.path(), &[&args[..], &["--format", "jsonl"]].concat());
        let (doc, line) = (unstamped(&single), &lines(&line)[0]);
        let report = &line["report"];
        match command {
            // A plan's line carries `{plan, notes}`; its verdict is the row's.
            "plan" => {
                assert_eq!((&doc["plan"], &doc["notes"]), (&report["plan"], &report["notes"]), "{command}");
                assert_eq!(doc["verdict"], line["verdict"], "{command}");
            }
            // `--fail-on` adds the verdict to the status document, and only that.
            "status" => {
                let mut doc = doc.clone();
                for key in ["verdict", "counts", "failOn"] {
                    assert!(doc.as_object_mut().unwrap().remove(key).is_some(), "{command}: {key}");
                }
                assert_eq!(&doc, report, "{command}");
            }
            _ => assert_eq!(&doc, report, "{command}"),
        }
        let blocked = doc["verdict"] == "blocked";
        assert_eq!(single.status.code(), Some(i32::from(blocked)), "{command}: the exit code is the verdict's: {}", stderr(&single));
        assert!(command == "status" || blocked, "{command}: the case has findings to gate on: {doc}");
    }
    let check = run(home.path(), &["check", "--snapshot", &snapshot, "--chart", &to, "--format", "jsonl"]);
    assert_eq!((check.status.code(), lines(&check)[0]["exit_code"].as_u64()), (Some(1), Some(1)));
    // A single cluster that cannot be read: the run's error, exit 2, no report.
    let missing = home.path().join("missing.yaml").to_string_lossy().into_owned();
    for command in ["check", "plan", "status"] {
        let mut args = vec![command, "--snapshot", &missing];
        if command != "status" {
            args.extend(["--chart", &to]);
        }
        let out = run(home.path(), &args);
        assert_eq!(out.status.code(), Some(2), "{command}");
        assert!(stdout(&out).is_empty(), "{command}: {}", stdout(&out));
        assert_eq!(stderr(&out).matches("missing.yaml").count(), 1, "{command}: {}", stderr(&out));
        assert!(stderr(&out).starts_with("error: "), "{command}: {}", stderr(&out));
    }
    // The commands of one cluster choose it as these do, and refuse a directory (a fleet) by name.
    let snapshots = Path::new(ROOT).join("snapshots").to_string_lossy().into_owned();
    let out = run(home.path(), &["runbook", "--snapshot", &snapshots, "--chart", &to]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains(&format!("{snapshots} is a directory, and this command reads one cluster")), "{}", stderr(&out));
}

/// A Kueue Deployment as a platform team runs one, with `image` (a mirror, a digest).
fn kueue(image: &str) -> Json {
    serde_json::json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "kueue-controller-manager", "namespace": "kueue-system"},
        "spec": {"selector": {"matchLabels": {"control-plane": "controller-manager"}},
            "template": {"metadata": {"labels": {"control-plane": "controller-manager"}},
                "spec": {"containers": [{"name": "manager", "image": image}]}}}})
}

/// Issue 29 §2, live and in a fleet: Kueue pulled through a mirror is read from its tag whatever
/// the path; pinned by digest only it fails the gate naming `--neighbour`, which declares it for
/// every cluster or, with `CLUSTER:`, for one; a declaration the cluster contradicts fails that
/// cluster alone; a name the fleet does not hold is refused before anything is read.
#[test]
fn neighbour_versions_are_read_through_mirrors_and_declared_per_cluster() {
    let home = tempfile::tempdir().unwrap();
    let serve_with = |image: &str| {
        let mut objects: Vec<Json> = scenario("helm-2.2.1").unwrap().into_iter().filter(|o| o["kind"] != "ClusterInfo").collect();
        objects.push(kueue(image));
        FakeApiServer::start(objects, &[], "v1.33.4").unwrap()
    };
    let mirrored = serve_with("harbor.corp.example:8443/mirror/kueue:v0.16.9");
    let pinned = serve_with("harbor.corp.example/mirror/kueue@sha256:4c2c1b0b3e1e7d0f5e3c1f4a6d2b9e8f7a6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e");
    let config = kubeconfig(home.path(), &[("mirrored", mirrored.url()), ("pinned", pinned.url())]);
    let (to, _) = charts();
    let k = config.to_string_lossy().into_owned();
    let check = |extra: &[&str]| {
        let mut args = vec!["check", "--kubeconfig", &k, "--all-contexts", "--chart", &to, "--format", "jsonl", "--concurrency", "1"];
        args.extend(extra);
        let out = run(home.path(), &args);
        (out.status.code(), lines(&out), stderr(&out))
    };
    let nb001 = |doc: &Json| -> Vec<(String, String)> {
        doc["report"]["findings"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|f| f["id"] == "TA-NB-001")
            .map(|f| (f["variant"].as_str().unwrap_or("").to_string(), f["message"].as_str().unwrap_or("").to_string()))
            .collect()
    };

    let (_, docs, _) = check(&[]);
    let mirrored_hits = nb001(&docs[0]);
    assert!(mirrored_hits.len() == 1 && mirrored_hits[0].0.is_empty() && mirrored_hits[0].1.contains("Kueue 0.16.9"), "{mirrored_hits:?}");
    let pinned_hits = nb001(&docs[1]);
    assert_eq!(pinned_hits.len(), 1, "{pinned_hits:?}");
    assert_eq!(pinned_hits[0].0, "unknown-version");
    assert!(
        pinned_hits[0].1.contains("pinned by digest only") && pinned_hits[0].1.contains("--neighbour kueue=VERSION"),
        "{pinned_hits:?}"
    );
    assert_eq!(docs[1]["verdict"], "blocked", "never ready while Kueue's version is unknown");

    // Declared for the pinned cluster alone: it reads as the mirrored one does.
    let (_, docs, _) = check(&["--neighbour", "pinned:kueue=0.16.9"]);
    let declared = nb001(&docs[1]);
    assert!(declared.len() == 1 && declared[0].0.is_empty() && declared[0].1.contains("Kueue 0.16.9"), "{declared:?}");
    assert_eq!(nb001(&docs[0]), mirrored_hits, "the other cluster is untouched");

    // Declared for every cluster: the mirrored one tells another version, and fails alone.
    let (code, docs, _) = check(&["--neighbour", "kueue=0.17.0"]);
    assert_eq!(code, Some(2));
    assert!(docs[0]["report"].is_null() && docs[0]["failure"].as_str().unwrap().contains("contradicts the cluster"), "{}", docs[0]);
    assert!(nb001(&docs[1]).iter().all(|(v, m)| v != "unknown-version" && m.contains("0.17.0")), "{:?}", nb001(&docs[1]));

    // A cluster the fleet does not name: refused before any read.
    let (code, docs, err) = check(&["--neighbour", "staging:kueue=0.16.9"]);
    assert_eq!((code, docs.len()), (Some(2), 0), "{err}");
    assert!(err.contains("no cluster is named \"staging\"") && err.contains("mirrored, pinned"), "{err}");
}
