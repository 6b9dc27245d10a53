//! Whether what `check` predicted happened: each error finding is *observed* when an un-fixed
//! attempt's output holds one of the texts the rule expects (`expect` in the JSON), or when the
//! damage it predicts is read back (a runtime deleted or left Terminating, a field gone, an
//! object that accepts no write). And the converse: an attempt that failed must be explained by
//! some finding's expected text, or `check` missed a blocker.

use serde_json::Value as Json;

use crate::lab::{Lab, Ran};
use crate::observe::State;
use crate::printed::{Check, Finding};

/// The texts a finding expects (from `check --format json`).
pub fn expected(check: &Check, finding: &Finding) -> Vec<String> {
    check.report["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|f| f["id"] == finding.id.as_str() && f["subject"] == finding.subject.as_str())
        .and_then(|f| f["expect"].as_array())
        .map(|e| e.iter().filter_map(|x| x["text"].as_str().map(squash)).collect())
        .unwrap_or_default()
}

/// Whitespace runs as one space (rule texts are folded YAML; Helm wraps nothing, but be fair).
pub fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The dotted `path` (`spec.trainer.numProcPerNode`) of an object's JSON.
fn at<'a>(object: &'a Json, path: &str) -> Option<&'a Json> {
    path.split('.').try_fold(object, |v, key| v.get(key))
}

/// How the predicted damage of `finding` shows in the cluster after the un-fixed attempts, if it
/// does: `before`/`after` are read back before and after them.
pub fn damage(lab: &Lab, finding: &Finding, before: &State, after: &State) -> Option<String> {
    if let Some(name) = finding.subject.strip_prefix("ClusterTrainingRuntime/") {
        return match after.runtimes.get(name) {
            None if before.runtimes.contains_key(name) => Some(format!("ClusterTrainingRuntime {name} deleted")),
            Some(r) if r.terminating => Some(format!("ClusterTrainingRuntime {name} left Terminating (finalizers {:?})", r.finalizers)),
            // TA-RT-002 names a runtime check saw Terminating: gone by the time the attempts
            // started (a 2.3 controller already running removed the finalizer) and there after
            // them, it was deleted and re-created, as above, only sooner.
            Some(_) if finding.id == "TA-RT-002" && !before.runtimes.contains_key(name) => Some(format!(
                "ClusterTrainingRuntime {name}, Terminating when check read it, deleted before the upgrade started and re-created by it"
            )),
            // Deleted, then re-created (by the 2.3 installer hook): the TrainJobs lost it meanwhile.
            Some(r) if before.runtimes.get(name).is_some_and(|b| !b.uid.is_empty() && b.uid != r.uid) => {
                Some(format!("ClusterTrainingRuntime {name} deleted and re-created (UID {} → {})", before.runtimes[name].uid, r.uid))
            }
            _ => None,
        };
    }
    // TA-FLD-001: `Kind spec.path`, the field the target CRD no longer declares or retypes.
    let (kind, path) = finding.subject.split_once(' ')?;
    let (objects_before, objects_after, resource) = match kind {
        "TrainJob" => (&before.trainjobs, &after.trainjobs, "trainjob"),
        "ClusterTrainingRuntime" => return None,
        _ => return None,
    };
    let path = path.strip_prefix("spec.")?;
    for (key, spec) in objects_before {
        let Some(was) = at(spec, path) else { continue };
        match objects_after.get(key).map(|s| at(s, path)) {
            Some(None) => return Some(format!("{kind} {key}: spec.{path} gone on read-back (was {was})")),
            Some(Some(now)) if now != was => return Some(format!("{kind} {key}: spec.{path} read back as {now} (was {was})")),
            _ => {}
        }
        // Still there as it was: does the object accept a write (a label, as any controller's)?
        // A webhook that is not served (its manager down or restarting mid-upgrade) says nothing
        // about the object: the write is tried again until the webhook answers, and a refusal
        // only counts when it is not that.
        let (ns, name) = key.split_once('/')?;
        let started = std::time::Instant::now();
        let probe = loop {
            let probe = lab.shell(&format!("kubectl label {resource} {name} -n {ns} rehearsal-probe=1 --overwrite"));
            if probe.ok() || !unserved_webhook(&probe.stderr) || started.elapsed().as_secs() > 90 {
                break probe;
            }
            std::thread::sleep(std::time::Duration::from_secs(2));
        };
        if !probe.ok() && !unserved_webhook(&probe.stderr) {
            return Some(format!("{kind} {key} accepts no write: {}", squash(&probe.stderr)));
        }
        // A webhook still unserved (an upgrade that failed half-way left its Service selecting no
        // ready Pod) hides the object's own validation from every write through it; the status
        // subresource, which the controller writes and no webhook of these charts intercepts, is
        // validated with the same rules (the whole object's CEL rules, k8s v1.36.1
        // `statusStrategy.ValidateUpdate`).
        if !probe.ok() {
            let status = lab.shell(&format!(
                "kubectl patch {resource} {name} -n {ns} --subresource=status --type=merge -p '{{\"status\":{{\"conditions\":[{{\"type\":\"RehearsalProbe\",\"status\":\"True\",\"reason\":\"Probe\",\"message\":\"probe\",\"lastTransitionTime\":\"2026-01-01T00:00:00Z\"}}]}}}}'"
            ));
            if !status.ok() && !unserved_webhook(&status.stderr) {
                return Some(format!("{kind} {key} accepts no status write (its webhook unserved): {}", squash(&status.stderr)));
            }
        }
    }
    None
}

/// An API server answer that only says a webhook was not reached.
fn unserved_webhook(stderr: &str) -> bool {
    stderr.contains("failed calling webhook")
        && ["no endpoints available", "connection refused", "context deadline exceeded", "i/o timeout"].iter().any(|t| stderr.contains(t))
}

/// The runtimes findings cover through their spec: a ClusterTrainingRuntime's spec field read
/// back without it.
pub fn runtime_field_damage(finding: &Finding, before: &State, after: &State) -> Option<String> {
    let (kind, path) = finding.subject.split_once(' ')?;
    if kind != "ClusterTrainingRuntime" {
        return None;
    }
    let path = path.strip_prefix("spec.")?;
    before.runtimes.iter().find_map(|(name, r)| {
        let was = at(&r.spec, path)?;
        match after.runtimes.get(name).map(|a| at(&a.spec, path)) {
            Some(None) => Some(format!("ClusterTrainingRuntime {name}: spec.{path} gone on read-back (was {was})")),
            _ => None,
        }
    })
}

/// The first expected text of `finding` found in what the attempts printed, or its damage.
pub fn observed(lab: &Lab, check: &Check, finding: &Finding, attempts: &[Ran], before: &State, after: &State) -> Option<String> {
    let printed: Vec<String> = attempts.iter().map(|r| squash(&format!("{}\n{}", r.stdout, r.stderr))).collect();
    for text in expected(check, finding) {
        if let Some(line) = printed.iter().find(|p| p.contains(&text)) {
            let at = line.find(&text).unwrap_or(0);
            let start = line[..at].rfind("Error:").unwrap_or(at);
            let end = (at + text.len() + 120).min(line.len());
            let end = (end..=line.len()).find(|i| line.is_char_boundary(*i)).unwrap_or(line.len());
            return Some(format!("printed: {}", &line[start..end]));
        }
    }
    damage(lab, finding, before, after).or_else(|| runtime_field_damage(finding, before, after))
}

/// The finding whose expected text explains a failed attempt, if any.
pub fn explained_by<'a>(check: &'a Check, failed: &Ran) -> Option<&'a Finding> {
    let printed = squash(&failed.stderr);
    check.findings.iter().find(|f| expected(check, f).iter().any(|t| printed.contains(t)))
}
