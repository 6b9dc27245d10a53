//! GitOps sources as input: finds every Kubeflow Trainer chart reference in a tree of YAML
//! files — Flux `HelmRelease`s, Argo CD `Application`s, kustomize `helmCharts` — with the file
//! and line of each value, the user values each engine would hand to Helm, the engine's options
//! and what the files leave unknown; and, given a base tree (a directory or a git revision),
//! what changed per reference. Reading only: no chart is pulled and no cluster is read here.

pub mod argocd;
pub mod compare;
pub mod envsubst;
pub mod flux;
pub mod git;
pub mod kustomize;
pub mod model;
pub mod postbuild;
pub mod text;
pub mod tree;
pub mod values;
pub mod yaml;

use std::path::Path;

pub use model::{EngineOption, Ignored, Location, ObjectKey, Problem, Reference, Scan, VersionKind};

use helm_render::version::{parse_lenient, Constraint};

/// The chart trainer-audit is about.
pub const TRAINER_CHART: &str = "kubeflow-trainer";

#[derive(Debug, thiserror::Error)]
pub enum GitopsError {
    /// A path that cannot be read as a tree.
    #[error("{0}")]
    Input(String),
    /// Over a file-count or size bound.
    #[error("{0}")]
    TooLarge(String),
    /// `--base-ref`: git missing, not a repository, or an unknown revision.
    #[error("{0}")]
    Git(String),
}

/// Scans a directory.
pub fn scan_dir(root: &Path) -> Result<Scan, GitopsError> {
    Ok(scan_files(tree::read_dir(root)?))
}

/// Scans the tree of `dir` as it is at the git revision `rev`.
pub fn scan_git(dir: &Path, rev: &str) -> Result<Scan, GitopsError> {
    Ok(scan_files(git::read_revision(dir, rev)?))
}

/// Scans files already read (from a directory, a git revision or a test).
pub fn scan_files(files: tree::Files) -> Scan {
    let files_read = files.files.len();
    let mut tree = tree::Tree::parse(files);
    kustomize::apply_namespaces(&mut tree);
    let applied = postbuild::apply(&mut tree);
    let mut found = Found::default();
    flux::read(&tree, &applied, &mut found);
    argocd::read(&tree, &applied, &mut found);
    kustomize::read(&tree, &mut found);
    argocd::version(&tree, &mut found);
    let mut scan = Scan {
        references: found.references,
        ignored: found.ignored,
        argocd_version: found.argocd_version,
        argocd_version_at: found.argocd_version_at,
        problems: tree.problems,
        files_read,
    };
    scan.problems.extend(found.problems);
    scan.references.sort_by(|a, b| (a.engine, &a.object, &a.at).cmp(&(b.engine, &b.object, &b.at)));
    scan.ignored.sort();
    scan.problems.sort();
    scan.problems.dedup();
    scan
}

/// The files a scan takes Trainer references from, as a refusal names them.
pub const LOOKED_FOR: &str = "Flux HelmRelease (with the HelmRepository, OCIRepository or HelmChart it names), \
Argo CD Application (a Helm chart source), kustomize kustomization.yaml helmCharts";

/// Refused when neither the tree nor its base holds a Kubeflow Trainer reference: a review of
/// nothing would pass as if the change were safe.
pub fn require_trainer_references(dir: &Path, head: &Scan, base: Option<&Scan>) -> Result<(), GitopsError> {
    if !head.references.is_empty() || base.is_some_and(|b| !b.references.is_empty()) {
        return Ok(());
    }
    let other = head.ignored.len();
    let others = if other == 0 {
        String::new()
    } else {
        format!(
            " ({other} reference{} to other charts: --list --verbose names {})",
            text::plural(other),
            if other == 1 { "it" } else { "them" }
        )
    };
    Err(GitopsError::Input(format!(
        "{} holds no Kubeflow Trainer reference in its {} file{}{others}: looked for {LOOKED_FOR} naming the chart {TRAINER_CHART}. Point it at the GitOps checkout that deploys Trainer",
        dir.display(),
        head.files_read,
        text::plural(head.files_read)
    )))
}

/// What the readers collect while walking a tree.
#[derive(Debug, Default)]
pub struct Found {
    pub references: Vec<Reference>,
    pub ignored: Vec<Ignored>,
    pub problems: Vec<Problem>,
    pub argocd_version: Option<String>,
    pub argocd_version_at: Option<Location>,
}

/// A Trainer reference: the chart is `kubeflow-trainer`, or the repository ends in it.
pub fn is_trainer(chart: &str, repository: Option<&str>) -> bool {
    chart == TRAINER_CHART || repository.is_some_and(|r| r.trim_end_matches('/').rsplit('/').next() == Some(TRAINER_CHART))
}

/// Exact version, or semver range; anything else is kept as written, with a problem.
pub fn classify(version: &str, at: &Location, problems: &mut Vec<Problem>) -> VersionKind {
    let v = version.trim();
    let wildcard = v.split(['.', '-', '+']).any(|part| matches!(part, "x" | "X" | "*"));
    let operators = wildcard || v.contains(['<', '>', '=', '~', '^', ' ', ',', '|']);
    if !operators && parse_lenient(v).is_some() {
        return VersionKind::Exact;
    }
    if Constraint::parse(v).is_ok() {
        return VersionKind::Range;
    }
    problems.push(Problem::at(format!("version {version:?} is neither a version nor a semver range"), at.clone()));
    VersionKind::Exact
}

/// Scans in-memory files (for unit tests of the readers).
#[cfg(test)]
pub(crate) fn scan_texts(list: &[(&str, &str)]) -> Scan {
    let files = list.iter().map(|(p, t)| tree::SourceFile { path: p.to_string(), text: t.to_string() }).collect();
    scan_files(tree::Files { files, problems: vec![] })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trainer_references() {
        assert!(is_trainer("kubeflow-trainer", None));
        assert!(is_trainer("", Some("oci://ghcr.io/kubeflow/charts/kubeflow-trainer/")));
        assert!(!is_trainer("trainer", Some("oci://ghcr.io/kubeflow/charts")));
        assert!(!is_trainer("", Some("oci://ghcr.io/x/kubeflow-trainer-extras")));
    }

    #[test]
    fn versions_are_classified() {
        let at = Location { file: "f".into(), line: 1, column: 1 };
        let mut problems = vec![];
        assert_eq!(classify("2.3.0", &at, &mut problems), VersionKind::Exact);
        assert_eq!(classify("v2.3.0", &at, &mut problems), VersionKind::Exact);
        assert_eq!(classify(">=2.2.0 <2.4.0", &at, &mut problems), VersionKind::Range);
        assert_eq!(classify("2.3.x", &at, &mut problems), VersionKind::Range);
        assert_eq!(classify("*", &at, &mut problems), VersionKind::Range);
        assert_eq!(classify("2.3.0-fix.1", &at, &mut problems), VersionKind::Exact);
        assert!(problems.is_empty());
        classify("main", &at, &mut problems);
        assert_eq!(problems.len(), 1);
    }
}
