//! Where cluster state comes from: a kube context (read-only), or a snapshot file.

use std::path::PathBuf;

use clap::Args;

use super::{runtime, CliError};
use crate::cluster::live::{read, LiveOptions};
use crate::cluster::snapshot::read_file;
use crate::cluster::ClusterState;

#[derive(Debug, Args, Clone, Default)]
pub struct ClusterArgs {
    /// Read this snapshot file (kubectl get -o yaml|json output, or `trainer-audit snapshot`)
    #[arg(long, value_name = "FILE", conflicts_with_all = ["context", "kubeconfig"])]
    pub snapshot: Option<PathBuf>,
    /// Kubeconfig context (default: the current context; in a pod, the in-cluster config)
    #[arg(long, value_name = "NAME")]
    pub context: Option<String>,
    /// Kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// Kubernetes version to assume when the snapshot does not record one (e.g. 1.33)
    #[arg(long, value_name = "VERSION")]
    pub kube_version: Option<String>,
}

impl ClusterArgs {
    pub fn state(&self) -> Result<ClusterState, CliError> {
        let mut state = match &self.snapshot {
            Some(path) => read_file(path).map_err(|e| CliError::Usage(e.to_string()))?,
            None => {
                let options = LiveOptions {
                    kubeconfig: self.kubeconfig.clone(),
                    context: self.context.clone(),
                    namespaces: Vec::new(),
                    progress: std::io::IsTerminal::is_terminal(&std::io::stderr()),
                };
                runtime()?.block_on(read(&options)).map_err(|e| CliError::Cluster(e.to_string()))?
            }
        };
        if let Some(v) = &self.kube_version {
            let trimmed = v.trim_start_matches('v');
            if crate::version::parse_lenient(trimmed).is_none() {
                return Err(CliError::Usage(format!("invalid --kube-version {v:?}: expected MAJOR.MINOR[.PATCH]")));
            }
            state.info.server_version = Some(format!("v{trimmed}"));
        }
        Ok(state)
    }
}
