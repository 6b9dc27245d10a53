//! `cargo bench --bench validate`: 50,000 realistic TrainJobs validated in-process against the
//! corpus 2.3.0 TrainJob CRD (one compiled validator, CEL programs compiled once per schema node),
//! beside the peer that does the same job — kube-apiserver 1.36.1's own dry-run create of the same
//! objects on the test control plane (`testkit::controlplane`), timed in the same run on a sample
//! (one connection pool, several requests in flight). Needs `TRAINER_AUDIT_CORPUS`; the peer needs
//! the control-plane binaries (`cargo xtask controlplane`, or `TRAINER_AUDIT_CONTROLPLANE_BIN`).

use std::path::PathBuf;
use std::time::Instant;

use helm_render::chart::Chart;
use helm_render::render::{render_chart, RenderOptions};
use kube_validate::stored::CrdSet;
use kube_validate::Validator;
use kube_version::KubeVersion;
use serde_json::Value;
use testkit::controlplane::http::Call;
use trainer_audit::inventory::Inventory;

const OBJECTS: usize = 50_000;

/// CPU seconds this process has used (user + system, /proc/self/stat fields 14 and 15 in clock
/// ticks of 1/100 s): on a machine shared by several builds the wall clock measures the load as
/// much as the code, so each timing is printed both ways.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The command name (field 2) may hold spaces; the fields after it follow its closing paren.
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let tick = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok()).unwrap_or(0.0);
    (tick(11) + tick(12)) / 100.0
}
const PEER_SAMPLE: usize = 2000;
const PEER_IN_FLIGHT: usize = 8;

fn main() {
    let Some(corpus) = std::env::var_os("TRAINER_AUDIT_CORPUS").map(PathBuf::from) else {
        println!("SKIPPED: TRAINER_AUDIT_CORPUS is not set");
        return;
    };
    let chart = Chart::load_archive_file(&corpus.join("charts/kubeflow-trainer-2.3.0.tgz")).expect("chart");
    let mut o = RenderOptions::default();
    o.release.name = "kubeflow-trainer".into();
    o.release.namespace = "kubeflow-system".into();
    let inv = Inventory::build(&chart, &render_chart(&chart, &o).expect("render"), "kubeflow-system");
    let crd = inv
        .objects
        .iter()
        .find(|o| o.identity.kind == "CustomResourceDefinition" && o.identity.name == "trainjobs.trainer.kubeflow.org")
        .map(|o| serde_json::to_value(&o.body).expect("json"))
        .expect("TrainJob CRD");
    let objects: Vec<Value> = (0..OBJECTS).map(testkit::scenario::realistic_trainjob).collect();
    let size: usize = objects.iter().map(|o| o.to_string().len()).sum::<usize>() / OBJECTS;

    let start = Instant::now();
    let v = Validator::from_crd(&crd, None, KubeVersion::new(1, 36)).expect("validator");
    let compile = start.elapsed().as_secs_f64();
    let (start, cpu) = (Instant::now(), cpu_seconds());
    let mut rejected = 0;
    for obj in &objects {
        let verdict = v.validate(obj, None);
        rejected += usize::from(!verdict.errors.is_empty() || !verdict.unevaluated.is_empty());
    }
    let (ours, ours_cpu) = (start.elapsed().as_secs_f64(), cpu_seconds() - cpu);
    println!(
        "trainer-audit: {OBJECTS} TrainJobs (~{size} bytes JSON each) in {ours:.2} s wall, {ours_cpu:.2} s CPU ({:.1} µs/object, {rejected} rejected); CRD compiled in {:.0} ms",
        ours * 1e6 / OBJECTS as f64,
        compile * 1e3
    );

    // What `check` and `status` run: per object a write as new and a metadata-only update.
    let set = CrdSet::new([&crd], KubeVersion::new(1, 36));
    let (start, cpu) = (Instant::now(), cpu_seconds());
    let survey = set.survey(objects.iter());
    let (surveyed, surveyed_cpu) = (start.elapsed().as_secs_f64(), cpu_seconds() - cpu);
    let tally = &survey.kinds[0];
    println!(
        "trainer-audit survey (check, status: create and metadata-only update per object): {} TrainJobs in {surveyed:.2} s wall, {surveyed_cpu:.2} s CPU ({:.1} µs/object; {} valid, {} rejected)",
        tally.objects,
        surveyed * 1e6 / OBJECTS as f64,
        tally.valid,
        tally.rejected
    );

    if let Err(e) = testkit::controlplane::bin_dir() {
        println!("peer SKIPPED: {e}");
        return;
    }
    let cp = testkit::controlplane::ControlPlane::start().expect("control plane");
    let api = cp.api().expect("client");
    api.apply_crd(&crd).expect("CRD");
    let calls: Vec<Call> = objects
        .iter()
        .take(PEER_SAMPLE)
        .map(|o| Call::new("POST", "/apis/trainer.kubeflow.org/v1alpha1/namespaces/default/trainjobs?dryRun=All", Some(o.clone())))
        .collect();
    let start = Instant::now();
    let replies = api.send_all(&calls, PEER_IN_FLIGHT);
    let peer = start.elapsed().as_secs_f64();
    let peer_rejected = replies.iter().filter(|r| r.as_ref().map_or(true, |r| r.status >= 300)).count();
    println!(
        "kube-apiserver dry-run: {PEER_SAMPLE} TrainJobs in {peer:.2} s ({:.0} µs/object, {peer_rejected} rejected; {PEER_IN_FLIGHT} in flight on one connection pool; extrapolated {:.0} s for {OBJECTS})",
        peer * 1e6 / PEER_SAMPLE as f64,
        peer / PEER_SAMPLE as f64 * OBJECTS as f64
    );
}
