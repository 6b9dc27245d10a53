//! Where a `check` finding is shown in code scanning: a file of the repository being scanned
//! (paths relative to its root, the current directory), at a line when one is known. In order:
//! a values finding at the first values file given; a live object at its line in the snapshot;
//! else the chart template that renders it (under a local `--chart`); else the snapshot, the
//! values file or the local chart at its top, and for a live cluster with a pulled chart the
//! chart's path as Helm names it.

use std::path::{Path, PathBuf};

use serde_json::{json, Value as Json};

use crate::audit::finding::Finding;

/// The files a `check` run read, and the root its paths are relative to.
#[derive(Debug, Clone, Default)]
pub struct Files {
    pub root: PathBuf,
    pub snapshot: Option<PathBuf>,
    /// The snapshot's text, for finding an object's line.
    pub snapshot_text: String,
    pub values: Vec<PathBuf>,
    /// A local target chart (directory or archive).
    pub chart: Option<PathBuf>,
}

impl Files {
    pub fn new(root: PathBuf, snapshot: Option<PathBuf>, values: Vec<PathBuf>, chart: Option<PathBuf>) -> Files {
        let snapshot_text = snapshot.as_deref().and_then(|p| std::fs::read_to_string(p).ok()).unwrap_or_default();
        Files { root, snapshot, snapshot_text, values, chart }
    }

    pub fn root_uri(&self) -> String {
        let root = self.root.to_string_lossy().replace('\\', "/");
        format!("file://{}/", root.trim_end_matches('/'))
    }

    /// `path` relative to the root, with forward slashes (as it is when outside the root).
    fn relative(&self, path: &Path) -> String {
        let absolute = if path.is_absolute() { path.to_path_buf() } else { self.root.join(path) };
        let shown = absolute.strip_prefix(&self.root).map(Path::to_path_buf).unwrap_or(absolute);
        shown.to_string_lossy().replace('\\', "/")
    }

    /// Whether `path` is in the repository being scanned.
    fn inside(&self, path: &Path) -> bool {
        let absolute = if path.is_absolute() { path.to_path_buf() } else { self.root.join(path) };
        absolute.starts_with(&self.root)
    }

    fn at(&self, path: &Path, line: Option<usize>) -> Json {
        let mut location = json!({"artifactLocation": {"uri": self.relative(path), "uriBaseId": "%SRCROOT%"}});
        if let Some(line) = line {
            location["region"] = json!({"startLine": line});
        }
        location
    }

    /// The finding's physical location.
    pub fn locate(&self, f: &Finding) -> Json {
        if f.subject.starts_with("values ") {
            if let Some(file) = self.values.first() {
                return self.at(file, None);
            }
        }
        if let (Some(snapshot), Some(line)) = (&self.snapshot, object_line(&self.snapshot_text, &f.subject)) {
            return self.at(snapshot, Some(line));
        }
        if !f.location.is_empty() {
            if let Some(chart) = self.chart.as_deref().filter(|c| c.is_dir() && self.inside(c)) {
                // Template paths start with the chart's name, the directory's own name.
                let inside = f.location.split_once('/').map(|(_, rest)| rest).unwrap_or(&f.location);
                return self.at(&chart.join(inside), None);
            }
        }
        let chart = self.chart.as_deref().filter(|c| self.inside(c));
        match (&self.snapshot, self.values.first(), chart) {
            (Some(s), _, _) => self.at(s, Some(1)),
            (None, Some(v), _) => self.at(v, None),
            (None, None, Some(c)) if c.is_dir() => self.at(&c.join("Chart.yaml"), None),
            (None, None, Some(c)) => self.at(c, None),
            (None, None, None) if !f.location.is_empty() => json!({"artifactLocation": {"uri": f.location}}),
            (None, None, None) => json!({"artifactLocation": {"uri": "Chart.yaml"}}),
        }
    }
}

/// The line (1-based) of `metadata.name` of the object a subject names (`Kind/name`,
/// `Kind/namespace/name`, or `Kind name …`), in a YAML snapshot: the first `name: <name>` line
/// after a `kind: <Kind>` line of the same item.
pub fn object_line(text: &str, subject: &str) -> Option<usize> {
    let head = subject.split_whitespace().next()?;
    let mut parts = head.split('/');
    let kind = parts.next()?;
    let name = parts.next_back()?;
    if name.is_empty() || kind.is_empty() || head == kind {
        return None;
    }
    let lines: Vec<&str> = text.lines().collect();
    let item_start = |l: &str| l.trim_start().starts_with("- ");
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim_start().trim_start_matches("- ").trim() == format!("kind: {kind}") {
            // The item's lines around this one: back to its `- ` and on to the next.
            let start = (0..=i).rev().find(|&j| item_start(lines[j])).unwrap_or(0);
            let end =
                (i + 1..lines.len()).find(|&j| item_start(lines[j]) && indent(lines[j]) <= indent(lines[start])).unwrap_or(lines.len());
            let wanted = [format!("name: {name}"), format!("name: '{name}'"), format!("name: \"{name}\"")];
            if let Some(j) = (start..end).find(|&j| wanted.iter().any(|w| lines[j].trim_start().trim_start_matches("- ") == w)) {
                return Some(j + 1);
            }
            i = end.max(i + 1);
            continue;
        }
        i += 1;
    }
    None
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_object_is_found_at_its_name_in_its_own_item() {
        let text = "apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: x\n- apiVersion: apps/v1\n  kind: Deployment\n  metadata:\n    labels:\n      name: decoy\n    name: x\n    namespace: ns\nkind: List\n";
        assert_eq!(object_line(text, "Deployment/ns/x"), Some(12));
        assert_eq!(object_line(text, "ConfigMap/x"), Some(6));
        assert_eq!(object_line(text, "Deployment/ns/y"), None);
        assert_eq!(object_line(text, "cluster"), None);
        assert_eq!(object_line(text, "TrainJob spec.x"), None);
    }
}
