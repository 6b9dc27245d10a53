//! One vocabulary (issue #21): every subcommand's help shows how it is used, the retired rule
//! ids and flags still lead somewhere, and the errors a new user met named what was wrong.

mod support;

use std::path::Path;

use support::{files_in, run, run_with_stdin, stderr, stdout};

const SUBCOMMANDS: &[&str] = &[
    "versions",
    "pull",
    "render",
    "hooks",
    "diff",
    "status",
    "snapshot",
    "rbac",
    "check",
    "plan",
    "runbook",
    "rules",
    "explain",
    "migrate",
    "gitops",
    "schema",
    "completions",
    "man",
];

fn repo_file(path: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path).to_string_lossy().into_owned()
}

/// The lines of a help text's `Examples:` section.
fn examples(help: &str) -> Vec<&str> {
    help.lines().skip_while(|l| *l != "Examples:").skip(1).take_while(|l| l.starts_with("  ")).collect()
}

#[test]
fn every_subcommand_help_has_two_or_three_examples() {
    let home = tempfile::tempdir().unwrap();
    let listed = stdout(&run(home.path(), &["--help"]));
    let mut all = String::new();
    for sub in SUBCOMMANDS {
        assert!(listed.contains(&format!("  {sub} ")), "{sub} is not a subcommand any more: update SUBCOMMANDS\n{listed}");
        let out = run(home.path(), &[sub, "--help"]);
        assert!(out.status.success(), "{sub} --help: {}", stderr(&out));
        let help = stdout(&out);
        let examples = examples(&help);
        assert!((2..=3).contains(&examples.len()), "{sub} --help has {} examples:\n{help}", examples.len());
        assert!(examples.iter().all(|e| e.trim_start().starts_with(&format!("trainer-audit {sub}"))), "{sub}: {examples:?}");
        all.push_str(&format!("===== {sub} --help\n{help}\n"));
    }
    // Every subcommand the top-level help lists is covered.
    let commands = listed.lines().skip_while(|l| *l != "Commands:").skip(1).take_while(|l| l.starts_with("  "));
    // (Wrapped descriptions continue on lines indented further.)
    for line in commands.filter(|l| !l.starts_with("   ")) {
        let name = line.split_whitespace().next().unwrap_or("");
        assert!(name == "help" || SUBCOMMANDS.contains(&name), "subcommand {name} has no help test");
    }
    insta::assert_snapshot!("help", all);
}

#[test]
fn a_directory_that_is_not_a_chart_is_named() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("project");
    std::fs::create_dir_all(dir.join("bin2")).unwrap();
    // What a build directory holds: a file over the chart loader's 5 MiB limit.
    std::fs::write(dir.join("bin2/trainer-audit"), vec![0u8; 6 * 1024 * 1024]).unwrap();
    let out = run(home.path(), &["hooks", &dir.to_string_lossy()]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("has no Chart.yaml, so it is not a chart directory"), "{err}");
    assert!(!err.contains("maximum file size"), "{err}");
}

#[test]
fn an_empty_snapshot_is_refused_by_status_and_check() {
    let home = tempfile::tempdir().unwrap();
    let empty = home.path().join("empty.yaml");
    std::fs::write(&empty, "apiVersion: v1\nkind: List\nitems: []\n").unwrap();
    for args in
        [vec!["status", "--snapshot", empty.to_str().unwrap()], vec!["check", "--snapshot", empty.to_str().unwrap(), "--chart", "x"]]
    {
        let out = run(home.path(), &args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stdout(&out));
        assert!(stderr(&out).contains("holds 0 objects: it is not a capture of a cluster"), "{args:?}: {}", stderr(&out));
        assert!(stdout(&out).is_empty(), "{args:?}: {}", stdout(&out));
    }
}

#[test]
fn output_files_and_directories_are_told_apart() {
    let home = tempfile::tempdir().unwrap();
    // `pull --output-dir` onto a file: said before anything is fetched.
    let file = home.path().join("existing.tgz");
    std::fs::write(&file, "x").unwrap();
    let out = run(home.path(), &["pull", "oci://127.0.0.1:1/charts/tiny", "--version", "1.0.0", "--output-dir", &file.to_string_lossy()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("is a file, not a directory"), "{}", stderr(&out));
    assert_eq!(std::fs::read(&file).unwrap(), b"x");
    // `-o` into a missing directory: the directory is named (not tempfile's `.tmp-…` name) and
    // not created.
    let target = home.path().join("missing/out.yaml");
    let snapshot = repo_file("snapshots/helm-2.2.1.yaml");
    let out = run(home.path(), &["snapshot", "--snapshot", &snapshot, "-o", &target.to_string_lossy()]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains(&format!("cannot write {}", target.display())) && err.contains("does not exist (create it first)"), "{err}");
    assert!(!err.contains(".tmp-"), "{err}");
    assert!(!home.path().join("missing").exists());
    // `-o` onto a directory.
    let out = run(home.path(), &["snapshot", "--snapshot", &snapshot, "-o", &home.path().to_string_lossy()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("it is a directory; name a file"), "{}", stderr(&out));
}

#[test]
fn a_missing_kubeconfig_is_named_once() {
    let home = tempfile::tempdir().unwrap();
    let out = run(home.path(), &["status"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    let expected = format!("the kubeconfig {:?} (the default) does not exist", home.path().join(".kube/config").display().to_string());
    assert!(err.contains(&expected), "{err}");
    assert!(!err.contains("'\""), "doubled quotes: {err}");
    assert!(files_in(home.path()).is_empty() || !home.path().join(".kube").exists());
}

#[test]
fn retired_spellings_still_work_and_say_so() {
    let home = tempfile::tempdir().unwrap();
    let chart = repo_file("tests/rules/charts/to");
    let new = run(home.path(), &["hooks", &chart, "--engine", "argocd", "--format", "json"]);
    let old = run(home.path(), &["hooks", &chart, "--gitops", "argocd", "--format", "json"]);
    assert!(new.status.success(), "{}", stderr(&new));
    assert_eq!(stdout(&new), stdout(&old), "--gitops is --engine");
    assert!(stderr(&old).contains("--gitops is deprecated: use --engine argocd"), "{}", stderr(&old));
    // The GitOps engine is spelt `argocd` in JSON too (was `argo-cd` for the install method).
    let snapshot = repo_file("snapshots/argocd-2.2.1.yaml");
    let status = run(home.path(), &["status", "--snapshot", &snapshot, "--format", "json"]);
    let doc: serde_json::Value = serde_json::from_str(&stdout(&status)).unwrap();
    assert_eq!(doc["install"]["method"], "argocd", "{doc}");
    // `hooks -q` prints the verdict line only, as `check -q` words it (was the count line).
    let quiet = run_with_stdin(home.path(), &["hooks", &chart, "--engine", "argocd", "-q"], None);
    let text = stdout(&quiet);
    assert_eq!(text.lines().count(), 1, "{text}");
    let json: serde_json::Value = serde_json::from_str(&stdout(&new)).unwrap();
    let count = |level: &str| json["findings"].as_array().unwrap().iter().filter(|f| f["severity"] == level).count();
    let plural = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    let counts = format!("{}, {}", plural(count("error"), "error"), plural(count("warning"), "warning"));
    // At error, check's default; a blocked review that gates nothing says so (issue 31 §3).
    let verdict =
        if count("error") > 0 { format!("blocked: {counts} (exit 0: not a gate without --fail-on)") } else { format!("ready: {counts}") };
    assert_eq!(text, format!("{verdict}\n"), "at error, check's default");
    assert_eq!(quiet.status.code(), Some(0), "no --fail-on: no gate");
    let gated = run_with_stdin(home.path(), &["hooks", &chart, "--engine", "argocd", "-q", "--fail-on", "warning"], None);
    let blocked = count("error") + count("warning") > 0;
    assert_eq!(stdout(&gated), format!("{}: {counts}\n", if blocked { "blocked" } else { "ready" }));
    assert_eq!(gated.status.code(), Some(i32::from(blocked)), "the line and the exit code agree");
}

#[test]
fn plan_fails_on_when_asked_and_only_then() {
    let home = tempfile::tempdir().unwrap();
    let (cluster, from, to) =
        (repo_file("tests/rules/TA-HOOK-101/cluster.yaml"), repo_file("tests/rules/charts/from"), repo_file("tests/rules/charts/to"));
    let args = ["plan", "--snapshot", &cluster, "--chart", &to, "--from-chart", &from];
    let plain = run(home.path(), &args);
    assert_eq!(plain.status.code(), Some(0), "a plan is not a gate by default: {}", stderr(&plain));
    assert!(stdout(&plain).contains("TA-HOOK-101"), "{}", stdout(&plain));
    let gated = run(home.path(), &[&args[..], &["--fail-on", "error"]].concat());
    assert_eq!(gated.status.code(), Some(1), "{}", stderr(&gated));
    // -q prints the verdict line and gates as check -q does.
    let quiet = run(home.path(), &[&args[..], &["--fail-on", "error", "-q"]].concat());
    assert_eq!(quiet.status.code(), Some(1), "{}", stderr(&quiet));
    assert!(stdout(&quiet).contains(": blocked: ") && stdout(&quiet).lines().count() == 1, "{}", stdout(&quiet));
}

#[test]
fn every_report_offers_markdown_and_findings_offer_sarif() {
    let home = tempfile::tempdir().unwrap();
    let neighbours = repo_file("snapshots/neighbours-2.1.0.yaml");
    let md = run(home.path(), &["status", "--snapshot", &neighbours, "--format", "markdown"]);
    assert!(md.status.success(), "{}", stderr(&md));
    assert!(stdout(&md).starts_with("## Trainer status\n\n```text\nKubernetes "), "{}", stdout(&md));
    // The CRD columns stay aligned when a CRD serves two versions (`v1beta1,v1beta2`).
    let text = stdout(&run(home.path(), &["status", "--snapshot", &neighbours]));
    let crds: Vec<&str> = text.lines().skip_while(|l| *l != "CRDs").skip(1).take_while(|l| l.starts_with("  ")).collect();
    let at = |l: &str, word: &str| l.find(word).unwrap();
    assert!(crds.len() > 3, "{text}");
    assert!(crds.iter().all(|l| at(l, " storage ") == at(crds[0], " storage ")), "{text}");
    let (cluster, from, to) =
        (repo_file("tests/rules/TA-HOOK-101/cluster.yaml"), repo_file("tests/rules/charts/from"), repo_file("tests/rules/charts/to"));
    let sarif = run(home.path(), &["plan", "--snapshot", &cluster, "--chart", &to, "--from-chart", &from, "--format", "sarif"]);
    assert!(sarif.status.success(), "{}", stderr(&sarif));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&sarif)).unwrap();
    assert_eq!(doc["version"], "2.1.0");
    assert!(doc["runs"][0]["results"].as_array().unwrap().iter().any(|r| r["ruleId"] == "TA-HOOK-101"), "{doc}");
    let chart = repo_file("tests/rules/charts/to");
    let hooks = run(home.path(), &["hooks", &chart, "--format", "markdown"]);
    assert!(stdout(&hooks).starts_with("## Hooks in `") && stdout(&hooks).contains("| Severity | Rule |"), "{}", stdout(&hooks));
}

/// No text says `check(s)` or `TrainJob(s)`: counts take the noun in the number they need
/// (`1 list of the cluster read was refused`). The one exception is Helm's own error wording,
/// which `render` repeats word for word.
#[test]
fn texts_use_real_singulars_and_plurals() {
    let lazy = regex::Regex::new(r#""[^"]*[A-Za-z]\(s\)[^"]*""#).unwrap();
    let mut found = Vec::new();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for entry in walkdir::WalkDir::new(root.join("src")).into_iter().chain(walkdir::WalkDir::new(root.join("crates"))) {
        let entry = entry.unwrap();
        if entry.path().extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(entry.path()).unwrap();
        for (n, line) in text.lines().enumerate() {
            let helm = line.contains("values don't meet the specifications of the schema(s) in the following chart(s)");
            if !line.trim_start().starts_with("//") && lazy.is_match(line) && !helm {
                found.push(format!("{}:{}: {}", entry.path().display(), n + 1, line.trim()));
            }
        }
    }
    assert!(found.is_empty(), "lazy plurals:\n{}", found.join("\n"));
    // One of them as the user reads it: a cluster read with one refused list.
    let home = tempfile::tempdir().unwrap();
    let (cluster, from, to) =
        (repo_file("tests/rules/TA-READ-001/cluster.yaml"), repo_file("tests/rules/charts/from"), repo_file("tests/rules/charts/to"));
    let out = run(home.path(), &["check", "--snapshot", &cluster, "--chart", &to, "--from-chart", &from, "--format", "json"]);
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap_or_else(|e| panic!("{e}: {}", stderr(&out)));
    let read = doc["findings"].as_array().unwrap().iter().find(|f| f["id"] == "TA-READ-001").expect("TA-READ-001 fires");
    assert!(read["message"].as_str().unwrap().starts_with("1 list of the cluster read was refused: "), "{read}");
}
