//! The reports over a large generated cluster of every per-object shape the checks tell apart
//! (`testkit::scenario::varied_cluster`: 2,400 TrainJobs, 1,200 legacy jobs), pinned byte for
//! byte: `check` 2.1.0 → 2.3.0 and `status` (installed and target CRDs) from a YAML snapshot, and
//! the same `check` and `status` read live through the fake API server. The speed work (issue 33:
//! parse-time pruning, one pass over the TrainJobs) must leave every one of them unchanged; the
//! expected reports (`tests/fixtures/large_cluster/*.json.gz`, gzipped: the check reports are
//! 7 MB of JSON each) were recorded before it. A report that changes on purpose is recorded again
//! with `TRAINER_AUDIT_RECORD=1`.

mod support;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use support::{run, stderr, stdout};
use testkit::scenario::{list_yaml, varied_cluster};

const TRAINJOBS: usize = 2400;
const NAMESPACES: usize = 12;

fn chart(corpus: &Path, version: &str) -> String {
    corpus.join(format!("charts/kubeflow-trainer-{version}.tgz")).to_string_lossy().into_owned()
}

/// The report as JSON text with the machine's paths replaced, so the snapshots hold anywhere.
fn portable(out: &std::process::Output, corpus: &Path, dir: &Path) -> String {
    let text = stdout(out);
    let mut text = text.replace(&dir.to_string_lossy().into_owned(), "$DIR").replace(&corpus.to_string_lossy().into_owned(), "$CORPUS");
    if let Ok(real) = corpus.canonicalize() {
        text = text.replace(&real.to_string_lossy().into_owned(), "$CORPUS");
    }
    if let Ok(real) = dir.canonicalize() {
        text = text.replace(&real.to_string_lossy().into_owned(), "$DIR");
    }
    text
}

/// Compares a report with its recorded form, naming the first line that differs (and writing
/// the whole report beside the test's target directory for a diff); records it when asked.
fn same_as_recorded(name: &str, report: &str) {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/large_cluster/{name}.json.gz"));
    if std::env::var_os("TRAINER_AUDIT_RECORD").is_some() {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        gz.write_all(report.trim_end().as_bytes()).unwrap();
        std::fs::write(&file, gz.finish().unwrap()).unwrap();
        return;
    }
    let mut recorded = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(&file).unwrap()).read_to_string(&mut recorded).unwrap();
    if recorded.trim_end() == report.trim_end() {
        return;
    }
    let actual = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("large_cluster-{name}.json"));
    std::fs::write(&actual, report).unwrap();
    let at = recorded.lines().zip(report.lines()).position(|(a, b)| a != b).unwrap_or(recorded.lines().count().min(report.lines().count()));
    panic!(
        "{name}: the report differs from {} at line {}:\n  recorded: {}\n  now:      {}\n(the whole report: {})",
        file.display(),
        at + 1,
        recorded.lines().nth(at).unwrap_or("<end>"),
        report.lines().nth(at).unwrap_or("<end>"),
        actual.display()
    );
}

#[test]
#[ignore = "needs the corpus: TRAINER_AUDIT_CORPUS=DIR cargo test -- --include-ignored"]
fn reports_over_a_large_varied_cluster_are_unchanged() {
    let corpus = support::corpus();
    let home = tempfile::tempdir().unwrap();
    let dir = home.path();
    let objects = varied_cluster(TRAINJOBS, NAMESPACES);
    let snapshot = dir.join("cluster.yaml");
    std::fs::write(&snapshot, list_yaml(objects.clone())).unwrap();
    let served: Vec<serde_json::Value> = objects.into_iter().filter(|o| o["kind"] != "ClusterInfo").collect();
    let server = testkit::fake_api::FakeApiServer::start(served, &[], "v1.33.4").unwrap();
    let kubeconfig = dir.join("kubeconfig");
    std::fs::write(&kubeconfig, server.kubeconfig()).unwrap();
    let (snapshot, kubeconfig) = (snapshot.to_string_lossy().into_owned(), kubeconfig.to_string_lossy().into_owned());
    let (to, from) = (chart(&corpus, "2.3.0"), chart(&corpus, "2.1.0"));
    let charts = ["--chart", to.as_str(), "--from-chart", from.as_str(), "--format", "json"];

    for (name, cluster, command) in
        [("check_snapshot", ["--snapshot", snapshot.as_str()], "check"), ("check_live", ["--kubeconfig", kubeconfig.as_str()], "check")]
    {
        let mut args = vec![command, cluster[0], cluster[1]];
        args.extend_from_slice(&charts);
        let out = run(dir, &args);
        assert_eq!(out.status.code(), Some(1), "{name}: {}", stderr(&out));
        same_as_recorded(name, &portable(&out, &corpus, dir));
    }
    for (name, cluster, target) in [
        ("status_snapshot", ["--snapshot", snapshot.as_str()], None),
        ("status_snapshot_target", ["--snapshot", snapshot.as_str()], Some(to.as_str())),
        ("status_live", ["--kubeconfig", kubeconfig.as_str()], None),
    ] {
        let mut args = vec!["status", cluster[0], cluster[1], "--format", "json"];
        if let Some(chart) = target {
            args.extend(["--chart", chart]);
        }
        let out = run(dir, &args);
        assert_eq!(out.status.code(), Some(0), "{name}: {}", stderr(&out));
        same_as_recorded(name, &portable(&out, &corpus, dir));
    }
}
