//! `numProcPerNode` across 2.1 → 2.2: what a 2.1 value meant, and the 2.2 value that means the
//! same. In 2.1 the TrainJob's value wins, else the runtime's `mlPolicy.torch.numProcPerNode`,
//! else `auto`; `cpu` (and `auto` with no GPU in the node's resources) became the CPU count
//! (request, else limit, rounded up, at least 1), while `gpu` and `auto` with GPUs went to torchrun
//! verbatim (T@v2.1.0 `pkg/runtime/framework/plugins/torch/torch.go#L108-L121`). 2.2 accepts only
//! an integer or nothing, and nothing means `auto` with the same rule (T@v2.3.0 `torch.go#L121-L135`).

use serde_json::Value as Json;

use super::quantity::ceil_value;

pub const SRC_21_MEANING: &str = "T@v2.1.0 pkg/runtime/framework/plugins/torch/torch.go#L108-L121,#L192-L204";
pub const SRC_22_AUTO: &str = "T@v2.3.0 pkg/runtime/framework/plugins/torch/torch.go#L121-L135";
pub const SRC_22_TYPE: &str = "T@v2.2.0 pkg/apis/trainer/v1alpha1/trainjob_types.go#L278-L282 (#3239)";

/// The 2.1 value in force for a TrainJob and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub enum Effective {
    Int(i64),
    Text(String),
}

impl Effective {
    pub fn of(v: &Json) -> Option<Effective> {
        match v {
            Json::Number(n) => n.as_i64().map(Effective::Int),
            Json::String(s) => Some(Effective::Text(s.clone())),
            _ => None,
        }
    }
}

/// What to do with the TrainJob's `spec.trainer.numProcPerNode`.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Nothing to change.
    Keep,
    /// Write this number; the text explains why it is the same.
    Set(i64, String),
    /// Remove the field: 2.2's default means the same; the text explains.
    Remove(String),
    /// No faithful 2.2 value: the object is refused; the text says why.
    Refuse(String),
}

/// The node's resources as 2.1 saw them: the TrainJob's `resourcesPerNode`, else the runtime's
/// `node` container (T@v2.1.0 `pkg/runtime/runtime.go#L233-L255`); None when neither is known.
pub type Resources<'a> = Option<&'a Json>;

/// CPUs per node as 2.1 counted them: request (when non-zero), else limit, rounded up; at least 1.
/// None when the quantity cannot be read.
pub fn cpu_count(resources: &Json) -> Option<u64> {
    let get = |kind: &str| -> Option<Option<u64>> {
        match resources.get(kind).and_then(|r| r.get("cpu")) {
            None => Some(None),
            Some(q) => quantity(q).map(Some),
        }
    };
    let request = get("requests")?.filter(|&r| r > 0);
    let count = match request {
        Some(r) => r,
        None => get("limits")?.unwrap_or(0),
    };
    Some(count.max(1))
}

/// Why the GPUs of a node cannot be counted as 2.1 counted them; `kind` is `requests` or `limits`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GpuCountError {
    /// A GPU resource whose value is not a Kubernetes quantity.
    #[error("{kind}.{name} {value} is not a quantity")]
    NotAQuantity { kind: String, name: String, value: Json },
    /// Two GPU resources with different counts: Go's map order made 2.1 pick either.
    #[error("{kind} names two GPU resources with different counts ({first}: {first_count}, {second}: {second_count})")]
    Ambiguous { kind: String, first: String, first_count: u64, second: String, second_count: u64 },
}

/// GPUs per node as 2.1 counted them: the first resource whose name contains `gpu` in requests,
/// else in limits. Err when two GPU resources disagree (Go's map order made 2.1 pick either).
pub fn gpu_count(resources: &Json) -> Result<u64, GpuCountError> {
    let count = |kind: &str| -> Result<u64, GpuCountError> {
        let Some(map) = resources.get(kind).and_then(Json::as_object) else { return Ok(0) };
        let mut found: Option<(String, u64)> = None;
        for (name, q) in map.iter().filter(|(name, _)| name.to_ascii_lowercase().contains("gpu")) {
            let n = quantity(q).ok_or_else(|| GpuCountError::NotAQuantity { kind: kind.into(), name: name.clone(), value: q.clone() })?;
            match &found {
                Some((other, m)) if *m != n => {
                    return Err(GpuCountError::Ambiguous {
                        kind: kind.into(),
                        first: other.clone(),
                        first_count: *m,
                        second: name.clone(),
                        second_count: n,
                    })
                }
                _ => found = Some((name.clone(), n)),
            }
        }
        Ok(found.map(|f| f.1).unwrap_or(0))
    };
    let requested = count("requests")?;
    if requested > 0 {
        return Ok(requested);
    }
    count("limits")
}

fn quantity(q: &Json) -> Option<u64> {
    match q {
        Json::String(s) => ceil_value(s),
        Json::Number(n) => ceil_value(&n.to_string()),
        _ => None,
    }
}

/// Decides the 2.2 value. `own` is the TrainJob's value, `inherited` the runtime's (outer None:
/// the runtime is not known), `resources` the node's resources, `torch` whether the runtime is a
/// torch runtime (None: not known).
pub fn decide(own: Option<&Json>, inherited: Option<Option<&Json>>, resources: Resources, torch: Option<bool>) -> Decision {
    let (value, from_runtime) = match (own, inherited) {
        (Some(v), _) => (v, false),
        (None, Some(Some(v))) => (v, true),
        // Nothing set anywhere, or the runtime is unknown: nothing to carry.
        (None, _) => return Decision::Keep,
    };
    let Some(effective) = Effective::of(value) else {
        return Decision::Refuse(format!("numProcPerNode {value} is neither an integer nor a string"));
    };
    let origin = if from_runtime { "inherited from the runtime's mlPolicy.torch.numProcPerNode" } else { "set on the TrainJob" };
    match effective {
        Effective::Int(n) if from_runtime => Decision::Set(
            n,
            format!("{n} was {origin}; 2.2 runtimes carry no numProcPerNode (#3239), so the TrainJob states it, or 2.2 would use auto"),
        ),
        Effective::Int(_) => Decision::Keep,
        Effective::Text(text) => {
            if torch == Some(false) {
                return Decision::Refuse(format!(
                    "numProcPerNode {text:?} ({origin}) has a meaning only for torch runtimes in 2.1, and this TrainJob's runtime has no mlPolicy.torch"
                ));
            }
            text_decision(&text, origin, from_runtime, resources)
        }
    }
}

fn text_decision(text: &str, origin: &str, from_runtime: bool, resources: Resources) -> Decision {
    if let Ok(n) = text.trim().parse::<i64>() {
        return Decision::Set(n, format!("the string {text:?} ({origin}) is the number {n}; 2.2 accepts only an integer"));
    }
    match text {
        "auto" if from_runtime => Decision::Keep,
        "auto" => Decision::Remove(format!(
            "\"auto\" ({origin}) is what 2.2 does when the field is absent (GPU count handed to torchrun when the node has GPUs, else the CPU count), so the field is removed"
        )),
        "cpu" => {
            let Some(res) = resources else {
                return Decision::Refuse(format!(
                    "\"cpu\" ({origin}) meant the node's CPU count, taken from the runtime's node container, and that runtime is not in the input: pass it with -f or read the cluster"
                ));
            };
            match cpu_count(res) {
                Some(n) => Decision::Set(
                    n as i64,
                    format!(
                        "\"cpu\" ({origin}) meant the CPU count per node that 2.1 computed from resourcesPerNode: the request, else the limit, rounded up, at least 1 = {n}"
                    ),
                ),
                None => Decision::Refuse(format!("\"cpu\" ({origin}) needs the node's CPU quantity, and it cannot be read")),
            }
        }
        "gpu" => {
            let Some(res) = resources else {
                return Decision::Refuse(format!(
                    "\"gpu\" ({origin}) meant the GPUs torchrun sees, counted from the runtime's node container, and that runtime is not in the input: pass it with -f or read the cluster"
                ));
            };
            match gpu_count(res) {
                Ok(n) if n > 0 => Decision::Set(
                    n as i64,
                    format!(
                        "\"gpu\" ({origin}) was handed to torchrun, which starts one process per visible CUDA device; the node is given {} in resourcesPerNode, so {n}", super::counted(n as usize, "GPU")
                    ),
                ),
                Ok(_) => Decision::Refuse(format!(
                    "\"gpu\" ({origin}) made torchrun count the CUDA devices it could see, and resourcesPerNode names no GPU, so no number is known; removing the field gives 2.2's auto, which here is the CPU count, not the same"
                )),
                Err(e) => Decision::Refuse(format!("\"gpu\" ({origin}): {e}")),
            }
        }
        other => Decision::Refuse(format!(
            "{other:?} ({origin}) is not one of the values 2.1 accepted (auto, cpu, gpu, an integer), so it has no 2.2 equivalent"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn res(v: Json) -> Json {
        v
    }

    #[test]
    fn cpu_counts_like_2_1() {
        assert_eq!(cpu_count(&res(json!({"requests": {"cpu": "500m"}, "limits": {"cpu": 8}}))), Some(1));
        assert_eq!(cpu_count(&res(json!({"requests": {"cpu": "0"}, "limits": {"cpu": "3"}}))), Some(3));
        assert_eq!(cpu_count(&res(json!({"limits": {"cpu": "2500m"}}))), Some(3));
        assert_eq!(cpu_count(&res(json!({}))), Some(1));
        assert_eq!(cpu_count(&res(json!({"limits": {"cpu": "lots"}}))), None);
    }

    #[test]
    fn gpu_counts_like_2_1() {
        assert_eq!(gpu_count(&json!({"limits": {"nvidia.com/gpu": 4}})), Ok(4));
        assert_eq!(gpu_count(&json!({"requests": {"amd.com/GPU": "2"}, "limits": {"nvidia.com/gpu": 4}})), Ok(2));
        assert_eq!(gpu_count(&json!({"limits": {"cpu": 4}})), Ok(0));
        assert!(gpu_count(&json!({"limits": {"nvidia.com/gpu": 4, "amd.com/gpu": 2}})).is_err());
    }

    #[test]
    fn each_string_meaning() {
        let gpus = json!({"limits": {"nvidia.com/gpu": 4, "cpu": 16}});
        let cpus = json!({"requests": {"cpu": "6"}});
        assert!(matches!(decide(Some(&json!("gpu")), None, Some(&gpus), Some(true)), Decision::Set(4, _)));
        assert!(matches!(decide(Some(&json!("cpu")), None, Some(&gpus), Some(true)), Decision::Set(16, _)));
        assert!(matches!(decide(Some(&json!("cpu")), None, Some(&cpus), None), Decision::Set(6, _)));
        assert!(matches!(decide(Some(&json!("auto")), None, Some(&gpus), Some(true)), Decision::Remove(_)));
        assert!(matches!(decide(Some(&json!("auto")), None, None, None), Decision::Remove(_)));
        assert!(matches!(decide(Some(&json!("8")), None, None, None), Decision::Set(8, _)));
        assert!(matches!(decide(Some(&json!(2)), Some(Some(&json!("gpu"))), None, None), Decision::Keep));
    }

    #[test]
    fn refusals_say_why() {
        let cpus = json!({"requests": {"cpu": "6"}});
        let Decision::Refuse(why) = decide(Some(&json!("gpu")), None, Some(&cpus), Some(true)) else { panic!() };
        assert!(why.contains("names no GPU") && why.contains("auto"), "{why}");
        let Decision::Refuse(why) = decide(Some(&json!("cpu")), None, None, None) else { panic!() };
        assert!(why.contains("runtime is not in the input"), "{why}");
        assert!(matches!(decide(Some(&json!("many")), None, None, None), Decision::Refuse(_)));
        assert!(matches!(decide(Some(&json!("gpu")), None, Some(&cpus), Some(false)), Decision::Refuse(_)));
        assert!(matches!(decide(Some(&json!(true)), None, None, None), Decision::Refuse(_)));
    }

    #[test]
    fn inherited_values() {
        assert!(matches!(decide(None, Some(Some(&json!(4))), None, Some(true)), Decision::Set(4, _)));
        assert_eq!(decide(None, Some(Some(&json!("auto"))), None, Some(true)), Decision::Keep);
        assert!(matches!(decide(None, Some(Some(&json!("cpu"))), Some(&json!({"limits": {"cpu": 2}})), Some(true)), Decision::Set(2, _)));
        assert_eq!(decide(None, None, None, None), Decision::Keep);
        assert_eq!(decide(None, Some(None), None, None), Decision::Keep);
    }
}
