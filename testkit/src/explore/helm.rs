//! Helm's release storage as its actions change it, and what the next `helm upgrade`, `helm
//! upgrade --install` and `helm rollback` do on it: the explorer's oracle of the revision an
//! upgrade starts from. Written from Helm v4.2.3's source, not from trainer-audit's:
//! - `pkg/storage/storage.go` L156-L176 `Deployed` (the newest revision labelled deployed),
//!   L303-L319 `Last` (the newest revision of any status);
//! - `pkg/action/upgrade.go` L231-L272 `prepareUpgrade`: no history is `"<name>" has no deployed
//!   releases`; a pending last revision is `another operation (install/upgrade/rollback) is in
//!   progress`; a deployed last revision is the base; else the newest deployed one, else a failed
//!   or superseded last revision; else `has no deployed releases` again (uninstalling,
//!   uninstalled, unknown);
//! - `pkg/cmd/upgrade.go` L123-L162: with `--install`, no history or an uninstalled last revision
//!   (L325-L332 `isReleaseUninstalled`) is a fresh install (`Replace` when uninstalled);
//! - `pkg/action/install.go` L608-L636 `availableName` (a name in use is refused unless
//!   replacing an uninstalled or failed one) and L703-L707 (the replacing install's revision is
//!   the last one's + 1);
//! - `pkg/action/rollback.go` L115-L153 (the revision before the last, or the one asked; it must
//!   be on record), L238-L239 and L285-L303 (the current revision superseded, every deployed one
//!   superseded, the new one deployed; failed when the rollback fails);
//! - `pkg/action/uninstall.go` L119-L130 and L172-L212 (`uninstalling` while it deletes, then
//!   `uninstalled`, every deployed revision superseded, with `--keep-history`);
//! - `pkg/action/action.go` L73 (`errPending`).

use super::state::{Op, Outcome};

pub const DEPLOYED: &str = "deployed";
pub const SUPERSEDED: &str = "superseded";
pub const FAILED: &str = "failed";
pub const UNINSTALLED: &str = "uninstalled";
pub const UNINSTALLING: &str = "uninstalling";
pub const UNKNOWN: &str = "unknown";

/// Helm's text for an upgrade that finds nothing to start from.
pub fn no_deployed_releases(name: &str) -> String {
    format!("\"{name}\" has no deployed releases")
}

/// Helm's text for an upgrade or install while an operation is pending.
pub const PENDING: &str = "another operation (install/upgrade/rollback) is in progress";

/// One stored revision.
#[derive(Debug, Clone, PartialEq)]
pub struct Revision {
    pub number: i64,
    pub status: String,
    /// Chart version.
    pub version: String,
}

/// What `helm upgrade` does first.
#[derive(Debug, Clone, PartialEq)]
pub enum Start {
    /// Upgrades from this revision: its chart, values and manifest are the diff base.
    Upgrade(Revision),
    /// Installs afresh; `replace` when over an uninstalled release (revision last + 1).
    Install { replace: bool },
    /// Refused, with Helm's error text.
    Refused(String),
}

/// What an operation did to the cluster's objects.
#[derive(Debug, Clone, PartialEq)]
pub struct Applied {
    /// The chart version whose objects were applied (None: the release's objects were deleted).
    pub version: Option<String>,
    /// The revision whose manifest was the diff base (its objects not in the new one deleted).
    pub base: Option<Revision>,
    /// Whether the post-install/post-upgrade hooks ran to completion.
    pub hooks_ran: bool,
}

/// A release's revisions, oldest first.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct History {
    pub revisions: Vec<Revision>,
}

fn is_pending(status: &str) -> bool {
    status.starts_with("pending-")
}

impl History {
    /// `storage.Last`.
    pub fn last(&self) -> Option<&Revision> {
        self.revisions.iter().max_by_key(|r| r.number)
    }

    /// The revision whose record the storage lists last (by its object name, `….v<N>`).
    pub fn listed_last(&self) -> Option<&Revision> {
        self.revisions.iter().max_by_key(|r| format!("v{}", r.number))
    }

    /// `storage.Deployed`: the newest revision whose status is deployed.
    pub fn deployed(&self) -> Option<&Revision> {
        self.revisions.iter().filter(|r| r.status == DEPLOYED).max_by_key(|r| r.number)
    }

    /// What `helm upgrade` (with `install`: `--install`) does on this history.
    pub fn upgrade(&self, name: &str, install: bool) -> Start {
        let Some(last) = self.last() else {
            return if install { Start::Install { replace: false } } else { Start::Refused(no_deployed_releases(name)) };
        };
        // `isReleaseUninstalled` reads the record the storage lists last, and the Secret and
        // ConfigMap drivers list by object name (`….v9` after `….v12`): past revision 9 that is
        // not the newest revision (pkg/cmd/upgrade.go L128, L325-L332; pkg/storage/driver/secrets.go
        // L124-L158, the API server's list order).
        if install && self.listed_last().is_some_and(|r| r.status == UNINSTALLED) {
            return Start::Install { replace: true };
        }
        if is_pending(&last.status) {
            return Start::Refused(PENDING.into());
        }
        if last.status == DEPLOYED {
            return Start::Upgrade(last.clone());
        }
        match self.deployed() {
            Some(d) => Start::Upgrade(d.clone()),
            None if last.status == FAILED || last.status == SUPERSEDED => Start::Upgrade(last.clone()),
            None => Start::Refused(no_deployed_releases(name)),
        }
    }

    /// The revision `helm rollback NAME [REVISION]` goes back to, or Helm's refusal.
    pub fn rollback_target(&self, revision: Option<i64>) -> Result<Revision, String> {
        let last = self.last().ok_or("release: not found")?;
        let wanted = revision.filter(|r| *r != 0).unwrap_or(last.number - 1);
        self.revisions.iter().find(|r| r.number == wanted).cloned().ok_or_else(|| format!("release has no {wanted} version"))
    }

    fn next(&self) -> i64 {
        self.last().map_or(1, |r| r.number + 1)
    }

    fn set_status(&mut self, number: i64, status: &str) {
        if let Some(r) = self.revisions.iter_mut().find(|r| r.number == number) {
            r.status = status.into();
        }
    }

    fn supersede_deployed(&mut self) {
        for r in self.revisions.iter_mut().filter(|r| r.status == DEPLOYED) {
            r.status = SUPERSEDED.into();
        }
    }

    fn push(&mut self, version: &str, outcome: Outcome, pending: &str) {
        let status = match outcome {
            Outcome::Ok => DEPLOYED,
            Outcome::Failed => FAILED,
            Outcome::Killed => pending,
        };
        self.revisions.push(Revision { number: self.next(), status: status.into(), version: version.into() });
    }

    /// Runs one operation as Helm would; Err with Helm's text when Helm refuses it (nothing
    /// changes then).
    pub fn apply(&mut self, name: &str, op: &Op) -> Result<Applied, String> {
        let hooks_ran = |o: &Outcome| *o == Outcome::Ok;
        match op {
            Op::Install(version, outcome) => {
                // `helm install --replace` (install.go availableName: the newest revision, sorted
                // by number, must be uninstalled or failed; we replace only uninstalled ones).
                if self.last().is_some_and(|r| r.status != UNINSTALLED) {
                    return Err("cannot reuse a name that is still in use".into());
                }
                let base = None;
                self.push(version, *outcome, "pending-install");
                Ok(Applied { version: Some(version.clone()), base, hooks_ran: hooks_ran(outcome) })
            }
            Op::Upgrade(version, outcome) => {
                let base = match self.upgrade(name, false) {
                    Start::Upgrade(base) => base,
                    Start::Refused(e) => return Err(e),
                    Start::Install { .. } => unreachable!("without --install"),
                };
                let number = self.next();
                self.push(version, *outcome, "pending-upgrade");
                if *outcome == Outcome::Ok {
                    // upgrade.go releasingUpgrade: the base revision is superseded.
                    self.set_status(base.number, SUPERSEDED);
                    let _ = number;
                }
                Ok(Applied { version: Some(version.clone()), base: Some(base), hooks_ran: hooks_ran(outcome) })
            }
            Op::Rollback(to, outcome) => {
                let target = self.rollback_target(Some(*to))?;
                let current = self.last().cloned().expect("a history");
                let number = self.next();
                match outcome {
                    Outcome::Ok => {
                        self.set_status(current.number, SUPERSEDED);
                        self.supersede_deployed();
                        self.revisions.push(Revision { number, status: DEPLOYED.into(), version: target.version.clone() });
                    }
                    Outcome::Failed => {
                        self.set_status(current.number, SUPERSEDED);
                        self.revisions.push(Revision { number, status: FAILED.into(), version: target.version.clone() });
                    }
                    Outcome::Killed => {
                        self.revisions.push(Revision { number, status: "pending-rollback".into(), version: target.version.clone() })
                    }
                }
                Ok(Applied { version: Some(target.version), base: Some(current), hooks_ran: hooks_ran(outcome) })
            }
            Op::Uninstall(outcome) => {
                let last = self.last().cloned().ok_or("release: not found")?;
                if last.status == UNINSTALLED {
                    return Err(format!("the release named \"{name}\" is already deleted"));
                }
                match outcome {
                    Outcome::Ok | Outcome::Failed => {
                        self.set_status(last.number, UNINSTALLED);
                        self.supersede_deployed();
                        Ok(Applied { version: None, base: Some(last), hooks_ran: true })
                    }
                    // Killed in the pre-delete hook's wait: nothing deleted yet.
                    Outcome::Killed => {
                        self.set_status(last.number, UNINSTALLING);
                        Ok(Applied { version: Some(last.version.clone()), base: None, hooks_ran: false })
                    }
                }
            }
            Op::Unknown => {
                let last = self.last().cloned().ok_or("release: not found")?;
                self.set_status(last.number, UNKNOWN);
                Ok(Applied { version: Some(last.version), base: None, hooks_ran: true })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn history(ops: &[Op]) -> History {
        let mut h = History::default();
        for op in ops {
            h.apply("t", op).unwrap();
        }
        h
    }

    fn v(s: &str) -> String {
        s.to_string()
    }

    #[test]
    fn a_failed_upgrade_over_a_deployed_one_starts_from_the_deployed_one() {
        let h = history(&[Op::Install(v("2.2.1"), Outcome::Ok), Op::Upgrade(v("2.3.0"), Outcome::Failed)]);
        assert_eq!(h.revisions.iter().map(|r| r.status.as_str()).collect::<Vec<_>>(), ["deployed", "failed"]);
        assert_eq!(h.upgrade("t", false), Start::Upgrade(Revision { number: 1, status: v("deployed"), version: v("2.2.1") }));
    }

    #[test]
    fn only_failed_or_superseded_last_revisions_stand_in_for_a_deployed_one() {
        let failed_install = history(&[Op::Install(v("2.2.1"), Outcome::Failed)]);
        assert!(matches!(failed_install.upgrade("t", false), Start::Upgrade(r) if r.number == 1));
        let uninstalled = history(&[Op::Install(v("2.2.1"), Outcome::Ok), Op::Uninstall(Outcome::Ok)]);
        assert_eq!(uninstalled.upgrade("t", false), Start::Refused(v("\"t\" has no deployed releases")));
        assert_eq!(uninstalled.upgrade("t", true), Start::Install { replace: true });
        let uninstalling = history(&[Op::Install(v("2.2.1"), Outcome::Ok), Op::Uninstall(Outcome::Killed)]);
        assert_eq!(uninstalling.upgrade("t", true), Start::Refused(v("\"t\" has no deployed releases")));
        let unknown = history(&[Op::Install(v("2.2.1"), Outcome::Ok), Op::Unknown]);
        assert!(matches!(unknown.upgrade("t", true), Start::Refused(_)));
        // A failed last revision over a deployed one that an interrupted uninstall left: Helm
        // still finds the deployed one.
        let mixed =
            history(&[Op::Install(v("2.2.1"), Outcome::Ok), Op::Upgrade(v("2.3.0"), Outcome::Failed), Op::Uninstall(Outcome::Killed)]);
        assert!(matches!(mixed.upgrade("t", false), Start::Upgrade(r) if r.version == "2.2.1"));
    }

    #[test]
    fn past_revision_nine_an_uninstalled_release_is_not_reinstalled() {
        let mut ops = vec![Op::Install(v("2.2.1"), Outcome::Ok)];
        ops.extend((0..10).map(|_| Op::Upgrade(v("2.2.1"), Outcome::Ok)));
        ops.push(Op::Uninstall(Outcome::Ok));
        let h = history(&ops);
        assert_eq!(h.last().unwrap().number, 11);
        assert_eq!(h.listed_last().unwrap().number, 9);
        assert_eq!(h.upgrade("t", true), Start::Refused(no_deployed_releases("t")));
    }

    #[test]
    fn pending_refuses_and_a_rollback_supersedes() {
        let pending = history(&[Op::Install(v("2.2.1"), Outcome::Ok), Op::Upgrade(v("2.3.0"), Outcome::Killed)]);
        assert_eq!(pending.upgrade("t", true), Start::Refused(PENDING.into()));
        let mut h = pending.clone();
        h.apply("t", &Op::Rollback(1, Outcome::Ok)).unwrap();
        let statuses: Vec<&str> = h.revisions.iter().map(|r| r.status.as_str()).collect();
        assert_eq!(statuses, ["superseded", "superseded", "deployed"]);
        assert_eq!(h.deployed().unwrap().version, "2.2.1");
        assert!(h.clone().apply("t", &Op::Install(v("2.3.0"), Outcome::Ok)).is_err());
    }
}
