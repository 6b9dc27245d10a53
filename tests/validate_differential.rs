//! Differential acceptance of `kube_validate` against a real kube-apiserver 1.36.1 (the
//! shared harness `testkit::controlplane`): the object corpus generated from each target CRD
//! (`testkit::crdcorpus`) is sent to the API server — dry-run creates, and for transition rules a
//! real create of the old object then a dry-run update — and to our validator; verdicts and the
//! rejected field paths must agree, and so must the fields pruned from accepted objects. Requests
//! go over one reused connection, 16 in flight, in three batches per CRD (creates, stored olds,
//! updates), so the whole corpus (no sampling) runs in about a minute instead of a process per
//! request. A second test stores objects under the 2.1.0 CRDs, applies the 2.3.0 CRDs and
//! compares what the `schema` check says of each stored object (rejected on every update, or not;
//! rejected as new, or not) with a metadata-only dry-run update and a dry-run create. Needs the
//! corpus charts (`TRAINER_AUDIT_CORPUS`), so both are `#[ignore]`d by default; `cargo xtask test`
//! runs them with the control-plane binaries.

mod support;

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Instant;

use helm_render::chart::Chart;
use helm_render::render::{render_chart, RenderOptions};
use kube_validate::stored::{CrdSet, Standing};
use kube_validate::{Validator, WriteOutcome};
use kube_version::KubeVersion;
use serde_json::Value;
use testkit::controlplane::http::{Api, Call, Reply};
use testkit::crdcorpus::{cases, Case, Target};
use trainer_audit::inventory::Inventory;

const KINDS: &[&str] = &["TrainJob", "TrainingRuntime", "ClusterTrainingRuntime", "JobSet"];
/// Every case the generator makes (about 19,000 over the two charts: a minute on the harness).
const MAX_CASES: usize = usize::MAX;
/// Objects per CRD stored under the old CRDs for the stored-objects comparison (an even spread).
const STORED_CASES: usize = 600;
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

fn compare(t: &mut Tally, chart: &str, target: &Target, case: &Case, reply: &Reply, ours: &WriteOutcome) {
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
    let olds: Vec<Call> = updates.iter().map(|c| Call::new("POST", format!("{base}?fieldValidation=Warn"), c.old.clone())).collect();
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

fn resource_path(crd: &Value, namespace: Option<&str>) -> String {
    let t = Target::of(crd).unwrap();
    match namespace {
        Some(ns) if t.namespaced => format!("/apis/{}/{}/namespaces/{ns}/{}", t.group, t.version, t.plural),
        _ => format!("/apis/{}/{}/{}", t.group, t.version, t.plural),
    }
}

/// Stored objects across a CRD change: what `trainer-audit check` (kind `schema`) says each object
/// meets on its next write, against what kube-apiserver does with a metadata-only update and a
/// create of the same object.
#[test]
#[ignore = "needs TRAINER_AUDIT_CORPUS (the real charts' CRDs) and the control-plane binaries; cargo xtask test runs it"]
fn stored_objects_agree_after_the_crds_change() {
    let corpus = support::corpus();
    let Some(cp) = testkit::controlplane::fresh_or_skip("stored_objects_agree_after_the_crds_change") else { return };
    let api = cp.api().unwrap();
    let started = Instant::now();
    let old_crds = crds(&corpus, "2.1.0");
    for crd in &old_crds {
        api.apply_crd(crd).unwrap();
    }
    for ns in ["team-a", "team-b", "ml"] {
        let r = api.request("POST", "/api/v1/namespaces", Some(&serde_json::json!({"metadata": {"name": ns}}))).unwrap();
        assert!(r.status < 300, "namespace {ns}: {}", r.body);
    }
    // What users stored under 2.1: the migrate fixture, and the valid objects the generator
    // derives from each 2.1 CRD.
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/migrate/trainer-2.1.yaml");
    let mut objects: Vec<Value> = trainer_audit::migrate::input::read_files(&[fixture]).unwrap();
    objects.iter_mut().for_each(|o| *o = trainer_audit::migrate::output::stripped(o));
    for crd in &old_crds {
        let target = Target::of(crd).unwrap();
        objects.extend(cases(&target, STORED_CASES).into_iter().filter(|c| c.old.is_none()).map(|c| c.object));
    }
    let calls: Vec<Call> = objects
        .iter()
        .map(|o| {
            let crd = old_crds.iter().find(|c| c.pointer("/spec/names/kind") == o.get("kind")).unwrap();
            Call::new("POST", resource_path(crd, o.pointer("/metadata/namespace").and_then(Value::as_str)), Some(o.clone()))
        })
        .collect();
    let stored: Vec<Value> =
        api.send_all(&calls, IN_FLIGHT).into_iter().filter_map(|r| r.ok().filter(|r| r.status == 201).map(|r| r.body)).collect();
    let new_crds = crds(&corpus, "2.3.0");
    for crd in &new_crds {
        api.apply_crd(crd).unwrap();
    }
    let set = CrdSet::new(new_crds.iter(), KubeVersion::new(1, 36));
    let path_of = |o: &Value| {
        let crd = new_crds.iter().find(|c| c.pointer("/spec/names/kind") == o.get("kind")).unwrap();
        resource_path(crd, o.pointer("/metadata/namespace").and_then(Value::as_str))
    };
    // The objects as the API server now returns them (pruned), each with a probe label added:
    // the update a controller's finalizer or label write amounts to.
    let gets: Vec<Call> = stored.iter().map(|o| Call::new("GET", format!("{}/{}", path_of(o), name_of(o)), None)).collect();
    let now: Vec<Value> = api.send_all(&gets, IN_FLIGHT).into_iter().map(|r| r.unwrap().body).collect();
    let puts: Vec<Call> = now
        .iter()
        .map(|o| {
            let mut probe = o.clone();
            probe["metadata"]["labels"]["trainer-audit.dev/probe"] = Value::String("update".into());
            Call::new("PUT", format!("{}/{}?dryRun=All", path_of(o), name_of(o)), Some(probe))
        })
        .collect();
    let creates: Vec<Call> = stored
        .iter()
        .map(|o| Call::new("POST", format!("{}?dryRun=All", path_of(o)), Some(trainer_audit::migrate::output::stripped(o))))
        .collect();
    let updates = api.send_all(&puts, IN_FLIGHT);
    let anew = api.send_all(&creates, IN_FLIGHT);
    let (mut agreed, mut rejected, mut disagreements, mut samples) = (0, 0, Vec::new(), Vec::new());
    for ((o, update), create) in stored.iter().zip(updates).zip(anew) {
        let (update, create) = (update.unwrap(), create.unwrap());
        let ours = set.assess(o).unwrap();
        let who = ours.subject();
        let server_rejects_updates = update.status >= 300;
        let ours_fields: BTreeSet<String> = ours.on_any_update.iter().map(|e| e.field.clone()).collect();
        let update_agrees = server_rejects_updates == (ours.standing == Standing::Rejected)
            && (!server_rejects_updates || server_fields(&update.body) == ours_fields);
        // A create of a valid object that exists is refused as AlreadyExists (409), after validation.
        let server_rejects_new = create.status == 422;
        let new_fields: BTreeSet<String> = ours.as_new.iter().map(|e| e.field.clone()).collect();
        let create_agrees =
            server_rejects_new != ours.as_new.is_empty() && (!server_rejects_new || server_fields(&create.body) == new_fields);
        let evaluated = ours.unevaluated.is_empty();
        rejected += usize::from(server_rejects_updates);
        if update_agrees && create_agrees && evaluated {
            agreed += 1;
            if server_rejects_updates && samples.len() < 3 {
                samples.push(format!(
                    "{who}\n    api-server: {}\n    ours:       {}",
                    update.body["message"].as_str().unwrap_or(""),
                    ours.message
                ));
            }
        } else {
            disagreements.push(format!(
                "{who}: update api-server {} {} | ours {:?} {:?}; create api-server {} {} | ours {:?}; unevaluated {:?}",
                update.status,
                update.body["message"].as_str().unwrap_or(""),
                ours.standing,
                ours.on_any_update.iter().map(ToString::to_string).collect::<Vec<_>>(),
                create.status,
                create.body["message"].as_str().unwrap_or(""),
                ours.as_new.iter().map(ToString::to_string).collect::<Vec<_>>(),
                ours.unevaluated
            ));
        }
    }
    println!(
        "stored under 2.1.0, judged under 2.3.0: {agreed} agreed of {} ({rejected} rejected on every update by the API server) in {:.0} s",
        stored.len(),
        started.elapsed().as_secs_f64()
    );
    for s in &samples {
        println!("  {s}");
    }
    for d in disagreements.iter().take(40) {
        println!("DISAGREE {d}");
    }
    assert!(stored.len() > 100, "only {} objects were stored under 2.1.0", stored.len());
    assert!(rejected > 0, "no stored object is rejected on update: the comparison proves nothing");
    assert!(disagreements.is_empty(), "{} disagreements", disagreements.len());
}
