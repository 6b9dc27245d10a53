//! `trainer-audit gitops DIR [--base DIR | --base-ref REV]`: lists the Kubeflow Trainer chart
//! references a GitOps tree holds and, with a base, what changed. Glue only: reading is
//! `crate::gitops`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::{print_json, CliError, Format};
use crate::gitops::{self, compare, GitopsError};

#[derive(Debug, Args)]
pub struct GitopsArgs {
    /// Root of a checkout of the GitOps repository (Flux, Argo CD or kustomize YAML)
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// Another checkout to compare against (the target branch of a pull request, say)
    #[arg(long, value_name = "DIR", conflicts_with = "base_ref")]
    pub base: Option<PathBuf>,
    /// Compare against DIR as it is at this git revision (needs git)
    #[arg(long, value_name = "REV")]
    pub base_ref: Option<String>,
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
    /// Also list chart references that are not Kubeflow Trainer's
    #[arg(long, short)]
    pub verbose: bool,
}

pub fn run(args: GitopsArgs) -> Result<ExitCode, CliError> {
    let head = gitops::scan_dir(&args.dir).map_err(error)?;
    let base = match (&args.base, &args.base_ref) {
        (Some(dir), _) => Some(gitops::scan_dir(dir).map_err(error)?),
        (None, Some(rev)) => Some(gitops::scan_git(&args.dir, rev).map_err(error)?),
        (None, None) => None,
    };
    let comparison = base.as_ref().map(|b| compare::compare(b, &head));
    match args.format {
        Format::Json => print_json(&serde_json::json!({ "scan": head, "comparison": comparison }))?,
        Format::Text => {
            let mut out = gitops::text::scan(&head, args.verbose);
            if let Some(c) = &comparison {
                out.push('\n');
                out.push_str(&gitops::text::comparison(c));
            }
            print!("{out}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn error(e: GitopsError) -> CliError {
    match e {
        GitopsError::Input(m) | GitopsError::TooLarge(m) | GitopsError::Git(m) => CliError::Usage(m),
    }
}
