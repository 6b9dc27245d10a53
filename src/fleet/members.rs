//! Which clusters the flags name, in a fixed order: snapshot files as given (a directory gives
//! its `*.yaml`, `*.yml` and `*.json` files by name), contexts as given, every context of the
//! kubeconfig in its own order (`--all-contexts`), or a directory of kubeconfigs by file name
//! (each file's current context, or all of its contexts). Whether the output is a fleet's is
//! decided by the flags, not by how many clusters they turn out to name, so a script over a
//! directory gets the same shape whether it holds one file or fifty.

use std::path::{Path, PathBuf};

use kube::config::Kubeconfig;

use super::{FleetError, Member};
use crate::cluster::source::Source;

/// More clusters than this in one run are refused (a directory of the wrong files, most likely).
pub const MAX_MEMBERS: usize = 10_000;

/// The cluster flags as given.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// Snapshot files or directories of them.
    pub snapshots: Vec<PathBuf>,
    pub contexts: Vec<String>,
    pub all_contexts: bool,
    /// A kubeconfig file, or a directory of them.
    pub kubeconfig: Option<PathBuf>,
}

impl Selection {
    /// True when the flags may name several clusters: fleet output.
    pub fn is_fleet(&self) -> bool {
        self.snapshots.len() > 1
            || self.contexts.len() > 1
            || self.all_contexts
            || self.snapshots.iter().any(|p| p.is_dir())
            || self.kubeconfig.as_deref().is_some_and(Path::is_dir)
    }

    /// The clusters, in input order, each named once.
    pub fn members(&self) -> Result<Vec<Member>, FleetError> {
        let members = if !self.snapshots.is_empty() {
            self.snapshot_members()?
        } else if let Some(dir) = self.kubeconfig.as_deref().filter(|p| p.is_dir()) {
            self.kubeconfig_dir_members(dir)?
        } else {
            self.context_members()?
        };
        if members.len() > MAX_MEMBERS {
            return Err(FleetError::Usage(format!(
                "the cluster flags name {} clusters, over the limit of {MAX_MEMBERS}: split the fleet",
                members.len()
            )));
        }
        let mut names: Vec<&str> = members.iter().map(|m| m.name.as_str()).collect();
        names.sort_unstable();
        if let Some(twice) = names.windows(2).find(|w| w[0] == w[1]) {
            return Err(FleetError::Usage(format!("cluster {} is named twice: name each cluster once", twice[0])));
        }
        Ok(members)
    }

    fn snapshot_members(&self) -> Result<Vec<Member>, FleetError> {
        let mut members = Vec::new();
        for path in &self.snapshots {
            if path.is_dir() {
                let files = files_in(path, |name| [".yaml", ".yml", ".json"].iter().any(|ext| name.ends_with(ext)))?;
                if files.is_empty() {
                    return Err(FleetError::Usage(format!("snapshot directory {} holds no *.yaml, *.yml or *.json file", path.display())));
                }
                members.extend(files.into_iter().map(snapshot_member));
            } else {
                members.push(snapshot_member(path.clone()));
            }
        }
        Ok(members)
    }

    fn kubeconfig_dir_members(&self, dir: &Path) -> Result<Vec<Member>, FleetError> {
        if !self.contexts.is_empty() {
            return Err(FleetError::Usage(format!(
                "--context picks contexts of one kubeconfig, and {} is a directory: each file's current context is read \
                 (every context with --all-contexts)",
                dir.display()
            )));
        }
        let files = files_in(dir, |_| true)?;
        if files.is_empty() {
            return Err(FleetError::Usage(format!("kubeconfig directory {} holds no file", dir.display())));
        }
        let mut members = Vec::new();
        for file in files {
            let file_name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            // An unreadable file, or one without contexts, stays one member: its read fails with
            // kube's own words, as that cluster's failure.
            let contexts = match Kubeconfig::read_from(&file) {
                Ok(kc) if self.all_contexts && !kc.contexts.is_empty() => kc.contexts.into_iter().map(|c| c.name).collect(),
                _ => Vec::new(),
            };
            if contexts.is_empty() {
                members.push(Member { name: file_name, source: Source::Live { kubeconfig: Some(file), context: None } });
            } else {
                members.extend(contexts.into_iter().map(|context| Member {
                    name: format!("{file_name}/{context}"),
                    source: Source::Live { kubeconfig: Some(file.clone()), context: Some(context) },
                }));
            }
        }
        Ok(members)
    }

    fn context_members(&self) -> Result<Vec<Member>, FleetError> {
        let live = |context: String| Member {
            name: context.clone(),
            source: Source::Live { kubeconfig: self.kubeconfig.clone(), context: Some(context) },
        };
        if self.all_contexts {
            let kc = read_kubeconfig(self.kubeconfig.as_deref())?;
            if kc.contexts.is_empty() {
                return Err(FleetError::Usage(format!("{} has no contexts", describe(self.kubeconfig.as_deref()))));
            }
            return Ok(kc.contexts.into_iter().map(|c| live(c.name)).collect());
        }
        if !self.contexts.is_empty() {
            return Ok(self.contexts.iter().cloned().map(live).collect());
        }
        Ok(vec![Member {
            name: current_name(self.kubeconfig.as_deref()),
            source: Source::Live { kubeconfig: self.kubeconfig.clone(), context: None },
        }])
    }
}

fn snapshot_member(path: PathBuf) -> Member {
    Member { name: path.display().to_string(), source: Source::Snapshot { path } }
}

fn describe(kubeconfig: Option<&Path>) -> String {
    match kubeconfig {
        Some(path) => format!("kubeconfig {}", path.display()),
        None => "the kubeconfig ($KUBECONFIG, else ~/.kube/config)".to_string(),
    }
}

fn read_kubeconfig(kubeconfig: Option<&Path>) -> Result<Kubeconfig, FleetError> {
    let read = match kubeconfig {
        Some(path) => Kubeconfig::read_from(path),
        None => Kubeconfig::read(),
    };
    read.map_err(|e| FleetError::Usage(format!("cannot read {}: {e}; pass --kubeconfig FILE", describe(kubeconfig))))
}

/// The name of the cluster a run without `--context` reads: the kubeconfig's current context,
/// `in-cluster` in a pod without one, else `current-context`.
fn current_name(kubeconfig: Option<&Path>) -> String {
    let from_file = match kubeconfig {
        Some(path) => Kubeconfig::read_from(path).ok(),
        None => Kubeconfig::read().ok(),
    };
    match from_file.and_then(|kc| kc.current_context).filter(|c| !c.is_empty()) {
        Some(context) => context,
        None if kubeconfig.is_none() && std::env::var_os("KUBERNETES_SERVICE_HOST").is_some() => "in-cluster".to_string(),
        None => "current-context".to_string(),
    }
}

/// Regular, non-hidden files of `dir` whose names pass `keep`, sorted by name.
fn files_in(dir: &Path, keep: impl Fn(&str) -> bool) -> Result<Vec<PathBuf>, FleetError> {
    let entries = std::fs::read_dir(dir).map_err(|e| FleetError::Usage(format!("cannot read directory {}: {e}", dir.display())))?;
    let mut files = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| FleetError::Usage(format!("cannot read directory {}: {e}", dir.display())))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        // Follows symlinks, as kubeconfig directories of links (to a secrets mount) are common.
        if name.starts_with('.') || !entry.path().is_file() || !keep(&name) {
            continue;
        }
        files.push(entry.path());
        if files.len() > MAX_MEMBERS {
            break;
        }
    }
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kubeconfig(contexts: &[&str], current: &str) -> String {
        let mut text = String::from("apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: http://127.0.0.1:1\n");
        text.push_str("users:\n- name: u\n  user:\n    token: t\ncontexts:\n");
        for c in contexts {
            text.push_str(&format!("- name: {c}\n  context:\n    cluster: c\n    user: u\n"));
        }
        text.push_str(&format!("current-context: {current}\n"));
        text
    }

    fn names(members: &[Member]) -> Vec<&str> {
        members.iter().map(|m| m.name.as_str()).collect()
    }

    #[test]
    fn snapshot_directories_give_their_snapshot_files_by_name() {
        let dir = tempfile::tempdir().unwrap();
        for f in ["b.yaml", "a.json", "c.yml", "notes.txt", ".hidden.yaml"] {
            std::fs::write(dir.path().join(f), "").unwrap();
        }
        std::fs::create_dir(dir.path().join("sub.yaml")).unwrap();
        let one = dir.path().join("b.yaml");
        let selection = Selection { snapshots: vec![dir.path().to_path_buf()], ..Selection::default() };
        assert!(selection.is_fleet());
        let members = selection.members().unwrap();
        let shown: Vec<String> = members.iter().map(|m| m.name.trim_start_matches(&*dir.path().to_string_lossy()).to_string()).collect();
        assert_eq!(shown, ["/a.json", "/b.yaml", "/c.yml"]);
        // The same file twice is refused; one file alone is not a fleet.
        let twice = Selection { snapshots: vec![dir.path().to_path_buf(), one.clone()], ..Selection::default() };
        assert!(twice.members().unwrap_err().to_string().contains("named twice"));
        assert!(!Selection { snapshots: vec![one], ..Selection::default() }.is_fleet());
        let empty = tempfile::tempdir().unwrap();
        let err = Selection { snapshots: vec![empty.path().to_path_buf()], ..Selection::default() }.members().unwrap_err();
        assert!(err.to_string().contains("holds no *.yaml"), "{err}");
    }

    #[test]
    fn all_contexts_keeps_the_kubeconfig_order() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config");
        std::fs::write(&file, kubeconfig(&["prod", "dev", "staging"], "dev")).unwrap();
        let all = Selection { all_contexts: true, kubeconfig: Some(file.clone()), ..Selection::default() };
        assert!(all.is_fleet());
        let members = all.members().unwrap();
        assert_eq!(names(&members), ["prod", "dev", "staging"]);
        assert_eq!(members[0].source, Source::Live { kubeconfig: Some(file.clone()), context: Some("prod".into()) });
        // Without a context the current one is read, named after it.
        let current = Selection { kubeconfig: Some(file.clone()), ..Selection::default() };
        assert!(!current.is_fleet());
        assert_eq!(names(&current.members().unwrap()), ["dev"]);
        let repeated = Selection { contexts: vec!["a".into(), "a".into()], ..Selection::default() };
        assert!(repeated.is_fleet() && repeated.members().is_err());
        let missing = Selection { all_contexts: true, kubeconfig: Some(dir.path().join("absent")), ..Selection::default() };
        assert!(missing.members().unwrap_err().to_string().contains("absent"));
    }

    #[test]
    fn kubeconfig_directories_give_one_cluster_per_file_or_per_context() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("east"), kubeconfig(&["e1", "e2"], "e1")).unwrap();
        std::fs::write(dir.path().join("west.yaml"), kubeconfig(&["w1"], "w1")).unwrap();
        std::fs::write(dir.path().join("broken"), "{{{").unwrap();
        let current = Selection { kubeconfig: Some(dir.path().to_path_buf()), ..Selection::default() };
        assert!(current.is_fleet());
        assert_eq!(names(&current.members().unwrap()), ["broken", "east", "west.yaml"]);
        let all = Selection { all_contexts: true, ..current.clone() };
        assert_eq!(names(&all.members().unwrap()), ["broken", "east/e1", "east/e2", "west.yaml/w1"]);
        let with_context = Selection { contexts: vec!["e1".into()], ..current };
        assert!(with_context.members().unwrap_err().to_string().contains("is a directory"));
    }
}
