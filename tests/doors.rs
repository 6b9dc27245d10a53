//! The formats other tools read (issue 23), on the scenario snapshots and the project's fixture
//! charts: every JSON report and every committed JSON snapshot validated against its published
//! JSON Schema; the HTML pages parsed as a browser parses them (every cluster and finding there,
//! nothing loaded from the network, a copy button on every command); the OpenMetrics text parsed
//! by a strict parser of the exposition format; GitHub workflow commands and step summaries.

mod support;

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value as Json;
use support::{run, snapshot, stand_in_chart as fixture, stderr, stdout};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `check` of the helm-2.2.1 scenario against the fixture charts, and more arguments.
fn check(home: &Path, extra: &[&str]) -> Output {
    let (s, to, from) = (snapshot("helm-2.2.1"), fixture("to"), fixture("from"));
    let mut args = vec!["check", "--snapshot", &s, "--chart", &to, "--from-chart", &from];
    args.extend_from_slice(extra);
    run(home, &args)
}

fn schema_of(report: &str) -> Json {
    let home = tempfile::tempdir().unwrap();
    let out = run(home.path(), &["schema", report]);
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_str(&stdout(&out)).unwrap()
}

/// Validates `doc` against the schema `schema REPORT` prints, naming every violation.
fn assert_valid(report: &str, doc: &Json, what: &str) {
    let schema = schema_of(report);
    let validator = jsonschema::validator_for(&schema).unwrap_or_else(|e| panic!("{report}: the schema does not compile: {e}"));
    let errors: Vec<String> = validator.iter_errors(doc).map(|e| format!("{} at {}", e, e.instance_path())).collect();
    assert!(errors.is_empty(), "{what} is not a valid {report} report:\n{}", errors.join("\n"));
}

fn json(out: &Output) -> Json {
    serde_json::from_str(&stdout(out)).unwrap_or_else(|e| panic!("{e}: {}\n{}", stdout(out), stderr(out)))
}

#[test]
fn every_json_report_validates_against_its_schema_and_carries_its_version() {
    let home = tempfile::tempdir().unwrap();
    let out = check(home.path(), &["--format", "json"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let doc = json(&out);
    assert_eq!(doc.as_object().unwrap().keys().next().map(String::as_str), Some("schemaVersion"));
    assert_eq!(doc["schemaVersion"], "1.1");
    assert!(!doc["findings"].as_array().unwrap().is_empty());
    assert_valid("check", &doc, "check --format json");

    let (s, to, from) = (snapshot("helm-2.2.1"), fixture("to"), fixture("from"));
    let out = run(home.path(), &["plan", "--snapshot", &s, "--chart", &to, "--from-chart", &from, "--format", "json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_valid("plan", &json(&out), "plan --format json");

    for scenario in ["helm-2.1.0", "helm-2.2.1", "argocd-2.2.1", "kustomize-2.2.0", "neighbours-2.1.0"] {
        let out = run(home.path(), &["status", "--snapshot", &snapshot(scenario), "--format", "json"]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert_valid("status", &json(&out), &format!("status of {scenario}"));
    }

    let out = run(home.path(), &["hooks", &to, "--format", "json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_valid("hooks", &json(&out), "hooks --format json");
    let out = run(home.path(), &["diff", &from, &to, "--format", "json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_valid("diff", &json(&out), "diff --format json");

    // A fleet: one blocked, one ready, one that cannot be read; each line valid, and its
    // embedded report too.
    let missing = home.path().join("missing.yaml").to_string_lossy().into_owned();
    for command in ["check", "plan", "status"] {
        let (a, b) = (snapshot("helm-2.2.1"), snapshot("helm-2.3.0"));
        let mut args = vec![command, "--snapshot", &a, "--snapshot", &b, "--snapshot", &missing, "--format", "jsonl"];
        if command != "status" {
            args.extend(["--chart", &to, "--from", "2.2.1"]);
        }
        let out = run(home.path(), &args);
        assert_eq!(out.status.code(), Some(2), "{command}: {}", stderr(&out));
        let lines: Vec<&str> = std::str::from_utf8(&out.stdout).unwrap().lines().collect();
        assert_eq!(lines.len(), 3, "{command}: {}", stdout(&out));
        for line in lines {
            let doc: Json = serde_json::from_str(line).unwrap();
            assert_eq!(doc["schemaVersion"], "1.1");
            assert_valid("fleet", &doc, &format!("{command} --format jsonl: {line}"));
        }
    }
}

#[test]
fn a_document_that_breaks_the_contract_is_refused() {
    // The validation above can fail: a check report missing a key, with a wrong severity, or
    // without its version is refused.
    let home = tempfile::tempdir().unwrap();
    let doc = json(&check(home.path(), &["--format", "json"]));
    for (why, broken) in [
        ("no findings", {
            let mut d = doc.clone();
            d.as_object_mut().unwrap().remove("findings");
            d
        }),
        ("a severity out of the set", {
            let mut d = doc.clone();
            d["findings"][0]["severity"] = "fatal".into();
            d
        }),
        ("no schemaVersion", {
            let mut d = doc.clone();
            d.as_object_mut().unwrap().remove("schemaVersion");
            d
        }),
    ] {
        let validator = jsonschema::validator_for(&schema_of("check")).unwrap();
        assert!(!validator.is_valid(&broken), "{why} was accepted");
    }
}

/// The JSON snapshots the other tests pin (`tests/snapshots/*.snap` whose body is JSON), each
/// validated against the schema of the command that printed it: reports as reports, lists of
/// findings against the findings' definition. SARIF has its own schema and is left out. A
/// snapshot made from the library's value (not the command's output) has no `schemaVersion`, the
/// stamp the command adds: it is validated with the stamp added.
#[test]
fn every_committed_json_snapshot_validates_against_its_schema() {
    let dir = root().join("tests/snapshots");
    let mut checked = 0;
    let mut names: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    names.sort();
    for path in names {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&path).unwrap();
        // insta's header: `---` … `---`, then the body.
        let Some(body) = text.splitn(3, "---\n").nth(2) else { continue };
        let Ok(mut doc) = serde_json::from_str::<Json>(body) else { continue };
        if doc.get("$schema").is_some_and(|s| s.as_str().is_some_and(|s| s.contains("sarif"))) {
            continue;
        }
        if doc.is_array() {
            let mut schema = schema_of("check");
            let object = schema.as_object_mut().unwrap();
            for key in ["properties", "required", "title", "description"] {
                object.remove(key);
            }
            object.insert("type".into(), "array".into());
            object.insert("items".into(), serde_json::json!({"$ref": "#/$defs/finding"}));
            let validator = jsonschema::validator_for(&schema).unwrap();
            let errors: Vec<String> = validator.iter_errors(&doc).map(|e| format!("{e} at {}", e.instance_path())).collect();
            assert!(errors.is_empty(), "{name}: not a list of findings:\n{}", errors.join("\n"));
            checked += 1;
            continue;
        }
        let report = if name.starts_with("gitops_review__") {
            "gitops"
        } else if name.contains("__diff_") {
            "diff"
        } else if name.contains("__hooks_") {
            "hooks"
        } else if name.starts_with("check__check_") {
            "check"
        } else if name.starts_with("check__plan_") {
            "plan"
        } else {
            panic!("{name}: a JSON snapshot of a report this test does not know: add it here")
        };
        if doc.get("schemaVersion").is_none() {
            let stamped = trainer_audit::report::json_schema::stamped(trainer_audit::report::json_schema::Report::Check, &doc).unwrap();
            doc = stamped;
        }
        assert_valid(report, &doc, &name);
        checked += 1;
    }
    assert!(checked >= 60, "only {checked} JSON snapshots found in {}", dir.display());
}

fn parse_html(text: &str) -> scraper::Html {
    let doc = scraper::Html::parse_document(text);
    assert!(doc.errors.is_empty(), "the HTML has parse errors: {:?}", doc.errors);
    doc
}

fn select<'a>(doc: &'a scraper::Html, css: &str) -> Vec<scraper::ElementRef<'a>> {
    doc.select(&scraper::Selector::parse(css).unwrap()).collect()
}

/// Nothing on the page is fetched: no element with `src`, no stylesheet or preload link, no
/// `url(` or `@import` in the style, no `<object>`, `<embed>`, `<iframe>` or `<base>`.
fn assert_offline(doc: &scraper::Html, text: &str) {
    assert!(select(doc, "[src], link, object, embed, iframe, base, [srcset], [poster]").is_empty(), "something is loaded");
    for style in select(doc, "style") {
        let css: String = style.text().collect();
        assert!(!css.contains("url(") && !css.contains("@import"), "the style loads something");
    }
    for script in select(doc, "script") {
        let js: String = script.text().collect();
        assert!(!js.contains("fetch(") && !js.contains("XMLHttpRequest") && !js.contains("import("), "the script loads something");
    }
    assert!(!text.contains("//fonts.googleapis") && !text.contains("@font-face"), "a web font is named");
}

/// Every finding of `report` (check JSON) is on the page under its cluster's section.
fn assert_findings_shown(doc: &scraper::Html, cluster: &str, report: &Json) {
    let sections: Vec<_> = select(doc, "section.cluster").into_iter().filter(|s| s.value().attr("data-cluster") == Some(cluster)).collect();
    assert_eq!(sections.len(), 1, "the cluster {cluster} has no section");
    let section = sections[0];
    let shown: Vec<(String, String)> = section
        .select(&scraper::Selector::parse("div.finding").unwrap())
        .map(|f| {
            let subject: String = f.select(&scraper::Selector::parse(".subject").unwrap()).flat_map(|s| s.text()).collect();
            (f.value().attr("data-rule").unwrap_or("").to_string(), subject)
        })
        .collect();
    let findings = report["findings"].as_array().unwrap();
    assert_eq!(shown.len(), findings.len(), "{cluster}: {shown:?}");
    for f in findings {
        let key = (f["id"].as_str().unwrap().to_string(), f["subject"].as_str().unwrap().to_string());
        assert!(shown.contains(&key), "{cluster}: {key:?} is not on the page");
    }
    // Findings come grouped: under each severity, one <details> per rule.
    let rules: std::collections::BTreeSet<(&str, &str)> =
        findings.iter().map(|f| (f["severity"].as_str().unwrap(), f["id"].as_str().unwrap())).collect();
    assert_eq!(section.select(&scraper::Selector::parse("details.rule").unwrap()).count(), rules.len());
}

fn assert_copyable(doc: &scraper::Html) {
    let blocks = select(doc, "pre");
    assert!(!blocks.is_empty());
    for pre in blocks {
        let parent = scraper::ElementRef::wrap(pre.parent().unwrap()).unwrap();
        assert_eq!(parent.value().attr("class"), Some("cmd"));
        assert_eq!(parent.select(&scraper::Selector::parse("button.copy").unwrap()).count(), 1, "a command block without a copy button");
    }
}

#[test]
fn the_check_page_holds_every_finding_offline_with_copyable_commands() {
    let home = tempfile::tempdir().unwrap();
    let report = json(&check(home.path(), &["--format", "json"]));
    let page = home.path().join("check.html");
    let out = check(home.path(), &["--format", "html", "-o", &page.to_string_lossy()]);
    assert_eq!(out.status.code(), Some(1), "the gate's exit code stays: {}", stderr(&out));
    assert!(stdout(&out).is_empty());
    let text = std::fs::read_to_string(&page).unwrap();
    let doc = parse_html(&text);
    assert_offline(&doc, &text);
    assert_findings_shown(&doc, "helm-2.2.1", &report);
    assert_copyable(&doc);
    // One cluster gets the fleet page's summary table, its one row and its section badged alike.
    assert_eq!(select(&doc, "table.summary tbody tr").len(), 1);
    let badges: Vec<_> = select(&doc, ".badge").into_iter().map(|b| b.value().attr("data-verdict").unwrap().to_string()).collect();
    assert_eq!(badges, ["blocked", "blocked"]);
    // Long commands wrap instead of running off the page.
    assert!(text.contains("white-space:pre-wrap"), "{text}");
    // It ends with the runbook command for this cluster.
    let last_block = select(&doc, "pre").last().map(|p| p.text().collect::<String>()).unwrap_or_default();
    assert!(last_block.starts_with("trainer-audit runbook ") && last_block.ends_with("-o runbook.md"), "{last_block}");
    // Same input, same bytes.
    let again = check(home.path(), &["--format", "html"]);
    assert_eq!(stdout(&again), text);
}

#[test]
fn the_fleet_page_has_a_badge_and_a_section_per_cluster() {
    let home = tempfile::tempdir().unwrap();
    let (a, b, to) = (snapshot("helm-2.2.1"), snapshot("helm-2.3.0"), fixture("to"));
    let missing = home.path().join("gone.yaml").to_string_lossy().into_owned();
    let fleet = |format: &str| {
        run(
            home.path(),
            &["check", "--snapshot", &a, "--snapshot", &b, "--snapshot", &missing, "--chart", &to, "--from", "2.2.1", "--format", format],
        )
    };
    let lines = fleet("jsonl");
    let docs: Vec<Json> = stdout(&lines).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let out = fleet("html");
    assert_eq!(out.status.code(), Some(2), "a cluster that cannot be read fails the fleet: {}", stderr(&out));
    let text = stdout(&out);
    let doc = parse_html(&text);
    assert_offline(&doc, &text);
    let rows = select(&doc, "table.summary tbody tr");
    assert_eq!(rows.len(), 3);
    for (row, line) in rows.iter().zip(&docs) {
        let cluster = line["cluster"].as_str().unwrap();
        let cells: Vec<String> = row.select(&scraper::Selector::parse("td").unwrap()).map(|c| c.text().collect()).collect();
        assert_eq!(cells[0], cluster);
        assert_eq!(cells[6], line["verdict"].as_str().unwrap(), "{cluster}");
        match line["report"].is_null() {
            false => assert_findings_shown(&doc, cluster, &line["report"]),
            true => {
                let failure = select(&doc, "p.failure").into_iter().map(|p| p.text().collect::<String>()).collect::<Vec<_>>().join("\n");
                assert!(failure.contains(line["failure"].as_str().unwrap()), "{failure}");
            }
        }
    }
    assert_copyable(&doc);
}

#[test]
fn the_runbook_page_is_the_runbook_with_a_checklist() {
    let home = tempfile::tempdir().unwrap();
    let (s, to, from) = (snapshot("helm-2.2.1"), fixture("to"), fixture("from"));
    let args = |format: &'static str| vec!["runbook", "--snapshot", &s, "--chart", &to, "--from-chart", &from, "--format", format];
    let markdown = stdout(&run(home.path(), &args("markdown")));
    let out = run(home.path(), &args("html"));
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let doc = parse_html(&text);
    assert_offline(&doc, &text);
    assert_copyable(&doc);
    let steps = select(&doc, "li.step input[type=checkbox]");
    let numbered = markdown
        .lines()
        .filter(|l| l.split_once(". ").is_some_and(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit())))
        .count();
    assert_eq!(steps.len(), numbered, "every numbered step of the runbook is a checklist item");
    // Every command the Markdown runbook holds is in a block on the page, as it is.
    let code: String = select(&doc, "pre code").into_iter().map(|c| c.text().collect::<String>() + "\n").collect();
    let mut in_block = false;
    for line in markdown.lines() {
        let t = line.trim();
        if t.starts_with("```") {
            in_block = !in_block;
        } else if in_block {
            assert!(code.lines().any(|l| l.trim() == t), "{t} is not in a command block");
        }
    }
}

#[test]
fn openmetrics_parses_and_agrees_with_the_json_lines() {
    let home = tempfile::tempdir().unwrap();
    let (a, b, to) = (snapshot("helm-2.2.1"), snapshot("helm-2.3.0"), fixture("to"));
    let missing = home.path().join("gone.yaml").to_string_lossy().into_owned();
    let fleet = |format: &str| {
        run(
            home.path(),
            &["check", "--snapshot", &a, "--snapshot", &b, "--snapshot", &missing, "--chart", &to, "--from", "2.2.1", "--format", format],
        )
    };
    let docs: Vec<Json> = stdout(&fleet("jsonl")).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let out = fleet("openmetrics");
    assert_eq!(out.status.code(), Some(2));
    let families = testkit::openmetrics::parse(&stdout(&out)).unwrap_or_else(|e| panic!("{e}\n{}", stdout(&out)));
    let family = |name: &str| families.iter().find(|f| f.name == name).unwrap_or_else(|| panic!("no {name}"));
    let value = |name: &str, labels: &[(&str, &str)]| {
        family(name).samples.iter().find(|s| labels.iter().all(|(k, v)| s.labels.get(*k).map(String::as_str) == Some(*v))).map(|s| s.value)
    };
    for d in &docs {
        let cluster = d["cluster"].as_str().unwrap();
        for v in ["ready", "blocked", "failed"] {
            let expected = if d["verdict"] == v { 1.0 } else { 0.0 };
            assert_eq!(value("trainer_audit_cluster_verdict", &[("cluster", cluster), ("verdict", v)]), Some(expected), "{cluster} {v}");
        }
        assert_eq!(value("trainer_audit_cluster_exit_code", &[("cluster", cluster)]), d["exit_code"].as_f64());
        if d["report"].is_null() {
            assert_eq!(value("trainer_audit_findings", &[("cluster", cluster)]), None, "a failed cluster counts nothing");
            continue;
        }
        let findings = d["report"]["findings"].as_array().unwrap();
        for s in ["error", "warning", "info"] {
            let n = findings.iter().filter(|f| f["severity"] == s).count() as f64;
            assert_eq!(value("trainer_audit_findings", &[("cluster", cluster), ("severity", s)]), Some(n));
        }
        let by_rule: f64 =
            family("trainer_audit_rule_findings").samples.iter().filter(|s| s.labels["cluster"] == cluster).map(|s| s.value).sum();
        assert_eq!(by_rule, findings.len() as f64);
        let info = [("cluster", cluster), ("installed", d["installed"].as_str().unwrap()), ("target", d["target"].as_str().unwrap())];
        assert_eq!(value("trainer_audit_cluster_info", &info), Some(1.0));
        // The scenario snapshots were taken at 2026-11-30T09:00:00Z.
        assert_eq!(value("trainer_audit_read_timestamp_seconds", &[("cluster", cluster)]), Some(1_796_029_200.0));
    }
    // One cluster, to a file the collector may read.
    let file = home.path().join("trainer_audit.prom");
    let out = check(home.path(), &["--format", "openmetrics", "-o", &file.to_string_lossy()]);
    assert_eq!(out.status.code(), Some(1));
    let text = std::fs::read_to_string(&file).unwrap();
    testkit::openmetrics::parse(&text).unwrap();
    #[cfg(unix)]
    assert_eq!(std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&file).unwrap().permissions()) & 0o777, 0o644);
}

#[test]
fn github_workflow_commands_one_per_rule_at_a_file_then_the_verdict() {
    let home = tempfile::tempdir().unwrap();
    let report = json(&check(home.path(), &["--format", "json"]));
    let out = check(home.path(), &["--format", "github"]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    let findings = report["findings"].as_array().unwrap();
    // One annotation per rule (and severity), naming every subject of it, with its fix once.
    let mut rules: Vec<(&str, &str)> = Vec::new();
    for f in findings {
        let key = (f["id"].as_str().unwrap(), f["severity"].as_str().unwrap());
        if !rules.contains(&key) {
            rules.push(key);
        }
    }
    assert_eq!(lines.len(), rules.len() + 1, "{text}");
    for (line, (id, severity)) in lines.iter().zip(&rules) {
        let level = match *severity {
            "error" => "error",
            "warning" => "warning",
            _ => "notice",
        };
        // Every annotation of `check` carries a file: the snapshot's line or the chart template.
        assert!(line.starts_with(&format!("::{level} file=")) && line.contains(&format!("title={id} ")), "{line}");
        // One command per line: the runner splits on raw newlines.
        let (_, message) = line.split_once("::").unwrap().1.split_once("::").unwrap();
        for f in findings.iter().filter(|f| f["id"] == *id && f["severity"] == *severity) {
            assert!(message.contains(&f["subject"].as_str().unwrap().replace('%', "%25")), "{line}");
        }
        assert!(!message.contains("%0Afix: "), "no prefix per fix line: {line}");
    }
    assert!(lines.last().unwrap().starts_with("::notice title=trainer-audit check::blocked: "), "{text}");
    // A fleet has no single file to annotate: refused, exit 2.
    let (a, b) = (snapshot("helm-2.2.1"), snapshot("helm-2.3.0"));
    let out = run(home.path(), &["check", "--snapshot", &a, "--snapshot", &b, "--chart", &fixture("to"), "--format", "github"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stdout(&out).is_empty() && stderr(&out).contains("github"), "{}", stderr(&out));
}

fn with_summary(home: &Path, summary: &Path, args: &[&str]) -> Output {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_trainer-audit"));
    cmd.args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("TRAINER_AUDIT_CACHE_DIR", home.join("cache"))
        .env("GITHUB_STEP_SUMMARY", summary);
    cmd.output().unwrap()
}

#[test]
fn a_github_job_gets_a_step_summary_appended() {
    let home = tempfile::tempdir().unwrap();
    let summary = home.path().join("summary.md");
    std::fs::write(&summary, "earlier step\n").unwrap();
    let (s, to, from) = (snapshot("helm-2.2.1"), fixture("to"), fixture("from"));
    let out = with_summary(home.path(), &summary, &["check", "--snapshot", &s, "--chart", &to, "--from-chart", &from]);
    assert_eq!(out.status.code(), Some(1));
    let report = json(&check(home.path(), &["--format", "json"]));
    let text = std::fs::read_to_string(&summary).unwrap();
    assert!(text.starts_with("earlier step\n### ❌ Trainer upgrade check: blocked\n"), "appended, not replaced: {text}");
    let errors: Vec<&Json> = report["findings"].as_array().unwrap().iter().filter(|f| f["severity"] == "error").collect();
    for f in &errors {
        assert!(text.contains(&format!("`{}`", f["id"].as_str().unwrap())), "{text}");
    }
    let first_command = errors.iter().find_map(|f| f["commands"].get(0)).and_then(Json::as_str).unwrap();
    let block = text.split("```sh\n").nth(1).unwrap_or_default();
    assert!(block.starts_with("# ") && block.contains(&format!("\n{first_command}\n")), "{text}");
    // plan appends its own after it (gitops: tests/action.rs).
    let out = with_summary(home.path(), &summary, &["plan", "--snapshot", &s, "--chart", &to, "--from-chart", &from]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(&summary).unwrap();
    assert!(text.contains("### ✅ Trainer upgrade plan") || text.contains("### ❌ Trainer upgrade plan"), "{text}");
    // No summary file set: nothing written anywhere, the output unchanged.
    let plain = check(home.path(), &[]);
    let with =
        with_summary(home.path(), &home.path().join("other.md"), &["check", "--snapshot", &s, "--chart", &to, "--from-chart", &from]);
    assert_eq!(stdout(&plain), stdout(&with));
}

// --- The release: .github/workflows/release.yml and the script it runs (release/build.sh) ---

const RELEASE_TARGETS: [(&str, &str); 4] = [
    ("x86_64-unknown-linux-musl", "linux-amd64"),
    ("aarch64-unknown-linux-musl", "linux-arm64"),
    ("x86_64-apple-darwin", "darwin-amd64"),
    ("aarch64-apple-darwin", "darwin-arm64"),
];

fn workflow() -> Json {
    let text = std::fs::read_to_string(root().join(".github/workflows/release.yml")).unwrap();
    serde_saphyr::from_str(&text).unwrap()
}

fn steps(job: &Json) -> &Vec<Json> {
    job["steps"].as_array().unwrap()
}

fn step<'a>(job: &'a Json, uses_or_name: &str) -> &'a Json {
    steps(job)
        .iter()
        .find(|s| s["name"] == uses_or_name || s["uses"].as_str().is_some_and(|u| u.starts_with(&format!("{uses_or_name}@"))))
        .unwrap_or_else(|| panic!("no step {uses_or_name}"))
}

/// Every `uses:` of the workflow is pinned to a full commit SHA with the tag in a comment; the
/// four targets are built by release/build.sh on a runner of their own OS and architecture; the
/// publish job alone may write, attests the archives with GitHub's action and uploads what the
/// Action and krew download, under the URL both expect.
#[test]
fn the_release_workflow_builds_attests_and_publishes_through_the_script() {
    let text = std::fs::read_to_string(root().join(".github/workflows/release.yml")).unwrap();
    let pinned = regex::Regex::new(r"^\s*- uses: [a-z0-9-]+/[a-z0-9-]+@[0-9a-f]{40} # v\d+\.\d+\.\d+$").unwrap();
    let uses: Vec<&str> = text.lines().filter(|l| l.contains("uses:")).collect();
    assert!(uses.len() >= 4, "{uses:?}");
    for line in &uses {
        assert!(pinned.is_match(line), "not pinned by commit SHA with its tag: {line}");
    }
    let wf = workflow();
    assert_eq!(wf["on"]["push"]["tags"], serde_json::json!(["v*.*.*"]));
    assert_eq!(wf["permissions"], serde_json::json!({"contents": "read"}), "read-only unless a job says otherwise");

    let build = &wf["jobs"]["build"];
    assert!(build.get("permissions").is_none(), "the build jobs get no write permission");
    let matrix = build["strategy"]["matrix"]["include"].as_array().unwrap();
    let built: Vec<(&str, &str)> = matrix.iter().map(|m| (m["target"].as_str().unwrap(), m["runner"].as_str().unwrap())).collect();
    assert_eq!(built.iter().map(|(t, _)| *t).collect::<Vec<_>>(), RELEASE_TARGETS.map(|(t, _)| t));
    for (target, runner) in &built {
        let native = match *target {
            "x86_64-unknown-linux-musl" => runner.starts_with("ubuntu-") && !runner.ends_with("-arm"),
            "aarch64-unknown-linux-musl" => runner.starts_with("ubuntu-") && runner.ends_with("-arm"),
            _ => runner.starts_with("macos-"),
        };
        assert!(native, "{target} is built on {runner}");
    }
    assert_eq!(step(build, "Build")["run"], "release/build.sh build \"$TARGET\" dist");
    assert_eq!(step(build, "Build")["env"]["RELEASE_TAG"], "${{ github.ref_name }}", "the tag is checked against Cargo.toml");
    assert_eq!(step(build, "actions/upload-artifact")["with"]["path"], "dist/*.tar.gz");

    let publish = &wf["jobs"]["publish"];
    assert_eq!(publish["needs"], "build");
    assert_eq!(publish["permissions"], serde_json::json!({"contents": "write", "id-token": "write", "attestations": "write"}));
    let finish = step(publish, "Checksums and the krew manifest");
    assert_eq!(finish["run"], "release/build.sh finish dist \"$SERVER/$REPOSITORY/releases/download/$RELEASE_TAG\"");
    let install = std::fs::read_to_string(root().join("action/install.sh")).unwrap();
    assert!(
        install.contains("release_url=${GITHUB_SERVER_URL:-https://github.com}/$repository/releases/download/v$version"),
        "the Action downloads from where the workflow publishes"
    );
    let attest = step(publish, "actions/attest-build-provenance");
    assert_eq!(attest["with"]["subject-path"], "dist/*.tar.gz\ndist/SHA256SUMS\n");
    let position = |s: &Json| steps(publish).iter().position(|x| x == s).unwrap();
    let create = step(publish, "Publish the release");
    assert!(position(finish) < position(attest) && position(attest) < position(create), "checksums, then attest, then publish");
    let run = create["run"].as_str().unwrap();
    assert!(run.starts_with("gh release create \"$RELEASE_TAG\" dist/*.tar.gz dist/SHA256SUMS dist/trainer-audit.yaml"), "{run}");
}

/// actionlint (v1.7.12, built from the Go module proxy into target/, once) finds nothing in the
/// workflow, the scripts of its `run:` steps included (it runs shellcheck on them when installed).
#[test]
fn actionlint_finds_nothing_in_the_release_workflow() {
    let bin = root().join("target/actionlint-v1.7.12/bin");
    let actionlint = bin.join("actionlint");
    if !actionlint.is_file() {
        if std::process::Command::new("go").arg("version").output().is_err() {
            assert!(!support::in_ci(), "Go is needed to build actionlint");
            return eprintln!("SKIPPED actionlint: no Go toolchain to build it");
        }
        let out = std::process::Command::new("go")
            .args(["install", "github.com/rhysd/actionlint/cmd/actionlint@v1.7.12"])
            .env("GOBIN", &bin)
            .env("GOFLAGS", "-mod=mod")
            .output()
            .unwrap();
        assert!(out.status.success(), "go install actionlint: {}", stderr(&out));
    }
    let out =
        std::process::Command::new(&actionlint).arg("-no-color").arg(".github/workflows/release.yml").current_dir(root()).output().unwrap();
    assert!(out.status.success(), "actionlint:\n{}{}", stdout(&out), stderr(&out));
    // It does fail: a step that runs a script with an unquoted expansion, and an unknown runner.
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".github/workflows")).unwrap();
    let text = std::fs::read_to_string(root().join(".github/workflows/release.yml")).unwrap();
    let broken = text.replace("runner: macos-14", "runner: macos-99").replace("${{ github.ref_name }}", "${{ github.no_such }}");
    std::fs::write(dir.path().join(".github/workflows/release.yml"), broken).unwrap();
    let out = std::process::Command::new(&actionlint)
        .arg("-no-color")
        .arg(".github/workflows/release.yml")
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(!out.status.success(), "a broken workflow passes actionlint: {}", stdout(&out));
}

fn release_script(args: &[&std::ffi::OsStr], extra: &[(&str, &str)]) -> Output {
    // Only the toolchain's environment, as on a runner: cargo test's own variables would make
    // cargo see a changed build on every run.
    let mut cmd = std::process::Command::new("bash");
    cmd.arg(root().join("release/build.sh")).args(args).env_clear();
    for key in ["PATH", "HOME", "CARGO_HOME", "RUSTUP_HOME"] {
        if let Some(value) = std::env::var_os(key) {
            cmd.env(key, value);
        }
    }
    for (k, v) in extra {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

fn untar(archive: &Path, into: &Path) -> Vec<String> {
    std::fs::create_dir_all(into).unwrap();
    let out = std::process::Command::new("tar").arg("-xzvf").arg(archive).arg("-C").arg(into).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    stdout(&out).lines().map(str::to_string).collect()
}

/// The workflow's build step for linux-amd64, exactly as the runner runs it (`release/build.sh
/// build x86_64-unknown-linux-musl DIST`, in target/musl as `cargo xtask release` and the container
/// test build): one archive holding only a static x86_64 `trainer-audit` that runs and says its version.
/// linux-arm64 is `cargo xtask release aarch64-unknown-linux-musl` (Debian's cross compiler; not
/// in the default run: a second full release build); darwin needs a macOS runner.
#[test]
fn the_release_build_step_makes_a_static_linux_amd64_archive() {
    let musl = std::process::Command::new("musl-gcc").arg("--version").output().is_ok_and(|o| o.status.success())
        && std::process::Command::new("rustup")
            .args(["target", "list", "--installed"])
            .output()
            .is_ok_and(|o| stdout(&o).lines().any(|l| l.trim() == "x86_64-unknown-linux-musl"));
    if !musl {
        assert!(!support::in_ci(), "the musl target or musl-gcc is missing (`cargo xtask test` installs them)");
        return eprintln!("SKIPPED: the x86_64-unknown-linux-musl target or musl-gcc (Debian musl-tools) is missing");
    }
    let dir = tempfile::tempdir().unwrap();
    let dist = dir.path().join("dist");
    // The static builds' one target directory (tests/container.rs builds there too).
    let target_dir = root().join("target/musl");
    let out = release_script(
        &["build".as_ref(), "x86_64-unknown-linux-musl".as_ref(), dist.as_os_str()],
        &[("CARGO_TARGET_DIR", target_dir.to_str().unwrap()), ("RELEASE_TAG", &format!("v{}", env!("CARGO_PKG_VERSION")))],
    );
    assert!(out.status.success(), "release/build.sh build: {}", stderr(&out));
    let names: Vec<String> = std::fs::read_dir(&dist).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    let archive = format!("trainer-audit-v{}-linux-amd64.tar.gz", env!("CARGO_PKG_VERSION"));
    assert_eq!(names, std::slice::from_ref(&archive));
    let files = untar(&dist.join(&archive), &dir.path().join("x"));
    assert_eq!(files, ["trainer-audit"], "the archive holds the binary alone");
    let binary = dir.path().join("x/trainer-audit");
    let bytes = std::fs::read(&binary).unwrap();
    assert_eq!(support::elf_machine(&bytes), "x86_64");
    if let Err(why) = support::static_elf(&bytes) {
        panic!("the release binary is not static: {why}");
    }
    let version = std::process::Command::new(&binary).arg("--version").env_clear().output().unwrap();
    assert_eq!(stdout(&version), format!("trainer-audit {}\n", env!("CARGO_PKG_VERSION")));
    // Packaging is reproducible: the same binary gives the same archive bytes.
    let again = dir.path().join("again");
    let out = release_script(&["package".as_ref(), "x86_64-unknown-linux-musl".as_ref(), binary.as_os_str(), again.as_os_str()], &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(std::fs::read(again.join(&archive)).unwrap(), std::fs::read(dist.join(&archive)).unwrap());
}

/// What the script refuses: a tag that is not Cargo.toml's version, a target outside the four, a
/// release missing a platform's archive.
#[test]
fn the_release_script_refuses_a_wrong_tag_target_or_an_incomplete_release() {
    let dir = tempfile::tempdir().unwrap();
    let out =
        release_script(&["build".as_ref(), "x86_64-unknown-linux-musl".as_ref(), dir.path().as_os_str()], &[("RELEASE_TAG", "v99.0.0")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains(&format!("the tag v99.0.0 is not v{}, the version in Cargo.toml", env!("CARGO_PKG_VERSION"))),
        "{}",
        stderr(&out)
    );
    let exe = std::ffi::OsStr::new(env!("CARGO_BIN_EXE_trainer-audit"));
    let out = release_script(&["package".as_ref(), "riscv64gc-unknown-linux-gnu".as_ref(), exe, dir.path().as_os_str()], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("no release platform for the target 'riscv64gc-unknown-linux-gnu'"), "{}", stderr(&out));
    let out = release_script(&["package".as_ref(), "x86_64-unknown-linux-musl".as_ref(), exe, dir.path().as_os_str()], &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = release_script(&["finish".as_ref(), dir.path().as_os_str(), "https://example.invalid/r".as_ref()], &[]);
    assert_eq!(out.status.code(), Some(2));
    let v = env!("CARGO_PKG_VERSION");
    assert!(
        stderr(&out).contains(&format!(
            "lacks trainer-audit-v{v}-linux-arm64.tar.gz trainer-audit-v{v}-darwin-amd64.tar.gz trainer-audit-v{v}-darwin-arm64.tar.gz"
        )),
        "{}",
        stderr(&out)
    );
    assert!(!dir.path().join("SHA256SUMS").exists() && !dir.path().join("trainer-audit.yaml").exists(), "nothing half-written");
}

/// The docs show one `actions/checkout` version, the major the release workflow pins.
#[test]
fn the_docs_use_one_checkout_version_the_workflows() {
    let workflow = std::fs::read_to_string(root().join(".github/workflows/release.yml")).unwrap();
    let pinned = regex::Regex::new(r"actions/checkout@[0-9a-f]{40} # (v\d+)\.").unwrap();
    let majors: std::collections::BTreeSet<&str> = pinned.captures_iter(&workflow).map(|c| c.get(1).unwrap().as_str()).collect();
    assert_eq!(majors.len(), 1, "{majors:?}");
    let major = *majors.first().unwrap();
    let any = regex::Regex::new(r"actions/checkout@([^\s`]+)").unwrap();
    let mut files = vec![root().join("README.md"), root().join("action.yml")];
    files.extend(
        std::fs::read_dir(root().join("docs")).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|e| e == "md")),
    );
    let mut seen = 0;
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for c in any.captures_iter(&text) {
            seen += 1;
            assert_eq!(&c[1], major, "{}: actions/checkout@{} (the release workflow pins {major})", file.display(), &c[1]);
        }
    }
    assert!(seen >= 2, "the docs show actions/checkout");
}
