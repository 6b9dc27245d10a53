//! 2.1's `spec.podTemplateOverrides` (and 2.0's `spec.podSpecOverrides` before it), `spec.labels`
//! and `spec.annotations` → 2.2's `spec.runtimePatches`. 2.0's override is the same strategic
//! merge patch of the named jobs' pod spec, with the pod spec fields beside `targetJobs` instead
//! of under `spec` (T@v2.0.1 `trainjob_types.go#L233-L269`, `trainingruntime.go#L190-L219`: the
//! whole override is marshalled as the patch, `targetJobs` is no PodSpec field), so it is read as
//! the 2.1 override `{targetJobs, spec: {…}}` and converted the same way. 2.1 applied each override as a strategic merge patch to the pod template
//! of every replicated job it named, later overrides over earlier ones, using only `labels` and
//! `annotations` of its metadata (T@v2.1.0 `pkg/runtime/core/trainingruntime.go#L190-L236`), and
//! merged `spec.labels`/`spec.annotations` into the JobSet's labels and annotations (same file
//! `#L126-L140`). 2.2+ applies each runtime patch, in list order, as a strategic merge patch of the
//! JobSet spec whose replicated jobs are keyed by name, and merges each patch's
//! `template.metadata` labels and annotations into the JobSet's (T@v2.3.0
//! `pkg/runtime/core/trainingruntime.go#L144-L160,#L251-L290`). So an override becomes a patch of
//! `replicatedJobs[name].template.spec.template`, as the project's own guide shows (T@v2.3.0
//! `docs/operator-guides/runtime-patches.md#L44-L100`). A runtime patch holds each replicated
//! job once, so a job named by several overrides gets one patch entry per override, in order.

use serde_json::{Map, Value as Json};

use super::{Level, Note};

const SRC_21: &str = "T@v2.1.0 pkg/runtime/core/trainingruntime.go#L126-L140,#L190-L236";
/// 2.0's `podSpecOverrides`: the type, and the merge that applies each one.
pub const SRC_20: &str =
    "T@v2.0.1 pkg/apis/trainer/v1alpha1/trainjob_types.go#L113-L115,#L233-L269; pkg/runtime/core/trainingruntime.go#L190-L219";
const SRC_22: &str =
    "T@v2.3.0 pkg/apis/trainer/v1alpha1/trainjob_types.go#L291-L496; pkg/runtime/core/trainingruntime.go#L144-L160,#L251-L290";
/// At most this many runtime patches (T@v2.3.0 `trainjob_types.go#L122`).
pub const MAX_PATCHES: usize = 16;

/// Pod spec fields of a 2.1 override, all of which 2.2's `PodSpecPatch` has under the same name
/// (T@v2.1.0 `trainjob_types.go#L292-L340` vs T@v2.2.0 `PodSpecPatch`). `securityContext` was
/// added to overrides after 2.1.0 (#3066) and exists in `PodSpecPatch` too.
const POD_FIELDS: &[&str] = &[
    "serviceAccountName",
    "nodeSelector",
    "affinity",
    "tolerations",
    "volumes",
    "initContainers",
    "containers",
    "schedulingGates",
    "imagePullSecrets",
    "securityContext",
];
/// Container override fields (2.1 `ContainerOverride`), all in 2.2's `ContainerPatch`.
const CONTAINER_FIELDS: &[&str] = &["name", "env", "volumeMounts", "securityContext"];

/// What the conversion produced for one TrainJob spec.
#[derive(Debug, Default)]
pub struct Patches {
    pub entries: Vec<Json>,
    pub notes: Vec<Note>,
    /// Set when no faithful set of patches exists.
    pub refuse: Option<String>,
}

/// One replicated job's pod template patch.
struct JobPatch {
    name: String,
    template: Map<String, Json>,
}

/// Builds the runtime patches for `spec` (a 2.1 TrainJob spec). `manager` names the first entry;
/// further entries get `-2`, `-3`, ….
pub fn runtime_patches(spec: &Json, manager: &str) -> Patches {
    let mut out = Patches::default();
    let legacy = spec.get("podSpecOverrides");
    let overrides = match (legacy, spec.get("podTemplateOverrides")) {
        (Some(_), Some(_)) => {
            out.refuse = Some("sets both 2.0's spec.podSpecOverrides and 2.1's spec.podTemplateOverrides: no release had both".into());
            return out;
        }
        (Some(Json::Array(list)), None) => list.iter().map(as_2_1_override).collect(),
        (None, Some(Json::Array(list))) => list.clone(),
        (None, None) => Vec::new(),
        (Some(_), None) | (None, Some(_)) => {
            let field = if legacy.is_some() { "podSpecOverrides" } else { "podTemplateOverrides" };
            out.refuse = Some(format!("spec.{field} is not a list"));
            return out;
        }
    };
    patches_of(&overrides, spec, manager, &mut out);
    if legacy.is_some() {
        for n in &mut out.notes {
            if let Some(path) = legacy_path(&n.path) {
                n.path = path;
                n.source = format!("{SRC_20}; {}", n.source);
            }
        }
    }
    out
}

/// A 2.0 `podSpecOverrides` entry as the 2.1 override that patches the same pod spec.
fn as_2_1_override(o: &Json) -> Json {
    let Some(m) = o.as_object() else { return o.clone() };
    let mut spec = m.clone();
    let targets = spec.remove("targetJobs");
    let mut out = Map::new();
    if let Some(t) = targets {
        out.insert("targetJobs".into(), t);
    }
    out.insert("spec".into(), Json::Object(spec));
    Json::Object(out)
}

/// A note's path in the 2.1 shape (`spec.podTemplateOverrides[0].spec.volumes`) as it is in the
/// 2.0 object (`spec.podSpecOverrides[0].volumes`); None for paths outside the overrides.
fn legacy_path(path: &str) -> Option<String> {
    let rest = path.strip_prefix("spec.podTemplateOverrides")?;
    let end = rest.find(']').map_or(rest.len(), |i| i + 1);
    let (index, tail) = rest.split_at(end);
    let tail = tail.strip_prefix(".spec").unwrap_or(tail);
    Some(format!("spec.podSpecOverrides{index}{tail}"))
}

/// Fills `out` with the patches of 2.1-shaped `overrides` and `spec`'s labels and annotations.
fn patches_of(overrides: &[Json], spec: &Json, manager: &str, out: &mut Patches) {
    // entries[k] holds the k-th override of each replicated job.
    let mut entries: Vec<Vec<JobPatch>> = Vec::new();
    for (i, o) in overrides.iter().enumerate() {
        let path = format!("spec.podTemplateOverrides[{i}]");
        let targets: Vec<String> = o
            .get("targetJobs")
            .and_then(Json::as_array)
            .map(|t| t.iter().filter_map(|j| j.get("name").and_then(Json::as_str)).map(str::to_string).collect())
            .unwrap_or_default();
        if targets.is_empty() {
            out.notes.push(Note::new(
                Level::Lost,
                format!("{path}.targetJobs"),
                "names no replicated job, so 2.1 applied it nowhere; nothing to carry",
                SRC_21,
            ));
            continue;
        }
        let template = pod_template_patch(o, &path, &mut out.notes);
        if template.is_empty() {
            out.notes.push(Note::new(Level::Converted, &path, "sets nothing 2.1 applied; no patch needed", SRC_21));
            continue;
        }
        let mut placed = Vec::new();
        for name in targets {
            let k = entries.iter().take_while(|e| e.iter().any(|j| j.name == name)).count();
            if k == entries.len() {
                entries.push(Vec::new());
            }
            entries[k].push(JobPatch { name: name.clone(), template: template.clone() });
            placed.push(format!("runtimePatches[{k}] for replicated job {name}"));
        }
        let fields: Vec<&String> = template.get("spec").and_then(Json::as_object).map(|m| m.keys().collect()).unwrap_or_default();
        out.notes.push(Note::new(
            Level::Converted,
            &path,
            format!(
                "→ {}, at trainingRuntimeSpec.template.spec.replicatedJobs[].template.spec.template{}{}: the same strategic merge patch of the same pod template",
                placed.join(", "),
                if template.contains_key("metadata") { " (metadata labels/annotations)" } else { "" },
                if fields.is_empty() {
                    String::new()
                } else {
                    format!(" (spec: {})", fields.iter().map(|f| f.as_str()).collect::<Vec<_>>().join(", "))
                }
            ),
            format!("{SRC_21}; {SRC_22}"),
        ));
    }
    let jobset_meta = jobset_metadata(spec, &mut out.notes);
    if entries.is_empty() && jobset_meta.is_none() {
        return;
    }
    if entries.is_empty() {
        entries.push(Vec::new());
    }
    if entries.len() > MAX_PATCHES {
        out.refuse = Some(format!(
            "a replicated job is named by {} overrides, which needs {} runtime patches; 2.2 allows at most {MAX_PATCHES}: merge the overrides first",
            entries.len(),
            entries.len()
        ));
        return;
    }
    for (k, jobs) in entries.into_iter().enumerate() {
        let manager = if k == 0 { manager.to_string() } else { format!("{manager}-{}", k + 1) };
        let mut template = Map::new();
        if k == 0 {
            if let Some(meta) = &jobset_meta {
                template.insert("metadata".into(), meta.clone());
            }
        }
        // Built by hand: `json!` would run each interpolated value through the serializer, a
        // deep copy of every pod template (a quarter of converting 25,000 TrainJobs).
        if !jobs.is_empty() {
            let replicated: Vec<Json> = jobs
                .into_iter()
                .map(|j| {
                    object([
                        ("name", Json::String(j.name)),
                        ("template", object([("spec", object([("template", Json::Object(j.template))]))])),
                    ])
                })
                .collect();
            template.insert("spec".into(), object([("replicatedJobs", Json::Array(replicated))]));
        }
        out.entries
            .push(object([("manager", Json::String(manager)), ("trainingRuntimeSpec", object([("template", Json::Object(template))]))]));
    }
}

/// A JSON object of these entries, in this order.
fn object<const N: usize>(entries: [(&str, Json); N]) -> Json {
    Json::Object(entries.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

/// The pod template patch of one override: metadata labels/annotations and the pod spec fields.
fn pod_template_patch(o: &Json, path: &str, notes: &mut Vec<Note>) -> Map<String, Json> {
    let mut template = Map::new();
    if let Some(meta) = o.get("metadata").and_then(Json::as_object) {
        let mut kept = Map::new();
        for (k, v) in meta {
            if matches!(k.as_str(), "labels" | "annotations") {
                kept.insert(k.clone(), v.clone());
            } else {
                notes.push(Note::new(
                    Level::Lost,
                    format!("{path}.metadata.{k}"),
                    "2.1 applied only labels and annotations of an override's metadata, and 2.2 patches take only those; not carried (it had no effect)",
                    SRC_21,
                ));
            }
        }
        if !kept.is_empty() {
            template.insert("metadata".into(), Json::Object(kept));
        }
    }
    if let Some(spec) = o.get("spec").and_then(Json::as_object) {
        let mut kept = Map::new();
        for (k, v) in spec {
            if !POD_FIELDS.contains(&k.as_str()) {
                notes.push(Note::new(
                    Level::Lost,
                    format!("{path}.spec.{k}"),
                    "not a field of 2.1's PodTemplateSpecOverride (the 2.1 API server dropped it when the object was stored), and not one of 2.2's PodSpecPatch",
                    "T@v2.1.0 pkg/apis/trainer/v1alpha1/trainjob_types.go#L292-L340",
                ));
                continue;
            }
            let value = if matches!(k.as_str(), "containers" | "initContainers") {
                containers(v, &format!("{path}.spec.{k}"), notes)
            } else {
                v.clone()
            };
            kept.insert(k.clone(), value);
        }
        if !kept.is_empty() {
            template.insert("spec".into(), Json::Object(kept));
        }
    }
    template
}

fn containers(list: &Json, path: &str, notes: &mut Vec<Note>) -> Json {
    let Some(items) = list.as_array() else { return list.clone() };
    Json::Array(
        items
            .iter()
            .enumerate()
            .map(|(i, c)| match c.as_object() {
                Some(m) => {
                    for k in m.keys().filter(|k| !CONTAINER_FIELDS.contains(&k.as_str())) {
                        notes.push(Note::new(
                            Level::Lost,
                            format!("{path}[{i}].{k}"),
                            "container overrides carry only name, env and volumeMounts in 2.1 (2.2 adds securityContext); not carried",
                            "T@v2.1.0 pkg/apis/trainer/v1alpha1/trainjob_types.go#L343-L363",
                        ));
                    }
                    Json::Object(
                        m.iter().filter(|(k, _)| CONTAINER_FIELDS.contains(&k.as_str())).map(|(k, v)| (k.clone(), v.clone())).collect(),
                    )
                }
                None => c.clone(),
            })
            .collect(),
    )
}

/// `spec.labels` / `spec.annotations` → the first patch's JobSet template metadata.
fn jobset_metadata(spec: &Json, notes: &mut Vec<Note>) -> Option<Json> {
    let mut meta = Map::new();
    for key in ["labels", "annotations"] {
        if let Some(v) = spec.get(key).filter(|v| v.as_object().is_some_and(|m| !m.is_empty())) {
            meta.insert(key.into(), v.clone());
            notes.push(Note::new(
                Level::Converted,
                format!("spec.{key}"),
                format!(
                    "→ runtimePatches[0].trainingRuntimeSpec.template.metadata.{key}: 2.1 merged spec.{key} into the JobSet's {key}, and 2.2 merges a patch's template {key} into the same place"
                ),
                format!("{SRC_21}; {SRC_22}"),
            ));
        }
    }
    (!meta.is_empty()).then_some(Json::Object(meta))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_guide_example() {
        // T@v2.3.0 docs/operator-guides/runtime-patches.md#L44-L100, before → after.
        let spec = json!({"podTemplateOverrides": [{
            "targetJobs": [{"name": "node"}],
            "spec": {
                "serviceAccountName": "ml-training-sa",
                "nodeSelector": {"accelerator": "nvidia-tesla-v100"},
                "volumes": [{"name": "training-data", "persistentVolumeClaim": {"claimName": "ml-team-training-pvc"}}],
                "containers": [{"name": "trainer", "volumeMounts": [{"name": "training-data", "mountPath": "/workspace/data"}]}]
            }
        }]});
        let p = runtime_patches(&spec, "example.com/m");
        assert!(p.refuse.is_none());
        assert_eq!(
            p.entries,
            vec![json!({"manager": "example.com/m", "trainingRuntimeSpec": {"template": {"spec": {"replicatedJobs": [{
                "name": "node",
                "template": {"spec": {"template": {"spec": {
                    "serviceAccountName": "ml-training-sa",
                    "nodeSelector": {"accelerator": "nvidia-tesla-v100"},
                    "volumes": [{"name": "training-data", "persistentVolumeClaim": {"claimName": "ml-team-training-pvc"}}],
                    "containers": [{"name": "trainer", "volumeMounts": [{"name": "training-data", "mountPath": "/workspace/data"}]}]
                }}}}
            }]}}}})]
        );
        assert!(p.notes.iter().all(|n| n.level == Level::Converted));
    }

    #[test]
    fn repeated_targets_get_ordered_entries_and_labels_go_to_the_jobset() {
        let spec = json!({
            "labels": {"team": "a"},
            "annotations": {},
            "podTemplateOverrides": [
                {"targetJobs": [{"name": "node"}, {"name": "init"}], "metadata": {"labels": {"x": "1"}, "name": "ignored"}},
                {"targetJobs": [{"name": "node"}], "spec": {"nodeSelector": {"a": "b"}, "hostNetwork": true}},
            ]
        });
        let p = runtime_patches(&spec, "example.com/m");
        assert_eq!(p.entries.len(), 2);
        assert_eq!(p.entries[0]["manager"], "example.com/m");
        assert_eq!(p.entries[1]["manager"], "example.com/m-2");
        assert_eq!(p.entries[0]["trainingRuntimeSpec"]["template"]["metadata"], json!({"labels": {"team": "a"}}));
        let jobs0: Vec<&str> = p.entries[0]["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| j["name"].as_str().unwrap())
            .collect();
        assert_eq!(jobs0, ["node", "init"]);
        assert_eq!(
            p.entries[1]["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"],
            json!({"spec": {"nodeSelector": {"a": "b"}}})
        );
        let lost: Vec<&str> = p.notes.iter().filter(|n| n.level == Level::Lost).map(|n| n.path.as_str()).collect();
        assert_eq!(lost, ["spec.podTemplateOverrides[0].metadata.name", "spec.podTemplateOverrides[1].spec.hostNetwork"]);
    }

    #[test]
    fn container_extras_are_listed_and_too_many_entries_refused() {
        let spec = json!({"podTemplateOverrides": [{"targetJobs": [{"name": "node"}], "spec": {"containers": [{"name": "node", "image": "x", "env": []}]}}]});
        let p = runtime_patches(&spec, "example.com/m");
        assert!(p.notes.iter().any(|n| n.level == Level::Lost && n.path == "spec.podTemplateOverrides[0].spec.containers[0].image"));
        let many: Vec<Json> =
            (0..17).map(|i| json!({"targetJobs": [{"name": "node"}], "spec": {"nodeSelector": {"i": i.to_string()}}})).collect();
        let p = runtime_patches(&json!({ "podTemplateOverrides": many }), "example.com/m");
        assert!(p.refuse.is_some_and(|r| r.contains("at most 16")));
        assert!(runtime_patches(&json!({"podTemplateOverrides": "x"}), "example.com/m").refuse.is_some());
        assert!(runtime_patches(&json!({}), "example.com/m").entries.is_empty());
    }
}
