//! What the terminal sees: completion scripts and man pages generated from the clap definitions,
//! `--color auto|always|never` (with NO_COLOR and CLICOLOR_FORCE), and `--quiet`'s single verdict
//! line. Uses the project's scenario snapshots and stand-in charts; no corpus needed.

mod support;

use std::path::Path;
use std::process::{Command, Stdio};

use support::{run, stderr, stdout};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// `check` of the Helm 2.2.1 scenario against the stand-in 2.3.0 chart (it has errors; the
/// installed 2.2.1 chart is not given, so its comparisons are reported as not run).
fn check_args(extra: &[&str]) -> Vec<String> {
    let charts = Path::new(ROOT).join("tests/rules/charts");
    let mut args: Vec<String> = vec![
        "check".into(),
        "--snapshot".into(),
        Path::new(ROOT).join("snapshots/helm-2.2.1.yaml").to_string_lossy().into_owned(),
        "--chart".into(),
        charts.join("to").to_string_lossy().into_owned(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

/// The binary with a clean environment plus `env`.
fn run_env(home: &Path, args: &[String], env: &[(&str, &str)]) -> std::process::Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_trainer-audit"));
    cmd.args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("TRAINER_AUDIT_CACHE_DIR", home.join("cache"))
        .envs(env.iter().copied())
        .stdin(Stdio::null());
    cmd.output().unwrap()
}

#[test]
fn completions_come_from_the_clap_definitions() {
    let home = tempfile::tempdir().unwrap();
    let bash = run(home.path(), &["completions", "bash"]);
    assert!(bash.status.success(), "{}", stderr(&bash));
    let script = stdout(&bash);
    for word in ["trainer-audit", "--all-contexts", "--concurrency", "--color", "completions", "jsonl"] {
        assert!(script.contains(word), "{word} missing from the bash completions");
    }
    // bash accepts the script it would source.
    if let Ok(out) =
        Command::new("bash").arg("-n").stdin(Stdio::piped()).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().and_then(|mut c| {
            std::io::Write::write_all(c.stdin.as_mut().unwrap(), script.as_bytes())?;
            c.wait_with_output()
        })
    {
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let out = run(home.path(), &["completions", shell]);
        assert!(out.status.success() && stdout(&out).contains("trainer-audit"), "{shell}: {}", stderr(&out));
    }
    let bad = run(home.path(), &["completions", "tcsh"]);
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn man_pages_come_from_the_clap_definitions() {
    let home = tempfile::tempdir().unwrap();
    let out = run(home.path(), &["man"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let page = stdout(&out);
    assert!(page.starts_with(".ie \\n(.g .ds Aq") || page.contains(".TH trainer-audit 1"), "{}", &page[..page.len().min(200)]);
    assert!(page.contains("check") && page.contains("Pre\\-upgrade readiness audits"), "{page}");
    let dir = home.path().join("man");
    std::fs::create_dir(&dir).unwrap();
    let out = run(home.path(), &["man", "--output-dir", &dir.to_string_lossy()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let check = std::fs::read_to_string(dir.join("trainer-audit-check.1")).unwrap();
    assert!(check.contains("all\\-contexts") && check.contains("concurrency"), "{check}");
    assert!(dir.join("trainer-audit.1").is_file() && dir.join("trainer-audit-rbac.1").is_file());
    assert!(!dir.join("trainer-audit-help.1").exists());
    let missing = run(home.path(), &["man", "--output-dir", &home.path().join("absent").to_string_lossy()]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(stderr(&missing).contains("not a directory"), "{}", stderr(&missing));
}

#[test]
fn colour_follows_the_flag_the_environment_and_the_terminal() {
    let home = tempfile::tempdir().unwrap();
    let escape = |out: &std::process::Output| out.stdout.contains(&0x1b);
    let plain = run_env(home.path(), &check_args(&[]), &[]);
    assert_eq!(plain.status.code(), Some(1), "{}", stderr(&plain));
    assert!(!escape(&plain), "auto, not a terminal: no colour");
    let always = run_env(home.path(), &check_args(&["--color", "always"]), &[("NO_COLOR", "1")]);
    assert!(escape(&always), "--color always beats NO_COLOR");
    assert_eq!(strip_ansi(&stdout(&always)), stdout(&plain), "colour only wraps words, it changes nothing else");
    let forced = run_env(home.path(), &check_args(&[]), &[("CLICOLOR_FORCE", "1")]);
    assert!(escape(&forced), "auto honours CLICOLOR_FORCE");
    let forced_but_no = run_env(home.path(), &check_args(&[]), &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")]);
    assert!(!escape(&forced_but_no), "auto honours NO_COLOR");
    let never = run_env(home.path(), &check_args(&["--color", "never"]), &[("CLICOLOR_FORCE", "1")]);
    assert!(!escape(&never));
    // JSON never gets colour.
    let json = run_env(home.path(), &check_args(&["--color", "always", "--format", "json"]), &[]);
    assert!(!escape(&json));
}

/// Text without its `ESC [ … m` sequences.
fn strip_ansi(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            chars.by_ref().find(|c| *c == 'm');
        } else {
            out.push(c);
        }
    }
    out
}

#[test]
fn quiet_prints_only_the_verdict_line() {
    let home = tempfile::tempdir().unwrap();
    let out = run_env(home.path(), &check_args(&["--quiet"]), &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = stdout(&out);
    let snapshot = Path::new(ROOT).join("snapshots/helm-2.2.1.yaml");
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(text.starts_with(&format!("{}: blocked: 2.2.1 → 2.3.0 (Helm), ", snapshot.display())), "{text}");
    let out = run_env(home.path(), &check_args(&["--quiet", "--fail-on", "error", "--format", "json"]), &[]);
    assert_eq!(out.status.code(), Some(2), "--quiet and --format conflict");
}

/// The binary writing into a pipe whose reader has already gone (`| head -1` once it has its
/// line): it ends quietly, killed by SIGPIPE as `cat` is, and never panics on the broken pipe.
#[cfg(unix)]
#[expect(unsafe_code, reason = "a pipe whose reader is closed is made with libc::pipe")]
fn into_a_closed_pipe(home: &Path, args: &[&str]) -> std::process::Output {
    use std::os::fd::{FromRawFd, OwnedFd};
    let mut fds = [0; 2];
    // SAFETY: `pipe` fills both descriptors; each is owned once, and the reader is closed here.
    let writer = unsafe {
        assert_eq!(libc::pipe(fds.as_mut_ptr()), 0);
        drop(OwnedFd::from_raw_fd(fds[0]));
        OwnedFd::from_raw_fd(fds[1])
    };
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_trainer-audit"));
    cmd.args(args).env("HOME", home).env("TRAINER_AUDIT_CACHE_DIR", home.join("cache")).stdin(Stdio::null()).stdout(writer);
    cmd.output().unwrap()
}

#[cfg(unix)]
#[test]
fn a_closed_stdout_ends_the_run_quietly() {
    use std::os::unix::process::ExitStatusExt;
    let home = tempfile::tempdir().unwrap();
    let rules = Path::new(ROOT).join("tests/rules");
    let (cluster, from, to) = (rules.join("TA-HOOK-101/cluster.yaml"), rules.join("charts/from"), rules.join("charts/to"));
    let plan = ["plan", "--snapshot", cluster.to_str().unwrap(), "--chart", to.to_str().unwrap()];
    let plan = [&plan[..], &["--from-chart", from.to_str().unwrap(), "--format", "sarif"]].concat();
    let helm = Path::new(ROOT).join("snapshots/helm-2.2.1.yaml");
    let fleet = ["status", "--snapshot", cluster.to_str().unwrap(), "--snapshot", helm.to_str().unwrap()];
    let check = check_args(&[]);
    for args in [&plan[..], &check.iter().map(String::as_str).collect::<Vec<_>>()[..], &fleet[..3], &fleet[..]] {
        let out = into_a_closed_pipe(home.path(), args);
        let err = stderr(&out);
        assert!(!err.contains("panicked") && !err.contains("Broken pipe"), "{args:?}: {err}");
        assert_eq!(out.status.signal(), Some(libc_sigpipe()), "{args:?}: ended by SIGPIPE, as `cat` is: {:?} {err}", out.status);
    }
    // A reader that takes the first line and closes (`| head -1`) on an output longer than the
    // pipe's buffer: the same quiet end.
    let mut child = Command::new(env!("CARGO_BIN_EXE_trainer-audit"))
        .args(["render", to.to_str().unwrap(), "--include-crds"])
        .env("HOME", home.path())
        .env("TRAINER_AUDIT_CACHE_DIR", home.path().join("cache"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(child.stdout.take().unwrap()), &mut first).unwrap();
    assert_eq!(first, "---\n");
    let out = child.wait_with_output().unwrap();
    assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
    assert_eq!(out.status.signal(), Some(libc_sigpipe()), "{:?}", out.status);
}

#[cfg(unix)]
fn libc_sigpipe() -> i32 {
    libc::SIGPIPE
}

/// The TA-HOOK-101 fixture: the release namespace enforces `restricted`, so the fix relaxes it
/// for the upgrade, and the relaxation must be put back after it.
fn relaxed(command: &str, extra: &[&str]) -> Vec<String> {
    let rules = Path::new(ROOT).join("tests/rules");
    let s = |p: &Path| p.to_string_lossy().into_owned();
    let mut args: Vec<String> = vec![command.into(), "--snapshot".into(), s(&rules.join("TA-HOOK-101/cluster.yaml"))];
    args.extend(["--chart".into(), s(&rules.join("charts/to")), "--from-chart".into(), s(&rules.join("charts/from"))]);
    args.extend(extra.iter().map(|e| e.to_string()));
    args
}

const RELAX: &str = "kubectl label ns kubeflow-system pod-security.kubernetes.io/enforce=baseline --overwrite";
const RESTORE: &str = "kubectl label ns kubeflow-system pod-security.kubernetes.io/enforce=restricted --overwrite";

/// Issue 31 §1: wherever a command that relaxes something for the upgrade is shown, the command
/// that puts it back is shown with it — in every format of every command that shows fixes, and
/// in the step summary a GitHub job writes.
#[test]
fn no_format_drops_a_restore_step() {
    let home = tempfile::tempdir().unwrap();
    let summary = home.path().join("summary.md");
    let outputs: Vec<(String, Vec<String>)> = [
        ("check", vec![]),
        ("check", vec!["--format", "markdown"]),
        ("check", vec!["--format", "json"]),
        ("check", vec!["--format", "jsonl"]),
        ("check", vec!["--format", "sarif"]),
        ("check", vec!["--format", "github"]),
        ("check", vec!["--format", "html"]),
        ("check", vec!["--verbose"]),
        ("plan", vec![]),
        ("plan", vec!["--format", "markdown"]),
        ("plan", vec!["--format", "json"]),
        ("plan", vec!["--format", "sarif"]),
        ("runbook", vec![]),
        ("runbook", vec!["--format", "html"]),
    ]
    .into_iter()
    .map(|(command, extra)| {
        let args = relaxed(command, &extra);
        let out = run_env(home.path(), &args, &[("GITHUB_STEP_SUMMARY", summary.to_str().unwrap())]);
        assert!(matches!(out.status.code(), Some(0 | 1)), "{args:?}: {}", stderr(&out));
        (format!("{command} {}", extra.join(" ")), vec![stdout(&out)])
    })
    .collect();
    let step_summary = std::fs::read_to_string(&summary).unwrap();
    for (what, texts) in outputs.iter().chain(std::iter::once(&("the step summaries".to_string(), vec![step_summary.clone()]))) {
        for text in texts {
            let (relax, restore) = (text.find(RELAX), text.find(RESTORE));
            assert!(relax.is_some(), "{what}: the fix is not shown:\n{text}");
            assert!(restore.is_some_and(|r| Some(r) > relax), "{what}: the relaxation is shown without its restore after it:\n{text}");
        }
    }
    // Machine formats keep the restore apart from the commands run before the upgrade.
    let json: serde_json::Value = serde_json::from_str(&outputs[2].1[0]).unwrap();
    let f = json["findings"].as_array().unwrap().iter().find(|f| f["id"] == "TA-HOOK-101").unwrap();
    assert_eq!(f["commands"], serde_json::json!([RELAX]));
    assert_eq!(f["restore"], serde_json::json!([RESTORE]));
    // The step summary's shell block says when the restore runs.
    assert!(step_summary.contains(&format!("{RELAX}\n# After the upgrade, restore it:\n{RESTORE}\n")), "{step_summary}");
}

/// Issue 31 §1: commands are copyable blocks, never inside a table cell; GitHub annotations carry
/// the fix once under `Fix:` (no `fix:` on every line) and a file.
#[test]
fn commands_are_blocks_and_annotations_carry_a_file() {
    let home = tempfile::tempdir().unwrap();
    let markdown = stdout(&run_env(home.path(), &relaxed("check", &["--format", "markdown"]), &[]));
    for row in markdown.lines().filter(|l| l.starts_with('|')) {
        assert!(!row.contains("kubectl"), "a command in a table cell: {row}");
    }
    assert!(markdown.contains(&format!("  ```sh\n  {RELAX}\n  ```")), "{markdown}");
    let github = stdout(&run_env(home.path(), &relaxed("check", &["--format", "github"]), &[]));
    assert!(!github.contains("%0Afix: "), "{github}");
    let hook = github.lines().find(|l| l.contains("title=TA-HOOK-101")).unwrap();
    assert!(hook.starts_with("::error file=") && hook.contains("%0A%0AFix:%0A"), "{hook}");
}

/// Issue 31 §3: `check` ends with the command that comes next — the runbook with the same
/// inputs, every one of the user's flags carried, quoted — and that command runs as printed.
#[test]
fn check_ends_with_the_runbook_command_and_it_runs() {
    let home = tempfile::tempdir().unwrap();
    let values = home.path().join("my values.yaml");
    std::fs::write(&values, "manager:\n  logLevel: debug\n").unwrap();
    let args = relaxed("check", &["-f", values.to_str().unwrap(), "--set", "a.b=c", "--fail-on", "warning"]);
    let out = run_env(home.path(), &args, &[]);
    let text = stdout(&out);
    let last = text.lines().last().unwrap().trim();
    assert!(last.starts_with("trainer-audit runbook "), "{text}");
    for word in ["--values", "'", "--set a.b=c", "--chart", "--from-chart", "--snapshot", "-o runbook.md"] {
        assert!(last.contains(word), "{word} missing from {last}");
    }
    assert!(!last.contains("--fail-on"), "an output choice is not an input: {last}");
    let words = shlex::split(last).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_trainer-audit"));
    cmd.args(&words[1..]).current_dir(home.path()).env("HOME", home.path()).env("TRAINER_AUDIT_CACHE_DIR", home.path().join("cache"));
    let ran = cmd.output().unwrap();
    assert!(ran.status.success(), "{last}: {}", String::from_utf8_lossy(&ran.stderr));
    let runbook = std::fs::read_to_string(home.path().join("runbook.md")).unwrap();
    assert!(runbook.contains("--set a.b=c") && runbook.contains("my values.yaml"), "{runbook}");
}

/// Issue 31 §4: `-q` on one cluster writes that cluster's step summary (`upgrade check`, its
/// blockers and commands), not a fleet's.
#[test]
fn quiet_on_one_cluster_writes_its_own_step_summary() {
    let home = tempfile::tempdir().unwrap();
    let summary = home.path().join("summary.md");
    let out = run_env(home.path(), &relaxed("check", &["-q"]), &[("GITHUB_STEP_SUMMARY", summary.to_str().unwrap())]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let md = std::fs::read_to_string(&summary).unwrap();
    assert!(md.starts_with("### ❌ Trainer upgrade check: blocked\n"), "{md}");
    assert!(md.contains(RESTORE), "{md}");
}

/// Issue 31 §4: every report a person opens is written readable (0644), the runbook as the
/// check page; what holds cluster data (a snapshot, converted objects) stays its owner's.
#[cfg(unix)]
#[test]
fn reports_are_written_readable_and_cluster_data_private() {
    use std::os::unix::fs::PermissionsExt;
    let home = tempfile::tempdir().unwrap();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    for (command, extra, file) in [
        ("check", vec!["--format", "html", "-o"], "check.html"),
        ("runbook", vec!["--format", "html", "-o"], "runbook.html"),
        ("runbook", vec!["-o"], "runbook.md"),
    ] {
        let path = home.path().join(file);
        let mut extra = extra;
        extra.push(path.to_str().unwrap());
        let out = run_env(home.path(), &relaxed(command, &extra), &[]);
        assert!(matches!(out.status.code(), Some(0 | 1)), "{command}: {}", stderr(&out));
        assert_eq!(mode(&path), 0o644, "{file}");
    }
    let snapshot = home.path().join("copy.yaml");
    let rules = Path::new(ROOT).join("tests/rules");
    let copy = run_env(
        home.path(),
        &[
            "snapshot".into(),
            "--snapshot".into(),
            rules.join("TA-HOOK-101/cluster.yaml").to_string_lossy().into_owned(),
            "-o".into(),
            snapshot.to_string_lossy().into_owned(),
        ],
        &[],
    );
    assert!(copy.status.success(), "{}", stderr(&copy));
    assert_eq!(mode(&snapshot), 0o600);
}

/// Issue 31 §4: a context the kubeconfig does not hold is named with those it holds; a server
/// that cannot be reached is named by its URL and context, with the cause.
#[test]
fn cluster_errors_name_the_context_and_the_server() {
    let home = tempfile::tempdir().unwrap();
    let kubeconfig = home.path().join("config");
    std::fs::write(
        &kubeconfig,
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: 'https://127.0.0.1:1'}\nusers:\n- name: u\n  user: {token: t}\n\
contexts:\n- name: dev\n  context: {cluster: c, user: u}\n- name: prod\n  context: {cluster: c, user: u}\ncurrent-context: dev\n",
    )
    .unwrap();
    let k = kubeconfig.to_string_lossy().into_owned();
    let out = run_env(home.path(), &["status".into(), "--kubeconfig".into(), k.clone(), "--context".into(), "staging".into()], &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("context \"staging\" is not in kubeconfig") && err.contains("\"dev\", \"prod\""), "{err}");
    let out = run_env(home.path(), &["status".into(), "--kubeconfig".into(), k, "--context".into(), "prod".into()], &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("cannot reach the Kubernetes API server https://127.0.0.1:1/ (context \"prod\"): "), "{err}");
}

/// What a person reads, pinned (issue 31: snapshot tests for text, Markdown, the step summary and
/// HTML): `check` of the TA-HOOK-101 fixture — a relaxation with its restore, one fix per rule,
/// the next command — with the repository's path written `$REPO`.
#[test]
fn what_a_person_reads_is_pinned() {
    let home = tempfile::tempdir().unwrap();
    let portable = |text: String| text.replace(ROOT, "$REPO");
    let text = stdout(&run_env(home.path(), &relaxed("check", &[]), &[]));
    insta::assert_snapshot!("person_check_text", portable(text));
    let markdown = stdout(&run_env(home.path(), &relaxed("check", &["--format", "markdown"]), &[]));
    insta::assert_snapshot!("person_check_markdown", portable(markdown));
    let html = stdout(&run_env(home.path(), &relaxed("check", &["--format", "html"]), &[]));
    // The page's body (its style and script are the same for every page).
    let body = html.split("<body>\n").nth(1).and_then(|b| b.split("<footer>").next()).unwrap_or_default().to_string();
    insta::assert_snapshot!("person_check_html", portable(body));
    let summary = home.path().join("summary.md");
    let env = [("GITHUB_STEP_SUMMARY", summary.to_str().unwrap())];
    run_env(home.path(), &relaxed("check", &["-q"]), &env);
    run_env(home.path(), &relaxed("plan", &["-q"]), &env);
    insta::assert_snapshot!("person_step_summary", portable(std::fs::read_to_string(&summary).unwrap()));
    let plan = stdout(&run_env(home.path(), &relaxed("plan", &[]), &[]));
    insta::assert_snapshot!("person_plan_text", portable(plan));
}

/// Issue 31 §3: in a fleet's text each cluster's section ends with that cluster's runbook
/// command (its own --snapshot, the run's other inputs).
#[test]
fn each_cluster_of_a_fleet_ends_with_its_own_runbook_command() {
    let home = tempfile::tempdir().unwrap();
    let rules = Path::new(ROOT).join("tests/rules");
    let (a, b) = (rules.join("TA-HOOK-101/cluster.yaml"), Path::new(ROOT).join("snapshots/helm-2.2.1.yaml"));
    let s = |p: &Path| p.to_string_lossy().into_owned();
    let args: Vec<String> = ["check", "--snapshot", &s(&a), "--snapshot", &s(&b), "--chart", &s(&rules.join("charts/to")), "--set", "x=1"]
        .map(String::from)
        .to_vec();
    let text = stdout(&run_env(home.path(), &args, &[]));
    for snapshot in [&a, &b] {
        let wanted = format!("--set x=1 --snapshot {} -o runbook.md", s(snapshot));
        assert_eq!(
            text.lines().filter(|l| l.trim().starts_with("trainer-audit runbook ") && l.ends_with(&wanted)).count(),
            1,
            "{wanted}\n{text}"
        );
    }
}

/// A downgrade's plan asks to keep-annotate the CRDs only where Helm would delete one (TA-DIR-001
/// an error): 2.3.0 → 2.2.0 with the templated TrainJob CRD unkept; not with it kept (crds-kept),
/// nor 2.3.0 → its own pre-release, which renders it too (crds-rendered).
#[test]
fn a_downgrade_plan_asks_to_keep_the_crds_only_where_one_is_at_risk() {
    let home = tempfile::tempdir().unwrap();
    let rules = Path::new(ROOT).join("tests/rules");
    let plan = |snapshot: &str, chart: &str| {
        let s = |p: std::path::PathBuf| p.to_string_lossy().into_owned();
        let args: Vec<String> = [
            "plan".into(),
            "--snapshot".into(),
            s(rules.join("TA-DIR-001").join(snapshot)),
            "--chart".into(),
            s(rules.join(chart)),
            "--from-chart".into(),
            s(rules.join("charts/to")),
        ]
        .to_vec();
        stdout(&run_env(home.path(), &args, &[])).replace(ROOT, "$REPO")
    };
    let at_risk = plan("cluster.yaml", "charts/from");
    assert!(at_risk.contains("the CRDs keep-annotated"), "{at_risk}");
    insta::assert_snapshot!("plan_downgrade_crds_at_risk", at_risk);
    for (snapshot, chart, name) in
        [("keep.yaml", "charts/from", "plan_downgrade_crds_kept"), ("cluster.yaml", "TA-DIR-001/rc", "plan_downgrade_crds_rendered")]
    {
        let safe = plan(snapshot, chart);
        assert!(safe.contains("This is a downgrade") && !safe.contains("keep-annotated"), "{safe}");
        insta::assert_snapshot!(name, safe);
    }
}
