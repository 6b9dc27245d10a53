//! User values as an engine assembles them, each top-level key remembering the file and line
//! that last set it: deep merges as Helm's `MergeMaps` does (maps merge, anything else is
//! replaced), `--set`-style assignments through the project's `strvals`, and values embedded
//! as text (a ConfigMap key, Argo CD `helm.values`) located back in their file. Flattening to
//! key paths is what a base comparison diffs.

use std::collections::BTreeMap;

use serde_json::{Map, Value as Json};

use super::model::Location;
use super::yaml::{key_string, read_documents, Node, YamlError};
use crate::objects::{from_serde, to_serde};
use helm_render::strvals;

/// Why values embedded as text (a ConfigMap key, `helm.values`, a values file) could not be
/// merged; the caller names where the text came from.
#[derive(Debug, Clone, thiserror::Error)]
pub enum EmbeddedValuesError {
    /// Not YAML: the line within the text and the parser's message.
    #[error("line {} of the embedded values: {}", .0.line, .0.message)]
    Yaml(YamlError),
    /// The first document is a list or a scalar.
    #[error("the embedded values are not a mapping")]
    NotAMapping,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Values {
    pub map: Map<String, Json>,
    /// Top-level key → the place that last set it.
    pub origins: BTreeMap<String, Location>,
    /// Flattened leaf path (see [`flatten`]) → the place that last set it.
    pub leaves: BTreeMap<String, Location>,
}

/// Where an embedded text's lines sit in its file.
#[derive(Debug, Clone)]
pub struct Placement {
    pub file: String,
    /// `(lines, columns)` to add to a position in the text to get one in the file; None when
    /// positions cannot be mapped (a quoted or folded scalar), and `at` is used instead.
    pub offset: Option<(u32, u32)>,
    /// Where the text as a whole is written.
    pub at: Location,
}

impl Placement {
    /// A whole file of values.
    pub fn file(path: &str) -> Placement {
        Placement { file: path.to_string(), offset: Some((0, 0)), at: Location { file: path.to_string(), line: 1, column: 1 } }
    }

    /// A scalar of `file` holding YAML text: a literal block (`|`) maps line for line, with its
    /// indentation; anything else is located at the scalar.
    pub fn scalar(file: &str, file_text: Option<&str>, node: &Node) -> Placement {
        let at = Location { file: file.to_string(), line: node.at.line, column: node.at.column };
        let literal = file_text
            .and_then(|t| t.lines().nth(node.at.line.checked_sub(2)? as usize))
            .map(|key_line| {
                let indicator = key_line.trim_end().rsplit(' ').next().unwrap_or("");
                indicator.starts_with('|') && indicator.len() <= 3
            })
            .unwrap_or(false);
        let offset = literal.then(|| (node.at.line - 1, node.at.column - 1));
        Placement { file: file.to_string(), offset, at }
    }

    fn locate(&self, pos: super::yaml::Pos) -> Location {
        match self.offset {
            Some((lines, columns)) => Location { file: self.file.clone(), line: lines + pos.line, column: columns + pos.column },
            None => self.at.clone(),
        }
    }
}

impl Values {
    /// Deep-merges a mapping node on top; its keys' positions become their origins.
    pub fn merge_node(&mut self, node: &Node, file: &str) {
        let place = |at: super::yaml::Pos| Location { file: file.to_string(), line: at.line, column: at.column };
        for (k, v) in node.entries() {
            let key = key_string(k);
            self.origins.insert(key.clone(), place(k.at));
            located_leaves(&segment("", &key), k, v, &mut |path, at| {
                self.leaves.insert(path, place(at));
            });
            merge_into(&mut self.map, key, v.to_json());
        }
    }

    /// Deep-merges JSON whose origin is one place (a parameter, a whole file).
    pub fn merge_json(&mut self, json: &Map<String, Json>, at: &Location) {
        for (k, v) in json {
            self.origins.insert(k.clone(), at.clone());
            let mut one = Map::new();
            one.insert(k.clone(), v.clone());
            for path in flatten(&Json::Object(one)).into_keys() {
                self.leaves.insert(path, at.clone());
            }
            merge_into(&mut self.map, k.clone(), v.clone());
        }
    }

    /// Deep-merges values written as YAML text (`values.yaml` in a ConfigMap, `helm.values`).
    pub fn merge_text(&mut self, text: &str, place: &Placement) -> Result<(), EmbeddedValuesError> {
        let docs = read_documents(text).map_err(EmbeddedValuesError::Yaml)?;
        let Some(root) = docs.into_iter().next() else { return Ok(()) };
        if !root.is_map() {
            return Err(EmbeddedValuesError::NotAMapping);
        }
        for (k, v) in root.entries() {
            let key = key_string(k);
            self.origins.insert(key.clone(), place.locate(k.at));
            located_leaves(&segment("", &key), k, v, &mut |path, pos| {
                self.leaves.insert(path, place.locate(pos));
            });
            merge_into(&mut self.map, key, v.to_json());
        }
        Ok(())
    }

    /// Applies one `--set`-style assignment (`path=value`), typed as `--set`, or as
    /// `--set-string` when `strings` is true.
    pub fn set(&mut self, assignment: &str, strings: bool, at: &Location) -> Result<(), strvals::SetError> {
        let mut map = match from_serde(&Json::Object(self.map.clone())) {
            gotmpl::Value::Map(m) => m.entries.borrow().clone(),
            _ => Default::default(),
        };
        let mode = if strings { strvals::Mode::Strings } else { strvals::Mode::Typed };
        strvals::parse_into(assignment, &mut map, mode)?;
        let mut alone = Default::default();
        if strvals::parse_into(assignment, &mut alone, mode).is_ok() {
            for path in flatten(&to_serde(&gotmpl::Value::map(alone))).into_keys() {
                self.leaves.insert(path, at.clone());
            }
        }
        let first = assignment.split(['.', '[', '=']).next().unwrap_or("").to_string();
        if let Json::Object(m) = to_serde(&gotmpl::Value::map(map)) {
            self.map = m;
        }
        if !first.is_empty() {
            self.origins.insert(first, at.clone());
        }
        Ok(())
    }

    /// Merges another set on top, origins included.
    pub fn merge_values(&mut self, other: Values) {
        for (k, v) in other.map {
            merge_into(&mut self.map, k, v);
        }
        self.origins.extend(other.origins);
        self.leaves.extend(other.leaves);
    }

    /// Every leaf replaced by `marker` (values from Secrets keep their shape, not their content).
    pub fn redacted(mut self, marker: &str) -> Values {
        fn hide(v: &mut Json, marker: &str) {
            match v {
                Json::Object(m) => m.values_mut().for_each(|v| hide(v, marker)),
                Json::Array(a) => a.iter_mut().for_each(|v| hide(v, marker)),
                leaf => *leaf = Json::String(marker.to_string()),
            }
        }
        self.map.values_mut().for_each(|v| hide(v, marker));
        self
    }

    pub fn to_json(&self) -> Json {
        Json::Object(self.map.clone())
    }
}

/// Calls `found` with each leaf path under `key: value` and the position of its key.
fn located_leaves(path: &str, key: &Node, value: &Node, found: &mut dyn FnMut(String, super::yaml::Pos)) {
    if value.is_map() && !value.entries().is_empty() {
        for (k, v) in value.entries() {
            located_leaves(&segment(path, &key_string(k)), k, v, found);
        }
    } else {
        found(path.to_string(), key.at);
    }
}

/// `MergeMaps`: maps merge recursively, anything else replaces.
fn merge_into(dst: &mut Map<String, Json>, key: String, value: Json) {
    match (dst.get_mut(&key), value) {
        (Some(Json::Object(d)), Json::Object(s)) => {
            for (k, v) in s {
                merge_into(d, k, v);
            }
        }
        (_, value) => {
            dst.insert(key, value);
        }
    }
}

/// Deep merge of two mappings, `src` winning.
pub fn merged(mut dst: Map<String, Json>, src: &Map<String, Json>) -> Map<String, Json> {
    for (k, v) in src {
        merge_into(&mut dst, k.clone(), v.clone());
    }
    dst
}

/// Leaf values by key path (`a.b`, `a["x.y"]`); lists are leaves, compared whole.
pub fn flatten(values: &Json) -> BTreeMap<String, Json> {
    let mut out = BTreeMap::new();
    if let Json::Object(map) = values {
        for (k, v) in map {
            walk(&segment("", k), v, &mut out);
        }
    }
    out
}

fn walk(path: &str, value: &Json, out: &mut BTreeMap<String, Json>) {
    match value {
        Json::Object(map) if !map.is_empty() => {
            for (k, v) in map {
                walk(&segment(path, k), v, out);
            }
        }
        other => {
            out.insert(path.to_string(), other.clone());
        }
    }
}

fn segment(prefix: &str, key: &str) -> String {
    let plain = !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '/');
    match (prefix.is_empty(), plain) {
        (true, true) => key.to_string(),
        (false, true) => format!("{prefix}.{key}"),
        (_, false) => format!("{prefix}[{}]", Json::String(key.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn loc(line: u32) -> Location {
        Location { file: "f.yaml".into(), line, column: 1 }
    }

    #[test]
    fn merges_keep_the_last_origin() {
        let mut v = Values::default();
        let docs = read_documents("a:\n  x: 1\n  z: 2\nb: 1\n").unwrap();
        v.merge_node(&docs[0], "f.yaml");
        v.merge_json(json!({"a": {"z": 3}}).as_object().unwrap(), &loc(9));
        assert_eq!(v.to_json(), json!({"a": {"x": 1, "z": 3}, "b": 1}));
        assert_eq!(v.origins["a"].line, 9);
        assert_eq!(v.origins["b"].line, 4);
        assert_eq!(v.leaves["a.x"].line, 2);
        assert_eq!(v.leaves["a.z"].line, 9);
    }

    #[test]
    fn embedded_text_is_located_in_its_block() {
        let mut v = Values::default();
        let file = "kind: ConfigMap\ndata:\n  values.yaml: |\n    a: 1\n    b:\n      c: 2\n";
        let doc = &read_documents(file).unwrap()[0];
        let node = doc.path(&["data", "values.yaml"]).unwrap();
        let place = Placement::scalar("cm.yaml", Some(file), node);
        v.merge_text(node.text().unwrap(), &place).unwrap();
        assert_eq!(v.origins["b"], Location { file: "cm.yaml".into(), line: 5, column: 5 });
        assert_eq!(v.leaves["b.c"], Location { file: "cm.yaml".into(), line: 6, column: 7 });
        // A quoted scalar is located as a whole.
        let quoted = "data:\n  v: \"a: 1\"\n";
        let doc = &read_documents(quoted).unwrap()[0];
        let node = doc.path(&["data", "v"]).unwrap();
        let mut q = Values::default();
        q.merge_text("a: 1", &Placement::scalar("q.yaml", Some(quoted), node)).unwrap();
        assert_eq!(q.origins["a"], Location { file: "q.yaml".into(), line: 2, column: 6 });
        assert!(v.merge_text("- x\n", &place).is_err());
        let _ = loc(1);
    }

    #[test]
    fn set_assignments_type_like_helm() {
        let mut v = Values::default();
        v.set("image.tag=v1,replicas=2", false, &loc(3)).unwrap();
        v.set("flag=true", true, &loc(4)).unwrap();
        assert_eq!(v.to_json(), json!({"image": {"tag": "v1"}, "replicas": 2, "flag": "true"}));
        assert_eq!(v.origins["flag"].line, 4);
    }

    #[test]
    fn flatten_paths() {
        let flat = flatten(&json!({"a": {"b": 1, "x.y": [1]}, "e": {}}));
        assert_eq!(flat.keys().cloned().collect::<Vec<_>>(), vec!["a.b", "a[\"x.y\"]", "e"]);
    }
}
