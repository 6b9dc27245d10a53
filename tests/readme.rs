//! The README's two set-up commands stay true: the main job runs as printed (its chart paths read
//! from `TRAINER_AUDIT_CORPUS`, which stands where the README's `../shared/corpus` stands) and the
//! test command is the one `.ci/run` runs.

mod support;

use std::path::Path;
use std::process::Command;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The fenced `sh` blocks of the README's "Set up" section, in order.
fn setup_commands() -> Vec<String> {
    let readme = std::fs::read_to_string(Path::new(ROOT).join("README.md")).unwrap();
    let start = readme.find("\n## Set up\n").expect("README has a Set up section");
    let section = &readme[start + 1..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |i| i + 3)];
    let mut blocks = Vec::new();
    let mut rest = section;
    while let Some(i) = rest.find("```sh\n") {
        let body = &rest[i + 6..];
        let end = body.find("```").expect("closed code block");
        blocks.push(body[..end].trim().to_string());
        rest = &body[end + 3..];
    }
    blocks
}

#[test]
fn the_readme_keeps_exactly_two_setup_commands_and_ci_runs_the_test_one() {
    let blocks = setup_commands();
    assert_eq!(blocks.len(), 2, "README Set up has one main-job command and one test command: {blocks:?}");
    assert!(blocks[0].starts_with("cargo run --release -- check "), "{}", blocks[0]);
    assert_eq!(blocks[1], "cargo xtask test");
    let ci = std::fs::read_to_string(Path::new(ROOT).join(".ci/run")).unwrap();
    assert!(ci.lines().any(|l| l.trim() == "cargo xtask test"), ".ci/run runs the README's test command");
}

#[test]
#[ignore = "needs the corpus: TRAINER_AUDIT_CORPUS=DIR cargo test -- --include-ignored"]
fn the_readme_main_job_runs_as_printed() {
    let corpus = support::corpus();
    let command = &setup_commands()[0];
    let args: Vec<String> = command
        .strip_prefix("cargo run --release -- ")
        .unwrap()
        .split_whitespace()
        .map(|a| {
            assert!(!a.contains(['\'', '"', '\\', '$']), "the main job needs no shell quoting: {a}");
            match a.strip_prefix("../shared/corpus/") {
                Some(rest) => corpus.join(rest).display().to_string(),
                None => a.to_string(),
            }
        })
        .collect();
    let out = Command::new(env!("CARGO_BIN_EXE_trainer-audit")).args(&args).current_dir(ROOT).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(1),
        "the gate fails on errors, as the README says\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.starts_with(
            "blocked: 6 errors, 9 warnings\nUpgrade check: kubeflow-system/kubeflow-trainer 2.2.1 → 2.3.0 (installed with Helm)"
        ),
        "{stdout}"
    );
    // The short answer (issue #21: 168 lines before, at most 100): one block per rule, no sources.
    assert!(stdout.lines().count() <= 100, "{} lines:\n{stdout}", stdout.lines().count());
    assert!(!stdout.contains("https://"), "{stdout}");
    assert!(stdout.contains("TA-OWN-001"), "{stdout}");
}
