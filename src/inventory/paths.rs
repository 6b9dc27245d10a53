//! Sets of dotted paths compared and folded: an added or removed subtree is reported once, at
//! its root, with the number of paths under it.

use std::collections::BTreeSet;

use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Collapsed {
    pub path: String,
    /// Paths under `path` folded into it (0: just this one).
    pub nested: usize,
    /// Every leaf path of the subtree (the root itself when it has nothing under it), so JSON
    /// readers get each path while people read the folded form.
    pub leaves: Vec<String>,
}

impl std::fmt::Display for Collapsed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.nested {
            0 => write!(f, "{}", self.path),
            1 => write!(f, "{} (+1 nested path)", self.path),
            n => write!(f, "{} (+{n} nested paths)", self.path),
        }
    }
}

/// The path one level up: `a.b` → `a`, `a[]` → `a`, `a{}` → `a`.
pub fn parent(path: &str) -> Option<&str> {
    if let Some(stripped) = path.strip_suffix("[]").or_else(|| path.strip_suffix("{}")) {
        return Some(stripped);
    }
    path.rsplit_once('.').map(|(p, _)| p)
}

/// `path` and every ancestor, root first.
fn lineage(path: &str) -> Vec<&str> {
    let mut chain = vec![path];
    let mut cur = path;
    while let Some(p) = parent(cur) {
        chain.push(p);
        cur = p;
    }
    chain.reverse();
    chain
}

/// `changed` folded under the roots of subtrees that do not exist at all in `other`.
pub fn collapse(changed: &BTreeSet<String>, other: &BTreeSet<String>) -> Vec<Collapsed> {
    let other_prefixes: BTreeSet<&str> = other.iter().flat_map(|p| lineage(p)).collect();
    // Paths that are a proper ancestor of another changed path are not leaves.
    let inner: BTreeSet<&str> = changed.iter().flat_map(|p| lineage(p).into_iter().rev().skip(1)).collect();
    let mut roots: std::collections::BTreeMap<String, (usize, Vec<String>)> = std::collections::BTreeMap::new();
    for path in changed {
        let root = lineage(path).into_iter().find(|q| !other_prefixes.contains(q)).unwrap_or(path);
        let entry = roots.entry(root.to_string()).or_default();
        // A root that is itself a changed path is counted once as the root, not as nested.
        if root != path {
            entry.0 += 1;
        }
        if !inner.contains(path.as_str()) {
            entry.1.push(path.clone());
        }
    }
    roots.into_iter().map(|(path, (nested, leaves))| Collapsed { path, nested, leaves }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(items: &[&str]) -> BTreeSet<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn folds_new_subtrees_to_their_roots() {
        let old = set(&["spec", "spec.a", "spec.b"]);
        let new = set(&["spec", "spec.a", "spec.c", "spec.c.x", "spec.c.y[]", "spec.c.y[].z", "spec.b"]);
        let added: BTreeSet<String> = new.difference(&old).cloned().collect();
        assert_eq!(
            collapse(&added, &old),
            [Collapsed { path: "spec.c".into(), nested: 3, leaves: vec!["spec.c.x".into(), "spec.c.y[].z".into()] }]
        );
        // Leaves only (values): the subtree root is not itself a path.
        let old = set(&["manager.image", "manager.annotations"]);
        let new = set(&["manager.image", "runtimes.torch.enabled", "runtimes.jax.enabled"]);
        let added: BTreeSet<String> = new.difference(&old).cloned().collect();
        assert_eq!(
            collapse(&added, &old),
            [Collapsed {
                path: "runtimes".into(),
                nested: 2,
                leaves: vec!["runtimes.jax.enabled".into(), "runtimes.torch.enabled".into()]
            }]
        );
        let removed: BTreeSet<String> = old.difference(&new).cloned().collect();
        assert_eq!(
            collapse(&removed, &new),
            [Collapsed { path: "manager.annotations".into(), nested: 0, leaves: vec!["manager.annotations".into()] }]
        );
    }
}
