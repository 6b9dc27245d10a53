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
