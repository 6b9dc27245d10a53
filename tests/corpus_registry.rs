//! Acceptance against the shared corpus registry (`../shared/tools/corpus-registry`), which holds
//! the real Trainer charts pushed by Helm's own client. Runs only when `TRAINER_AUDIT_CORPUS` is
//! set (as `.ci/run` does); a set but broken corpus fails.

mod support;

use std::path::PathBuf;
use std::process::Command;

use support::{files_in, run, stderr, stdout};

struct CorpusRegistry {
    tool: PathBuf,
    port: u16,
}

impl CorpusRegistry {
    fn start(corpus: &std::path::Path) -> CorpusRegistry {
        let tool = corpus.join("../tools/corpus-registry");
        assert!(tool.exists(), "{} is missing", tool.display());
        let port = support::registry::free_port();
        let out = Command::new(&tool).args(["start", &port.to_string()]).output().unwrap();
        assert!(out.status.success(), "corpus-registry start failed: {}", String::from_utf8_lossy(&out.stderr));
        CorpusRegistry { tool, port }
    }
}

impl Drop for CorpusRegistry {
    fn drop(&mut self) {
        let _ = Command::new(&self.tool).args(["stop", &self.port.to_string()]).output();
    }
}

#[test]
#[ignore = "needs the corpus: TRAINER_AUDIT_CORPUS=DIR cargo test -- --include-ignored"]
fn corpus_versions_and_pulls() {
    let corpus = support::corpus();
    let registry = CorpusRegistry::start(&corpus);
    let repo = format!("oci://127.0.0.1:{}/kubeflow/charts/kubeflow-trainer", registry.port);
    let home = tempfile::tempdir().unwrap();

    let out = run(home.path(), &["versions", &repo, "--plain-http"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "2.3.0\n2.2.1\n2.2.0\n2.1.0\n2.0.1\n2.0.0\n");
    let out = run(home.path(), &["versions", &repo, "--plain-http", "--all"]);
    assert_eq!(stdout(&out), "2.3.0\n2.3.0-rc.3\n2.2.1\n2.2.0\n2.2.0-rc.1\n2.2.0-rc.0\n2.1.0\n2.1.0-rc.1\n2.0.1\n2.0.0\n");

    let dir = home.path().join("out");
    let d = dir.to_str().unwrap();
    let out = run(home.path(), &["pull", &repo, "--plain-http", "--version", "2.3.0", "--output-dir", d]);
    assert!(out.status.success(), "{}", stderr(&out));
    let pulled = std::fs::read(dir.join("kubeflow-trainer-2.3.0.tgz")).unwrap();
    assert!(
        pulled == std::fs::read(corpus.join("charts/kubeflow-trainer-2.3.0.tgz")).unwrap(),
        "pulled 2.3.0 differs from the corpus file"
    );

    let out = run(home.path(), &["pull", &repo, "--plain-http", "--version", "~2.2", "--output-dir", d]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("kubeflow-trainer 2.2.1"), "{}", stdout(&out));

    let out = run(home.path(), &["pull", &repo, "--plain-http", "--version", ">=2.4", "--output-dir", d]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("versions there: 2.3.0, 2.2.1, 2.2.0, 2.1.0, 2.0.1, 2.0.0"), "{}", stderr(&out));
    let names: Vec<String> = files_in(&dir).iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
    assert_eq!(names, ["kubeflow-trainer-2.2.1.tgz", "kubeflow-trainer-2.3.0.tgz"]);
}

/// `diff --from V --to V` resolves both versions in the repository (pulled through the cache).
#[test]
#[ignore = "needs the corpus: TRAINER_AUDIT_CORPUS=DIR cargo test -- --include-ignored"]
fn corpus_diff_between_repository_versions() {
    let corpus = support::corpus();
    let registry = CorpusRegistry::start(&corpus);
    let repo = format!("oci://127.0.0.1:{}/kubeflow/charts/kubeflow-trainer", registry.port);
    let home = tempfile::tempdir().unwrap();
    let out = run(home.path(), &["diff", "--from", "2.1.0", "--to", "~2.2", "--repo", &repo, "--plain-http", "--format", "json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let diff: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!((diff["from"]["version"].as_str(), diff["to"]["version"].as_str()), (Some("2.1.0"), Some("2.2.1")));
    let text = stdout(&run(home.path(), &["diff", "--from", "2.1.0", "--to", "2.2.0", "--repo", &repo, "--plain-http"]));
    assert!(text.contains("type changed: spec.trainer.numProcPerNode: int-or-string → integer"), "{text}");
    assert!(text.contains("schema removed: spec.podTemplateOverrides"), "{text}");
}
