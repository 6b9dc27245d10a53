//! Bad input at the command line: exit code 2, one clear line naming the input, nothing written.

mod support;

use support::{files_in, run, stderr, stdout};

fn fails_with(args: &[&str], needle: &str) {
    let home = tempfile::tempdir().unwrap();
    let out = run(home.path(), args);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains(needle), "{args:?}: expected {needle:?} in {err}");
    assert!(stdout(&out).is_empty(), "{args:?} printed to stdout");
    let written: Vec<_> = files_in(home.path());
    assert!(written.is_empty(), "{args:?} wrote {written:?}");
}

#[test]
fn malformed_references_are_named() {
    fails_with(&["versions", "oci://ghcr.io/Kubeflow/Charts"], "chart reference 'oci://ghcr.io/Kubeflow/Charts' is not valid");
    fails_with(&["versions", "ghcr.io/kubeflow/charts/kubeflow-trainer"], "need the oci:// scheme: oci://ghcr.io/kubeflow");
    fails_with(&["pull", "https://example.com/x.tgz"], "'https://' scheme is not supported");
    fails_with(&["pull", "./no-such-chart.tgz"], "neither an oci:// reference nor an existing .tgz file or chart directory");
    fails_with(&["versions", "oci://127.0.0.1:1/charts/tiny:1.0.0"], "drop the tag or digest");
}

#[test]
fn bad_versions_and_flags_are_refused() {
    fails_with(&["pull", "oci://127.0.0.1:1/charts/tiny", "--version", ">>2"], "'>>2' is not a version or version range");
    fails_with(
        &["pull", "oci://127.0.0.1:1/charts/tiny:1.0.0", "--version", "2.0.0"],
        "chart reference and version mismatch: 2.0.0 is not 1.0.0",
    );
    fails_with(&["pull", "oci://127.0.0.1:1/x", "--password-stdin"], "--username");
    fails_with(&["versions", "--timeout", "0"], "--timeout");
}

#[test]
fn local_paths_are_not_repositories() {
    let dir = tempfile::tempdir().unwrap();
    fails_with(&["versions", dir.path().to_str().unwrap()], "versions needs an oci:// repository");
}

#[test]
fn unreachable_registries_fail_cleanly() {
    let port = support::registry::free_port();
    fails_with(&["versions", &format!("oci://127.0.0.1:{port}/charts/tiny"), "--plain-http"], "nothing listens there");
}

#[test]
fn help_and_version_exit_zero() {
    let home = tempfile::tempdir().unwrap();
    let out = run(home.path(), &["--help"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout(&out).contains("versions") && stdout(&out).contains("pull"));
    let out = run(home.path(), &["--version"]);
    assert_eq!(out.status.code(), Some(0));
}

/// `pull --offline` with nowhere to keep a cache (no `TRAINER_AUDIT_CACHE_DIR`, `XDG_CACHE_HOME` or
/// `HOME`) says which variables give it one; the registry is never contacted.
#[test]
fn offline_pull_without_a_cache_names_the_variables() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_trainer-audit"))
        .args(["pull", "oci://127.0.0.1:1/charts/tiny", "--version", "1.0.0", "--offline"])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(stderr(&out), "error: --offline needs a cache directory: set TRAINER_AUDIT_CACHE_DIR or HOME\n");
    assert!(stdout(&out).is_empty());
}
