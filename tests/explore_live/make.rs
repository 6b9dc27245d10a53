//! A live state made for real on the lab's control plane, operation by operation as its
//! description says, with the real `helm` and the controllers as their Pods: installs and
//! upgrades as a platform team runs them; a failed upgrade is one whose `--wait` runs out while
//! no kubelet starts the new Pods; a killed one is `helm` killed with SIGKILL while it waits; an
//! interrupted uninstall is killed in its pre-delete hook's wait; `unknown` is the last record's
//! status rewritten in storage. The user's runtimes and TrainJobs are created as soon as their
//! CRDs exist (right after the first install), so the history's later steps run beside them as
//! they run beside a team's jobs: an interrupted 2.3 uninstall's cleanup hook deletes the
//! runtimes its TrainJobs name, which a TrainJob created afterwards could not name (the 2.3
//! webhook refuses it: live seed 1 state 48). Then Pod Security, quotas (their `hard` set from
//! what the quota controller counts) and LimitRanges.

use std::time::{Duration, Instant};

use serde_json::Value as Json;
use testkit::explore::state::{JobState, Op, Outcome, State};

use crate::lab::{Lab, NAMESPACE, RELEASE};

/// Why a live state could not be made as described (Helm or the cluster did otherwise).
pub type NotMade = String;

fn set_flags(state: &State) -> String {
    state.values.iter().map(|(p, v)| format!(" --set-json {}", trainer_audit::shell::quote(&format!("{p}={v}")))).collect()
}

/// Runs `script` until `until` holds (then SIGKILL), bounded; the release's status after.
fn killed_when(lab: &Lab, script: &str, until: &dyn Fn() -> bool) -> String {
    let started = Instant::now();
    let settled = std::cell::Cell::new(None::<Instant>);
    lab.shell_until(script, &|| {
        if started.elapsed() > Duration::from_secs(200) {
            return true;
        }
        // Once the condition holds, a few more seconds for Helm to be waiting, not writing.
        match settled.get() {
            Some(at) => at.elapsed() > Duration::from_secs(5),
            None => {
                if until() {
                    settled.set(Some(Instant::now()));
                }
                false
            }
        }
    });
    lab.release().0
}

fn op(lab: &mut Lab, state: &State, op: &Op) -> Result<(), NotMade> {
    let repo = lab.repo();
    let values = set_flags(state);
    let upgrade = |v: &str, wait: &str| {
        format!(
            "helm upgrade {RELEASE} {repo} --version {v} -n {NAMESPACE} --plain-http --reset-then-reuse-values --take-ownership --force-conflicts --wait --timeout {wait}"
        )
    };
    let expect = |lab: &Lab, status: &str, what: &str| -> Result<(), NotMade> {
        let (now, chart) = lab.release();
        if now == status {
            Ok(())
        } else {
            Err(format!("after {what} the release is {now} ({chart}), not {status}"))
        }
    };
    match op {
        Op::Install(v, Outcome::Ok) => {
            let ran = lab.shell(&format!(
                "helm install {RELEASE} {repo} --version {v} -n {NAMESPACE} --create-namespace --plain-http{values} --wait --timeout 3m"
            ));
            if !ran.ok() {
                return Err(format!("install {v} failed: {}", ran.stderr.trim()));
            }
        }
        Op::Upgrade(v, Outcome::Ok) => {
            let ran = lab.shell(&upgrade(v, "3m"));
            if !ran.ok() {
                return Err(format!("upgrade to {v} failed: {}", ran.stderr.trim()));
            }
        }
        Op::Upgrade(v, Outcome::Failed) => {
            // No kubelet: the new Pods never start and --wait runs out.
            lab.standin_stop();
            let ran = lab.shell(&upgrade(v, "30s"));
            lab.standin_start();
            if ran.ok() {
                return Err(format!("the upgrade to {v} meant to fail succeeded"));
            }
            expect(lab, "failed", "a failed upgrade")?;
        }
        Op::Upgrade(v, Outcome::Killed) => {
            lab.standin_stop();
            let status = killed_when(lab, &upgrade(v, "10m"), &|| lab.release().0 == "pending-upgrade");
            lab.standin_start();
            if status != "pending-upgrade" {
                return Err(format!("the killed upgrade left {status}"));
            }
        }
        Op::Rollback(rev, Outcome::Ok) => {
            let ran = lab.shell(&format!("helm rollback {RELEASE} {rev} -n {NAMESPACE} --force-conflicts --wait --timeout 3m"));
            if !ran.ok() {
                return Err(format!("rollback to {rev} failed: {}", ran.stderr.trim()));
            }
        }
        Op::Uninstall(Outcome::Ok) => {
            let ran = lab.shell(&format!("helm uninstall {RELEASE} -n {NAMESPACE} --keep-history --wait --timeout 3m"));
            if !ran.ok() {
                return Err(format!("uninstall failed: {}", ran.stderr.trim()));
            }
        }
        Op::Uninstall(Outcome::Killed) => {
            // The pre-delete hook's Job never completes without a kubelet.
            lab.standin_stop();
            let status = killed_when(lab, &format!("helm uninstall {RELEASE} -n {NAMESPACE} --keep-history --wait --timeout 10m"), &|| {
                lab.shell(&format!("helm history {RELEASE} -n {NAMESPACE} -o json")).stdout.contains("uninstalling")
            });
            lab.standin_start();
            let history = lab.shell(&format!("helm history {RELEASE} -n {NAMESPACE} -o json")).stdout;
            if !history.contains("uninstalling") {
                return Err(format!("the interrupted uninstall left {status}: {history}"));
            }
        }
        Op::Unknown => rewrite_last_status(lab, "unknown")?,
        other => return Err(format!("no live way to make {other}")),
    }
    Ok(())
}

/// The last revision's record with its status (body and label) rewritten, as storage holds it.
fn rewrite_last_status(lab: &Lab, status: &str) -> Result<(), NotMade> {
    let list = lab.get_json(&format!("secrets -n {NAMESPACE} -l owner=helm,name={RELEASE}"));
    let last = list["items"]
        .as_array()
        .into_iter()
        .flatten()
        .max_by_key(|s| s["metadata"]["labels"]["version"].as_str().and_then(|v| v.parse::<i64>().ok()).unwrap_or(0))
        .ok_or("no release record")?;
    let mut release = trainer_audit::cluster::release::release_json(last).map_err(|e| e.to_string())?;
    release["info"]["status"] = status.into();
    let mut secret = testkit::release::encode_secret(&release, true);
    secret["metadata"]["resourceVersion"] = last["metadata"]["resourceVersion"].clone();
    // From a file: a 2.2 record inline in the script passes the kernel's argument size limit
    // ("Argument list too long", live seed 1 state 10).
    let file = lab.run_dir().join("rewritten-release.json");
    std::fs::write(&file, secret.to_string()).map_err(|e| format!("writing the record: {e}"))?;
    let ran = lab.shell(&format!("kubectl replace -f {}", file.display()));
    if !ran.ok() {
        return Err(format!("rewriting the record: {}", ran.stderr.trim()));
    }
    Ok(())
}

fn apply(lab: &Lab, yaml: &str) -> Result<(), NotMade> {
    let started = Instant::now();
    loop {
        let ran = lab.shell(&format!("kubectl apply -f - <<'EOF'\n{yaml}\nEOF"));
        // A webhook not served yet is waited for, as a user tries again.
        let unserved = ran.stderr.contains("failed calling webhook");
        if ran.ok() || !unserved || started.elapsed().as_secs() > 60 {
            return if ran.ok() { Ok(()) } else { Err(format!("applying the user's objects: {}", ran.stderr.trim())) };
        }
        std::thread::sleep(Duration::from_secs(2));
    }
}

/// The user's runtimes, then TrainJobs, once their CRDs exist; whether they were made (false:
/// no Trainer CRD yet).
fn users(lab: &Lab, state: &State) -> Result<bool, NotMade> {
    let crds = lab.shell("kubectl get crd -o name").stdout;
    let has = |plural: &str| crds.contains(&format!("/{plural}.trainer.kubeflow.org"));
    if !has("clustertrainingruntimes") && !has("trainjobs") {
        return Ok(false);
    }
    let version = lab.release().1;
    let old_schema = version.contains("-2.1.");
    if has("clustertrainingruntimes") {
        for r in &state.runtimes {
            let torch = if old_schema { "{numProcPerNode: auto}" } else { "{}" };
            apply(lab, &crate::users::torch_runtime(&r.name, torch))?;
        }
    }
    if has("trainjobs") && !state.trainjobs.is_empty() {
        lab.shell_ok("kubectl create namespace team-a --dry-run=client -o yaml | kubectl apply -f -");
        for t in &state.trainjobs {
            let mut yaml = crate::users::trainjob_2_2(&t.name, &t.runtime);
            if t.suspended {
                yaml.push_str("  suspend: true\n");
            }
            assert!(matches!(t.state, JobState::Running), "live TrainJobs are made running");
            apply(lab, &yaml.replace("namespace: team-a", &format!("namespace: {}", t.namespace)))?;
        }
    }
    Ok(true)
}

/// The state, made; Err when Helm or the cluster would not make it as described.
pub fn make(lab: &mut Lab, state: &State) -> Result<(), NotMade> {
    let testkit::explore::state::Install::Helm(ops) = &state.install else {
        return Err("the live lab makes Helm installs".into());
    };
    lab.standin_start();
    let mut made = false;
    for o in ops {
        op(lab, state, o)?;
        if !made {
            made = users(lab, state)?;
        }
    }
    if let Some(level) = &state.psa {
        lab.shell_ok(&format!("kubectl label namespace {NAMESPACE} pod-security.kubernetes.io/enforce={level} --overwrite"));
    }
    for l in &state.limit_ranges {
        let mut item = serde_json::json!({"type": "Container"});
        for (field, resource, q) in &l.limits {
            item[field.as_str()][resource.as_str()] = Json::from(q.as_str());
        }
        let lr = serde_json::json!({"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": l.name, "namespace": l.namespace}, "spec": {"limits": [item]}});
        lab.shell_ok(&format!("kubectl apply -f - <<'EOF'\n{lr}\nEOF"));
    }
    for q in &state.quotas {
        lab.shell_ok(&format!("kubectl create namespace {} --dry-run=client -o yaml | kubectl apply -f -", q.namespace));
        // Created roomy, its usage counted by the quota controller, then `hard` set from it.
        let hard: serde_json::Map<String, Json> = q.hard.iter().map(|(r, _, _)| (r.clone(), Json::from("1000"))).collect();
        let quota = serde_json::json!({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": q.name, "namespace": q.namespace}, "spec": {"hard": hard}});
        lab.shell_ok(&format!("kubectl apply -f - <<'EOF'\n{quota}\nEOF"));
        let mut patched = serde_json::Map::new();
        for (resource, used, wanted) in &q.hard {
            let counted = crate::running::poll(60, || {
                let q = lab.get_json(&format!("resourcequota {} -n {}", q.name, q.namespace));
                q["status"]["used"][resource.as_str()].as_str().map(String::from)
            })
            .ok_or(format!("the quota controller never counted {resource}"))?;
            let hard = match (used.as_str(), wanted.strip_prefix('+')) {
                ("*", Some(n)) => format!("{}", counted.parse::<u64>().unwrap_or(0) + n.parse::<u64>().unwrap_or(0)),
                _ => wanted.clone(),
            };
            patched.insert(resource.clone(), Json::from(hard));
        }
        let patch = serde_json::json!({"spec": {"hard": patched}});
        lab.shell_ok(&format!("kubectl patch resourcequota {} -n {} --type=merge -p '{patch}'", q.name, q.namespace));
    }
    Ok(())
}
