//! The verdict every output carries, in the same words: `ready` or `blocked` against
//! `--fail-on` ([`Decision`]: the counts behind it, the level, whether it gates the exit code),
//! and the words a GitOps reference, a `status` or a fleet's cluster end in (`not-audited`,
//! `installed`, `not-installed`, `failed`): one [`Verdict`] for the whole tool. One line for
//! people (`blocked: 6 errors, 9 warnings`, `ready`, `already at 2.3.0`), placed first, and the
//! same data for machines (JSON's top-level `verdict`, SARIF's invocation); the exit code is
//! [`Decision::exit_code`] (a fleet's, its worst cluster's).

use serde::Serialize;

use super::finding::{Finding, Severity};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Nothing at or above `--fail-on`.
    Ready,
    /// Findings at or above `--fail-on` (or something that could not be audited).
    Blocked,
    /// `gitops`: the files do not say enough to audit a reference (a digest pin, an unresolved
    /// variable).
    NotAudited,
    /// `status`: Trainer is installed.
    Installed,
    /// `status`: no Trainer found.
    NotInstalled,
    /// A cluster that could not be read or audited.
    Failed,
}

impl Verdict {
    /// The word machines read (JSON, JSON Lines, metrics labels).
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Ready => "ready",
            Verdict::Blocked => "blocked",
            Verdict::NotAudited => "not-audited",
            Verdict::Installed => "installed",
            Verdict::NotInstalled => "not-installed",
            Verdict::Failed => "failed",
        }
    }

    /// The word people read: [`Verdict::as_str`], but `not audited` in words.
    pub fn label(self) -> &'static str {
        match self {
            Verdict::NotAudited => "not audited",
            other => other.as_str(),
        }
    }

    /// The exit code of a run that ends in this verdict (a gate's: 1 when blocked; 2 when the
    /// cluster failed).
    pub fn exit_code(self) -> u8 {
        match self {
            Verdict::Blocked => 1,
            Verdict::Failed => 2,
            Verdict::Ready | Verdict::NotAudited | Verdict::Installed | Verdict::NotInstalled => 0,
        }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub error: usize,
    pub warning: usize,
    pub info: usize,
}

impl Counts {
    pub fn of<'a>(findings: impl IntoIterator<Item = &'a Finding>) -> Counts {
        findings.into_iter().fold(Counts::default(), |mut c, f| {
            match f.severity {
                Severity::Error => c.error += 1,
                Severity::Warning => c.warning += 1,
                Severity::Info => c.info += 1,
            }
            c
        })
    }

    /// What `status --fail-on` gates on, counted as `check` counts findings: errors are Helm
    /// releases that could not be read or are stuck (pending, failed: nothing upgrades them) and
    /// objects the CRDs reject; warnings are what could not be read and objects that lose fields
    /// on their next write.
    pub fn of_status(s: &crate::cluster::status::Status) -> Counts {
        let stuck = s.releases.iter().filter(|r| r.stuck).count();
        let rejected: usize = s.validation.kinds.iter().map(|k| k.rejected).sum();
        let pruned: usize = s.validation.kinds.iter().map(|k| k.pruned).sum();
        Counts { error: s.release_errors.len() + stuck + rejected, warning: s.warnings.len() + pruned, info: 0 }
    }

    /// How many are at or above `level`.
    pub fn at_or_above(&self, level: Severity) -> usize {
        match level {
            Severity::Error => self.error,
            Severity::Warning => self.error + self.warning,
            Severity::Info => self.error + self.warning + self.info,
        }
    }
}

/// The verdict and what decided it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Decision {
    pub verdict: Verdict,
    pub counts: Counts,
    pub fail_on: Severity,
    /// The installed version equals the target: nothing to upgrade.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub already_at: Option<String>,
    /// Whether the verdict decides the exit code: a gate's does (`check`, `gitops`, any command
    /// given `--fail-on`); `plan` and `hooks` without `--fail-on` say their verdict, and that
    /// they exit 0 (JSON: `"gates": false`, only then).
    #[serde(skip_serializing_if = "is_true")]
    pub gates: bool,
}

fn is_true(b: &bool) -> bool {
    *b
}

impl Decision {
    /// The verdict at `fail_on`, gating the exit code.
    pub fn new(counts: Counts, fail_on: Severity, from: Option<&str>, to: Option<&str>) -> Decision {
        let verdict = if counts.at_or_above(fail_on) > 0 { Verdict::Blocked } else { Verdict::Ready };
        let already_at = match (from, to) {
            (Some(f), Some(t)) if f == t => Some(t.to_string()),
            _ => None,
        };
        Decision { verdict, counts, fail_on, already_at, gates: true }
    }

    /// The verdict at `--fail-on` when it was given (gating the exit code), else at `error`
    /// without gating it: the decision of a command that is no gate unless asked to be.
    pub fn at(counts: Counts, fail_on: Option<Severity>, from: Option<&str>, to: Option<&str>) -> Decision {
        Decision { gates: fail_on.is_some(), ..Decision::new(counts, fail_on.unwrap_or(Severity::Error), from, to) }
    }

    /// The exit code this decision gives a run: 1 when it gates and is blocked, else 0.
    pub fn exit_code(&self) -> u8 {
        if self.gates {
            self.verdict.exit_code()
        } else {
            0
        }
    }

    /// The line a person reads first: `blocked: 6 errors, 9 warnings`, `ready`,
    /// `ready: 2 warnings`, `already at 2.3.0`; a verdict that does not gate says so
    /// (`blocked: 6 errors, 9 warnings (exit 0: not a gate without --fail-on)`).
    pub fn line(&self) -> String {
        let line = self.verdict_words();
        if !self.gates && self.verdict == Verdict::Blocked {
            format!("{line} (exit 0: not a gate without --fail-on)")
        } else {
            line
        }
    }

    fn verdict_words(&self) -> String {
        let plural = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
        let mut parts = vec![plural(self.counts.error, "error"), plural(self.counts.warning, "warning")];
        if self.fail_on == Severity::Info || (self.counts.info > 0 && self.counts.error + self.counts.warning == 0) {
            parts.push(plural(self.counts.info, "info"));
        }
        let quiet = self.counts.error + self.counts.warning + self.counts.info == 0;
        match (self.verdict, &self.already_at) {
            (Verdict::Blocked, Some(v)) => format!("blocked: {} (already at {v})", parts.join(", ")),
            (Verdict::Blocked, None) => format!("blocked: {}", parts.join(", ")),
            (Verdict::Ready, Some(v)) => format!("already at {v}"),
            (Verdict::Ready, None) if quiet => "ready".to_string(),
            (Verdict::Ready, None) => format!("ready: {}", parts.join(", ")),
            (other, _) => other.label().to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(error: usize, warning: usize, info: usize) -> Counts {
        Counts { error, warning, info }
    }

    #[test]
    fn the_line_says_the_verdict_in_the_same_words_everywhere() {
        let d = |c, fail_on, from: &str, to: &str| Decision::new(c, fail_on, Some(from), Some(to));
        assert_eq!(d(counts(6, 9, 1), Severity::Error, "2.2.1", "2.3.0").line(), "blocked: 6 errors, 9 warnings");
        assert_eq!(d(counts(0, 0, 0), Severity::Error, "2.2.1", "2.3.0").line(), "ready");
        assert_eq!(d(counts(0, 2, 0), Severity::Error, "2.2.1", "2.3.0").line(), "ready: 0 errors, 2 warnings");
        assert_eq!(d(counts(0, 1, 0), Severity::Warning, "2.2.1", "2.3.0").line(), "blocked: 0 errors, 1 warning");
        assert_eq!(d(counts(0, 0, 3), Severity::Info, "2.2.1", "2.3.0").verdict, Verdict::Blocked);
        assert_eq!(d(counts(0, 1, 0), Severity::Error, "2.3.0", "2.3.0").line(), "already at 2.3.0");
        assert_eq!(d(counts(1, 0, 0), Severity::Error, "2.3.0", "2.3.0").line(), "blocked: 1 error, 0 warnings (already at 2.3.0)");
        let json = serde_json::to_value(d(counts(1, 0, 0), Severity::Error, "2.2.1", "2.3.0")).unwrap();
        assert_eq!(json, serde_json::json!({"verdict": "blocked", "counts": {"error": 1, "warning": 0, "info": 0}, "failOn": "error"}));
    }

    #[test]
    fn a_verdict_that_does_not_gate_says_so_and_exits_0() {
        let plan = Decision::at(counts(6, 9, 0), None, Some("2.2.1"), Some("2.3.0"));
        assert_eq!(plan.line(), "blocked: 6 errors, 9 warnings (exit 0: not a gate without --fail-on)");
        assert_eq!(plan.exit_code(), 0);
        assert_eq!(serde_json::to_value(&plan).unwrap()["gates"], false);
        let gated = Decision::at(counts(6, 9, 0), Some(Severity::Error), Some("2.2.1"), Some("2.3.0"));
        assert_eq!((gated.line().as_str(), gated.exit_code()), ("blocked: 6 errors, 9 warnings", 1));
        assert!(serde_json::to_value(&gated).unwrap().get("gates").is_none());
        assert_eq!(Decision::at(counts(0, 1, 0), None, None, None).line(), "ready: 0 errors, 1 warning");
    }
}
