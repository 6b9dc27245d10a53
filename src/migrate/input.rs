//! Objects from files (`migrate -f`): YAML (one or more documents) or JSON, each document an
//! object or a `List` (`kubectl get -o yaml` output, or manifests from a GitOps repository).
//! Bounded: files over [`MAX_BYTES`] or deeper than 200 levels are refused before conversion.

use std::path::Path;

use serde_json::Value as Json;

/// Manifests are small; 64 MiB is far above any real set and keeps memory bounded.
pub const MAX_BYTES: u64 = 64 * 1024 * 1024;
/// More objects than this in one run are refused.
pub const MAX_OBJECTS: usize = 100_000;

#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("cannot read {path}: {reason}")]
    Read { path: String, reason: String },
    #[error("{path} is {size} bytes, over the {MAX_BYTES}-byte limit: split it into smaller files")]
    TooBig { path: String, size: u64 },
    #[error("{path}: {reason}")]
    Parse { path: String, reason: String },
    #[error("{path}: document {doc} is not a Kubernetes object (no apiVersion or kind): write it as kubectl get -o yaml does")]
    NotAnObject { path: String, doc: usize },
    #[error("more than {MAX_OBJECTS} objects: convert fewer at a time")]
    TooMany,
}

/// Reads every object in `paths`, Lists flattened, in file order.
pub fn read_files(paths: &[impl AsRef<Path>]) -> Result<Vec<Json>, InputError> {
    let mut out = Vec::new();
    for p in paths {
        let p = p.as_ref();
        let shown = p.display().to_string();
        let meta = std::fs::metadata(p).map_err(|e| InputError::Read { path: shown.clone(), reason: e.to_string() })?;
        if meta.len() > MAX_BYTES {
            return Err(InputError::TooBig { path: shown, size: meta.len() });
        }
        let bytes = std::fs::read(p).map_err(|e| InputError::Read { path: shown.clone(), reason: e.to_string() })?;
        let text = String::from_utf8(bytes).map_err(|_| InputError::Parse { path: shown.clone(), reason: "not UTF-8 text".into() })?;
        out.extend(parse(&text, &shown)?);
        if out.len() > MAX_OBJECTS {
            return Err(InputError::TooMany);
        }
    }
    Ok(out)
}

/// Parses one file's text; `path` names it in errors.
pub fn parse(text: &str, path: &str) -> Result<Vec<Json>, InputError> {
    let parse_err = |reason: String| InputError::Parse { path: path.to_string(), reason };
    let trimmed = text.trim_start();
    let docs: Vec<Json> = if trimmed.starts_with('{') || trimmed.starts_with('[') {
        serde_json::Deserializer::from_str(text)
            .into_iter::<Json>()
            .collect::<Result<_, _>>()
            .map_err(|e| parse_err(format!("invalid JSON: {e}")))?
    } else {
        let mut budget = serde_saphyr::Budget::default();
        budget.max_depth = 200;
        budget.max_reader_input_bytes = Some(MAX_BYTES as usize);
        budget.max_total_scalar_bytes = MAX_BYTES as usize;
        let mut options = serde_saphyr::Options::default();
        options.budget = Some(budget);
        serde_saphyr::from_multiple_with_options::<Json>(text, options)
            .map_err(|e| parse_err(format!("invalid YAML: {}", e.to_string().lines().next().unwrap_or_default())))?
    };
    let mut out = Vec::new();
    for (i, doc) in docs.into_iter().enumerate() {
        match doc {
            Json::Null => {}
            Json::Array(items) => push_all(items, path, i + 1, &mut out)?,
            Json::Object(ref m) if m.get("kind").and_then(Json::as_str).is_some_and(|k| k.ends_with("List")) && m.contains_key("items") => {
                let items = m.get("items").and_then(Json::as_array).cloned().unwrap_or_default();
                push_all(items, path, i + 1, &mut out)?;
            }
            other => push_all(vec![other], path, i + 1, &mut out)?,
        }
    }
    Ok(out)
}

fn push_all(items: Vec<Json>, path: &str, doc: usize, out: &mut Vec<Json>) -> Result<(), InputError> {
    for item in items {
        let has = |k: &str| item.get(k).and_then(Json::as_str).is_some_and(|s| !s.is_empty());
        if !(has("apiVersion") && has("kind")) {
            return Err(InputError::NotAnObject { path: path.to_string(), doc });
        }
        out.push(item);
    }
    if out.len() > MAX_OBJECTS {
        return Err(InputError::TooMany);
    }
    Ok(())
}

/// Whether the cluster's TrainJob CRD is already the 2.2+ one (it declares `spec.runtimePatches`).
pub fn crd_already_new(state: &crate::cluster::ClusterState) -> bool {
    state.crd("trainjobs.trainer.kubeflow.org").is_some_and(|crd| {
        crd.pointer("/spec/versions")
            .and_then(serde_json::Value::as_array)
            .is_some_and(|vs| vs.iter().any(|v| v.pointer("/schema/openAPIV3Schema/properties/spec/properties/runtimePatches").is_some()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_documents_and_lists() {
        let text = "apiVersion: v1\nkind: A\nmetadata: {name: a}\n---\n---\napiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: B}\n- {apiVersion: v1, kind: C}\n";
        let kinds: Vec<String> = parse(text, "f.yaml").unwrap().iter().map(|o| o["kind"].as_str().unwrap().to_string()).collect();
        assert_eq!(kinds, ["A", "B", "C"]);
    }

    #[test]
    fn json_and_errors_name_the_file() {
        assert_eq!(parse(r#"{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"A"}]}"#, "f.json").unwrap().len(), 1);
        let e = parse("a: [", "bad.yaml").unwrap_err().to_string();
        assert!(e.starts_with("bad.yaml: invalid YAML"), "{e}");
        let e = parse("just: a map\n", "x.yaml").unwrap_err().to_string();
        assert!(e.contains("x.yaml: document 1 is not a Kubernetes object"), "{e}");
        let deep = format!("{}1{}", "[".repeat(500), "]".repeat(500));
        assert!(parse(&deep, "deep.json").is_err() || parse(&deep, "deep.json").is_ok_and(|v| v.is_empty()));
        assert!(read_files(&["/nonexistent/file.yaml"]).unwrap_err().to_string().contains("cannot read /nonexistent/file.yaml"));
    }
}
