//! YAML documents with the position of every node, so that each value a GitOps object yields
//! can be reported at its file, line and column (SARIF locates findings there). Events come from
//! `saphyr-parser`, whose marks carry lines and columns; the project's Helm reader
//! (`helm::yaml::read`) builds template values without positions, and serde-saphyr's spans stop
//! at the serde boundary, so this small builder is ours. Plain scalars are typed as Kubernetes
//! reads manifests (sigs.k8s.io/yaml: go-yaml v2, YAML 1.1) when converted to JSON. Bounded:
//! alias expansion and nesting depth are capped, so an alias bomb is refused, not expanded.

use std::collections::HashMap;

use saphyr_parser::{Event, Parser, ScalarStyle};
use serde_json::Value as Json;

use helm_render::yaml::resolve::{resolve_plain, Resolved};

/// Nodes that aliases may copy into one file before it is refused as an alias bomb.
pub const MAX_ALIAS_NODES: usize = 1_000_000;
/// Nesting of collections.
pub const MAX_DEPTH: usize = 200;

/// A 1-based line and column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, serde::Serialize)]
pub struct Pos {
    pub line: u32,
    pub column: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub at: Pos,
    pub kind: Kind,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// `plain` scalars are typed by YAML 1.1 rules; quoted and block scalars are strings.
    Scalar {
        text: String,
        plain: bool,
    },
    Seq(Vec<Node>),
    /// Entries in file order; a key is kept as a node for its position.
    Map(Vec<(Node, Node)>),
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct YamlError {
    pub line: u32,
    pub message: String,
}

impl Node {
    /// The scalar text, or None for collections and nulls.
    pub fn text(&self) -> Option<&str> {
        match &self.kind {
            Kind::Scalar { text, plain } if !(*plain && matches!(resolve_plain(text), Resolved::Null)) => Some(text),
            _ => None,
        }
    }

    /// The value under `key` of a mapping (the last one when a key repeats, as go-yaml keeps).
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.entry(key).map(|(_, v)| v)
    }

    /// The key node and the value node under `key`.
    pub fn entry(&self, key: &str) -> Option<(&Node, &Node)> {
        match &self.kind {
            Kind::Map(entries) => entries.iter().rev().find(|(k, _)| k.text() == Some(key)).map(|(k, v)| (k, v)),
            _ => None,
        }
    }

    pub fn path(&self, keys: &[&str]) -> Option<&Node> {
        keys.iter().try_fold(self, |node, key| node.get(key))
    }

    /// Text at a path, trimmed to None when empty.
    pub fn str_at(&self, keys: &[&str]) -> Option<&str> {
        self.path(keys).and_then(Node::text).filter(|s| !s.is_empty())
    }

    /// A YAML 1.1 boolean at a path (`true`, `yes`, `on`…), None when absent or not a boolean.
    pub fn bool_at(&self, keys: &[&str]) -> Option<bool> {
        match self.path(keys)?.to_json() {
            Json::Bool(b) => Some(b),
            _ => None,
        }
    }

    pub fn items(&self) -> &[Node] {
        match &self.kind {
            Kind::Seq(items) => items,
            _ => &[],
        }
    }

    pub fn entries(&self) -> &[(Node, Node)] {
        match &self.kind {
            Kind::Map(entries) => entries,
            _ => &[],
        }
    }

    pub fn is_map(&self) -> bool {
        matches!(self.kind, Kind::Map(_))
    }

    /// The node as JSON, the way the API server stores a manifest.
    pub fn to_json(&self) -> Json {
        match &self.kind {
            Kind::Scalar { text, plain: false } => Json::String(text.clone()),
            Kind::Scalar { text, plain: true } => typed(text),
            Kind::Seq(items) => Json::Array(items.iter().map(Node::to_json).collect()),
            Kind::Map(entries) => {
                let mut map = serde_json::Map::new();
                for (k, v) in entries {
                    map.insert(key_string(k), v.to_json());
                }
                Json::Object(map)
            }
        }
    }
}

/// A map key as sigs.k8s.io/yaml stringifies it (`yes:` is the key `"true"`).
pub fn key_string(key: &Node) -> String {
    match &key.kind {
        Kind::Scalar { text, plain: false } => text.clone(),
        Kind::Scalar { .. } => match key.to_json() {
            Json::String(s) => s,
            Json::Null => "null".into(),
            other => other.to_string(),
        },
        _ => key.to_json().to_string(),
    }
}

/// A plain scalar typed by YAML 1.1 rules; timestamps stay strings, as JSON has no time type.
pub fn typed(text: &str) -> Json {
    match resolve_plain(text) {
        Resolved::Null => Json::Null,
        Resolved::Bool(b) => Json::Bool(b),
        Resolved::Int(i) => Json::from(i),
        Resolved::Uint(u) => Json::from(u),
        Resolved::Float(f) => serde_json::Number::from_f64(f).map(Json::Number).unwrap_or_else(|| Json::String(text.into())),
        Resolved::Timestamp | Resolved::Merge | Resolved::Str => Json::String(text.into()),
    }
}

/// Every document of a stream; empty documents are left out.
pub fn read_documents(text: &str) -> Result<Vec<Node>, YamlError> {
    let mut parser = Parser::new_from_str(text);
    let mut docs = Vec::new();
    let mut stack: Vec<Open> = Vec::new();
    let mut anchors: HashMap<usize, (Node, usize)> = HashMap::new();
    let mut copied = 0usize;
    while let Some(event) = parser.next_event() {
        let (event, span) = event.map_err(|e| YamlError { line: e.marker().line() as u32, message: e.info().to_string() })?;
        let at = Pos { line: span.start.line() as u32, column: span.start.col() as u32 + 1 };
        let done = match event {
            Event::StreamEnd => break,
            Event::DocumentStart(_) => {
                anchors.clear();
                None
            }
            Event::Alias(id) => {
                let (node, size) =
                    anchors.get(&id).cloned().ok_or_else(|| YamlError { line: at.line, message: "unknown anchor".into() })?;
                copied += size;
                if copied > MAX_ALIAS_NODES {
                    return Err(YamlError {
                        line: at.line,
                        message: format!("aliases expand to more than {MAX_ALIAS_NODES} nodes (an alias bomb?): refused"),
                    });
                }
                Some((node, size))
            }
            Event::Scalar(text, style, anchor, tag) => {
                let plain = style == ScalarStyle::Plain
                    && tag.as_ref().is_none_or(|t| !(matches!(t.handle.as_str(), "!!" | "tag:yaml.org,2002:") && t.suffix == "str"));
                let node = Node { at, kind: Kind::Scalar { text: text.into_owned(), plain } };
                if anchor > 0 {
                    anchors.insert(anchor, (node.clone(), 1));
                }
                Some((node, 1))
            }
            Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) if stack.len() >= MAX_DEPTH => {
                let _ = anchor;
                return Err(YamlError { line: at.line, message: format!("nested deeper than {MAX_DEPTH} levels: refused") });
            }
            Event::SequenceStart(anchor, _) => {
                stack.push(Open { at, anchor, map: false, items: Vec::new(), size: 1 });
                None
            }
            Event::MappingStart(anchor, _) => {
                stack.push(Open { at, anchor, map: true, items: Vec::new(), size: 1 });
                None
            }
            Event::SequenceEnd | Event::MappingEnd => match stack.pop() {
                Some(open) => {
                    let anchor = open.anchor;
                    let (node, size) = open.close();
                    if anchor > 0 {
                        anchors.insert(anchor, (node.clone(), size));
                    }
                    Some((node, size))
                }
                None => None,
            },
            Event::StreamStart | Event::DocumentEnd | Event::Nothing => None,
        };
        if let Some((node, size)) = done {
            match stack.last_mut() {
                Some(parent) => {
                    parent.items.push(node);
                    parent.size += size;
                }
                None => docs.push(node),
            }
        }
    }
    docs.retain(|d| d.text().is_some() || !matches!(d.kind, Kind::Scalar { .. }));
    Ok(docs)
}

struct Open {
    at: Pos,
    anchor: usize,
    map: bool,
    /// Children in order; for a mapping, keys and values alternate.
    items: Vec<Node>,
    size: usize,
}

impl Open {
    fn close(self) -> (Node, usize) {
        if !self.map {
            return (Node { at: self.at, kind: Kind::Seq(self.items) }, self.size);
        }
        let mut entries = Vec::with_capacity(self.items.len() / 2);
        let mut merges = Vec::new();
        let mut items = self.items.into_iter();
        while let (Some(k), Some(v)) = (items.next(), items.next()) {
            if matches!(&k.kind, Kind::Scalar { text, plain: true } if text == "<<") {
                merges.push(v);
            } else {
                entries.push((k, v));
            }
        }
        // Merge keys (`<<: *base`) add the keys the mapping does not set itself.
        for merged in merges {
            let sources: Vec<Node> = match merged.kind {
                Kind::Seq(list) => list,
                _ => vec![merged],
            };
            for source in sources {
                for (k, v) in source.entries() {
                    let name = key_string(k);
                    if !entries.iter().any(|(own, _)| key_string(own) == name) {
                        entries.push((k.clone(), v.clone()));
                    }
                }
            }
        }
        (Node { at: self.at, kind: Kind::Map(entries) }, self.size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_of_values_and_keys() {
        let docs = read_documents("a: 1\n---\nkind: X\nspec:\n  version: \"2.3.0\"\n  list:\n    - x\n").unwrap();
        assert_eq!(docs.len(), 2);
        let v = docs[1].path(&["spec", "version"]).unwrap();
        assert_eq!(v.at, Pos { line: 5, column: 12 });
        assert_eq!(v.text(), Some("2.3.0"));
        let (k, _) = docs[1].path(&["spec"]).unwrap().entry("list").unwrap();
        assert_eq!(k.at, Pos { line: 6, column: 3 });
        assert_eq!(docs[1].path(&["spec", "list"]).unwrap().items()[0].at.line, 7);
    }

    #[test]
    fn typing_follows_yaml_1_1() {
        let docs = read_documents("a: yes\nb: \"yes\"\nc: 017\nd: ~\ne: !!str 3\n").unwrap();
        assert_eq!(docs[0].to_json(), serde_json::json!({"a": true, "b": "yes", "c": 15, "d": null, "e": "3"}));
    }

    #[test]
    fn merge_keys_and_aliases() {
        let docs = read_documents("base: &b {p: 1, q: 2}\nuse:\n  <<: *b\n  q: 3\n").unwrap();
        assert_eq!(docs[0].get("use").unwrap().to_json(), serde_json::json!({"q": 3, "p": 1}));
    }

    #[test]
    fn alias_bomb_is_refused() {
        let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..10 {
            let p = i - 1;
            text.push_str(&format!("a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"));
        }
        let err = read_documents(&text).unwrap_err();
        assert!(err.message.contains("alias bomb"), "{err}");
    }

    #[test]
    fn deep_nesting_is_refused() {
        let text: String = (0..500).map(|i| format!("{}k:\n", "  ".repeat(i))).collect();
        let err = read_documents(&text).unwrap_err();
        assert!(err.message.contains("deeper"), "{err}");
        // Flow nesting is refused by the parser itself.
        assert!(read_documents(&"[".repeat(5000)).is_err());
    }

    #[test]
    fn empty_documents_are_dropped() {
        assert!(read_documents("---\n---\n# only a comment\n").unwrap().is_empty());
    }
}
