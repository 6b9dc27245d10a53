//! Differential acceptance of `trainer_audit::validate` against a real kube-apiserver 1.36: the
//! object corpus generated from each target CRD (testkit::crdcorpus) is sent to the API server
//! (dry-run creates, and real create + dry-run update pairs for transition rules) and to our
//! validator; verdicts and rejected field paths must agree. Needs the corpus charts
//! (`TRAINER_AUDIT_CORPUS`) and a directory with `etcd` and `kube-apiserver`
//! (`TRAINER_AUDIT_CPBIN`), so it is `#[ignore]`d by default: `cargo test --test
//! validate_differential -- --ignored --nocapture`.

mod support;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::Value;
use testkit::apiserver::ApiServer;
use testkit::crdcorpus::{cases, Target};
use trainer_audit::chart::Chart;
use trainer_audit::helm::render::{render_chart, RenderOptions};
use trainer_audit::inventory::Inventory;
use trainer_audit::validate::{KubeVersion, Validator};

const KINDS: &[&str] = &["TrainJob", "TrainingRuntime", "ClusterTrainingRuntime", "JobSet"];

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
        .map(|o| serde_json::to_value(&o.body).unwrap())
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

struct Tally {
    agreed: usize,
    total: usize,
    pruned_agreed: usize,
    samples: Vec<String>,
    sampled: BTreeSet<String>,
    disagreements: Vec<String>,
}

fn run_crd(api: &ApiServer, crd: &Value, chart: &str, t: &mut Tally) {
    let target = Target::of(crd).unwrap();
    let validator = Validator::from_crd(crd, None, KubeVersion::new(1, 36)).unwrap();
    let base = if target.namespaced {
        format!("/apis/{}/{}/namespaces/default/{}", target.group, target.version, target.plural)
    } else {
        format!("/apis/{}/{}/{}", target.group, target.version, target.plural)
    };
    let all = cases(&target, 1500);
    let (mut agreed, total) = (0, all.len());
    let (mut rejected, mut updates) = (0, 0);
    for case in all {
        let (reply, ours) = match &case.old {
            None => {
                let r = api.request("POST", &format!("{base}?dryRun=All&fieldValidation=Warn"), Some(&case.object)).unwrap();
                (r, validator.validate(&case.object, None))
            }
            Some(old) => {
                let _ = api.request("DELETE", &format!("{base}/{}", old["metadata"]["name"].as_str().unwrap()), None);
                let created = api.request("POST", &format!("{base}?fieldValidation=Warn"), Some(old)).unwrap();
                if created.status >= 300 {
                    // The old object itself is invalid: compare as a create instead.
                    let ours = validator.validate(old, None);
                    (created, ours)
                } else {
                    let stored = created.body.clone();
                    let mut obj = case.object.clone();
                    obj["metadata"]["resourceVersion"] = stored["metadata"]["resourceVersion"].clone();
                    let name = obj["metadata"]["name"].as_str().unwrap().to_string();
                    let r = api.request("PUT", &format!("{base}/{name}?dryRun=All&fieldValidation=Warn"), Some(&obj)).unwrap();
                    (r, validator.validate(&obj, Some(&stored)))
                }
            }
        };
        let server_ok = reply.status < 300;
        rejected += usize::from(!server_ok);
        updates += usize::from(case.old.is_some());
        let ours_ok = ours.errors.is_empty() && ours.unevaluated.is_empty();
        let sf = server_fields(&reply.body);
        let of: BTreeSet<String> = ours.errors.iter().map(|e| e.field.clone()).collect();
        let server_pruned: BTreeSet<String> = reply
            .warnings
            .iter()
            .filter_map(|w| w.strip_prefix("unknown field \"").and_then(|w| w.strip_suffix('"')).map(String::from))
            .collect();
        let ours_pruned: BTreeSet<String> = ours.pruned.iter().cloned().collect();
        let verdict_agrees = server_ok == ours_ok && (server_ok || sf == of);
        if verdict_agrees {
            agreed += 1;
            let kind = case.name.rsplit(':').next().unwrap_or("").split('-').next().unwrap_or("").to_string();
            if !server_ok && t.samples.len() < 12 && !sf.contains("<nil>") && t.sampled.insert(kind) {
                t.samples.push(format!(
                    "{chart} {} {}\n    api-server: {}\n    ours:       {}",
                    target.kind,
                    case.name,
                    reply.body["message"].as_str().unwrap_or(""),
                    ours.status_message(
                        &format!("{}.{}", target.kind, target.group),
                        case.object["metadata"]["name"].as_str().unwrap_or("")
                    )
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
        if server_ok && server_pruned == ours_pruned {
            t.pruned_agreed += 1;
        } else if server_ok {
            t.disagreements
                .push(format!("{chart} {} {}: pruned api-server {server_pruned:?} ours {ours_pruned:?}", target.kind, case.name));
        }
    }
    println!("{chart} {}: {agreed} agreed of {total} ({rejected} rejected by the API server, {updates} updates)", target.kind);
    t.agreed += agreed;
    t.total += total;
}

#[test]
#[ignore = "needs TRAINER_AUDIT_CORPUS and TRAINER_AUDIT_CPBIN (etcd + kube-apiserver); run with --ignored"]
fn validator_agrees_with_kube_apiserver() {
    let corpus = support::corpus();
    let bin =
        PathBuf::from(std::env::var_os("TRAINER_AUDIT_CPBIN").expect("TRAINER_AUDIT_CPBIN names a directory with etcd and kube-apiserver"));
    let api = ApiServer::start(&bin).unwrap();
    let mut t = Tally { agreed: 0, total: 0, pruned_agreed: 0, samples: Vec::new(), sampled: BTreeSet::new(), disagreements: Vec::new() };
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
    println!("TOTAL: {} agreed of {} (pruned fields agreed on {} accepted objects)", t.agreed, t.total, t.pruned_agreed);
    println!("sample (API server message beside ours):");
    for s in &t.samples {
        println!("  {s}");
    }
    for d in t.disagreements.iter().take(40) {
        println!("DISAGREE {d}");
    }
    assert!(t.disagreements.is_empty(), "{} disagreements", t.disagreements.len());
}
