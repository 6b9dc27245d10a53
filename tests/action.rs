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
    // One path base: the step summary and the comment name the file as the annotation does, from
    // the repository root; JSON stays relative to the reviewed tree.
    for (what, text) in [("summary", &r.summary), ("comment", &r.report)] {
        assert!(text.contains("deploy/apps/trainer.yaml"), "{what}: {text}");
        assert!(!text.replace("deploy/apps/trainer.yaml", "").contains("apps/trainer.yaml"), "{what} names a file from the tree: {text}");
    }
    let json =
        run(home.path(), &["gitops", &repo.join("deploy").to_string_lossy(), "--base-ref", &base, "--charts", &charts, "--format", "json"]);
    let doc: Json = serde_json::from_str(&stdout(&json)).unwrap();
    assert_eq!(doc["references"][0]["at"]["file"], "apps/trainer.yaml", "{}", stdout(&json));
    // The same from inside the tree (`path: .` with the tree as working directory): the files are
    // still the repository's.
    let inner = action(
        &repo.join("deploy"),
        work.path(),
        &[("INPUT_PATH", "."), ("INPUT_BASE_REF", base.as_str()), ("INPUT_CHARTS", charts.as_str())],
    );
    assert_eq!(inner.out.status.code(), Some(1), "{}", stderr(&inner.out));
    assert!(
        stdout(&inner.out).lines().any(|l| l.starts_with("::error file=deploy/apps/trainer.yaml,line=11,title=TA-HOOK-104 ")),
        "{}",
        stdout(&inner.out)
    );
    assert_eq!(inner.summary, r.summary);
    let text = run(home.path(), &["gitops", &repo.join("deploy").to_string_lossy(), "--base-ref", &base, "--charts", &charts]);
    assert!(stdout(&text).contains("[deploy/apps/trainer.yaml:11:"), "{}", stdout(&text));

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
    // The install step: the release binary by default, a source build only when asked.
    let install = steps.iter().find(|s| s["name"] == "Install trainer-audit").unwrap();
    assert_eq!(install["run"], "bash \"${{ github.action_path }}/action/install.sh\"");
    assert_eq!(install["env"]["ACTION_PATH"], "${{ github.action_path }}");
    for (input, env) in [
        ("build", "INPUT_BUILD"),
        ("version", "INPUT_VERSION"),
        ("release-url", "INPUT_RELEASE_URL"),
        ("verify-attestation", "INPUT_VERIFY_ATTESTATION"),
        ("token", "GH_TOKEN"),
    ] {
        assert!(action["inputs"].get(input).is_some(), "input {input}");
        assert_eq!(install["env"][env], format!("${{{{ inputs.{input} }}}}"), "{env}");
    }
    assert_eq!(action["inputs"]["build"]["default"], "false", "building from source is opt-in");
    assert_eq!(action["inputs"]["verify-attestation"]["default"], "auto");
    let script = std::fs::read_to_string(root().join("action/review.sh")).unwrap();
    for name in ["verdict", "exit-code", "report"] {
        assert_eq!(action["outputs"][name]["value"], format!("${{{{ steps.review.outputs.{name} }}}}"));
        assert!(script.contains(&format!("echo \"{name}=")), "the script sets {name}");
    }
    // shellcheck, when installed (`cargo xtask test` installs it; CI has it).
    match Command::new("shellcheck").arg("--version").output() {
        Ok(_) => {
            for file in ["action/review.sh", "action/install.sh", "release/build.sh", "plugin/helm-trainer-audit.sh"] {
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

// --- The install step: the release binary for the runner, checked before it is installed ---

const PLATFORMS: [(&str, &str); 4] = [
    ("x86_64-unknown-linux-musl", "linux-amd64"),
    ("aarch64-unknown-linux-musl", "linux-arm64"),
    ("x86_64-apple-darwin", "darwin-amd64"),
    ("aarch64-apple-darwin", "darwin-arm64"),
];

fn archive(platform: &str) -> String {
    format!("trainer-audit-v{}-{platform}.tar.gz", env!("CARGO_PKG_VERSION"))
}

/// A release laid out as .github/workflows/release.yml publishes it, made by the same script
/// (release/build.sh package, then finish): linux-amd64 holds this build's binary, the other
/// platforms a stand-in executable (this machine cannot build them).
fn release(dir: &Path) -> PathBuf {
    let dist = dir.join("dist");
    let stand_in = dir.join("stand-in");
    std::fs::write(&stand_in, "#!/bin/sh\necho 'trainer-audit 0.0.0-stand-in'\n").unwrap();
    std::fs::set_permissions(&stand_in, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    for (target, platform) in PLATFORMS {
        let binary = if platform == "linux-amd64" { PathBuf::from(env!("CARGO_BIN_EXE_trainer-audit")) } else { stand_in.clone() };
        let out =
            Command::new("bash").arg(root().join("release/build.sh")).arg("package").arg(target).arg(&binary).arg(&dist).output().unwrap();
        assert!(out.status.success(), "release/build.sh package {target}: {}", stderr(&out));
    }
    let out = Command::new("bash")
        .arg(root().join("release/build.sh"))
        .args(["finish"])
        .arg(&dist)
        .arg("https://github.com/acme/trainer-audit/releases/download/v0.0.0")
        .output()
        .unwrap();
    assert!(out.status.success(), "release/build.sh finish: {}", stderr(&out));
    dist
}

/// Serves `dist` as GitHub serves a release's assets: GET /acme/trainer-audit/releases/download/vVERSION/NAME.
fn serve(dist: &Path) -> support::http::Server {
    let dist = dist.to_path_buf();
    let prefix = format!("/acme/trainer-audit/releases/download/v{}/", env!("CARGO_PKG_VERSION"));
    support::http::Server::start(move |req| {
        match req.path().strip_prefix(prefix.as_str()).filter(|n| !n.contains('/')).map(|n| std::fs::read(dist.join(n))) {
            Some(Ok(bytes)) => support::http::Response::new(200, bytes),
            _ => support::http::Response::new(404, "Not Found"),
        }
    })
}

struct Install {
    out: Output,
    log: String,
    path_file: String,
    dest: PathBuf,
}

/// action/install.sh as the runner runs it for `uses: acme/trainer-audit@vVERSION`: the action
/// checked out under RUNNER/_actions/acme/trainer-audit/vVERSION, GITHUB_SERVER_URL the local
/// server, a PATH without trainer-audit, and no GitHub CLI token.
fn install(work: &Path, server: &support::http::Server, inputs: &[(&str, &str)]) -> Install {
    let action_path = work.join(format!("_actions/acme/trainer-audit/v{}", env!("CARGO_PKG_VERSION")));
    std::fs::create_dir_all(&action_path).unwrap();
    std::fs::copy(root().join("Cargo.toml"), action_path.join("Cargo.toml")).unwrap();
    let temp = work.join("runner-temp");
    let _ = std::fs::remove_dir_all(&temp);
    std::fs::create_dir_all(&temp).unwrap();
    let path_file = work.join("github-path");
    let _ = std::fs::remove_file(&path_file);
    let mut cmd = Command::new("bash");
    cmd.arg(root().join("action/install.sh"))
        .current_dir(work)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", work)
        .env("ACTION_PATH", &action_path)
        .env("GITHUB_SERVER_URL", format!("http://{}", server.base()))
        .env("GITHUB_PATH", &path_file)
        .env("RUNNER_TEMP", &temp)
        .env("RUNNER_OS", "Linux")
        .env("RUNNER_ARCH", "X64");
    for (k, v) in inputs {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let log = format!("{}{}", stdout(&out), stderr(&out));
    let path_file = std::fs::read_to_string(&path_file).unwrap_or_default();
    Install { out, log, path_file, dest: temp.join(format!("trainer-audit-v{}", env!("CARGO_PKG_VERSION"))) }
}

fn assert_refused(i: &Install, message: &str) {
    assert_eq!(i.out.status.code(), Some(2), "{}", i.log);
    let error = i
        .log
        .lines()
        .find(|l| l.starts_with("::error title=trainer-audit install::"))
        .unwrap_or_else(|| panic!("no error annotation: {}", i.log));
    assert!(error.contains(message), "{error}");
    assert!(i.path_file.is_empty(), "nothing is put on PATH: {}", i.path_file);
    assert!(!i.dest.join("trainer-audit").exists(), "nothing is installed");
}

#[test]
fn the_action_installs_the_runners_release_binary_only_when_its_checksum_matches() {
    if Command::new("curl").arg("--version").output().is_err() {
        assert!(!support::in_ci(), "curl is needed by the action's install step");
        return eprintln!("SKIPPED: curl is not installed");
    }
    let work = tempfile::tempdir().unwrap();
    let dist = release(work.path());
    let server = serve(&dist);
    let v = env!("CARGO_PKG_VERSION");

    // The release as published: the runner's archive, checked, on PATH, and it runs.
    let ok = install(work.path(), &server, &[]);
    assert_eq!(ok.out.status.code(), Some(0), "{}", ok.log);
    assert!(ok.log.contains(&format!("{}: SHA-256 ", archive("linux-amd64"))) && ok.log.contains("matches SHA256SUMS"), "{}", ok.log);
    assert!(ok.log.contains("::notice title=trainer-audit install::") && ok.log.contains("attestation was not verified"), "{}", ok.log);
    assert_eq!(ok.path_file, format!("{}\n", ok.dest.display()));
    let version = Command::new(ok.dest.join("trainer-audit")).arg("--version").output().unwrap();
    assert_eq!(stdout(&version), format!("trainer-audit {v}\n"));
    let asked: Vec<String> = server.requests().iter().map(|r| r.path().to_string()).collect();
    let base = format!("/acme/trainer-audit/releases/download/v{v}");
    assert_eq!(asked, [format!("{base}/SHA256SUMS"), format!("{base}/{}", archive("linux-amd64"))], "the action's repository and version");

    // The runner picks the archive: an arm64 runner gets linux-arm64's (here the stand-in, which
    // is refused because it is not this version).
    let arm = install(work.path(), &server, &[("RUNNER_ARCH", "ARM64")]);
    assert_refused(&arm, &format!("{} holds 'trainer-audit 0.0.0-stand-in', not trainer-audit {v}", archive("linux-arm64")));
    assert_refused(&install(work.path(), &server, &[("RUNNER_OS", "Windows")]), "no release binary for Windows runners; set build: true");

    // A tampered binary: the archive's bytes changed after the release was made.
    let good = std::fs::read(dist.join(archive("linux-amd64"))).unwrap();
    let mut bad = good.clone();
    let at = bad.len() / 2;
    bad[at] ^= 0x55;
    std::fs::write(dist.join(archive("linux-amd64")), &bad).unwrap();
    let tampered = install(work.path(), &server, &[]);
    assert_refused(&tampered, &format!("checksum mismatch for {}: SHA256SUMS says ", archive("linux-amd64")));
    assert!(tampered.log.contains("not installing it"), "{}", tampered.log);
    std::fs::write(dist.join(archive("linux-amd64")), &good).unwrap();

    // A wrong checksum: SHA256SUMS says another digest for the (good) archive.
    let sums = std::fs::read_to_string(dist.join("SHA256SUMS")).unwrap();
    let line = sums.lines().find(|l| l.ends_with(&archive("linux-amd64"))).unwrap();
    let wrong = sums.replace(line, &format!("{}  {}", "0".repeat(64), archive("linux-amd64")));
    std::fs::write(dist.join("SHA256SUMS"), &wrong).unwrap();
    assert_refused(&install(work.path(), &server, &[]), &format!("SHA256SUMS says {}, the download is ", "0".repeat(64)));
    // …or none at all for this archive.
    std::fs::write(dist.join("SHA256SUMS"), sums.replace(&format!("{line}\n"), "")).unwrap();
    assert_refused(&install(work.path(), &server, &[]), &format!("names no {}", archive("linux-amd64")));
    std::fs::write(dist.join("SHA256SUMS"), &sums).unwrap();

    // A version that is not released, and an attestation required where it cannot be checked.
    assert_refused(&install(work.path(), &server, &[("INPUT_VERSION", "9.9.9")]), "could not download http://");
    assert_refused(
        &install(work.path(), &server, &[("INPUT_VERIFY_ATTESTATION", "true")]),
        "verify-attestation is true but the GitHub CLI (gh attestation verify) or a token (GH_TOKEN) is not available",
    );
    assert_refused(&install(work.path(), &server, &[("INPUT_BUILD", "yes")]), "build must be true or false");

    // An explicit release-url (a mirror) is used as given; the good release installs again.
    let mirror = format!("http://{}{base}", server.base());
    let again = install(work.path(), &server, &[("INPUT_RELEASE_URL", &mirror), ("INPUT_VERIFY_ATTESTATION", "false")]);
    assert_eq!(again.out.status.code(), Some(0), "{}", again.log);
    assert!(!again.log.contains("attestation"), "verify-attestation: false says nothing of it: {}", again.log);
}
