//! The one comparison of two flattened CRD schemas (an older and a newer, or the live and the
//! chart's): which property paths appear, which vanish, and what changes at the paths both
//! have. `diff` reports it to reviewers; the `stale-crd` check reads it against the live CRDs.

use std::collections::{BTreeMap, BTreeSet};

use super::crd::SchemaField;
use super::paths::parent;

/// A flattened schema: property path → what the schema says there.
pub type Schema = BTreeMap<String, SchemaField>;

/// A path both schemas declare, with what each says about it.
#[derive(Debug, Clone, Copy)]
pub struct FieldChange<'a> {
    pub path: &'a str,
    pub old: &'a SchemaField,
    pub new: &'a SchemaField,
}

impl FieldChange<'_> {
    pub fn retyped(&self) -> bool {
        self.old.kind != self.new.kind
    }
}

#[derive(Debug, Clone)]
pub struct SchemaComparison<'a> {
    old: &'a Schema,
    new: &'a Schema,
    /// Paths only the new schema declares.
    pub added: BTreeSet<String>,
    /// Paths only the old schema declares.
    pub removed: BTreeSet<String>,
    /// Paths both declare whose type, enum, validation or required flag differ.
    pub changed: Vec<FieldChange<'a>>,
}

/// Compares `old` with `new`.
pub fn compare<'a>(old: &'a Schema, new: &'a Schema) -> SchemaComparison<'a> {
    let added = new.keys().filter(|p| !old.contains_key(*p)).cloned().collect();
    let removed = old.keys().filter(|p| !new.contains_key(*p)).cloned().collect();
    let changed =
        old.iter().filter_map(|(path, a)| new.get(path).filter(|b| *b != a).map(|b| FieldChange { path, old: a, new: b })).collect();
    SchemaComparison { old, new, added, removed, changed }
}

impl SchemaComparison<'_> {
    pub fn old_paths(&self) -> BTreeSet<String> {
        self.old.keys().cloned().collect()
    }

    pub fn new_paths(&self) -> BTreeSet<String> {
        self.new.keys().cloned().collect()
    }

    /// The outermost removed ancestor of a removed `path` (the subtree that went away).
    pub fn removed_root(&self, path: &str) -> String {
        let mut current = path.to_string();
        while let Some(up) = parent(&current) {
            if self.removed.contains(up) {
                current = up.to_string();
            } else {
                break;
            }
        }
        current
    }

    /// The change at `path`, when both declare it differently.
    pub fn change_at(&self, path: &str) -> Option<&FieldChange<'_>> {
        self.changed.iter().find(|c| c.path == path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(kind: &str) -> SchemaField {
        SchemaField { kind: kind.into(), enumeration: Vec::new(), required: false, validation: BTreeMap::new() }
    }

    fn schema(paths: &[(&str, &str)]) -> Schema {
        paths.iter().map(|(p, k)| (p.to_string(), field(k))).collect()
    }

    #[test]
    fn paths_added_removed_and_changed() {
        let old = schema(&[("spec", "object"), ("spec.a", "object"), ("spec.a.x", "integer"), ("spec.n", "int-or-string")]);
        let new = schema(&[("spec", "object"), ("spec.n", "integer"), ("spec.b", "string")]);
        let c = compare(&old, &new);
        assert_eq!(c.added.iter().collect::<Vec<_>>(), ["spec.b"]);
        assert_eq!(c.removed.iter().collect::<Vec<_>>(), ["spec.a", "spec.a.x"]);
        assert_eq!(c.removed_root("spec.a.x"), "spec.a");
        assert_eq!(c.changed.len(), 1);
        assert!(c.change_at("spec.n").is_some_and(|f| f.retyped()));
        assert!(c.change_at("spec").is_none());
    }
}
