//! The files of a GitOps tree, from a directory or a git revision, parsed into located YAML
//! documents and indexed by kind and name. Bounded: the number of files, each file's size and
//! the total are capped; hidden directories (`.git`) and symlinks are not followed; a file that
//! is not YAML, or is too large, is a problem of the scan, not a failure of the run.

use std::collections::BTreeMap;
use std::path::Path;

use super::model::{Location, Problem};
use super::yaml::{read_documents, Node, Pos};
use super::GitopsError;

/// More YAML files than this under one root are refused.
pub const MAX_FILES: usize = 20_000;
/// A larger file is skipped with a problem (GitOps objects are small; CRD bundles are not read).
pub const MAX_FILE_BYTES: u64 = 8 * 1024 * 1024;
/// All files together.
pub const MAX_TOTAL_BYTES: u64 = 256 * 1024 * 1024;
/// Directory depth walked.
const MAX_DEPTH: usize = 64;

/// One file's text, named by its path relative to the root with `/` separators.
#[derive(Debug, Clone)]
pub struct SourceFile {
    pub path: String,
    pub text: String,
}

/// The raw files of a tree and what could not be read.
#[derive(Debug, Default)]
pub struct Files {
    pub files: Vec<SourceFile>,
    pub problems: Vec<Problem>,
}

impl Files {
    /// Adds a file unless it breaks a bound; the caller has already checked the size.
    pub fn push(&mut self, path: String, bytes: Vec<u8>, total: &mut u64, root: &str) -> Result<(), GitopsError> {
        if self.files.len() >= MAX_FILES {
            return Err(GitopsError::TooLarge(format!(
                "{root} holds more than {MAX_FILES} YAML files: point trainer-audit gitops at the directory that holds your GitOps objects"
            )));
        }
        *total += bytes.len() as u64;
        if *total > MAX_TOTAL_BYTES {
            return Err(GitopsError::TooLarge(format!(
                "the YAML files under {root} add up to more than {} MiB: point trainer-audit gitops at a smaller directory",
                MAX_TOTAL_BYTES / (1024 * 1024)
            )));
        }
        match String::from_utf8(bytes) {
            Ok(text) => self.files.push(SourceFile { path, text }),
            Err(_) => self.problems.push(Problem::at("not UTF-8 text: skipped", Location { file: path, line: 1, column: 1 })),
        }
        Ok(())
    }

    pub fn too_large(&mut self, path: String, size: u64) {
        let message = format!("{} KiB, over the {} MiB limit for one file: skipped", size / 1024, MAX_FILE_BYTES / (1024 * 1024));
        self.problems.push(Problem::at(message, Location { file: path, line: 1, column: 1 }));
    }
}

pub fn is_yaml_name(name: &str) -> bool {
    name.ends_with(".yaml") || name.ends_with(".yml")
}

/// Every `*.yaml`/`*.yml` file under `root`, in path order.
pub fn read_dir(root: &Path) -> Result<Files, GitopsError> {
    let shown = root.display().to_string();
    let meta = std::fs::metadata(root).map_err(|e| GitopsError::Input(format!("cannot read the GitOps tree {shown}: {e}")))?;
    if !meta.is_dir() {
        return Err(GitopsError::Input(format!("{shown} is not a directory: give the root of a checkout of your GitOps repository")));
    }
    let mut files = Files::default();
    let mut total = 0u64;
    let walker = walkdir::WalkDir::new(root)
        .follow_links(false)
        .max_depth(MAX_DEPTH)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| e.depth() == 0 || !e.file_name().to_string_lossy().starts_with('.'));
    for entry in walker {
        let entry = entry.map_err(|e| GitopsError::Input(format!("cannot walk {shown}: {e}")))?;
        if !entry.file_type().is_file() || !is_yaml_name(&entry.file_name().to_string_lossy()) {
            continue;
        }
        let rel = entry.path().strip_prefix(root).unwrap_or(entry.path());
        let path = rel.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/");
        let size = entry.metadata().map(|m| m.len()).unwrap_or(0);
        if size > MAX_FILE_BYTES {
            files.too_large(path, size);
            continue;
        }
        let bytes = std::fs::read(entry.path()).map_err(|e| GitopsError::Input(format!("cannot read {}: {e}", entry.path().display())))?;
        files.push(path, bytes, &mut total, &shown)?;
    }
    Ok(files)
}

/// One YAML document of a file, with the fields every reader looks at first.
#[derive(Debug, Clone)]
pub struct Doc {
    pub file: String,
    pub node: Node,
    pub api_version: String,
    pub kind: String,
    pub name: String,
    pub namespace: Option<String>,
}

impl Doc {
    pub fn loc(&self, at: Pos) -> Location {
        Location { file: self.file.clone(), line: at.line, column: at.column }
    }

    /// The API group (`helm.toolkit.fluxcd.io`), empty for the core group.
    pub fn group(&self) -> &str {
        self.api_version.rsplit_once('/').map(|(g, _)| g).unwrap_or("")
    }

    pub fn version(&self) -> &str {
        self.api_version.rsplit_once('/').map(|(_, v)| v).unwrap_or(&self.api_version)
    }

    pub fn is(&self, group: &str, kind: &str) -> bool {
        self.kind == kind && self.group() == group
    }

    /// Where a value is written, or the object itself when the path is absent.
    pub fn loc_of(&self, keys: &[&str]) -> Location {
        self.loc(self.node.path(keys).map(|n| n.at).unwrap_or(self.node.at))
    }
}

/// The parsed tree: documents and the text of every file (values files are looked up by path).
#[derive(Debug, Default)]
pub struct Tree {
    pub docs: Vec<Doc>,
    pub texts: BTreeMap<String, String>,
    pub problems: Vec<Problem>,
}

impl Tree {
    pub fn parse(files: Files) -> Tree {
        let mut tree = Tree { problems: files.problems, ..Tree::default() };
        let charts: Vec<String> = files
            .files
            .iter()
            .filter_map(|f| f.path.strip_suffix("Chart.yaml").filter(|d| d.is_empty() || d.ends_with('/')).map(str::to_string))
            .collect();
        for file in files.files {
            // Helm templates are not YAML until rendered; a chart vendored in the tree is not read.
            let in_templates = charts.iter().any(|dir| file.path.starts_with(&format!("{dir}templates/")));
            if !in_templates {
                match read_documents(&file.text) {
                    Ok(nodes) => tree.docs.extend(nodes.into_iter().filter(Node::is_map).map(|node| doc(&file.path, node))),
                    Err(e) => tree.problems.push(Problem::at(
                        format!("not readable as YAML ({}): skipped", e.message),
                        Location { file: file.path.clone(), line: e.line.max(1), column: 1 },
                    )),
                }
            }
            tree.texts.insert(file.path, file.text);
        }
        tree
    }

    /// The object of this group and kind named `name`, in `namespace` when both sides say one.
    pub fn find(&self, group: &str, kind: &str, name: &str, namespace: Option<&str>) -> Option<&Doc> {
        let candidates: Vec<&Doc> = self.docs.iter().filter(|d| d.is(group, kind) && d.name == name).collect();
        // An exact namespace match first; an object without a namespace (set later by kustomize
        // or Flux) matches any.
        let exact = candidates.iter().find(|d| namespace.is_some() && d.namespace.as_deref() == namespace);
        exact.or_else(|| candidates.iter().find(|d| d.namespace.is_none() || namespace.is_none())).copied()
    }

    pub fn of_kind<'a>(&'a self, group: &'a str, kind: &'a str) -> impl Iterator<Item = &'a Doc> + 'a {
        self.docs.iter().filter(move |d| d.is(group, kind))
    }
}

fn doc(file: &str, node: Node) -> Doc {
    let text = |keys: &[&str]| node.str_at(keys).unwrap_or("").to_string();
    Doc {
        file: file.to_string(),
        api_version: text(&["apiVersion"]),
        kind: text(&["kind"]),
        name: text(&["metadata", "name"]),
        namespace: node.str_at(&["metadata", "namespace"]).map(str::to_string),
        node,
    }
}

/// `dir/sub/../x` → `dir/x`, relative to the tree root; None when it climbs out of the tree.
pub fn normalize(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    Some(parts.join("/"))
}

/// The directory of a tree path (`a/b.yaml` → `a`, `b.yaml` → ``).
pub fn dir_of(path: &str) -> &str {
    path.rsplit_once('/').map(|(d, _)| d).unwrap_or("")
}

/// `dir` joined with a relative path, normalised.
pub fn join(dir: &str, rel: &str) -> Option<String> {
    if dir.is_empty() {
        normalize(rel)
    } else {
        normalize(&format!("{dir}/{rel}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(list: &[(&str, &str)]) -> Files {
        Files { files: list.iter().map(|(p, t)| SourceFile { path: p.to_string(), text: t.to_string() }).collect(), problems: vec![] }
    }

    #[test]
    fn documents_are_indexed_and_bad_files_are_problems() {
        let tree = Tree::parse(files(&[
            ("a.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: ns}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"),
            ("bad.yaml", "a: [\n"),
            ("chart/Chart.yaml", "name: c\n"),
            ("chart/templates/d.yaml", "{{ .Values.x }}: [\n"),
        ]));
        assert_eq!(tree.docs.iter().filter(|d| d.kind == "ConfigMap").count(), 2);
        assert_eq!(tree.find("", "ConfigMap", "x", Some("ns")).unwrap().namespace.as_deref(), Some("ns"));
        assert!(tree.find("", "ConfigMap", "x", Some("other")).unwrap().namespace.is_none());
        assert_eq!(tree.problems.len(), 1, "{:?}", tree.problems);
        assert_eq!(tree.problems[0].at.as_ref().unwrap().file, "bad.yaml");
    }

    #[test]
    fn paths_normalise_inside_the_tree() {
        assert_eq!(join("a/b", "../c.yaml").as_deref(), Some("a/c.yaml"));
        assert_eq!(join("", "./x.yaml").as_deref(), Some("x.yaml"));
        assert_eq!(join("a", "../../x"), None);
    }

    #[test]
    fn file_limits() {
        let mut f = Files::default();
        let mut total = MAX_TOTAL_BYTES - 1;
        assert!(matches!(f.push("x.yaml".into(), vec![b'a'; 2], &mut total, "root"), Err(GitopsError::TooLarge(_))));
    }
}
