//! `status --fail-on` (issue 21 §1): status is not a gate unless asked; asked, it opens with the
//! verdict in `check`'s words (`blocked: 1 error, 1 warning`, `ready`), puts the same decision in
//! its JSON, prints only that line with `-q`, and exits 1 when blocked — as `check`, `plan`,
//! `gitops` and `hooks` do.

mod support;

use std::path::Path;

use support::{run, stderr, stdout};

fn fixture(path: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path).to_string_lossy().into_owned()
}

#[test]
fn a_stuck_release_blocks_status_only_when_asked() {
    let home = tempfile::tempdir().unwrap();
    let stuck = fixture("tests/rules/TA-REL-001/cluster.yaml");
    // Not asked: a report, exit 0, no verdict line.
    let plain = run(home.path(), &["status", "--snapshot", &stuck]);
    assert_eq!(plain.status.code(), Some(0), "{}", stderr(&plain));
    assert!(stdout(&plain).starts_with("Kubernetes"), "{}", stdout(&plain));
    // Asked: the verdict first, in check's words and plurals, and exit 1.
    let gated = run(home.path(), &["status", "--snapshot", &stuck, "--fail-on", "error"]);
    assert_eq!(gated.status.code(), Some(1), "{}", stderr(&gated));
    let text = stdout(&gated);
    assert_eq!(text.lines().next(), Some("blocked: 1 error, 1 warning"), "{text}");
    assert!(text.ends_with(&stdout(&plain)), "the same report follows the verdict:\n{text}");
    let quiet = run(home.path(), &["status", "--snapshot", &stuck, "--fail-on", "error", "-q"]);
    assert_eq!((quiet.status.code(), stdout(&quiet).as_str()), (Some(1), "cluster: blocked: 1 error, 1 warning\n"), "{}", stderr(&quiet));
    let json = run(home.path(), &["status", "--snapshot", &stuck, "--fail-on", "error", "--format", "json"]);
    assert_eq!(json.status.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&json)).unwrap();
    assert_eq!(doc["verdict"], "blocked");
    assert_eq!(doc["counts"], serde_json::json!({"error": 1, "warning": 1, "info": 0}));
    assert_eq!(doc["failOn"], "error");
    let md = run(home.path(), &["status", "--snapshot", &stuck, "--fail-on", "error", "--format", "markdown"]);
    assert_eq!(md.status.code(), Some(1));
    assert!(
        stdout(&md).starts_with("## Trainer status\n\n**Verdict: blocked: 1 error, 1 warning** (`--fail-on error`)\n"),
        "{}",
        stdout(&md)
    );
}

#[test]
fn the_level_decides_and_a_healthy_cluster_is_ready() {
    let home = tempfile::tempdir().unwrap();
    let quiet = fixture("tests/rules/TA-REL-001/quiet.yaml");
    let at_error = run(home.path(), &["status", "--snapshot", &quiet, "--fail-on", "error", "-q"]);
    assert_eq!((at_error.status.code(), stdout(&at_error).as_str()), (Some(0), "quiet: ready: 0 errors, 1 warning\n"));
    let at_warning = run(home.path(), &["status", "--snapshot", &quiet, "--fail-on", "warning", "-q"]);
    assert_eq!((at_warning.status.code(), stdout(&at_warning).as_str()), (Some(1), "quiet: blocked: 0 errors, 1 warning\n"));
    let healthy = run(home.path(), &["status", "--snapshot", &fixture("snapshots/helm-2.3.0.yaml"), "--fail-on", "info"]);
    assert_eq!(healthy.status.code(), Some(0), "{}", stderr(&healthy));
    assert_eq!(stdout(&healthy).lines().next(), Some("ready"), "{}", stdout(&healthy));
}

/// Objects the target chart's CRDs reject are errors of `status --to/--chart --fail-on`.
#[test]
fn objects_the_target_rejects_block() {
    let home = tempfile::tempdir().unwrap();
    let args = |level: &'static str| {
        vec![
            "status".to_string(),
            "--snapshot".into(),
            fixture("tests/rules/TA-SCH-001/cluster.yaml"),
            "--chart".into(),
            fixture("tests/rules/charts/to"),
            "--fail-on".into(),
            level.into(),
        ]
    };
    let args = args("error");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run(home.path(), &args);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.starts_with("blocked: 1 error"), "{text}");
    assert!(text.contains("1 rejected"), "{text}");
}

/// A fleet is gated with `check`: `status --fail-on` over several clusters is refused, naming why.
#[test]
fn a_fleet_status_is_not_gated() {
    let home = tempfile::tempdir().unwrap();
    let out = run(home.path(), &["status", "--snapshot", &fixture("snapshots"), "--fail-on", "error"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("status --fail-on gates one cluster"), "{}", stderr(&out));
}
