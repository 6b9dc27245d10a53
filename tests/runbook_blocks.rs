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

/// `trainer-audit ARGS` run in `cwd` with an isolated home.
fn run_in(cwd: &Path, args: &[&str]) -> (std::process::Output, tempfile::TempDir) {
    let home = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_trainer-audit"))
        .args(args)
        .current_dir(cwd)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("TRAINER_AUDIT_CACHE_DIR", home.path().join("cache"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (out, home)
}

/// The words bash makes of one command line.
fn bash_words(line: &str) -> Vec<String> {
    let out = Command::new("bash").arg("-c").arg(format!("printf '%s\\n' {line}")).env("BACKUP_DIR", "/backup").output().unwrap();
    assert!(out.status.success(), "bash could not split: {line}\n{}", support::stderr(&out));
    support::stdout(&out).lines().map(str::to_string).collect()
}

/// A copy of the fixture charts, a values file and a snapshot in a work directory, and the
/// runbook made from a directory below it with relative `--chart`, `--from-chart`, `-f` and
/// `--snapshot` paths (issue 21 §3: local paths in printed commands are absolute).
fn runbook_from_relative_paths(snapshot: &Path) -> (String, PathBuf, tempfile::TempDir) {
    let work = tempfile::tempdir().unwrap();
    let charts = rules_dir().join("charts");
    for chart in ["to", "from"] {
        let copied = Command::new("cp").arg("-R").arg(charts.join(chart)).arg(work.path().join(chart)).status().unwrap();
        assert!(copied.success());
    }
    std::fs::write(work.path().join("my values.yaml"), "manager:\n  replicas: 1\n").unwrap();
    std::fs::copy(snapshot, work.path().join("cluster.yaml")).unwrap();
    let cwd = work.path().join("elsewhere");
    std::fs::create_dir(&cwd).unwrap();
    let args = ["runbook", "--snapshot", "../cluster.yaml", "--chart", "../to", "--from-chart", "../from", "-f", "../my values.yaml"];
    let (out, _home) = run_in(&cwd, &args);
    assert!(out.status.success(), "runbook {args:?}: {}", support::stderr(&out));
    let root = std::fs::canonicalize(work.path()).unwrap();
    (support::stdout(&out), root, work)
}

#[test]
fn local_chart_and_values_paths_in_the_runbook_are_absolute_and_exist() {
    let (book, root, work) = runbook_from_relative_paths(&rules_dir().join("TA-HOOK-101/cluster.yaml"));
    let mut named = Vec::new();
    for line in sh_lines(&book) {
        // The command's own words: what bash would run, without redirections, pipes or
        // substitutions (split by a bash that runs nothing else).
        if line.contains("$(") {
            continue;
        }
        let command = [" > ", " | ", "; ", " && "].iter().fold(line.as_str(), |l, cut| l.split(cut).next().unwrap());
        for word in bash_words(command) {
            let word = word.split_once('=').map(|(_, v)| v.to_string()).filter(|v| v.starts_with('/')).unwrap_or(word);
            assert!(!word.starts_with("../") && !word.starts_with("./"), "a relative path in: {line}");
            let local = ["to", "from", "my values.yaml", "cluster.yaml"].iter().any(|n| word.ends_with(&format!("/{n}")));
            if local {
                let path = Path::new(&word);
                assert!(path.is_absolute() && path.exists(), "{word} (in {line}) is not an absolute path that exists");
                assert!(path.starts_with(&root) || path.starts_with(work.path()), "{word} is not the copy the run was given");
                named.push(word);
            }
        }
    }
    assert!(named.iter().any(|w| w.ends_with("/to")), "the upgrade names the chart: {named:?}\n{book}");
    assert!(named.iter().any(|w| w.ends_with("/my values.yaml")), "the upgrade names the values file: {named:?}\n{book}");
    // The header names the snapshot by its absolute path too.
    let header = book.lines().nth(2).unwrap();
    assert!(header.starts_with("Made from snapshot /") && header.contains("/cluster.yaml for release `kubeflow-system/"), "{header}");
}

/// The runbook a person follows at 2 a.m. (issue 21 §3): every copy goes to one directory set
/// once, no command runs twice (one Pod Security relabel for every hook, one copy of each read),
/// the relaxation is undone to the value the cluster had, what is done "if still stuck after the
/// upgrade" comes after the upgrade, and the header says what it was made from.
#[test]
fn backups_go_to_one_directory_and_no_step_runs_twice() {
    for fixture in ["TA-HOOK-101/cluster.yaml", "TA-RT-001/finalizer.yaml", "TA-RT-001/cluster.yaml"] {
        let snapshot = rules_dir().join(fixture);
        let (out, _home) = run_in(
            &rules_dir(),
            &["runbook", "--snapshot", snapshot.to_str().unwrap(), "--chart", "charts/to", "--from-chart", "charts/from"],
        );
        assert!(out.status.success(), "{fixture}: {}", support::stderr(&out));
        let book = support::stdout(&out);
        let lines = sh_lines(&book);
        let sets: Vec<&String> = lines.iter().filter(|l| l.starts_with("BACKUP_DIR=")).collect();
        assert_eq!(sets.len(), 1, "{fixture}: BACKUP_DIR is set once:\n{book}");
        assert_eq!(lines.iter().filter(|l| l.starts_with("mkdir ")).count(), 1, "{fixture}: one mkdir:\n{book}");
        assert!(!book.contains("trainer-backup/"), "{fixture}: a copy outside $BACKUP_DIR:\n{book}");
        for l in &lines {
            if let Some((_, target)) = l.rsplit_once(" > ") {
                assert!(target.starts_with("\"$BACKUP_DIR\"/") || target.starts_with("\"${BACKUP_DIR:?}\"/"), "{fixture}: {l}");
            }
        }
        let mut seen = std::collections::BTreeSet::new();
        for l in &lines {
            let read = l.rsplit_once(" > ").map(|(read, _)| read).unwrap_or(l);
            assert!(seen.insert(read.to_string()), "{fixture}: run twice: {l}\n{book}");
        }
        let at = |needle: &str| book.find(needle).unwrap_or_else(|| panic!("{fixture}: no {needle:?}:\n{book}"));
        assert!(book.lines().nth(2).unwrap().contains("by trainer-audit "), "{fixture}: header:\n{book}");
        if fixture.starts_with("TA-HOOK-101") {
            let relabel: Vec<&String> = lines.iter().filter(|l| l.contains("pod-security.kubernetes.io/enforce=baseline")).collect();
            assert_eq!(relabel.len(), 1, "{fixture}: one Pod Security relabel:\n{book}");
            let restore = &book[at("## After the last step: restore what was relaxed")..];
            assert!(
                restore.contains("kubectl label ns kubeflow-system pod-security.kubernetes.io/enforce=restricted --overwrite"),
                "{restore}"
            );
        }
        if fixture == "TA-RT-001/finalizer.yaml" {
            let upgrade = at("\n   helm upgrade ");
            let unstick = at("kubectl patch clustertrainingruntime torch-distributed --type=json");
            let verify = at("Verify before going on");
            assert!(upgrade < unstick && unstick < verify, "{fixture}: the finalizer fix belongs after the upgrade:\n{book}");
            assert!(book[..upgrade].contains("\n2. Upgrade:") && book.contains("\n3. After the upgrade:"), "{book}");
            // The copy TA-FLD-001 asks for is the Backups block's TrainJob copy: said, not repeated.
            assert!(book.contains("(Its command ran above, under Backups, as `$BACKUP_DIR/trainjobs.yaml`.)"), "{book}");
        }
    }
}

/// Verification fits the engine: an Argo CD install has no Helm release to ask about.
#[test]
fn an_argocd_runbook_verifies_with_argo_cd_not_helm() {
    let snapshot = Path::new(env!("CARGO_MANIFEST_DIR")).join("snapshots/argocd-2.2.1.yaml");
    let (out, _home) = run_in(&rules_dir(), &["runbook", "--snapshot", snapshot.to_str().unwrap(), "--chart", "charts/to"]);
    assert!(out.status.success(), "{}", support::stderr(&out));
    let book = support::stdout(&out);
    let lines = sh_lines(&book);
    assert!(!lines.iter().any(|l| l.starts_with("helm ")), "an Argo CD install runs no helm command:\n{book}");
    assert!(lines.iter().any(|l| l.contains("applications.argoproj.io")), "{book}");
}
