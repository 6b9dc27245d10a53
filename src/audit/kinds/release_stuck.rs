//! `release-stuck`: the Helm release's last revision is in one of the statuses the rule names.
//! Helm refuses to upgrade only a `pending-*` one; a rule may also name `failed`, which upgrades
//! normally but says the last change did not complete.

use serde::Deserialize;

use super::{Check, Hit};
use crate::audit::input::CheckInput;

/// A Helm release status (Helm v4.2.3 `pkg/release/common/status.go`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    Unknown,
    Deployed,
    Uninstalled,
    Superseded,
    Failed,
    Uninstalling,
    PendingInstall,
    PendingUpgrade,
    PendingRollback,
}

impl Status {
    fn as_str(self) -> &'static str {
        match self {
            Status::Unknown => "unknown",
            Status::Deployed => "deployed",
            Status::Uninstalled => "uninstalled",
            Status::Superseded => "superseded",
            Status::Failed => "failed",
            Status::Uninstalling => "uninstalling",
            Status::PendingInstall => "pending-install",
            Status::PendingUpgrade => "pending-upgrade",
            Status::PendingRollback => "pending-rollback",
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// The last revision's statuses to report.
    pub statuses: Vec<Status>,
}

impl Check for Params {
    fn check(&self, input: &CheckInput) -> Vec<Hit> {
        let Some(r) = input.release else { return Vec::new() };
        if !self.statuses.iter().any(|s| s.as_str() == r.current.status) {
            return Vec::new();
        }
        // The revision to roll back to: the last good one on record, else the one before (Helm
        // keeps a limited history; `helm history` shows what is left).
        let last_good = r
            .history
            .iter()
            .rev()
            .find(|(rev, s, _)| *rev != r.current.revision && (s == "deployed" || s == "superseded"))
            .map(|(rev, _, _)| *rev)
            .or_else(|| (r.current.revision > 1).then(|| r.current.revision - 1));
        // Helm bases an upgrade after a failed revision on the last `deployed` one, else on the
        // failed revision itself (Helm v4.2.3 pkg/action/upgrade.go, prepareUpgrade).
        let deployed = r.history.iter().rev().find(|(rev, s, _)| *rev != r.current.revision && s == "deployed");
        let effect = if r.current.is_stuck() {
            "Helm refuses every upgrade until it is resolved".to_string()
        } else {
            match deployed {
                Some((rev, _, _)) => format!("an upgrade proceeds normally, from the deployed revision {rev}"),
                None => "an upgrade proceeds normally, from this revision".to_string(),
            }
        };
        vec![Hit::new(
            format!("release {}/{}", r.current.namespace, r.current.name),
            format!("revision {} is {}: {effect}", r.current.revision, r.current.status),
        )
        .evidence(format!("status {} ({})", r.current.status, r.current.description))
        .var("revision", last_good.map(|r| r.to_string()).unwrap_or_else(|| "1".into()))]
    }
}
