//! Legacy Training Operator v1 jobs → TrainJobs on the `torch-distributed` runtime, following the
//! migration guide (T@v2.3.0 `docs/operator-guides/migration.md#L32-L89`): Master + Worker replicas
//! become `trainer.numNodes`; the container's image and command become `trainer.image` and
//! `trainer.command`. The guide is one example, not a field table, so every further mapping here
//! is ours and its note says why it is faithful: args, env and resources have their `trainer`
//! fields; pod-level scheduling, volumes and security go to a runtime patch of the runtime's
//! `node` job and `node` container (T@v2.3.0 `charts/kubeflow-trainer/files/runtimes/torch-distributed.yaml#L24-L42`),
//! which Trainer merges into every node's pod. What has no place is listed, never dropped
//! silently. Only PyTorchJobs convert; the other v1 kinds are refused with the reason.

use std::collections::BTreeSet;

use serde_json::{json, Map, Value as Json};

use super::nproc::gpu_count;
use super::output::stripped;
use super::{is_trainjob_name, Conversion, Level, Note, ObjectId, Options, SchemaVerdict, TRAINER_API_VERSION};

const GUIDE: &str = "T@v2.3.0 docs/operator-guides/migration.md#L32-L89";
const TRAINER_TYPES: &str = "T@v2.3.0 pkg/apis/trainer/v1alpha1/trainjob_types.go#L247-L289";
const PATCH_TYPES: &str = "T@v2.3.0 pkg/apis/trainer/v1alpha1/trainjob_types.go#L390-L496";
const V1_TYPES: &str = "T@v1.9.4 pkg/apis/kubeflow.org/v1/pytorch_types.go";
const V1_ENV: &str = "T@v1.9.4 pkg/controller.v1/pytorch/envvar.go#L43-L125";
const TORCHRUN: &str = "pytorch/pytorch torch/distributed/run.py (--nproc-per-node default \"1\"; determine_local_world_size)";
/// The other v1 kinds, which Trainer's guide gives no path for.
const OTHER_KINDS: &[&str] = &["TFJob", "MPIJob", "XGBoostJob", "PaddleJob", "JAXJob"];
/// Pod spec fields a runtime patch can carry in 2.2 and 2.3 alike (`PodSpecPatch`).
const POD_PATCH_FIELDS: &[&str] =
    &["serviceAccountName", "volumes", "imagePullSecrets", "securityContext", "nodeSelector", "affinity", "tolerations", "schedulingGates"];
/// Environment variables Trainer sets itself and rejects in `trainer.env`
/// (T@v2.3.0 `pkg/constants/constants.go#L300`).
const RESERVED_ENV: &[&str] = &["PET_NNODES", "PET_NPROC_PER_NODE", "PET_NODE_RANK", "PET_MASTER_ADDR", "PET_MASTER_PORT"];

pub fn convert_all(objects: &[Json], options: &Options) -> Vec<Conversion> {
    let existing: BTreeSet<(&str, &str)> = objects
        .iter()
        .filter(|o| o.get("kind").and_then(Json::as_str) == Some("TrainJob"))
        .map(|o| {
            (
                o.pointer("/metadata/namespace").and_then(Json::as_str).unwrap_or(""),
                o.pointer("/metadata/name").and_then(Json::as_str).unwrap_or(""),
            )
        })
        .collect();
    let mut out = Vec::new();
    for o in objects.iter().filter(|o| o.get("apiVersion").and_then(Json::as_str).is_some_and(|v| v.starts_with("kubeflow.org/"))) {
        let kind = o.get("kind").and_then(Json::as_str).unwrap_or("");
        if kind == "PyTorchJob" {
            let mut c = convert(o, options);
            let key = (c.id.namespace.as_str(), c.id.name.as_str());
            if c.converted.is_some() && existing.contains(&key) {
                c.converted = None;
                c.write = false;
                c.notes.push(Note::new(
                    Level::Refused,
                    "metadata.name",
                    "a TrainJob of this name already exists in the namespace: applying would merge into it",
                    "",
                ));
            }
            out.push(c);
        } else if OTHER_KINDS.contains(&kind) {
            let original = stripped(o);
            out.push(Conversion {
                id: ObjectId::of(&original),
                original,
                converted: None,
                write: false,
                notes: vec![Note::new(
                    Level::Refused,
                    "",
                    format!("no converter for {kind}: the v2.3.0 migration guide covers only PyTorchJob; write a TrainJob for a runtime of this framework by hand"),
                    GUIDE,
                )],
                before_crds: Vec::new(),
                schema: SchemaVerdict::NotValidated { reason: String::new() },
            });
        }
    }
    out
}

fn refuse(original: Json, notes: Vec<Note>, path: &str, why: String, source: &str) -> Conversion {
    let mut notes = notes;
    notes.push(Note::new(Level::Refused, path, why, source));
    Conversion {
        id: ObjectId::of(&original),
        original,
        converted: None,
        write: false,
        notes,
        before_crds: Vec::new(),
        schema: SchemaVerdict::NotValidated { reason: String::new() },
    }
}

/// One replica type: its key as written, replica count and pod template.
struct Replica<'a> {
    key: &'a str,
    replicas: i64,
    template: &'a Json,
}

fn convert(o: &Json, options: &Options) -> Conversion {
    let original = stripped(o);
    let mut notes = Vec::new();
    let name = original.pointer("/metadata/name").and_then(Json::as_str).unwrap_or("");
    if !is_trainjob_name(name) {
        let why = format!(
            "name {name:?} is not a TrainJob name (an RFC 1035 label of at most 63 characters): give the TrainJob another name by hand"
        );
        return refuse(original, notes, "metadata.name", why, "T@v2.3.0 pkg/apis/trainer/v1alpha1/trainjob_types.go#L36-L37");
    }
    let Some(specs) = o.pointer("/spec/pytorchReplicaSpecs").and_then(Json::as_object) else {
        return refuse(original, notes, "spec.pytorchReplicaSpecs", "is missing".into(), V1_TYPES);
    };
    // v1 accepted the replica type in any case and defaulted replicas to 1
    // (T@v1.9.4 pkg/apis/kubeflow.org/v1/defaulting_utils.go#L42-L60).
    let mut replicas = Vec::new();
    for (key, spec) in specs {
        if !matches!(key.to_ascii_lowercase().as_str(), "master" | "worker") {
            return refuse(original, notes, &format!("spec.pytorchReplicaSpecs.{key}"), "is neither Master nor Worker".into(), V1_TYPES);
        }
        let count = match spec.get("replicas") {
            None | Some(Json::Null) => 1,
            Some(v) => match v.as_i64().filter(|n| (0..=100_000).contains(n)) {
                Some(n) => n,
                None => {
                    return refuse(
                        original,
                        notes,
                        &format!("spec.pytorchReplicaSpecs.{key}.replicas"),
                        format!("{v} is not a replica count"),
                        V1_TYPES,
                    )
                }
            },
        };
        if let Some(policy) = spec.get("restartPolicy") {
            notes.push(Note::new(
                Level::Lost,
                format!("spec.pytorchReplicaSpecs.{key}.restartPolicy"),
                format!("{policy} has no TrainJob field: restarts follow the runtime's Job and JobSet failure policy"),
                GUIDE,
            ));
        }
        replicas.push(Replica { key, replicas: count, template: spec.get("template").unwrap_or(&Json::Null) });
    }
    let num_nodes: i64 = replicas.iter().map(|r| r.replicas).sum();
    if num_nodes == 0 {
        return refuse(original, notes, "spec.pytorchReplicaSpecs", "has no replicas".into(), V1_TYPES);
    }
    let (containers, why) = trainer_containers(&replicas);
    let Some(containers) = containers else { return refuse(original, notes, "spec.pytorchReplicaSpecs", why, V1_TYPES) };
    let first = containers[0];
    for field in ["image", "command", "args", "env", "resources", "volumeMounts", "securityContext"] {
        if containers.iter().any(|c| c.get(field) != first.get(field)) {
            let why = format!("Master and Worker containers differ in {field}; a TrainJob runs one trainer template on every node");
            return refuse(original, notes, "spec.pytorchReplicaSpecs", why, GUIDE);
        }
    }
    let Some(image) = first.get("image").and_then(Json::as_str).filter(|s| !s.is_empty()) else {
        return refuse(original, notes, "spec.pytorchReplicaSpecs", "the trainer container has no image".into(), V1_TYPES);
    };
    let (cpath, rpath) =
        (format!("spec.pytorchReplicaSpecs.{}.template.spec.containers", replicas[0].key), "spec.pytorchReplicaSpecs".to_string());

    let mut trainer = Map::new();
    trainer.insert("numNodes".into(), json!(num_nodes));
    trainer.insert("image".into(), json!(image));
    notes.push(Note::new(
        Level::Converted,
        &rpath,
        format!(
            "{} → trainer.numNodes {num_nodes}; image → trainer.image, as in the migration guide",
            replicas.iter().map(|r| format!("{} {}", r.key, r.replicas)).collect::<Vec<_>>().join(" + ")
        ),
        GUIDE,
    ));
    for (from, to) in [("command", "command"), ("args", "args"), ("resources", "resourcesPerNode")] {
        if let Some(v) = first.get(from) {
            trainer.insert(to.into(), v.clone());
            let why = if from == "command" {
                "as in the migration guide"
            } else {
                "the trainer field of the same type, applied to the node container"
            };
            notes.push(Note::new(
                Level::Converted,
                format!("{cpath}.{from}"),
                format!("→ trainer.{to}: {why}"),
                if from == "command" { GUIDE } else { TRAINER_TYPES },
            ));
        }
    }
    if let Some(env) = first.get("env").and_then(Json::as_array) {
        let (kept, reserved): (Vec<&Json>, Vec<&Json>) =
            env.iter().partition(|e| !RESERVED_ENV.contains(&e.get("name").and_then(Json::as_str).unwrap_or("")));
        for e in reserved {
            notes.push(Note::new(
                Level::Lost,
                format!("{cpath}.env.{}", e.get("name").and_then(Json::as_str).unwrap_or("")),
                "Trainer sets this variable itself and rejects it in trainer.env",
                "T@v2.3.0 pkg/constants/constants.go#L300; pkg/runtime/framework/plugins/torch/torch.go (Validate)",
            ));
        }
        if !kept.is_empty() {
            trainer.insert("env".into(), json!(kept));
            notes.push(Note::new(Level::Converted, format!("{cpath}.env"), "→ trainer.env (same EnvVar list)", TRAINER_TYPES));
        }
    }
    container_leftovers(first, &cpath, &mut notes);
    nproc(o, first, &mut trainer, &mut notes);

    let mut spec = Map::new();
    spec.insert("runtimeRef".into(), json!({ "name": options.legacy_runtime }));
    run_policy(o, &mut spec, &mut notes);
    if options.suspend_legacy {
        spec.insert("suspend".into(), json!(true));
        notes.push(Note::new(Level::Review, "spec.suspend", "set to true (--suspend): nothing runs until you set it to false", ""));
    }
    spec.insert("trainer".into(), Json::Object(trainer));
    if let Some(patch) = runtime_patch(&replicas, first, &options.patch_manager, &mut notes) {
        spec.insert("runtimePatches".into(), json!([patch]));
    }
    if o.pointer("/spec/elasticPolicy").is_some() {
        let text = "has no TrainJob counterpart: Trainer 2.3 has no elastic training (torch.go keeps a TODO for it)";
        notes.push(Note::new(Level::Lost, "spec.elasticPolicy", text, "T@v2.3.0 pkg/runtime/framework/plugins/torch/torch.go#L109"));
    }
    let mut metadata = Map::new();
    for k in ["name", "namespace", "labels", "annotations"] {
        if let Some(v) = original.get("metadata").and_then(|m| m.get(k)) {
            metadata.insert(k.into(), v.clone());
        }
    }
    for k in ["ownerReferences", "finalizers"] {
        if original.get("metadata").and_then(|m| m.get(k)).is_some() {
            notes.push(Note::new(
                Level::Lost,
                format!("metadata.{k}"),
                "belongs to the PyTorchJob's owners and controllers, not to a new TrainJob",
                "",
            ));
        }
    }
    status_note(o, &mut notes);
    let converted =
        json!({"apiVersion": TRAINER_API_VERSION, "kind": "TrainJob", "metadata": Json::Object(metadata), "spec": Json::Object(spec)});
    Conversion {
        id: ObjectId::of(&original),
        original,
        converted: Some(converted),
        write: true,
        notes,
        before_crds: Vec::new(),
        schema: SchemaVerdict::NotValidated { reason: String::new() },
    }
}

/// The trainer container of each replica type: the one named `pytorch` (v1's default name), or
/// the only one.
fn trainer_containers<'a>(replicas: &[Replica<'a>]) -> (Option<Vec<&'a Json>>, String) {
    let mut out = Vec::new();
    for r in replicas {
        let Some(cs) = r.template.pointer("/spec/containers").and_then(Json::as_array) else {
            return (None, format!("{} has no containers", r.key));
        };
        let pick =
            cs.iter().find(|c| c.get("name").and_then(Json::as_str) == Some("pytorch")).or(if cs.len() == 1 { cs.first() } else { None });
        match pick {
            Some(c) => out.push(c),
            None => return (None, format!("{} has several containers and none is named pytorch: which one trains is unknown", r.key)),
        }
    }
    (Some(out), String::new())
}

/// Container fields with no TrainJob place.
fn container_leftovers(c: &Json, path: &str, notes: &mut Vec<Note>) {
    let Some(m) = c.as_object() else { return };
    for k in m.keys() {
        match k.as_str() {
            "image" | "command" | "args" | "env" | "resources" | "volumeMounts" | "securityContext" => {}
            "name" => notes.push(Note::new(Level::Converted, format!("{path}.name"), "not carried: the runtime names its trainer container node", GUIDE)),
            "ports" => notes.push(Note::new(
                Level::Lost,
                format!("{path}.ports"),
                "not carried: Trainer picks the rendezvous port itself (PET_MASTER_PORT); expose other ports in the runtime",
                "T@v2.3.0 pkg/runtime/framework/plugins/torch/torch.go",
            )),
            other => notes.push(Note::new(
                Level::Lost,
                format!("{path}.{other}"),
                "has no place in trainer (image, command, args, env, resourcesPerNode) nor in a container patch (env, volumeMounts, securityContext)",
                format!("{TRAINER_TYPES}; {PATCH_TYPES}"),
            )),
        }
    }
}

/// `spec.nprocPerNode` → `trainer.numProcPerNode` where torchrun would have started the same
/// number of processes. v1 handed the string to torchrun as PET_NPROC_PER_NODE ({V1_ENV}).
fn nproc(o: &Json, c: &Json, trainer: &mut Map<String, Json>, notes: &mut Vec<Note>) {
    let path = "spec.nprocPerNode";
    let value = o.pointer("/spec/nprocPerNode").and_then(Json::as_str);
    let torchrun = ["command", "args"]
        .iter()
        .filter_map(|k| c.get(*k).and_then(Json::as_array))
        .flatten()
        .filter_map(Json::as_str)
        .any(|s| s.contains("torchrun") || s.contains("torch.distributed.run") || s.contains("torch.distributed.launch"));
    let gpus = c.get("resources").map(gpu_count).and_then(Result::ok).unwrap_or(0);
    let source = format!("{V1_ENV}; {TORCHRUN}; {}", super::nproc::SRC_22_AUTO);
    let mut set = |n: u64, why: String, notes: &mut Vec<Note>| {
        trainer.insert("numProcPerNode".into(), json!(n));
        notes.push(Note::new(Level::Converted, path, format!("→ trainer.numProcPerNode {n}: {why}"), source.clone()));
    };
    match value {
        None if torchrun => {
            set(1, "unset, so torchrun started its default of 1 process per node; Trainer's default (auto) would differ".into(), notes)
        }
        None => {}
        Some(v) => match (v.trim().parse::<u64>(), v) {
            (Ok(n), _) => set(n, format!("{v:?} is that number"), notes),
            (_, "gpu") if gpus > 0 => set(
                gpus,
                format!(
                    "torchrun started one process per visible CUDA device, and the container is given {}",
                    super::counted(gpus as usize, "GPU")
                ),
                notes,
            ),
            (_, "auto") if gpus > 0 => notes.push(Note::new(
                Level::Converted,
                path,
                "\"auto\" with GPUs: Trainer's default also hands auto to torchrun, so the field is left out",
                source,
            )),
            (_, other) => notes.push(Note::new(
                Level::Lost,
                path,
                format!(
                    "{other:?} made torchrun count the node's {} itself, which no number here can match; Trainer's default (auto) uses {}",
                    if other == "gpu" {
                        "CUDA devices, and no GPU is requested"
                    } else {
                        "CPUs (os.cpu_count(), all CPUs of the node, not the limit)"
                    },
                    if gpus > 0 { "the GPU count" } else { "the CPU request or limit, rounded up" }
                ),
                source,
            )),
        },
    }
    if !torchrun {
        notes.push(Note::new(
            Level::Review,
            "spec.pytorchReplicaSpecs",
            "the command does not run torchrun: PyTorchJob set MASTER_ADDR, MASTER_PORT, WORLD_SIZE and RANK in the container, \
             Trainer sets only the PET_* variables torchrun reads; run the script through torchrun or read PET_*",
            format!("{V1_ENV}; T@v2.3.0 pkg/runtime/framework/plugins/torch/torch.go#L137-L175"),
        ));
    }
}

/// `runPolicy` fields: suspend, activeDeadlineSeconds and managedBy have TrainJob fields.
fn run_policy(o: &Json, spec: &mut Map<String, Json>, notes: &mut Vec<Note>) {
    let Some(rp) = o.pointer("/spec/runPolicy").and_then(Json::as_object) else { return };
    for (k, v) in rp {
        let path = format!("spec.runPolicy.{k}");
        match k.as_str() {
            "suspend" => {
                spec.insert("suspend".into(), v.clone());
                notes.push(Note::new(Level::Converted, path, "→ spec.suspend", "T@v2.3.0 pkg/apis/trainer/v1alpha1/trainjob_types.go#L126-L129"));
            }
            "activeDeadlineSeconds" => {
                spec.insert("activeDeadlineSeconds".into(), v.clone());
                notes.push(Note::new(
                    Level::Review,
                    path,
                    "→ spec.activeDeadlineSeconds; Trainer counts it from the TrainJob's start and restarts the count on resume from suspension",
                    "T@v2.3.0 pkg/apis/trainer/v1alpha1/trainjob_types.go#L131-L139",
                ));
            }
            "managedBy" if v.as_str() == Some("kueue.x-k8s.io/multikueue") => {
                spec.insert("managedBy".into(), v.clone());
                notes.push(Note::new(Level::Converted, path, "→ spec.managedBy (MultiKueue)", "T@v2.3.0 pkg/apis/trainer/v1alpha1/trainjob_types.go#L141-L152"));
            }
            "managedBy" => notes.push(Note::new(Level::Converted, path, "the Training Operator's own value: the TrainJob keeps Trainer's default manager", "")),
            _ => notes.push(Note::new(
                Level::Lost,
                path,
                "has no TrainJob field (retries, cleanup, TTL and gang scheduling belong to the runtime: its Job/JobSet policies and podGroupPolicy, or to Kueue)",
                TRAINER_TYPES,
            )),
        }
    }
}

/// Pod-level fields → one runtime patch of job `node`, container `node`. Fields that differ
/// between Master and Worker, and fields a patch cannot hold, are listed.
fn runtime_patch(replicas: &[Replica], trainer: &Json, manager: &str, notes: &mut Vec<Note>) -> Option<Json> {
    let pod = |r: &Replica| r.template.get("spec").and_then(Json::as_object).cloned().unwrap_or_default();
    let first = pod(&replicas[0]);
    let mut keys: BTreeSet<String> = BTreeSet::new();
    for r in replicas {
        keys.extend(pod(r).keys().cloned());
    }
    let mut pod_spec = Map::new();
    for k in keys.iter().filter(|k| k.as_str() != "containers") {
        let path = format!("spec.pytorchReplicaSpecs.*.template.spec.{k}");
        if replicas.iter().any(|r| pod(r).get(k) != first.get(k)) {
            notes.push(Note::new(
                Level::Lost,
                path,
                "differs between Master and Worker; a runtime patch applies to every node alike",
                PATCH_TYPES,
            ));
        } else if k == "initContainers" {
            notes.push(Note::new(
                Level::Lost,
                path,
                "a runtime patch can only change containers the runtime has, not add them",
                PATCH_TYPES,
            ));
        } else if POD_PATCH_FIELDS.contains(&k.as_str()) {
            if let Some(v) = first.get(k) {
                pod_spec.insert(k.clone(), v.clone());
            }
        } else {
            notes.push(Note::new(Level::Lost, path, "not a field a runtime patch carries (PodSpecPatch)", PATCH_TYPES));
        }
    }
    let extra = replicas
        .iter()
        .flat_map(|r| r.template.pointer("/spec/containers").and_then(Json::as_array).cloned().unwrap_or_default())
        .filter(|c| c.get("name") != trainer.get("name"));
    for c in extra.map(|c| c.get("name").and_then(Json::as_str).unwrap_or("").to_string()).collect::<BTreeSet<_>>() {
        notes.push(Note::new(
            Level::Lost,
            format!("spec.pytorchReplicaSpecs.*.template.spec.containers.{c}"),
            "extra containers cannot be added by a runtime patch; add the sidecar to a runtime of your own",
            PATCH_TYPES,
        ));
    }
    let mut container = Map::new();
    for k in ["volumeMounts", "securityContext"] {
        if let Some(v) = trainer.get(k) {
            container.insert(k.into(), v.clone());
        }
    }
    if !container.is_empty() {
        container.insert("name".into(), json!("node"));
        pod_spec.insert("containers".into(), json!([container]));
    }
    let mut template = Map::new();
    let meta = replicas[0].template.get("metadata").and_then(Json::as_object).cloned().unwrap_or_default();
    if replicas.iter().any(|r| r.template.get("metadata") != replicas[0].template.get("metadata")) {
        notes.push(Note::new(
            Level::Lost,
            "spec.pytorchReplicaSpecs.*.template.metadata",
            "differs between Master and Worker",
            PATCH_TYPES,
        ));
    } else {
        let kept: Map<String, Json> =
            meta.iter().filter(|(k, _)| matches!(k.as_str(), "labels" | "annotations")).map(|(k, v)| (k.clone(), v.clone())).collect();
        for k in meta.keys().filter(|k| !matches!(k.as_str(), "labels" | "annotations")) {
            notes.push(Note::new(
                Level::Lost,
                format!("spec.pytorchReplicaSpecs.*.template.metadata.{k}"),
                "a runtime patch carries only labels and annotations",
                PATCH_TYPES,
            ));
        }
        if !kept.is_empty() {
            template.insert("metadata".into(), Json::Object(kept));
        }
    }
    if !pod_spec.is_empty() {
        template.insert("spec".into(), Json::Object(pod_spec));
    }
    if template.is_empty() {
        return None;
    }
    let fields: Vec<String> = template.values().filter_map(Json::as_object).flat_map(|m| m.keys().cloned()).collect();
    notes.push(Note::new(
        Level::Converted,
        "spec.pytorchReplicaSpecs.*.template",
        format!(
            "{} → runtimePatches[0] (manager {manager}) for replicated job node, container node of torch-distributed: Trainer merges it into every node's pod",
            fields.join(", ")
        ),
        format!("{PATCH_TYPES}; T@v2.3.0 charts/kubeflow-trainer/files/runtimes/torch-distributed.yaml#L24-L42"),
    ));
    Some(json!({"manager": manager, "trainingRuntimeSpec": {"template": {"spec": {"replicatedJobs": [
        {"name": "node", "template": {"spec": {"template": Json::Object(template)}}}
    ]}}}}))
}

/// Applying the List creates the TrainJob, and a created TrainJob starts: say so for jobs that
/// already ran.
fn status_note(o: &Json, notes: &mut Vec<Note>) {
    let conditions = o.pointer("/status/conditions").and_then(Json::as_array).cloned().unwrap_or_default();
    let last_true =
        conditions.iter().rev().find(|c| c.get("status").and_then(Json::as_str) == Some("True")).and_then(|c| c.get("type")?.as_str());
    if let Some(state) = last_true.filter(|s| matches!(*s, "Succeeded" | "Failed" | "Running" | "Restarting" | "Created")) {
        notes.push(Note::new(
            Level::Review,
            "status",
            format!("the PyTorchJob is {state}: applying the TrainJob starts the training again (use --suspend to create it suspended)"),
            "",
        ));
    }
}

#[cfg(test)]
#[path = "legacy_tests.rs"]
mod tests;
