//! Every rule beside its fixture (ruff's layout): `tests/rules/<ID>/case.txt` names a command
//! line where the rule fires and one where it must stay quiet, run in that directory against
//! its tiny cluster snapshots and the small charts in `tests/rules/charts/` (2.2.0, 2.3.0,
//! 2.4.0 stand-ins of the Trainer chart). The findings the rule yields are pinned by one insta
//! snapshot per rule; `explain` must know the rule. No corpus needed. The fixtures are found in
//! `tests/rules/` when the test starts (one test per directory, named by its rule id), and a
//! directory without its rule or a rule without its directory fails `fixtures_and_rules_match`.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use support::{stderr, stdout};

fn rules_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/rules")
}

fn run_in(dir: &Path, args: &[&str]) -> std::process::Output {
    let home = tempfile::tempdir().unwrap();
    Command::new(env!("CARGO_BIN_EXE_trainer-audit"))
        .args(args)
        .current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("TRAINER_AUDIT_CACHE_DIR", home.path().join("cache"))
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// The findings of rule `id` from one `case.txt` command line (run with `--format json`).
fn findings(id: &str, line: &str) -> Vec<serde_json::Value> {
    let dir = rules_dir().join(id);
    let mut args: Vec<&str> = line.split_whitespace().collect();
    args.extend(["--format", "json"]);
    let out = run_in(&dir, &args);
    assert!(matches!(out.status.code(), Some(0 | 1)), "{id}: `{line}` failed:\n{}", stderr(&out));
    let report: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap_or_else(|e| panic!("{id}: {e}\n{}", stdout(&out)));
    for f in report["findings"].as_array().unwrap() {
        every_item_is_there(f);
    }
    report["findings"].as_array().unwrap().iter().filter(|f| f["id"] == id).cloned().collect()
}

/// A machine format carries every item (issue 31 §2): no evidence line stands for items left
/// out, and a message that names some of a list and says how many more has them all in its
/// evidence.
fn every_item_is_there(f: &serde_json::Value) {
    let evidence: Vec<&str> = f["evidence"].as_array().map(|e| e.iter().filter_map(|x| x.as_str()).collect()).unwrap_or_default();
    let left_out = regex::Regex::new(r"^(…\s*)?and \d+ more\b").unwrap();
    assert!(!evidence.iter().any(|e| left_out.is_match(e)), "{}: evidence cut short: {evidence:?}", f["id"]);
    let message = f["message"].as_str().unwrap_or_default();
    if let Some(c) = regex::Regex::new(r" and (\d+) more \(the evidence lists every one\)").unwrap().captures(message) {
        let more: usize = c[1].parse().unwrap();
        assert!(evidence.len() > more, "{}: the message leaves out {more}, the evidence has {}: {message}", f["id"], evidence.len());
    }
}

/// The `fires:` and `quiet:` command lines of a rule's `case.txt` (one or more of each: a rule
/// whose kind raises the severity has a case per severity, and a correction that narrows a rule
/// adds the case it no longer reports).
fn case(id: &str) -> (Vec<String>, Vec<String>) {
    let path = rules_dir().join(id).join("case.txt");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|_| panic!("rule {id} has no fixture: write {}", path.display()));
    let all = |key: &str| text.lines().filter_map(|l| l.strip_prefix(key)).map(|s| s.trim().to_string()).collect::<Vec<_>>();
    let (fires, quiet) = (all("fires:"), all("quiet:"));
    assert!(!fires.is_empty(), "{id}: case.txt has no `fires:` line");
    assert!(!quiet.is_empty(), "{id}: case.txt has no `quiet:` line");
    (fires, quiet)
}

/// The words a finding carries fit it: every placeholder filled, no empty command, no fix that
/// ends on a colon with nothing after it, no empty parentheses or stray punctuation.
fn words_fit(id: &str, f: &serde_json::Value) {
    let placeholder = regex::Regex::new(r"\{[a-z_]+\}").unwrap();
    for field in ["title", "message", "fix"] {
        let text = f[field].as_str().unwrap_or_default();
        assert!(!placeholder.is_match(text), "{id}: {field} keeps a placeholder: {text}");
        for bad in [" ()", " ,", ",,", ": ;", " :"] {
            assert!(!text.contains(bad), "{id}: {field} has {bad:?}: {text}");
        }
    }
    let fix = f["fix"].as_str().unwrap_or_default();
    assert!(!fix.trim_end().ends_with(':'), "{id}: the fix ends on a colon with nothing after it: {fix}");
    for c in f["commands"].as_array().into_iter().flatten() {
        assert!(!c.as_str().unwrap_or_default().trim().is_empty(), "{id}: an empty command in {fix}");
    }
}

/// One rule: it fires on each `fires:` case (findings pinned: the first as `<ID>`, the others as
/// `<ID>-2`, `<ID>-3`, …) and stays quiet on each `quiet:` case; its fires cases between them
/// select every variant the rule words (a test per variant), and every finding's words fit it.
fn rule_case(id: &str) {
    let (fires, quiet) = case(id);
    let mut variants_seen = std::collections::BTreeSet::new();
    for (i, fires) in fires.iter().enumerate() {
        let found = findings(id, fires);
        assert!(!found.is_empty(), "{id} does not fire on `{fires}`");
        for f in &found {
            words_fit(id, f);
            variants_seen.insert(f["variant"].as_str().unwrap_or("").to_string());
        }
        let text = serde_json::to_string_pretty(&found).unwrap().replace(&*rules_dir().to_string_lossy(), "$RULES");
        let name = if i == 0 { id.to_string() } else { format!("{id}-{}", i + 1) };
        insta::assert_snapshot!(name, text);
    }
    for quiet in &quiet {
        let quiet_found = findings(id, quiet);
        assert!(quiet_found.is_empty(), "{id} fires on its quiet case `{quiet}`: {quiet_found:?}");
    }
    let out = run_in(&rules_dir(), &["rules", "--format", "json"]);
    let rules: Vec<serde_json::Value> = serde_json::from_str(&stdout(&out)).unwrap();
    let declared: Vec<String> = rules
        .iter()
        .filter(|r| r["id"] == id)
        .flat_map(|r| r["variants"].as_object().map(|v| v.keys().cloned().collect::<Vec<_>>()).unwrap_or_default())
        .collect();
    for v in declared {
        assert!(
            variants_seen.contains(&v),
            "{id}: no fires case selects its variant {v:?} (seen: {variants_seen:?}): add one to tests/rules/{id}/case.txt"
        );
    }
    let explain = run_in(&rules_dir(), &["explain", id]);
    assert!(explain.status.success() && stdout(&explain).starts_with(id), "explain {id}: {}", stderr(&explain));
}

/// The fixture directories of `tests/rules/`: every entry but the charts the fixtures share.
fn fixture_ids() -> Vec<String> {
    let mut ids: Vec<String> = std::fs::read_dir(rules_dir())
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().unwrap().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| !SHARED.contains(&name.as_str()))
        .collect();
    ids.sort();
    ids
}

/// Directories of `tests/rules/` that are not one rule's fixture.
const SHARED: &[&str] = &["charts"];

/// A fixture directory for every rule the tool loads, and a loaded rule for every fixture
/// directory (a rule renamed or removed leaves none behind).
fn fixtures_and_rules_match() {
    let rules = trainer_audit::audit::rules::load(None).unwrap();
    let fixtures = fixture_ids();
    let mut problems = Vec::new();
    for id in &fixtures {
        if !rules.iter().any(|r| &r.id == id) {
            problems.push(format!(
                "tests/rules/{id}/ is the fixture of no rule (no rules/*.yaml entry has id {id}): rename the directory to its rule's id, or remove it"
            ));
        }
    }
    let mut ids: Vec<&str> = rules.iter().map(|r| r.id.as_str()).collect();
    ids.sort();
    ids.dedup();
    for id in ids {
        if !fixtures.iter().any(|f| f == id) {
            problems.push(format!(
                "rule {id} has no fixture: add tests/rules/{id}/case.txt with a `fires:` and a `quiet:` line (tests/rules/README.md)"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// docs/rules.md is what `cargo xtask rules-doc` writes: one line saying so, then
/// `trainer-audit rules --format markdown`.
fn docs_rules_md_is_current() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/rules.md");
    let doc = std::fs::read_to_string(&path).unwrap_or_default();
    let out = run_in(&rules_dir(), &["rules", "--format", "markdown"]);
    assert!(out.status.success(), "rules --format markdown: {}", stderr(&out));
    let (first, rest) = doc.split_once('\n').unwrap_or(("", ""));
    let current = first.starts_with("<!--") && first.contains("cargo xtask rules-doc") && rest == stdout(&out);
    assert!(current, "docs/rules.md is not what the rule files say (stale, or edited by hand): regenerate it with `cargo xtask rules-doc`");
}

/// Each rule's fixture is a test named by its id (`cargo test --test rules TA-NB-001`), beside
/// the checks of the rule set as a whole.
fn main() -> std::process::ExitCode {
    use libtest_mimic::{Arguments, Trial};
    let args = Arguments::from_args();
    let whole: [(&str, fn()); 4] = [
        ("fixtures_and_rules_match", fixtures_and_rules_match),
        ("docs_rules_md_is_current", docs_rules_md_is_current),
        ("every_error_rule_has_a_rehearsals_row", every_error_rule_has_a_rehearsals_row),
        ("no_shipped_quote_is_only_a_name", no_shipped_quote_is_only_a_name),
    ];
    let mut trials: Vec<Trial> = whole
        .into_iter()
        .map(|(name, check)| {
            Trial::test(name, move || {
                check();
                Ok(())
            })
        })
        .collect();
    trials.extend(fixture_ids().into_iter().map(|id| {
        Trial::test(id.clone(), move || {
            rule_case(&id);
            Ok(())
        })
    }));
    libtest_mimic::run(&args, trials).exit_code()
}

/// The ids of the table rows (first cell `TA-…`, before any aside) under a `## ` heading of
/// docs/rehearsals.md, up to the next heading of any level.
fn rehearsal_rows(doc: &str, heading: &str) -> std::collections::BTreeSet<String> {
    let Some(start) = doc.find(&format!("\n## {heading}\n")) else { panic!("docs/rehearsals.md has no section ## {heading}") };
    let section = &doc[start + 1..];
    let section = section[3..].find("\n#").map(|end| &section[..end + 3]).unwrap_or(section);
    // A first cell names one rule or several (`TA-SCH-004, TA-K8S-001`), then maybe an aside.
    section
        .lines()
        .filter_map(|l| l.strip_prefix("| "))
        .filter_map(|row| row.split('|').next())
        .flat_map(|cell| cell.split([',', ' ']).filter(|t| !t.is_empty()).take_while(|t| !t.starts_with('(')).collect::<Vec<_>>())
        .filter(|id| id.starts_with("TA-"))
        .map(String::from)
        .collect()
}

/// Issue 30 §3: every rule that can emit an error (its own severity, a variant's or one its kind
/// computes, as `rules` lists them) has a row in docs/rehearsals.md: observed on the real API
/// server and controllers (*Findings observed*), or one saying what would observe it and why
/// that cannot run here (*Error rules not observed here*) — and not both.
fn every_error_rule_has_a_rehearsals_row() {
    let doc = std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/rehearsals.md")).unwrap();
    let observed = rehearsal_rows(&doc, "Findings observed");
    let explained = rehearsal_rows(&doc, "Error rules not observed here");
    let rules = trainer_audit::audit::rules::load(None).unwrap();
    let mut ids: Vec<&str> = rules.iter().map(|r| r.id.as_str()).collect();
    ids.sort();
    ids.dedup();
    let mut missing = Vec::new();
    for id in ids {
        let entries: Vec<&trainer_audit::audit::rules::Rule> = rules.iter().filter(|r| r.id == id).collect();
        let error = trainer_audit::report::rules::severities(&entries).contains(&trainer_audit::audit::finding::Severity::Error);
        if error && !observed.contains(id) && !explained.contains(id) {
            missing.push(id.to_string());
        }
        assert!(!(observed.contains(id) && explained.contains(id)), "{id} is both observed and explained as not observed");
        if !error {
            assert!(!explained.contains(id), "{id} emits no error: it needs no row in *Error rules not observed here*");
        }
    }
    assert!(missing.is_empty(), "error rules without a row in docs/rehearsals.md: {missing:?}");
}

/// Every quote of the shipped rules and compatibility rows supports its claim beyond a name
/// (a directory's quote is an entry's name by design).
fn no_shipped_quote_is_only_a_name() {
    let mut cited: Vec<(String, std::collections::BTreeMap<String, String>)> = Vec::new();
    for (file, text) in trainer_audit::audit::rules::EMBEDDED {
        for r in trainer_audit::audit::rules::parse_rules(file, text).unwrap() {
            cited.push((format!("{} {}", file, r.id), r.quotes.clone()));
            for (name, v) in &r.variants {
                cited.push((format!("{file} {} variant {name}", r.id), v.quotes.clone()));
            }
            for (i, e) in r.expect.iter().enumerate() {
                cited.push((format!("{file} {} expect[{i}]", r.id), e.quotes.clone()));
            }
        }
    }
    let c = trainer_audit::audit::compat::embedded().unwrap();
    cited.extend(c.trainer.iter().map(|r| ("compat trainer".to_string(), r.quotes.clone())));
    cited.extend(c.jobset_features.iter().map(|r| ("compat jobset_features".to_string(), r.quotes.clone())));
    cited.extend(c.kueue.iter().map(|r| ("compat kueue".to_string(), r.quotes.clone())));
    cited.extend(c.helm.iter().map(|r| ("compat helm".to_string(), r.quotes.clone())));
    let named: Vec<String> = cited
        .iter()
        .flat_map(|(at, quotes)| {
            quotes
                .iter()
                .filter(|(k, _)| !trainer_audit::audit::quotes::names_directory(k))
                .filter_map(move |(k, q)| trainer_audit::audit::quotes::only_a_name(q).map(|why| format!("{at}: {k}: {q:?} is {why}")))
        })
        .collect();
    assert!(named.is_empty(), "quotes that are only a name (quote the line that supports the claim):\n{}", named.join("\n"));
}
