//! 2.0 and 2.1 TrainJobs → the 2.2+ API: `podTemplateOverrides` (2.0: `podSpecOverrides`), `labels` and `annotations` become
//! `runtimePatches` (`overrides`), and a string `spec.trainer.numProcPerNode` becomes the number
//! that means the same, or goes when 2.2's default means the same (`nproc`). A runtime value the
//! TrainJob inherited is written onto the TrainJob, because 2.2 runtimes cannot carry it.
//! Also the entry point for the 2.1 → 2.2 pass over all objects (runtimes via `runtime`).

use std::collections::BTreeMap;

use serde_json::{json, Value as Json};

use super::nproc::{self, Decision};
use super::output::stripped;
use super::overrides::runtime_patches;
use super::{runtime, Conversion, Level, Note, ObjectId, Options, PatchOp, SchemaVerdict, Source};

static NONE: Json = Json::Null;
const NPROC_PATH: &str = "spec.trainer.numProcPerNode";
const NPROC_POINTER: &str = "/spec/trainer/numProcPerNode";
const SRC_STUCK: &str =
    "T@v2.2.0 pkg/apis/trainer/v1alpha1/trainjob_types.go#L114 (spec.trainer: self == oldSelf); seen on kube-apiserver 1.36.1";

/// Runtimes in the input, by kind, namespace and name.
struct Runtimes<'a>(BTreeMap<(&'a str, &'a str, &'a str), &'a Json>);

impl<'a> Runtimes<'a> {
    fn index(objects: &'a [Json]) -> Runtimes<'a> {
        let mut map = BTreeMap::new();
        for o in objects.iter().filter(|o| runtime::is_runtime(o)) {
            let kind = o.get("kind").and_then(Json::as_str).unwrap_or("");
            let ns = if kind == "TrainingRuntime" { o.pointer("/metadata/namespace").and_then(Json::as_str).unwrap_or("") } else { "" };
            let name = o.pointer("/metadata/name").and_then(Json::as_str).unwrap_or("");
            map.insert((kind, ns, name), o);
        }
        Runtimes(map)
    }

    /// The runtime a TrainJob references (`runtimeRef.kind` defaults to ClusterTrainingRuntime).
    fn of(&self, job: &Json) -> Option<&'a Json> {
        let r = job.pointer("/spec/runtimeRef")?;
        if r.get("apiGroup").and_then(Json::as_str).is_some_and(|g| g != "trainer.kubeflow.org") {
            return None;
        }
        let kind = r.get("kind").and_then(Json::as_str).unwrap_or("ClusterTrainingRuntime");
        let ns = if kind == "TrainingRuntime" { job.pointer("/metadata/namespace").and_then(Json::as_str).unwrap_or("") } else { "" };
        self.0.get(&(kind, ns, r.get("name").and_then(Json::as_str).unwrap_or(""))).copied()
    }
}

pub fn convert_all(objects: &[Json], options: &Options) -> Vec<Conversion> {
    let convert = Converter::new(objects, options);
    crate::par::map_chunks(objects, |share| share.iter().filter_map(|o| convert.convert(o)).collect::<Vec<_>>())
        .into_iter()
        .flatten()
        .collect()
}

/// Converts one object at a time, each TrainJob with its runtime found among all the objects.
pub struct Converter<'a> {
    runtimes: Runtimes<'a>,
    options: &'a Options,
}

impl<'a> Converter<'a> {
    pub fn new(objects: &'a [Json], options: &'a Options) -> Converter<'a> {
        Converter { runtimes: Runtimes::index(objects), options }
    }

    /// The object's conversion; None when it needs none (or is of another kind).
    pub fn convert(&self, o: &Json) -> Option<Conversion> {
        if runtime::is_runtime(o) {
            runtime::convert(o, self.options)
        } else if is_trainjob(o) {
            convert(o, self.runtimes.of(o), self.options)
        } else {
            None
        }
    }
}

fn is_trainjob(o: &Json) -> bool {
    o.get("kind").and_then(Json::as_str) == Some("TrainJob")
        && o.get("apiVersion").and_then(Json::as_str).is_some_and(|v| v.starts_with("trainer.kubeflow.org/"))
}

/// Converts one TrainJob; None when it needs nothing. `rt` is its runtime when known.
fn convert(o: &Json, rt: Option<&Json>, options: &Options) -> Option<Conversion> {
    let spec = o.get("spec")?;
    let trainer = spec.get("trainer");
    let own = trainer.and_then(|t| t.get("numProcPerNode"));
    let inherited = rt.map(|r| runtime::torch(r).and_then(|t| t.get("numProcPerNode")));
    // The node's resources as 2.1 saw them; a known runtime without any counts as empty.
    let resources = match (trainer.and_then(|t| t.get("resourcesPerNode")), rt) {
        (Some(r), _) => Some(r),
        (None, Some(r)) => Some(runtime::node_resources(r).unwrap_or(&NONE)),
        (None, None) => None,
    };
    let decision = nproc::decide(own, inherited, resources, rt.map(|r| runtime::torch(r).is_some()));
    let removed: Vec<&str> =
        ["podSpecOverrides", "podTemplateOverrides", "labels", "annotations"].into_iter().filter(|k| spec.get(*k).is_some()).collect();
    if decision == Decision::Keep && removed.is_empty() {
        return None;
    }
    let patches = runtime_patches(spec, &options.patch_manager);
    let original = stripped(o);
    let mut c = Conversion {
        id: ObjectId::of(&original),
        original: original.clone(),
        converted: None,
        write: true,
        notes: patches.notes,
        before_crds: Vec::new(),
        schema: SchemaVerdict::NotValidated { reason: String::new() },
    };
    if let Some(why) = patches.refuse {
        let field = if spec.get("podSpecOverrides").is_some() { "spec.podSpecOverrides" } else { "spec.podTemplateOverrides" };
        c.notes.push(Note::new(Level::Refused, field, why, "T@v2.3.0 pkg/apis/trainer/v1alpha1/trainjob_types.go#L118-L124"));
        return Some(c);
    }
    let mut converted = original;
    let Some(spec_out) = converted.get_mut("spec").and_then(Json::as_object_mut) else { return Some(c) };
    for k in &removed {
        spec_out.remove(*k);
    }
    if !patches.entries.is_empty() {
        let list = spec_out.entry("runtimePatches").or_insert_with(|| json!([]));
        let Some(list) = list.as_array_mut() else {
            c.notes.push(Note::new(Level::Refused, "spec.runtimePatches", "is not a list", ""));
            return Some(c);
        };
        for e in patches.entries {
            if list.iter().any(|x| x.get("manager") == e.get("manager")) {
                c.notes.push(Note::new(
                    Level::Refused,
                    "spec.runtimePatches",
                    format!("already has an entry with manager {}: choose another with --patch-manager", e["manager"]),
                    "",
                ));
                return Some(c);
            }
            list.push(e);
        }
    }
    match decision {
        Decision::Keep => {}
        Decision::Refuse(why) => {
            let stuck = if own.is_some_and(Json::is_string) {
                " Until it is fixed while the 2.1 CRDs are installed, the 2.2+ API server rejects every update to this TrainJob, status included \
                 (\"spec.trainer: Invalid value: \\\"object\\\": invalid data, expected int, got string evaluating rule: field is immutable\"); \
                 deleting it still works"
            } else {
                ""
            };
            c.notes.push(Note::new(
                Level::Refused,
                NPROC_PATH,
                format!("{why}.{stuck}"),
                format!("{}; {SRC_STUCK}", nproc::SRC_21_MEANING),
            ));
            return Some(c);
        }
        Decision::Set(n, why) => {
            let trainer_out = spec_out.entry("trainer").or_insert_with(|| json!({}));
            if let Some(t) = trainer_out.as_object_mut() {
                t.insert("numProcPerNode".into(), json!(n));
            }
            c.before_crds = set_ops(own, trainer.is_some(), n);
            c.notes.push(Note::new(
                Level::Converted,
                NPROC_PATH,
                format!("→ {n}: {why}"),
                format!("{}; {}", nproc::SRC_21_MEANING, nproc::SRC_22_TYPE),
            ));
        }
        Decision::Remove(why) => {
            if let Some(t) = spec_out.get_mut("trainer").and_then(Json::as_object_mut) {
                t.remove("numProcPerNode");
            }
            c.before_crds =
                own.map(|v| vec![test(v), PatchOp { op: "remove", path: NPROC_POINTER.into(), value: None }]).unwrap_or_default();
            c.notes.push(Note::new(
                Level::Converted,
                NPROC_PATH,
                format!("removed: {why}"),
                format!("{}; {}", nproc::SRC_21_MEANING, nproc::SRC_22_AUTO),
            ));
        }
    }
    if rt.is_none() && own.is_none() {
        c.notes.push(Note::new(
            Level::Review,
            NPROC_PATH,
            "the runtime is not in the input: if it sets mlPolicy.torch.numProcPerNode, 2.2 ignores that value and this TrainJob gets auto; pass the runtime too",
            nproc::SRC_21_MEANING,
        ));
    }
    if !c.before_crds.is_empty() {
        c.notes.push(Note::new(
            Level::Review,
            NPROC_PATH,
            "a stored TrainJob needs this change while the 2.1 CRDs are still installed (migrate --before-crds prints the kubectl patch): \
             under 2.2+ CRDs spec.trainer is immutable",
            SRC_STUCK,
        ));
    }
    if options.source == Source::Cluster
        && c.notes.iter().any(|n| {
            ["spec.podSpecOverrides", "spec.podTemplateOverrides", "spec.labels", "spec.annotations"].iter().any(|p| n.path.starts_with(p))
        })
    {
        c.notes.push(Note::new(
            Level::Review,
            "spec.runtimePatches",
            "apply the List after the new CRDs and before the controller upgrade: Trainer 2.2+'s webhook lets runtimePatches change only while the TrainJob is suspended",
            "T@v2.3.0 pkg/runtime/framework/plugins/jobset/jobset.go#L214-L250",
        ));
    }
    c.converted = Some(converted);
    Some(c)
}

fn test(old: &Json) -> PatchOp {
    PatchOp { op: "test", path: NPROC_POINTER.into(), value: Some(old.clone()) }
}

/// JSON Patch operations setting numProcPerNode to `n` on the stored 2.1 object.
fn set_ops(own: Option<&Json>, has_trainer: bool, n: i64) -> Vec<PatchOp> {
    match own {
        Some(old) => vec![test(old), PatchOp { op: "replace", path: NPROC_POINTER.into(), value: Some(json!(n)) }],
        None if has_trainer => vec![PatchOp { op: "add", path: NPROC_POINTER.into(), value: Some(json!(n)) }],
        None => vec![PatchOp { op: "add", path: "/spec/trainer".into(), value: Some(json!({ "numProcPerNode": n })) }],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::migrate::DEFAULT_PATCH_MANAGER;

    fn job(spec: Json) -> Json {
        json!({"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
               "metadata": {"name": "j", "namespace": "ns", "uid": "u", "managedFields": [{}]}, "spec": spec, "status": {"conditions": []}})
    }

    fn runtime(torch: Json) -> Json {
        json!({"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "ClusterTrainingRuntime", "metadata": {"name": "torch-distributed"},
               "spec": {"mlPolicy": {"torch": torch}, "template": {"spec": {"replicatedJobs": [{"name": "node", "template": {"spec": {"template": {"spec": {
                   "containers": [{"name": "node", "resources": {"limits": {"nvidia.com/gpu": 2}}}]}}}}}]}}}})
    }

    fn files() -> Options {
        Options::new(false, Source::Files)
    }

    #[test]
    fn overrides_and_gpu_string() {
        let j = job(json!({"runtimeRef": {"name": "torch-distributed"}, "labels": {"team": "a"},
            "trainer": {"numProcPerNode": "gpu", "resourcesPerNode": {"limits": {"nvidia.com/gpu": 4}}},
            "podTemplateOverrides": [{"targetJobs": [{"name": "node"}], "spec": {"nodeSelector": {"pool": "gpu"}}}]}));
        let c = convert_all(&[j], &files()).pop().unwrap();
        let out = c.converted.clone().unwrap();
        assert_eq!(out["spec"]["trainer"]["numProcPerNode"], 4);
        assert!(out["spec"].get("podTemplateOverrides").is_none() && out["spec"].get("labels").is_none());
        assert_eq!(out["spec"]["runtimePatches"][0]["manager"], DEFAULT_PATCH_MANAGER);
        assert!(out.get("status").is_none() && out["metadata"].get("uid").is_none() && out["metadata"].get("managedFields").is_none());
        assert_eq!(
            c.before_crds,
            vec![
                PatchOp { op: "test", path: NPROC_POINTER.into(), value: Some(json!("gpu")) },
                PatchOp { op: "replace", path: NPROC_POINTER.into(), value: Some(json!(4)) }
            ]
        );
        assert!(!c.incomplete());
    }

    #[test]
    fn podspec_overrides_of_2_0_become_the_same_patches_as_2_1s() {
        let fields =
            json!({"nodeSelector": {"pool": "gpu"}, "containers": [{"name": "node", "env": [{"name": "A", "value": "1"}], "image": "x"}]});
        let mut v21 = json!({"targetJobs": [{"name": "node"}], "spec": fields.clone()});
        let mut v20 = fields;
        v20["targetJobs"] = json!([{"name": "node"}]);
        let c21 = convert_all(&[job(json!({"runtimeRef": {"name": "x"}, "podTemplateOverrides": [v21.take()]}))], &files()).pop().unwrap();
        let c20 = convert_all(&[job(json!({"runtimeRef": {"name": "x"}, "podSpecOverrides": [v20]}))], &files()).pop().unwrap();
        let out = c20.converted.clone().unwrap();
        assert!(out["spec"].get("podSpecOverrides").is_none(), "{out}");
        assert_eq!(out["spec"]["runtimePatches"], c21.converted.unwrap()["spec"]["runtimePatches"]);
        let lost: Vec<&str> = c20.notes.iter().filter(|n| n.level == Level::Lost).map(|n| n.path.as_str()).collect();
        assert_eq!(lost, ["spec.podSpecOverrides[0].containers[0].image"]);
        assert!(c20.notes.iter().all(|n| !n.path.contains("podTemplateOverrides")));
        assert!(c20.notes.iter().any(|n| n.path == "spec.podSpecOverrides[0]" && n.source.contains("T@v2.0.1")));
        let both = job(json!({"runtimeRef": {"name": "x"}, "podSpecOverrides": [], "podTemplateOverrides": []}));
        assert!(convert_all(&[both], &files()).pop().unwrap().refused());
    }

    #[test]
    fn auto_is_removed_and_ints_need_nothing() {
        let c = convert_all(&[job(json!({"runtimeRef": {"name": "x"}, "trainer": {"numProcPerNode": "auto"}}))], &files()).pop().unwrap();
        assert!(c.converted.unwrap()["spec"]["trainer"].get("numProcPerNode").is_none());
        assert_eq!(c.before_crds[1].op, "remove");
        assert!(convert_all(&[job(json!({"runtimeRef": {"name": "x"}, "trainer": {"numProcPerNode": 3}}))], &files()).is_empty());
    }

    #[test]
    fn inherits_from_the_runtime_in_the_input() {
        let objects = [job(json!({"runtimeRef": {"name": "torch-distributed"}})), runtime(json!({"numProcPerNode": "gpu"}))];
        let cs = convert_all(&objects, &files());
        assert_eq!(cs.len(), 2);
        let tj = cs.iter().find(|c| c.id.kind == "TrainJob").unwrap();
        assert_eq!(tj.converted.as_ref().unwrap()["spec"]["trainer"], json!({"numProcPerNode": 2}));
        assert_eq!(tj.before_crds, vec![PatchOp { op: "add", path: "/spec/trainer".into(), value: Some(json!({"numProcPerNode": 2})) }]);
    }

    #[test]
    fn refuses_without_a_faithful_number() {
        let c = convert_all(
            &[job(json!({"runtimeRef": {"name": "x"}, "trainer": {"numProcPerNode": "gpu", "resourcesPerNode": {"limits": {"cpu": 4}}}}))],
            &files(),
        )
        .pop()
        .unwrap();
        assert!(c.refused());
        let n = c.notes.iter().find(|n| n.level == Level::Refused).unwrap();
        assert!(n.text.contains("invalid data, expected int, got string"), "{}", n.text);
        let c = convert_all(&[job(json!({"runtimeRef": {"name": "x"}, "trainer": {"numProcPerNode": "cpu"}}))], &files()).pop().unwrap();
        assert!(c.refused(), "cpu without resources or runtime");
    }

    #[test]
    fn cluster_objects_get_the_ordering_note_and_manager_clash_is_refused() {
        let j = job(json!({"runtimeRef": {"name": "x"}, "annotations": {"a": "b"}, "trainer": {"numProcPerNode": 2}}));
        let c = convert_all(&[j], &Options::new(false, Source::Cluster)).pop().unwrap();
        assert!(c.notes.iter().any(|n| n.path == "spec.runtimePatches" && n.level == Level::Review));
        let j = job(json!({"runtimeRef": {"name": "x"}, "labels": {"a": "b"}, "runtimePatches": [{"manager": DEFAULT_PATCH_MANAGER}]}));
        assert!(convert_all(&[j], &files()).pop().unwrap().refused());
    }
}
