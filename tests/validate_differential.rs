//! Differential acceptance of `trainer_audit::validate` against a real kube-apiserver 1.36.1 (the
//! shared harness `testkit::controlplane`): the object corpus generated from each target CRD
//! (`testkit::crdcorpus`) is sent to the API server — dry-run creates, and for transition rules a
//! real create of the old object then a dry-run update — and to our validator; verdicts and the
//! rejected field paths must agree, and so must the fields pruned from accepted objects. Requests
//! go over one reused connection, 16 in flight, in three batches per CRD (creates, stored olds,
//! updates), so the whole corpus runs in about a minute instead of a process per request. Needs
//! the corpus charts (`TRAINER_AUDIT_CORPUS`), so it is `#[ignore]`d by default; `cargo xtask
//! test` runs it with the control-plane binaries.

mod support;

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Instant;

use serde_json::Value;
use testkit::controlplane::http::{Api, Call, Reply};
use testkit::crdcorpus::{cases, Case, Target};
use trainer_audit::chart::Chart;
use trainer_audit::helm::render::{render_chart, RenderOptions};
use trainer_audit::inventory::Inventory;
use trainer_audit::validate::{KubeVersion, Validator, Verdict};

const KINDS: &[&str] = &["TrainJob", "TrainingRuntime", "ClusterTrainingRuntime", "JobSet"];
/// Cases per CRD: every constraint the generator finds is covered well below this for the
/// Trainer CRDs; JobSet's pod-template schema is sampled evenly.
const MAX_CASES: usize = 1500;
const IN_FLIGHT: usize = 16;

fn crds(corpus: &Path, version: &str) -> Vec<Value> {
    let chart = Chart::load_archive_file(&corpus.join(format!("charts/kubeflow-trainer-{version}.tgz"))).unwrap();
    let mut o = RenderOptions::default();
    o.release.name = "kubeflow-trainer".into();
    o.release.namespace = "kubeflow-system".into();
    let inv = Inventory::build(&chart, &render_chart(&chart, &o).unwrap(), "kubeflow-system");
    let mut out: Vec<Value> = inv
        .objects
        .iter()
        .filter(|o| o.identity.kind == "CustomResourceDefinition")
        .map(|o| o.body.clone())
        .filter(|c| KINDS.contains(&c.pointer("/spec/names/kind").and_then(Value::as_str).unwrap_or("")))
        .collect();
    out.sort_by_key(|c| c["metadata"]["name"].as_str().unwrap_or("").to_string());
    out
}

fn server_fields(reply: &Value) -> BTreeSet<String> {
    reply
        .pointer("/details/causes")
        .and_then(Value::as_array)
        .map(|c| c.iter().filter_map(|c| c["field"].as_str().map(String::from)).collect())
        .unwrap_or_default()
}

#[derive(Default)]
struct Tally {
    agreed: usize,
    total: usize,
    pruned_agreed: usize,
    samples: Vec<String>,
    sampled: BTreeSet<String>,
    disagreements: Vec<String>,
}

fn name_of(o: &Value) -> &str {
    o["metadata"]["name"].as_str().unwrap_or("")
}

/// Deletes every object of the CRD's kind (a fresh start for the next chart's update pairs).
fn clear(api: &Api, base: &str) {
    let r = api.request("DELETE", base, None).unwrap();
    assert!(r.status < 300, "deletecollection {base}: {} {}", r.status, r.body);
    for _ in 0..100 {
        let left = api.request("GET", base, None).unwrap();
        if left.body["items"].as_array().is_none_or(Vec::is_empty) {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!("objects under {base} were not deleted");
}

fn compare(t: &mut Tally, chart: &str, target: &Target, case: &Case, reply: &Reply, ours: &Verdict) {
    let server_ok = reply.status < 300;
    let ours_ok = ours.errors.is_empty() && ours.unevaluated.is_empty();
    let sf = server_fields(&reply.body);
    let of: BTreeSet<String> = ours.errors.iter().map(|e| e.field.clone()).collect();
    t.total += 1;
    if server_ok == ours_ok && (server_ok || sf == of) {
        t.agreed += 1;
        let kind = case.name.rsplit(':').next().unwrap_or("").split('-').next().unwrap_or("").to_string();
        if !server_ok && t.samples.len() < 12 && !sf.contains("<nil>") && t.sampled.insert(kind) {
            t.samples.push(format!(
                "{chart} {} {}\n    api-server: {}\n    ours:       {}",
                target.kind,
                case.name,
                reply.body["message"].as_str().unwrap_or(""),
                ours.status_message(&format!("{}.{}", target.kind, target.group), name_of(&case.object))
            ));
        }
    } else {
        t.disagreements.push(format!(
            "{chart} {} {}: api-server {} {:?} {} | ours {:?} unevaluated {:?}",
            target.kind,
            case.name,
            reply.status,
            sf,
            reply.body["message"].as_str().unwrap_or(""),
            ours.errors.iter().map(ToString::to_string).collect::<Vec<_>>(),
            ours.unevaluated
        ));
    }
    if server_ok {
        let server_pruned: BTreeSet<String> = reply
            .warnings
            .iter()
            .filter_map(|w| w.strip_prefix("unknown field \"").and_then(|w| w.strip_suffix('"')).map(String::from))
            .collect();
        let ours_pruned: BTreeSet<String> = ours.pruned.iter().cloned().collect();
        if server_pruned == ours_pruned {
            t.pruned_agreed += 1;
        } else {
            t.disagreements
                .push(format!("{chart} {} {}: pruned api-server {server_pruned:?} ours {ours_pruned:?}", target.kind, case.name));
        }
    }
}

fn run_crd(api: &Api, crd: &Value, chart: &str, t: &mut Tally) {
    let started = Instant::now();
    let target = Target::of(crd).unwrap();
    let validator = Validator::from_crd(crd, None, KubeVersion::new(1, 36)).unwrap();
    let base = if target.namespaced {
        format!("/apis/{}/{}/namespaces/default/{}", target.group, target.version, target.plural)
    } else {
        format!("/apis/{}/{}/{}", target.group, target.version, target.plural)
    };
    clear(api, &base);
    let all = cases(&target, MAX_CASES);
    let (creates, updates): (Vec<&Case>, Vec<&Case>) = all.iter().partition(|c| c.old.is_none());
    let before = (t.agreed, t.total);
    // 1. Dry-run creates.
    let calls: Vec<Call> =
        creates.iter().map(|c| Call::new("POST", format!("{base}?dryRun=All&fieldValidation=Warn"), Some(c.object.clone()))).collect();
    let mut rejected = 0;
    for (case, reply) in creates.iter().zip(api.send_all(&calls, IN_FLIGHT)) {
        let reply = reply.unwrap();
        rejected += usize::from(reply.status >= 300);
        compare(t, chart, &target, case, &reply, &validator.validate(&case.object, None));
    }
    // 2. The old objects of the update pairs, stored for real; 3. dry-run updates of them.
    let olds: Vec<Call> = updates
        .iter()
        .map(|c| Call::new("POST", format!("{base}?fieldValidation=Warn"), c.old.clone()))
        .collect();
    let stored = api.send_all(&olds, IN_FLIGHT);
    let mut puts = Vec::new();
    let mut pairs = Vec::new();
    for (case, created) in updates.iter().zip(stored) {
        let created = created.unwrap();
        let old = case.old.as_ref().unwrap();
        if created.status >= 300 {
            // The old object itself is invalid: compare it as a create instead.
            rejected += 1;
            compare(t, chart, &target, case, &created, &validator.validate(old, None));
            continue;
        }
        let mut obj = case.object.clone();
        obj["metadata"]["resourceVersion"] = created.body["metadata"]["resourceVersion"].clone();
        puts.push(Call::new("PUT", format!("{base}/{}?dryRun=All&fieldValidation=Warn", name_of(&obj)), Some(obj.clone())));
        pairs.push((*case, obj, created.body));
    }
    for ((case, obj, stored), reply) in pairs.iter().zip(api.send_all(&puts, IN_FLIGHT)) {
        let reply = reply.unwrap();
        rejected += usize::from(reply.status >= 300);
        compare(t, chart, &target, case, &reply, &validator.validate(obj, Some(stored)));
    }
    println!(
        "{chart} {}: {} agreed of {} ({rejected} rejected by the API server, {} updates) in {:.1} s",
        target.kind,
        t.agreed - before.0,
        t.total - before.1,
        updates.len(),
        started.elapsed().as_secs_f64()
    );
}

#[test]
#[ignore = "needs TRAINER_AUDIT_CORPUS (the real charts' CRDs) and the control-plane binaries; cargo xtask test runs it"]
fn validator_agrees_with_kube_apiserver() {
    let corpus = support::corpus();
    let Some(cp) = testkit::controlplane::fresh_or_skip("validator_agrees_with_kube_apiserver") else { return };
    let api = cp.api().unwrap();
    let started = Instant::now();
    let mut t = Tally::default();
    for chart in ["2.2.1", "2.3.0"] {
        let crds = crds(&corpus, chart);
        assert_eq!(crds.len(), 4, "{chart}: the four target CRDs");
        for crd in &crds {
            api.apply_crd(crd).unwrap();
        }
        for crd in &crds {
            run_crd(&api, crd, chart, &mut t);
        }
    }
    println!(
        "TOTAL: {} agreed of {} (pruned fields agreed on {} accepted objects) in {:.0} s",
        t.agreed,
        t.total,
        t.pruned_agreed,
        started.elapsed().as_secs_f64()
    );
    println!("sample (API server message beside ours):");
    for s in &t.samples {
        println!("  {s}");
    }
    for d in t.disagreements.iter().take(40) {
        println!("DISAGREE {d}");
    }
    assert!(t.disagreements.is_empty(), "{} disagreements", t.disagreements.len());
}
