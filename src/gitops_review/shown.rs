//! Where a person reads a GitOps file from: the repository root. The review locates everything
//! relative to the reviewed tree (`gitops DIR`); the text, the Markdown review, the step summary,
//! the inline annotations and GitLab's Code Quality report name files as the repository does
//! (`deploy/apps/trainer.yaml:11`, not `apps/trainer.yaml:11` in one place and the other in the
//! next), so each is the path a reviewer sees in the pull request. JSON and SARIF stay relative
//! to the tree (SARIF records the tree as `%SRCROOT%`).

use std::path::Path;

use super::GitopsReview;
use crate::gitops::Location;

/// The tree's place in its git work tree (`git rev-parse --show-prefix`: `deploy/`, or empty at
/// the root); None when git is missing or the tree is not in a work tree, where files stay
/// relative to the tree.
pub fn repo_prefix(dir: &Path) -> Option<String> {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["rev-parse", "--show-prefix"])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn rebase(at: &mut Location, prefix: &str) {
    at.file = format!("{prefix}{}", at.file);
}

impl GitopsReview {
    /// The review with every file named from the repository root (`prefix` ends with `/`, as
    /// git prints it; empty or None: unchanged).
    pub fn shown_from(&self, prefix: Option<&str>) -> GitopsReview {
        let mut shown = self.clone();
        let Some(prefix) = prefix.filter(|p| !p.is_empty()) else { return shown };
        for r in &mut shown.references {
            rebase(&mut r.at, prefix);
            r.problems.iter_mut().filter_map(|p| p.at.as_mut()).for_each(|at| rebase(at, prefix));
            for f in &mut r.findings {
                rebase(&mut f.at, prefix);
                f.related.iter_mut().for_each(|rel| rebase(&mut rel.at, prefix));
            }
        }
        shown.removed.iter_mut().for_each(|r| rebase(&mut r.at, prefix));
        shown.tree_problems.iter_mut().filter_map(|p| p.at.as_mut()).for_each(|at| rebase(at, prefix));
        shown
    }
}
