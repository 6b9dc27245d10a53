//! What trainer-audit prints, taken as a person takes it: `check`'s findings (JSON), the
//! upgrade command lines of `plan` (text), the `sh` blocks of `runbook` (Markdown), each run by
//! bash exactly as printed.

use serde_json::Value as Json;

use crate::lab::{Lab, Ran};

/// One finding of `check --format json`.
#[derive(Debug, Clone)]
pub struct Finding {
    pub id: String,
    pub severity: String,
    pub subject: String,
    pub message: String,
}

/// The findings of a `check --format json` report.
pub fn findings(report: &Json) -> Vec<Finding> {
    report["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|f| Finding {
            id: f["id"].as_str().unwrap_or_default().into(),
            severity: f["severity"].as_str().unwrap_or_default().into(),
            subject: f["subject"].as_str().unwrap_or_default().into(),
            message: f["message"].as_str().unwrap_or_default().into(),
        })
        .collect()
}

#[derive(Debug, Clone)]
pub struct Check {
    pub ran: Ran,
    pub report: Json,
    pub findings: Vec<Finding>,
}

impl Check {
    /// The findings as JSON, for comparing reads.
    pub fn findings_json(&self) -> &Json {
        &self.report["findings"]
    }

    /// `(severity, id)` per finding, sorted and deduplicated with counts: `error TA-OWN-001 ×3`.
    pub fn summary(&self) -> Vec<String> {
        let mut counts: std::collections::BTreeMap<(String, String), usize> = Default::default();
        for f in &self.findings {
            *counts.entry((f.severity.clone(), f.id.clone())).or_default() += 1;
        }
        counts.into_iter().map(|((s, id), n)| format!("{s} {id} ×{n}")).collect()
    }

    pub fn errors(&self) -> Vec<&Finding> {
        self.findings.iter().filter(|f| f.severity == "error").collect()
    }
}

/// The registry flags of every rehearsal: the corpus registry speaks plain HTTP.
pub fn target_args<'a>(lab: &'a Lab, repo: &'a str, to: &'a str) -> Vec<&'a str> {
    let _ = lab;
    vec!["--to", to, "--repo", repo, "--plain-http"]
}

/// `trainer-audit check --to V --repo … --plain-http --format json`, live as the admin.
pub fn check(lab: &Lab, to: &str) -> Check {
    check_with(lab, &lab.cp.admin_kubeconfig, to)
}

/// [`check`] with another kubeconfig (a ServiceAccount's).
pub fn check_with(lab: &Lab, kubeconfig: &std::path::Path, to: &str) -> Check {
    let repo = lab.repo();
    let mut args = vec!["check"];
    args.extend(target_args(lab, &repo, to));
    args.extend(["--format", "json"]);
    let ran = lab.audit_as(kubeconfig, &args);
    assert!(matches!(ran.code, Some(0) | Some(1)), "[{}] check failed to run:\n{ran}", lab.scenario);
    let report: Json = serde_json::from_str(&ran.stdout).unwrap_or_else(|e| panic!("check JSON: {e}\n{ran}"));
    assert!(report["findings"].is_array(), "[{}] check JSON without findings:\n{ran}", lab.scenario);
    let findings = findings(&report);
    let check = Check { ran, report, findings };
    lab.note(&format!("check --to {to}: exit {:?}; {}", check.ran.code, check.summary().join(", ")));
    check
}

/// The command lines of every step's `Upgrade:` section of `plan` (text), in order: what a
/// person copies. Comment lines (`# …`, manual steps) are not commands.
pub fn plan_upgrade_commands(lab: &Lab, to: &str) -> (String, Vec<String>) {
    let repo = lab.repo();
    let mut args = vec!["plan"];
    args.extend(target_args(lab, &repo, to));
    let ran = lab.audit(&args);
    assert!(ran.ok(), "[{}] plan failed:\n{ran}", lab.scenario);
    let mut commands = Vec::new();
    let mut in_upgrade = false;
    for line in ran.stdout.lines() {
        let trimmed = line.trim();
        if line.starts_with("  ") && !line.starts_with("    ") {
            in_upgrade = trimmed == "Upgrade:";
            continue;
        }
        if in_upgrade && !trimmed.is_empty() && !trimmed.starts_with('#') {
            commands.push(trimmed.to_string());
        }
    }
    assert!(!commands.is_empty(), "[{}] plan printed no upgrade command:\n{}", lab.scenario, ran.stdout);
    (ran.stdout, commands)
}

/// `trainer-audit runbook …` (Markdown) and its `sh` blocks in order, indentation removed.
pub fn runbook(lab: &Lab, to: &str) -> (String, Vec<String>) {
    let repo = lab.repo();
    let mut args = vec!["runbook"];
    args.extend(target_args(lab, &repo, to));
    let ran = lab.audit(&args);
    assert!(ran.ok(), "[{}] runbook failed:\n{ran}", lab.scenario);
    let blocks = sh_blocks(&ran.stdout);
    assert!(!blocks.is_empty(), "[{}] the runbook has no sh block:\n{}", lab.scenario, ran.stdout);
    (ran.stdout, blocks)
}

/// Fenced ```` ```sh ```` blocks of Markdown (the explorer's, one definition for both harnesses).
pub use testkit::explore::printed::sh_blocks;

/// Every block run in order, one `bash -euo pipefail` per block; stops at the first failing
/// block (the runbook failed there) and returns what ran.
pub fn run_blocks(lab: &Lab, blocks: &[String]) -> Vec<Ran> {
    run_blocks_marked(lab, blocks, &|_, _| {})
}

/// [`run_blocks`], calling `starting(i, block)` before block `i` runs (a timeline's marks).
pub fn run_blocks_marked(lab: &Lab, blocks: &[String], starting: &dyn Fn(usize, &str)) -> Vec<Ran> {
    let mut ran = Vec::new();
    // A person runs the blocks in one shell: `$BACKUP_DIR`, set by the Backups block, is
    // carried from block to block.
    let state = lab.run_dir().join(".runbook-shell-state");
    let state = quote_path(&state);
    for (i, block) in blocks.iter().enumerate() {
        let script = format!(
            "if [ -f {state} ]; then . {state}; fi\n{block}\nif [ -n \"${{BACKUP_DIR:-}}\" ]; then declare -p BACKUP_DIR > {state}; fi\n"
        );
        starting(i, block);
        let r = lab.shell(&script);
        lab.note(&format!("runbook block {}/{}: exit {:?} in {:.1} s", i + 1, blocks.len(), r.code, r.seconds));
        let failed = !r.ok();
        ran.push(r);
        if failed {
            break;
        }
    }
    ran
}

/// A path as one shell word.
fn quote_path(path: &std::path::Path) -> String {
    format!("'{}'", path.to_string_lossy().replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::sh_blocks;

    #[test]
    fn sh_blocks_keep_order_and_drop_indentation() {
        let md = "x\n```sh\na 'b'\n```\n1. y\n\n   ```sh\n   c\n     d\n   ```\n```text\nno\n```\n";
        assert_eq!(sh_blocks(md), ["a 'b'", "c\n  d"]);
    }
}
