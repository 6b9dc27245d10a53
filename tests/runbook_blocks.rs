//! No runnable block of any runbook waits for a person (issue 20 §2b): every `sh` block in every
//! runbook and plan the tests pin (insta snapshots), and in the runbooks of the rule fixtures
//! whose fixes need a decision, is scanned for interactive commands.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Commands that open an editor, a pager, a prompt or a terminal session.
const INTERACTIVE: &[&str] = &[
    "kubectl edit",
    "kubectl exec -it",
    "kubectl exec -ti",
    "kubectl attach",
    " -i -t ",
    "read ",
    "vi ",
    "vim ",
    "nano ",
    "$EDITOR",
    "less ",
    "more ",
];

/// The `sh` block lines of a Markdown text.
fn sh_lines(text: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with("```") {
            inside = t == "```sh";
        } else if inside {
            lines.push(t.to_string());
        }
    }
    lines
}

fn interactive(lines: &[String]) -> Vec<String> {
    lines
        .iter()
        .filter(|l| {
            INTERACTIVE.iter().any(|i| {
                l.starts_with(i.trim_start()) || l.contains(&format!(" {}", i.trim_start())) || l.contains(&format!("| {}", i.trim_start()))
            })
        })
        .cloned()
        .collect()
}

#[test]
fn the_scan_finds_an_editor() {
    let found =
        interactive(&sh_lines("```sh\nkubectl edit trainjobs.trainer.kubeflow.org x -n y\nkubectl get x\n```\n`kubectl edit` in prose\n"));
    assert_eq!(found, ["kubectl edit trainjobs.trainer.kubeflow.org x -n y"]);
}

#[test]
fn no_pinned_runbook_block_is_interactive() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots");
    let mut scanned = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let lines = sh_lines(&text);
        scanned += usize::from(!lines.is_empty());
        let found = interactive(&lines);
        assert!(found.is_empty(), "{}: interactive commands in sh blocks: {found:#?}", path.display());
    }
    assert!(scanned > 0, "no snapshot holds an sh block: the scan saw nothing");
}

fn rules_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/rules")
}

/// The runbook of each rule fixture whose fix is a decision or a patch (TA-SCH-*, TA-NB-005,
/// TA-DIR-001): no block waits for a person, and the schema fixes' patches stay out of blocks.
#[test]
fn rule_fixture_runbooks_have_no_interactive_block() {
    for id in ["TA-SCH-001", "TA-SCH-002", "TA-NB-005", "TA-DIR-001"] {
        let case = std::fs::read_to_string(rules_dir().join(id).join("case.txt")).unwrap();
        let fires = case.lines().find_map(|l| l.strip_prefix("fires:")).unwrap().trim().to_string();
        let Some(args) = fires.strip_prefix("check ") else { continue };
        let home = tempfile::tempdir().unwrap();
        let mut argv: Vec<&str> = vec!["runbook"];
        argv.extend(args.split_whitespace());
        let out = Command::new(env!("CARGO_BIN_EXE_trainer-audit"))
            .args(&argv)
            .current_dir(rules_dir().join(id))
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", home.path())
            .env("TRAINER_AUDIT_CACHE_DIR", home.path().join("cache"))
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(out.status.success(), "{id}: runbook {args}: {}", support::stderr(&out));
        let book = support::stdout(&out);
        let lines = sh_lines(&book);
        assert!(interactive(&lines).is_empty(), "{id}: {:#?}\n{book}", interactive(&lines));
        assert!(!lines.iter().any(|l| l.contains("<NEW VALUE AS JSON>")), "{id}: a value to fill in inside a block:\n{book}");
    }
}
