//! Every rule beside its fixture (ruff's layout): `tests/rules/<ID>/case.txt` names a command
//! line where the rule fires and one where it must stay quiet, run in that directory against
//! its tiny cluster snapshots and the small charts in `tests/rules/charts/` (2.2.0, 2.3.0,
//! 2.4.0 stand-ins of the Trainer chart). The findings the rule yields are pinned by one insta
//! snapshot per rule; `explain` must know the rule. No corpus needed.

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

macro_rules! rule_tests {
    ($($test:ident: $id:literal;)*) => {
        $(
            #[test]
            fn $test() {
                rule_case($id);
            }
        )*

        /// Every loaded rule has a test here (and so a fixture).
        #[test]
        fn every_rule_has_a_fixture() {
            let tested = [$($id),*];
            let out = run_in(&rules_dir(), &["rules", "--format", "json"]);
            let rules: Vec<serde_json::Value> = serde_json::from_str(&stdout(&out)).unwrap();
            for rule in &rules {
                let id = rule["id"].as_str().unwrap();
                assert!(tested.contains(&id), "rule {id} has no fixture test: add tests/rules/{id}/case.txt and a line to rule_tests!");
            }
        }
    };
}

rule_tests! {
    gate_001: "TA-GATE-001";
    dir_001: "TA-DIR-001";
    k8s_001: "TA-K8S-001";
    k8s_002: "TA-K8S-002";
    k8s_003: "TA-K8S-003";
    k8s_004: "TA-K8S-004";
    read_001: "TA-READ-001";
    read_002: "TA-READ-002";
    rel_001: "TA-REL-001";
    rel_002: "TA-REL-002";
    rel_003: "TA-REL-003";
    rel_004: "TA-REL-004";
    rel_005: "TA-REL-005";
    own_001: "TA-OWN-001";
    own_002: "TA-OWN-002";
    own_003: "TA-OWN-003";
    imm_001: "TA-IMM-001";
    fld_001: "TA-FLD-001";
    sch_001: "TA-SCH-001";
    sch_002: "TA-SCH-002";
    sch_003: "TA-SCH-003";
    sch_004: "TA-SCH-004";
    sch_005: "TA-SCH-005";
    mig_001: "TA-MIG-001";
    mig_002: "TA-MIG-002";
    mig_003: "TA-MIG-003";
    mig_004: "TA-MIG-004";
    crd_010: "TA-CRD-010";
    crd_011: "TA-CRD-011";
    crd_012: "TA-CRD-012";
    rt_001: "TA-RT-001";
    rt_002: "TA-RT-002";
    rt_003: "TA-RT-003";
    rt_004: "TA-RT-004";
    rt_005: "TA-RT-005";
    wh_001: "TA-WH-001";
    hook_002: "TA-HOOK-002";
    hook_003: "TA-HOOK-003";
    hook_005: "TA-HOOK-005";
    hook_006: "TA-HOOK-006";
    hook_007: "TA-HOOK-007";
    hook_009: "TA-HOOK-009";
    hook_101: "TA-HOOK-101";
    hook_102: "TA-HOOK-102";
    hook_103: "TA-HOOK-103";
    hook_104: "TA-HOOK-104";
    val_001: "TA-VAL-001";
    val_002: "TA-VAL-002";
    cfg_001: "TA-CFG-001";
    leg_001: "TA-LEG-001";
    leg_002: "TA-LEG-002";
    nb_001: "TA-NB-001";
    nb_002: "TA-NB-002";
    nb_003: "TA-NB-003";
    nb_004: "TA-NB-004";
    nb_005: "TA-NB-005";
    nb_006: "TA-NB-006";
    nb_007: "TA-NB-007";
    nb_008: "TA-NB-008";
    nb_009: "TA-NB-009";
    nb_010: "TA-NB-010";
    ns_001: "TA-NS-001";
    git_001: "TA-GIT-001";
    git_002: "TA-GIT-002";
    git_003: "TA-GIT-003";
    git_004: "TA-GIT-004";
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
#[test]
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
#[test]
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
