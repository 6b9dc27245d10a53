//! Where one cluster is read from — a snapshot file or a live context — and the one read of
//! it, for a single-cluster run and for each cluster of a fleet alike.

use std::path::PathBuf;

use serde::Serialize;

use super::live::{read as read_live, LiveOptions};
use super::snapshot::read_file;
use super::{ClusterError, ClusterState};

/// Where one cluster is read from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// A snapshot file.
    Snapshot { path: PathBuf },
    /// A live cluster: a kubeconfig (None: `$KUBECONFIG`, `~/.kube/config`, or the in-cluster
    /// configuration) and a context in it (None: its current context).
    Live {
        #[serde(skip_serializing_if = "Option::is_none")]
        kubeconfig: Option<PathBuf>,
        #[serde(skip_serializing_if = "Option::is_none")]
        context: Option<String>,
    },
}

/// Why a cluster could not be read: the snapshot file, the live cluster, or the runtime the
/// live read runs on (the wording is the underlying error's).
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("{0}")]
    Snapshot(ClusterError),
    #[error("{0}")]
    Live(ClusterError),
    #[error("cannot start the async runtime: {0}")]
    Runtime(std::io::Error),
}

impl Source {
    /// The cluster's objects; `progress` shows a live read's progress on standard error.
    pub fn read(&self, progress: bool) -> Result<ClusterState, ReadError> {
        match self {
            Source::Snapshot { path } => read_file(path).map_err(ReadError::Snapshot),
            Source::Live { kubeconfig, context } => {
                let options = LiveOptions { kubeconfig: kubeconfig.clone(), context: context.clone(), namespaces: Vec::new(), progress };
                let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(ReadError::Runtime)?;
                runtime.block_on(read_live(&options)).map_err(ReadError::Live)
            }
        }
    }
}
