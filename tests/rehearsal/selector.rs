//! TA-IMM-001 with the real controllers: what happens to the controller Deployment's old
//! ReplicaSet, its Pod, the old manager's process and Trainer's leader-election Lease while the
//! runbook deletes the Deployment and Helm re-creates it with another selector. A watcher thread
//! polls the release namespace every second (Deployments, ReplicaSets, Pods, Leases, with
//! `kubectl get -o json`) and the stand-in's records (which manager binary each Pod ran, when
//! the stand-in stopped it), and keeps every change with the seconds since the watch began: a
//! timeline the rehearsal asserts on and prints.
//!
//! kube-controller-manager v1.36.1's deployment controller lists the namespace's ReplicaSets and
//! adopts an orphan whose labels its selector matches (`pkg/controller/controller_ref_manager.go`
//! `ClaimObject`; not one being deleted); Trainer's managers elect a leader on the Lease
//! `trainer.kubeflow.org` (15 s lease, 10 s renew deadline in every chart and in the kustomize
//! manifests) and do not release it when stopped (no `LeaderElectionReleaseOnCancel`).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use std::time::{Duration, Instant};

use serde_json::Value as Json;
use testkit::standin::Record;

use crate::lab::{Lab, NAMESPACE};

/// Trainer's leader-election Lease (`resourceName` in every chart's and the kustomize manifests'
/// controller configuration).
pub const LEASE: &str = "trainer.kubeflow.org";

/// One change the watcher saw.
#[derive(Debug, Clone)]
pub struct Event {
    /// Seconds since the watch began.
    pub at: f64,
    /// `ReplicaSet/<name>`, `Pod/<name>`, `Deployment/<name>`, `Lease/<name>`, `standin`.
    pub subject: String,
    /// What it is now (`gone` when it disappeared).
    pub now: String,
}

/// A running watch; [`Watch::stop`] gives the timeline.
pub struct Watch {
    stop: Arc<AtomicBool>,
    started: Instant,
    marks: Mutex<Vec<Event>>,
    thread: Option<std::thread::JoinHandle<Vec<Event>>>,
}

/// A watch dropped unstopped (a failed assertion) stops its thread.
impl Drop for Watch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

/// The state of one object as the timeline records it: its owner, replicas, deletion.
fn describe(kind: &str, o: &Json, uid_names: &BTreeMap<String, String>) -> String {
    let owner = o["metadata"]["ownerReferences"]
        .as_array()
        .and_then(|refs| refs.iter().find(|r| r["controller"] == true))
        .map(|r| {
            let uid = r["uid"].as_str().unwrap_or_default();
            let name = uid_names.get(uid).cloned().unwrap_or_else(|| format!("{}?", r["name"].as_str().unwrap_or_default()));
            format!("{} {name} ({})", r["kind"].as_str().unwrap_or_default(), &uid[..uid.len().min(8)])
        })
        .unwrap_or_else(|| "none".into());
    let deleting = if o["metadata"]["deletionTimestamp"].is_string() { ", deleting" } else { "" };
    match kind {
        "Deployment" => {
            let uid = o["metadata"]["uid"].as_str().unwrap_or_default();
            format!(
                "uid {} selector {} replicas {}/{} updated {} available {}{deleting}",
                &uid[..uid.len().min(8)],
                o["spec"]["selector"]["matchLabels"],
                o["status"]["replicas"].as_i64().unwrap_or(0),
                o["spec"]["replicas"].as_i64().unwrap_or(0),
                o["status"]["updatedReplicas"].as_i64().unwrap_or(0),
                o["status"]["availableReplicas"].as_i64().unwrap_or(0),
            )
        }
        "ReplicaSet" => format!(
            "owner {owner}, replicas {} wanted {} ready {}{deleting}",
            o["status"]["replicas"].as_i64().unwrap_or(0),
            o["spec"]["replicas"].as_i64().unwrap_or(0),
            o["status"]["readyReplicas"].as_i64().unwrap_or(0),
        ),
        "Pod" => {
            let ready = o["status"]["conditions"].as_array().into_iter().flatten().any(|c| c["type"] == "Ready" && c["status"] == "True");
            format!("owner {owner}, {}{}{deleting}", o["status"]["phase"].as_str().unwrap_or("?"), if ready { " ready" } else { "" })
        }
        "Lease" => format!(
            "holder {} transitions {} acquired {}",
            o["spec"]["holderIdentity"].as_str().unwrap_or("none"),
            o["spec"]["leaseTransitions"].as_i64().unwrap_or(0),
            o["spec"]["acquireTime"].as_str().unwrap_or("never")
        ),
        _ => String::new(),
    }
}

fn record_line(r: &Record) -> Option<String> {
    Some(match r {
        Record::ControllerStarted { pod, binary, .. } => format!("{pod} started {binary}"),
        Record::ControllerReady { pod } => format!("{pod} ready"),
        Record::ControllerExited { pod, exit_code, .. } => format!("{pod} exited {exit_code}"),
        Record::ControllerRestarted { pod, restart_count } => format!("{pod} restarted ({restart_count})"),
        Record::ControllerStopped { pod, why } => format!("{pod} stopped: {why}"),
        _ => return None,
    })
}

impl Watch {
    /// Starts watching the release namespace of `lab` (and its stand-in's records).
    pub fn start(lab: &Lab) -> Watch {
        let env = lab.env();
        let dir = lab.run_dir();
        let records = lab.standin_shared_records();
        let stop = Arc::new(AtomicBool::new(false));
        let thread_stop = stop.clone();
        let started = Instant::now();
        let thread = std::thread::spawn(move || {
            let mut events = Vec::new();
            let mut last: BTreeMap<String, String> = BTreeMap::new();
            let mut seen_records = 0usize;
            while !thread_stop.load(Ordering::SeqCst) {
                let out = std::process::Command::new("kubectl")
                    .args(["get", "deployments,replicasets,pods,leases", "-n", NAMESPACE, "-o", "json"])
                    .current_dir(&dir)
                    .env_clear()
                    .envs(env.iter().cloned())
                    .output();
                let at = started.elapsed().as_secs_f64();
                if let Some(list) = out.ok().filter(|o| o.status.success()).and_then(|o| serde_json::from_slice::<Json>(&o.stdout).ok()) {
                    let items = list["items"].as_array().cloned().unwrap_or_default();
                    let uid_names: BTreeMap<String, String> = items
                        .iter()
                        .map(|o| {
                            (
                                o["metadata"]["uid"].as_str().unwrap_or_default().to_string(),
                                o["metadata"]["name"].as_str().unwrap_or_default().to_string(),
                            )
                        })
                        .collect();
                    let mut now: BTreeMap<String, String> = BTreeMap::new();
                    for o in &items {
                        let kind = o["kind"].as_str().unwrap_or_default();
                        let name = o["metadata"]["name"].as_str().unwrap_or_default();
                        let relevant = match kind {
                            "Lease" => name == LEASE,
                            "Pod" | "ReplicaSet" | "Deployment" => name.contains("controller-manager"),
                            _ => false,
                        };
                        if relevant {
                            now.insert(format!("{kind}/{name}"), describe(kind, o, &uid_names));
                        }
                    }
                    for (subject, state) in &now {
                        if last.get(subject) != Some(state) {
                            events.push(Event { at, subject: subject.clone(), now: state.clone() });
                        }
                    }
                    for subject in last.keys().filter(|s| !now.contains_key(*s)) {
                        events.push(Event { at, subject: subject.clone(), now: "gone".into() });
                    }
                    last = now;
                }
                if let Some(records) = &records {
                    let new: Vec<Record> = records.lock().map(|r| r.iter().skip(seen_records).cloned().collect()).unwrap_or_default();
                    seen_records += new.len();
                    events.extend(new.iter().filter_map(record_line).map(|now| Event { at, subject: "standin".into(), now }));
                }
                std::thread::sleep(Duration::from_millis(700));
            }
            events
        });
        Watch { stop, started, marks: Mutex::new(Vec::new()), thread: Some(thread) }
    }

    /// Puts a line of the test's own into the timeline now (`runbook block 7 starts: …`).
    pub fn mark(&self, what: &str) {
        let at = self.started.elapsed().as_secs_f64();
        if let Ok(mut marks) = self.marks.lock() {
            marks.push(Event { at, subject: "test".into(), now: what.to_string() });
        }
    }

    pub fn stop(mut self) -> Timeline {
        self.stop.store(true, Ordering::SeqCst);
        let mut events = self.thread.take().map(|t| t.join().unwrap_or_default()).unwrap_or_default();
        events.extend(self.marks.lock().map(|m| m.clone()).unwrap_or_default());
        events.sort_by(|a, b| a.at.total_cmp(&b.at));
        Timeline { events }
    }
}

/// Every change seen, in order.
#[derive(Debug, Clone, Default)]
pub struct Timeline {
    pub events: Vec<Event>,
}

impl Timeline {
    /// One line per change: `  12.3 s  ReplicaSet/x: owner Deployment y (abcd1234), replicas 1 …`.
    pub fn render(&self) -> String {
        self.events.iter().map(|e| format!("{:7.1} s  {}: {}", e.at, e.subject, e.now)).collect::<Vec<_>>().join("\n")
    }

    /// When `subject`'s state first satisfied `test`.
    pub fn first(&self, subject: &str, test: impl Fn(&str) -> bool) -> Option<f64> {
        self.events.iter().find(|e| e.subject == subject && test(&e.now)).map(|e| e.at)
    }

    /// The stand-in lines (`<pod> started <binary>`, `<pod> stopped: …`) with their times.
    pub fn standin(&self) -> Vec<(f64, String)> {
        self.events.iter().filter(|e| e.subject == "standin").map(|e| (e.at, e.now.clone())).collect()
    }

    /// The Lease's holders in order, with when each took it.
    pub fn holders(&self) -> Vec<(f64, String)> {
        let mut out: Vec<(f64, String)> = Vec::new();
        for e in self.events.iter().filter(|e| e.subject == format!("Lease/{LEASE}")) {
            let holder = e.now.split_whitespace().nth(1).unwrap_or_default().to_string();
            if out.last().map(|(_, h)| h) != Some(&holder) {
                out.push((e.at, holder));
            }
        }
        out
    }
}

/// The holder identity of Trainer's Lease now (None when there is no Lease or no holder).
pub fn lease_holder(lab: &Lab) -> Option<String> {
    let ran = lab.shell(&format!("kubectl get lease {LEASE} -n {NAMESPACE} -o jsonpath='{{.spec.holderIdentity}}'"));
    let holder = ran.stdout.trim().to_string();
    (ran.ok() && !holder.is_empty()).then_some(holder)
}

/// Shared, so several rehearsals can print the same kind of summary.
pub fn summary(timeline: &Timeline) -> String {
    let holders: Vec<String> = timeline.holders().iter().map(|(at, h)| format!("{at:.1} s {h}")).collect();
    let standin: Vec<String> = timeline.standin().iter().map(|(at, l)| format!("{at:.1} s {l}")).collect();
    format!("lease holders: {holders:?}\ncontrollers: {standin:#?}")
}

/// The ReplicaSets of the release namespace's controller Deployment now: (name, owner uid).
fn replica_sets_now(lab: &Lab, deployment_uid: &str) -> Vec<(String, String)> {
    let list = lab.get_json(&format!("replicasets -n {NAMESPACE}"));
    list["items"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|rs| {
            let owner = rs["metadata"]["ownerReferences"][0]["uid"].as_str().unwrap_or_default().to_string();
            (rs["metadata"]["name"].as_str().unwrap_or_default().to_string(), owner)
        })
        .filter(|(_, owner)| owner == deployment_uid)
        .collect()
}

/// The Deployment a runbook's `kubectl … delete deployment NAME` line names.
pub fn deleted_deployment(blocks: &[String]) -> Option<String> {
    blocks
        .iter()
        .flat_map(|b| b.lines())
        .filter(|l| l.trim_start().starts_with("kubectl ") && l.contains(" delete deployment "))
        .find_map(|l| l.split(" delete deployment ").nth(1).and_then(|rest| rest.split_whitespace().next()).map(String::from))
}

/// The uid of Deployment `name` in the release namespace.
fn deployment_uid(lab: &Lab, name: &str) -> String {
    lab.get_json(&format!("deployment {name} -n {NAMESPACE}"))["metadata"]["uid"].as_str().unwrap_or_default().to_string()
}

/// What one run of the runbook did to the old controller: when (seconds into the runbook) its
/// ReplicaSet was adopted by the new Deployment, scaled to zero, deleted; when the stand-in
/// stopped the old manager; who held the Lease when.
#[derive(Debug, Default)]
pub struct Outcome {
    pub adopted: Option<f64>,
    pub scaled_down: Option<f64>,
    pub deleted: Option<f64>,
    pub old_stopped: Option<f64>,
    pub target_started: Option<f64>,
    pub target_leads: bool,
}

impl Outcome {
    /// One line for docs/rehearsals.md.
    pub fn line(&self) -> String {
        let at = |t: Option<f64>| t.map(|t| format!("{t:.1} s")).unwrap_or_else(|| "never".into());
        format!(
            "old ReplicaSet adopted {}, scaled to zero {}, deleted {}; old manager stopped {}; target manager started {}; the Lease changed holder: {}",
            at(self.adopted),
            at(self.scaled_down),
            at(self.deleted),
            at(self.old_stopped),
            at(self.target_started),
            self.target_leads
        )
    }
}

/// The one-off experiment behind TA-IMM-001's variants: `from` installed, `check` (with
/// `extra` values flags) must report TA-IMM-001; the runbook then runs verbatim except that
/// its `kubectl delete deployment` line uses `form` (`--cascade=orphan`, `background`,
/// `foreground`), with a [`Watch`] over it; then up to 2 minutes for the target's manager to
/// take the Lease. Everything seen is printed; the outcome is returned.
pub fn experiment(name: &'static str, versions: &[&str], from: fn(&mut Lab), extra: &[&str], form: &str) -> Option<Outcome> {
    let mut lab = Lab::start(name, versions)?;
    from(&mut lab);
    let to = *versions.last().unwrap();
    let repo = lab.repo();
    let with = |command: &str, more: &[&str]| -> Vec<String> {
        let mut args: Vec<String> = [command, "--to", to, "--repo", repo.as_str(), "--plain-http"].iter().map(|s| s.to_string()).collect();
        args.extend(extra.iter().map(|s| s.to_string()));
        args.extend(more.iter().map(|s| s.to_string()));
        args
    };
    let args = with("check", &["--format", "json"]);
    let check = lab.audit(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let report: Json = serde_json::from_str(&check.stdout).unwrap_or_else(|e| panic!("[{name}] check JSON: {e}\n{check}"));
    let imm: Vec<&Json> = report["findings"].as_array().into_iter().flatten().filter(|f| f["id"] == "TA-IMM-001").collect();
    assert!(!imm.is_empty(), "[{name}] check reports no TA-IMM-001:\n{}", check.stdout);
    lab.note(&format!("TA-IMM-001: {}", imm.iter().map(|f| f["message"].to_string()).collect::<Vec<_>>().join("\n")));

    let args = with("runbook", &[]);
    let runbook = lab.audit(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(runbook.ok(), "[{name}] runbook: {runbook}");
    let cascade = regex::Regex::new(r"--cascade=\S+").unwrap();
    let blocks: Vec<String> = crate::printed::sh_blocks(&runbook.stdout)
        .into_iter()
        .map(|b| {
            b.lines()
                .map(|l| {
                    if l.trim_start().starts_with("kubectl ") && l.contains(" delete deployment ") {
                        cascade.replace(l, form).into_owned()
                    } else {
                        l.to_string()
                    }
                })
                .collect::<Vec<_>>()
                .join("\n")
        })
        .collect();
    let deletes: Vec<&str> = blocks
        .iter()
        .flat_map(|b| b.lines())
        .filter(|l| l.trim_start().starts_with("kubectl ") && l.contains(" delete deployment "))
        .collect();
    assert!(!deletes.is_empty(), "[{name}] the runbook deletes no Deployment:\n{}", runbook.stdout);
    lab.note(&format!("the delete as run: {deletes:?}"));

    let old_deployment = deployment_uid(&lab, &deleted_deployment(&blocks).unwrap());
    let old_sets = replica_sets_now(&lab, &old_deployment);
    let old_pods: Vec<String> = crate::running::controller_pods(&lab.standin_records())
        .into_iter()
        .filter(|(_, (binary, _))| binary.starts_with("trainer-controller-manager"))
        .map(|(pod, _)| pod)
        .collect();
    let old_holder = lease_holder(&lab);
    lab.note(&format!(
        "before: Deployment uid {old_deployment}, ReplicaSets {old_sets:?}, manager Pods {old_pods:?}, Lease holder {old_holder:?}"
    ));

    let watch = Watch::start(&lab);
    let ran = crate::printed::run_blocks_marked(&lab, &blocks, &|i, block| {
        let first = block.lines().find(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#')).unwrap_or("");
        watch.mark(&format!("runbook block {} starts: {}", i + 1, first.chars().take(120).collect::<String>()));
    });
    let passed = ran.len() == blocks.len() && ran.last().is_some_and(|r| r.ok());
    watch
        .mark(&format!("runbook ended: {}", if passed { "every block passed".to_string() } else { format!("block {} failed", ran.len()) }));
    if !passed {
        lab.note(&format!("the failing block: {}", ran.last().map(|r| r.to_string()).unwrap_or_default()));
    }
    let target = crate::manager_of(to);
    // Every manager process runs on the one stand-in host, so the Lease's holder identity
    // (`<hostname>_<uuid>`) tells processes apart, not Pods: the old manager held it before the
    // runbook, so another holder afterwards is the target's manager.
    let led = crate::running::poll(120, || (lease_holder(&lab).is_some_and(|h| Some(&h) != old_holder.as_ref())).then_some(()));
    watch.mark(&format!("the Lease changed holder: {}", led.is_some()));
    // A few more samples, so the watch records the Lease as the new holder took it.
    std::thread::sleep(Duration::from_secs(3));
    let timeline = watch.stop();
    lab.note(&format!("timeline:\n{}", timeline.render()));
    lab.note(&summary(&timeline));

    let mut outcome = Outcome { target_leads: led.is_some(), ..Outcome::default() };
    let runbook_start = timeline.events.iter().find(|e| e.subject == "test").map(|e| e.at).unwrap_or(0.0);
    let since = |t: Option<f64>| t.map(|t| t - runbook_start);
    let short = &old_deployment[..old_deployment.len().min(8)];
    for (rs, _) in &old_sets {
        let subject = format!("ReplicaSet/{rs}");
        outcome.adopted = outcome.adopted.or(since(timeline.first(&subject, |s| s.starts_with("owner Deployment") && !s.contains(short))));
        outcome.scaled_down = outcome.scaled_down.or(since(timeline.first(&subject, |s| s.contains("replicas 0 wanted 0"))));
        outcome.deleted = outcome.deleted.or(since(timeline.first(&subject, |s| s == "gone")));
    }
    let standin = timeline.standin();
    outcome.old_stopped =
        since(standin.iter().find(|(_, l)| old_pods.iter().any(|p| l.starts_with(&format!("{p} stopped")))).map(|(at, _)| *at));
    outcome.target_started = since(standin.iter().find(|(_, l)| l.ends_with(&format!("started {target}"))).map(|(at, _)| *at));
    lab.note(&format!(
        "OUTCOME {name} ({form}): runbook {}; {} (seconds into the runbook)",
        if passed { "passed" } else { "FAILED" },
        outcome.line()
    ));
    Some(outcome)
}

/// Which fix the runbook carries for TA-IMM-001: the `--cascade` of its `kubectl delete
/// deployment` line (`orphan`: variant adopted; `foreground`: variant orphaned).
pub fn cascade_of(blocks: &[String]) -> Option<String> {
    blocks
        .iter()
        .flat_map(|b| b.lines())
        .filter(|l| l.trim_start().starts_with("kubectl ") && l.contains(" delete deployment "))
        .find_map(|l| l.split_whitespace().find_map(|w| w.strip_prefix("--cascade=")).map(String::from))
}

/// A [`Watch`] over a runbook that deletes the controller Deployment (TA-IMM-001), and what was
/// there before it ran.
pub struct RunbookWatch {
    pub watch: Watch,
    cascade: String,
    old_holder: Option<String>,
    old_sets: Vec<String>,
    old_deployment: String,
    old_pods: Vec<String>,
}

impl RunbookWatch {
    /// Starts watching when the runbook deletes the controller Deployment (else None).
    pub fn start(lab: &Lab, blocks: &[String]) -> Option<RunbookWatch> {
        let cascade = cascade_of(blocks)?;
        let old_deployment = deployment_uid(lab, &deleted_deployment(blocks)?);
        let old_sets = replica_sets_now(lab, &old_deployment).into_iter().map(|(name, _)| name).collect();
        let old_pods = crate::running::controller_pods(&lab.standin_records())
            .into_iter()
            .filter(|(_, (binary, _))| binary.starts_with("trainer-controller-manager"))
            .map(|(pod, _)| pod)
            .collect();
        Some(RunbookWatch { watch: Watch::start(lab), cascade, old_holder: lease_holder(lab), old_sets, old_deployment, old_pods })
    }

    /// After the runbook: the target's manager must take the Lease within 90 s, and the old
    /// controller must have gone as the variant says — adopted (`--cascade=orphan`): the new
    /// Deployment adopted the old ReplicaSet and scaled it to zero, stopping the old manager;
    /// orphaned (`--cascade=foreground`): the old ReplicaSet and manager were gone before Helm's
    /// upgrade began. Prints the timeline either way.
    pub fn finish(self, lab: &Lab) {
        let RunbookWatch { watch, cascade, old_holder, old_sets, old_deployment, old_pods } = self;
        let led = crate::running::poll(90, || lease_holder(lab).is_some_and(|h| Some(&h) != old_holder.as_ref()).then_some(()));
        watch.mark(&format!("the Lease changed holder: {}", led.is_some()));
        std::thread::sleep(Duration::from_secs(2));
        let timeline = watch.stop();
        lab.note(&format!("TA-IMM-001 (--cascade={cascade}) timeline:\n{}", timeline.render()));
        let short = &old_deployment[..old_deployment.len().min(8)];
        let upgrade_began = timeline
            .events
            .iter()
            .find(|e| e.subject == "test" && e.now.contains(" starts: helm ") && e.now.contains(" upgrade "))
            .map(|e| e.at)
            .unwrap_or(f64::MAX);
        let stopped =
            timeline.standin().into_iter().find(|(_, l)| old_pods.iter().any(|p| l.starts_with(&format!("{p} stopped")))).map(|(at, _)| at);
        assert!(stopped.is_some(), "the old manager {old_pods:?} was never stopped:\n{}", timeline.render());
        for rs in &old_sets {
            let subject = format!("ReplicaSet/{rs}");
            match cascade.as_str() {
                "orphan" => {
                    let adopted = timeline.first(&subject, |s| s.starts_with("owner Deployment") && !s.contains(short));
                    let scaled = timeline.first(&subject, |s| s.contains("replicas 0 wanted 0"));
                    assert!(
                        adopted.is_some() && scaled.is_some(),
                        "adopted variant: the new Deployment must adopt {rs} and scale it to zero:\n{}",
                        timeline.render()
                    );
                    lab.note(&format!(
                        "OBSERVED TA-IMM-001 (adopted): {rs} adopted at {:.1} s, scaled to zero at {:.1} s",
                        adopted.unwrap(),
                        scaled.unwrap()
                    ));
                }
                "foreground" => {
                    let gone = timeline.first(&subject, |s| s == "gone");
                    assert!(gone.is_some(), "orphaned variant: {rs} must be deleted:\n{}", timeline.render());
                    // kubectl returned once it was gone: the watch samples every 0.7 s or so, so it
                    // may see that a moment after Helm's upgrade began, never seconds after.
                    assert!(gone.unwrap() < upgrade_began + 2.0, "orphaned variant: {rs} outlived the delete:\n{}", timeline.render());
                    lab.note(&format!(
                        "OBSERVED TA-IMM-001 (orphaned): {rs} gone at {:.1} s, Helm's upgrade began at {upgrade_began:.1} s",
                        gone.unwrap()
                    ));
                }
                other => panic!("TA-IMM-001's fix uses --cascade={other}, which no variant prints"),
            }
        }
        assert!(led.is_some(), "the target's manager never took the Lease from the old holder {old_holder:?}:\n{}", timeline.render());
    }
}
