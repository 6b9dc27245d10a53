//! The composite GitHub Action (`action.yml`) without GitHub: its review script
//! (`action/review.sh`) run as the runner runs it — inputs as `INPUT_*`, `GITHUB_STEP_SUMMARY`
//! and `GITHUB_OUTPUT` files, the working directory a checkout whose last commit bumps the
//! Trainer chart — against the stand-in charts; and the action's inputs wired to the script.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value as Json;
use support::{run, stderr, stdout};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn copy_tree(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let dest = to.join(path.file_name().unwrap());
        if path.is_dir() {
            copy_tree(&path, &dest);
        } else {
            std::fs::create_dir_all(to).unwrap();
            std::fs::copy(&path, &dest).unwrap();
        }
    }
}

/// The stand-in charts as `gitops --charts` takes them (as tests/gitops_review.rs lays them out).
fn stand_ins(dir: &Path) -> PathBuf {
    let charts = dir.join("charts");
    for name in ["from", "to", "next"] {
        copy_tree(&root().join("tests/rules/charts").join(name), &charts.join(name));
    }
    let chart_yaml = charts.join("from/Chart.yaml");
    let text = std::fs::read_to_string(&chart_yaml).unwrap().replace("2.2.0", "2.2.1");
    std::fs::write(chart_yaml, text).unwrap();
    charts
}

fn git(repo: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(repo)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", stderr(&out));
    stdout(&out).trim().to_string()
}

/// A checkout whose first commit holds the fixture's base under `deploy/` and whose last commit
/// bumps it to the head; returns the base commit.
fn checkout(fixture: &str, repo: &Path) -> String {
    let src = root().join("tests/fixtures/gitops").join(fixture);
    std::fs::create_dir_all(repo).unwrap();
    git(repo, &["init", "-q"]);
    copy_tree(&src.join("base"), &repo.join("deploy"));
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "-qm", "base"]);
    let base = git(repo, &["rev-parse", "HEAD"]);
    std::fs::remove_dir_all(repo.join("deploy")).unwrap();
    copy_tree(&src.join("head"), &repo.join("deploy"));
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "-qm", "chore(deps): update kubeflow-trainer"]);
    base
}

struct Run {
    out: Output,
    summary: String,
    outputs: String,
    report: String,
}

fn action(repo: &Path, work: &Path, inputs: &[(&str, &str)]) -> Run {
    let (summary, outputs, temp) = (work.join("summary.md"), work.join("outputs"), work.join("runner-temp"));
    std::fs::create_dir_all(&temp).unwrap();
    let _ = std::fs::remove_file(&summary);
    let _ = std::fs::remove_file(&outputs);
    let mut cmd = Command::new("bash");
    cmd.arg(root().join("action/review.sh"))
        .current_dir(repo)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", work)
        .env("TRAINER_AUDIT_CACHE_DIR", work.join("cache"))
        .env("TRAINER_AUDIT_BIN", env!("CARGO_BIN_EXE_trainer-audit"))
        .env("GITHUB_STEP_SUMMARY", &summary)
        .env("GITHUB_OUTPUT", &outputs)
        .env("RUNNER_TEMP", &temp);
    for (k, v) in inputs {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
    Run { summary: read(&summary), outputs: read(&outputs), report: read(&temp.join("trainer-audit-review.md")), out }
}

#[test]
fn the_review_script_gates_annotates_summarises_and_leaves_the_comment() {
    let work = tempfile::tempdir().unwrap();
    let charts = stand_ins(work.path()).to_string_lossy().into_owned();
    let repo = work.path().join("repo");
    let base = checkout("argocd-multi", &repo);
    let inputs =
        [("INPUT_PATH", "deploy"), ("INPUT_BASE_REF", base.as_str()), ("INPUT_FAIL_ON", "error"), ("INPUT_CHARTS", charts.as_str())];
    let r = action(&repo, work.path(), &inputs);
    assert_eq!(r.out.status.code(), Some(1), "{}\n{}", stdout(&r.out), stderr(&r.out));
    // The annotation sits at the file as the repository names it.
    let log = stdout(&r.out);
    assert!(log.lines().any(|l| l.starts_with("::error file=deploy/apps/trainer.yaml,line=11,title=TA-HOOK-104 ")), "{log}");
    assert!(r.outputs.contains("verdict=blocked\n") && r.outputs.contains("exit-code=1\n"), "{}", r.outputs);
    assert!(r.summary.starts_with("### ❌ Trainer GitOps review: blocked\n"), "{}", r.summary);
    assert_eq!(r.summary.matches("Trainer GitOps review").count(), 1, "one summary, not one per run: {}", r.summary);
    assert!(r.summary.contains("`TA-HOOK-104`"), "{}", r.summary);
    // The comment is the review's Markdown, as trainer-audit prints it.
    let home = tempfile::tempdir().unwrap();
    let direct = run(
        home.path(),
        &["gitops", &repo.join("deploy").to_string_lossy(), "--base-ref", &base, "--charts", &charts, "--format", "markdown"],
    );
    assert_eq!(direct.status.code(), Some(1));
    assert_eq!(r.report, stdout(&direct));
    assert!(r.outputs.contains(&format!("report={}", work.path().join("runner-temp/trainer-audit-review.md").display())));

    // A bump that passes at error and blocks at warning.
    let repo = work.path().join("repo-single");
    let base = checkout("argocd-single", &repo);
    let mut inputs = vec![("INPUT_PATH", "deploy"), ("INPUT_BASE_REF", base.as_str()), ("INPUT_CHARTS", charts.as_str())];
    let r = action(&repo, work.path(), &inputs);
    assert_eq!(r.out.status.code(), Some(0), "{}", stderr(&r.out));
    assert!(r.outputs.contains("verdict=ready\n"), "{}", r.outputs);
    assert!(r.summary.starts_with("### ✅ Trainer GitOps review: ready\n"), "{}", r.summary);
    assert!(stdout(&r.out).lines().any(|l| l.starts_with("::warning file=deploy/")), "{}", stdout(&r.out));
    inputs.push(("INPUT_FAIL_ON", "warning"));
    let r = action(&repo, work.path(), &inputs);
    assert_eq!(r.out.status.code(), Some(1));
    assert!(r.outputs.contains("verdict=blocked\n"));

    // A wrong input or a review that cannot run: exit 2, said as an error annotation.
    let r = action(&repo, work.path(), &[("INPUT_PATH", "deploy"), ("INPUT_FAIL_ON", "fatal")]);
    assert_eq!(r.out.status.code(), Some(2));
    assert!(stdout(&r.out).starts_with("::error title=trainer-audit::fail-on must be"), "{}", stdout(&r.out));
    let r = action(&repo, work.path(), &[("INPUT_PATH", "no-such-dir"), ("INPUT_CHARTS", charts.as_str())]);
    assert_eq!(r.out.status.code(), Some(2));
    assert!(r.outputs.contains("verdict=failed\n"), "{}", r.outputs);
}

#[test]
fn the_actions_inputs_reach_the_script() {
    let text = std::fs::read_to_string(root().join("action.yml")).unwrap();
    let action = serde_saphyr::from_str::<Json>(&text).unwrap();
    assert_eq!(action["runs"]["using"], "composite");
    let steps = action["runs"]["steps"].as_array().unwrap();
    let review = steps.iter().find(|s| s["id"] == "review").unwrap();
    assert!(review["run"].as_str().unwrap().contains("${{ github.action_path }}/action/review.sh"));
    for (input, env) in [("path", "INPUT_PATH"), ("base-ref", "INPUT_BASE_REF"), ("fail-on", "INPUT_FAIL_ON"), ("charts", "INPUT_CHARTS")] {
        assert!(action["inputs"].get(input).is_some(), "input {input}");
        assert_eq!(review["env"][env], format!("${{{{ inputs.{input} }}}}"), "{env}");
    }
    let script = std::fs::read_to_string(root().join("action/review.sh")).unwrap();
    for name in ["verdict", "exit-code", "report"] {
        assert_eq!(action["outputs"][name]["value"], format!("${{{{ steps.review.outputs.{name} }}}}"));
        assert!(script.contains(&format!("echo \"{name}=")), "the script sets {name}");
    }
    // shellcheck, when installed (`cargo xtask test` installs it; CI has it).
    match Command::new("shellcheck").arg("--version").output() {
        Ok(_) => {
            for file in ["action/review.sh", "plugin/helm-trainer-audit.sh"] {
                let out = Command::new("shellcheck").arg("--severity=style").arg(root().join(file)).output().unwrap();
                assert!(out.status.success(), "{file}: {}", stdout(&out));
            }
        }
        Err(_) => {
            assert!(!support::in_ci(), "shellcheck is not installed");
            eprintln!("SKIPPED shellcheck of action/review.sh: not installed");
        }
    }
}
