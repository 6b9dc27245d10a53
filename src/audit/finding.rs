//! A finding: one thing a reviewer or operator must know, with the rule that found it, how
//! much it matters, what it is about, the evidence, the fix and the source it rests on.

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
    Info,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }

    /// SARIF's `level`.
    pub fn sarif_level(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "note",
        }
    }
}

/// When a finding's fix is done during the change: fixes run in this order (back up before
/// touching CRDs, edits the old CRDs still allow, CRDs before the objects that use them, objects
/// before the upgrade).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    /// The cluster and the release must be fit for any change (versions, release state).
    Prerequisites,
    /// Copies to take before anything changes.
    Backup,
    /// Edits that must land while the installed CRDs are still in place (`migrate --before-crds`).
    BeforeCrds,
    /// CRDs: ownership, keep policy, schema.
    Crds,
    /// Objects that use the CRDs, and objects the release will own.
    Objects,
    /// The values the upgrade applies.
    Values,
    /// The upgrade command and what it runs (hooks).
    #[default]
    Upgrade,
    /// After the upgrade.
    After,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// Stable rule id, e.g. `TA-HOOK-001`.
    pub id: String,
    pub severity: Severity,
    pub title: String,
    /// The object or chart part it is about (`Job/kubeflow-system/x`).
    pub subject: String,
    /// Template path, when it comes from a chart.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub location: String,
    pub message: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<String>,
    /// The fix as text (explanations and commands, one per line).
    pub fix: String,
    /// The fix's command lines alone, each a complete shell command (names quoted), to run
    /// before (or for) the upgrade.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<String>,
    /// Commands that undo, once the upgrade is done, a temporary change `commands` make for it
    /// (a Pod Security label relaxed for the hooks, put back): every output that shows the change
    /// shows these with it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub restore: Vec<String>,
    /// The fix line by line, each marked command or explanation (how a runbook lays it out).
    #[serde(skip)]
    pub fix_lines: Vec<FixLine>,
    /// What the upgrade command needs to take over the finding's subject (the rule's `adopt`).
    #[serde(skip)]
    pub adopt: Option<crate::engine::Adoption>,
    /// What the rule rests on (files at a tag, docs at a version, URLs).
    pub source: String,
    /// What the predicted failure prints (substrings), for this cluster's Kubernetes version when
    /// it is known.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub expect: Vec<Expected>,
    /// When during the change the fix is done (orders a runbook's fixes).
    #[serde(skip)]
    pub phase: Phase,
    /// The rule variant whose words it carries (`failed`, `nearest`…), when not the rule's own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
}

/// A text the predicted failure prints, and who prints it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Expected {
    pub by: &'static str,
    pub text: String,
    /// The Kubernetes versions that print it, when only some do (`>=1.32`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kubernetes: Option<String>,
    /// The Helm versions that print it, when only some do (`>=4.0.0`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub helm: Option<String>,
}

/// One line of a fix: a shell command, words around it, or a command that undoes a temporary
/// change after the upgrade.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FixLine {
    Command(String),
    Text(String),
    /// Run after the upgrade: undoes a temporary change the fix's commands make for it (a rule
    /// writes it `restore $ COMMAND`).
    Restore(String),
}

/// The words every output puts before a fix's restore commands.
pub const RESTORE_HEAD: &str = "After the upgrade, restore it:";

impl FixLine {
    /// The line's text (a command as it runs).
    pub fn text(&self) -> &str {
        match self {
            FixLine::Command(c) | FixLine::Text(c) | FixLine::Restore(c) => c,
        }
    }
}

/// A fix as lines of words and commands, each run of restore commands headed by
/// [`RESTORE_HEAD`] (as a text line), so that a fix read alone never hides what undoes it.
pub fn with_restore_heads(lines: &[FixLine]) -> Vec<FixLine> {
    let mut out = Vec::with_capacity(lines.len() + 1);
    let mut in_restore = false;
    for line in lines {
        let restore = matches!(line, FixLine::Restore(_));
        if restore && !in_restore {
            out.push(FixLine::Text(RESTORE_HEAD.to_string()));
        }
        in_restore = restore;
        out.push(line.clone());
    }
    out
}

impl Finding {
    /// A finding of rule `id` about `subject` with nothing else said: what tests build on.
    #[cfg(test)]
    pub fn about(id: &str, severity: Severity, subject: &str) -> Finding {
        Finding {
            id: id.into(),
            severity,
            title: String::new(),
            subject: subject.into(),
            location: String::new(),
            message: String::new(),
            evidence: vec![],
            fix: String::new(),
            commands: vec![],
            restore: vec![],
            fix_lines: vec![],
            adopt: None,
            source: String::new(),
            expect: vec![],
            phase: Phase::default(),
            variant: None,
        }
    }

    /// The fix's lines with its restore commands headed ([`with_restore_heads`]).
    pub fn fix_lines_headed(&self) -> Vec<FixLine> {
        with_restore_heads(&self.fix_lines)
    }
}

/// Severity first (errors on top), then id, subject and message: the same input always prints
/// in the same order.
pub fn sort_findings(findings: &mut [Finding]) {
    findings.sort_by(|a, b| (a.severity, &a.id, &a.subject, &a.message).cmp(&(b.severity, &b.id, &b.subject, &b.message)));
}
