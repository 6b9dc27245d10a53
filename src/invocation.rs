//! How the binary was called: as itself, as a kubectl plugin (`kubectl-trainer_audit`, found by
//! kubectl on PATH) or as a Helm plugin (Helm sets `HELM_PLUGIN_NAME`). Owns the name help and
//! messages use, and the arguments Helm's environment stands for.
//!
//! kubectl hands a plugin every argument after its name untouched, so `--context`,
//! `--kubeconfig` and `-n` reach us as our own flags. Helm does not: it takes `-n/--namespace`,
//! `--kube-context` and `--kubeconfig` out of the plugin's arguments and passes them as
//! `HELM_NAMESPACE`, `HELM_KUBECONTEXT` and `KUBECONFIG` (Helm v4.2.3 `pkg/cmd/load_plugins.go`
//! `manuallyProcessArgs`, `pkg/cli/environment.go` `EnvVars`); they are turned back into flags
//! here. `KUBECONFIG` and `HELM_REGISTRY_CONFIG` need nothing: the cluster client and the
//! registry credentials read them already.

use std::ffi::OsString;
use std::sync::OnceLock;

/// The executable name kubectl looks for on PATH for `kubectl trainer-audit` (a dash in a
/// plugin's command is an underscore in its file name).
pub const KUBECTL_PLUGIN_BIN: &str = "kubectl-trainer_audit";
/// The plugin name in `plugin/helm/plugin.yaml`.
pub const HELM_PLUGIN_NAME: &str = "trainer-audit";

/// Who called the binary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Host {
    Direct,
    Kubectl,
    Helm,
}

impl Host {
    /// How a person types this program's commands.
    pub fn program(self) -> &'static str {
        match self {
            Host::Direct => "trainer-audit",
            Host::Kubectl => "kubectl trainer-audit",
            Host::Helm => "helm trainer-audit",
        }
    }
}

static HOST: OnceLock<Host> = OnceLock::new();

/// The host recorded by [`arguments`] (direct when it was never called: the library in tests).
pub fn host() -> Host {
    *HOST.get().unwrap_or(&Host::Direct)
}

/// The program name for help and messages (`trainer-audit`, `kubectl trainer-audit`, …).
pub fn program() -> &'static str {
    host().program()
}

/// Which host `argv0` and the environment say called us.
pub fn detect(argv0: &std::path::Path, helm_plugin_name: Option<&str>) -> Host {
    let file = argv0.file_name().and_then(|f| f.to_str()).unwrap_or("");
    let file = file.strip_suffix(".exe").unwrap_or(file);
    if file == KUBECTL_PLUGIN_BIN {
        Host::Kubectl
    } else if helm_plugin_name == Some(HELM_PLUGIN_NAME) {
        Host::Helm
    } else {
        Host::Direct
    }
}

/// Helm's environment as it bears on a run.
#[derive(Debug, Default, Clone)]
pub struct HelmEnv {
    /// `HELM_NAMESPACE`: `-n` given to Helm, else the kubeconfig context's namespace, else
    /// `default` (Helm's `EnvSettings.Namespace`).
    pub namespace: Option<String>,
    /// `HELM_KUBECONTEXT`: `--kube-context` given to Helm, else empty.
    pub kube_context: Option<String>,
}

impl HelmEnv {
    pub fn from_env() -> HelmEnv {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        HelmEnv { namespace: var("HELM_NAMESPACE"), kube_context: var("HELM_KUBECONTEXT") }
    }
}

/// Subcommands that read a cluster (`--context`), and those that also take a release
/// namespace (`-n`).
const WITH_CONTEXT: [&str; 7] = ["status", "snapshot", "check", "plan", "runbook", "migrate", "gitops"];
const WITH_NAMESPACE: [&str; 3] = ["check", "plan", "runbook"];

/// The arguments after the program name with Helm's flags put back: `--context` from
/// `HELM_KUBECONTEXT` unless the run reads a snapshot or names a context, and `--namespace`
/// from `HELM_NAMESPACE` for the commands that take a release namespace. `default` is what Helm
/// passes when nobody chose a namespace, so it is not passed on: the release is then found
/// wherever it is, as without Helm (an explicit `helm -n default` looks the same and cannot be
/// told apart).
pub fn with_helm_env(args: Vec<OsString>, env: &HelmEnv) -> Vec<OsString> {
    let Some(command) = args.first().and_then(|a| a.to_str()).map(str::to_string) else { return args };
    let given = |names: &[&str]| {
        args.iter()
            .filter_map(|a| a.to_str())
            .take_while(|a| *a != "--")
            .any(|a| names.iter().any(|n| a == *n || a.starts_with(&format!("{n}="))))
    };
    let mut out = args.clone();
    if WITH_CONTEXT.contains(&command.as_str()) && !given(&["--snapshot", "--context", "--all-contexts"]) {
        if let Some(context) = &env.kube_context {
            out.push("--context".into());
            out.push(context.into());
        }
    }
    if WITH_NAMESPACE.contains(&command.as_str()) && !given(&["-n", "--namespace"]) {
        if let Some(ns) = env.namespace.as_deref().filter(|ns| *ns != "default") {
            out.push("--namespace".into());
            out.push(ns.into());
        }
    }
    out
}

/// The program's arguments (without argv0) as the command line should see them, the host
/// recorded for [`program`].
pub fn arguments() -> (Host, Vec<OsString>) {
    let mut all = std::env::args_os();
    let argv0 = all.next().unwrap_or_default();
    let rest: Vec<OsString> = all.collect();
    let host = detect(std::path::Path::new(&argv0), std::env::var("HELM_PLUGIN_NAME").ok().as_deref());
    let _ = HOST.set(host);
    let rest = if host == Host::Helm { with_helm_env(rest, &HelmEnv::from_env()) } else { rest };
    (host, rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(args: &[&str]) -> Vec<OsString> {
        args.iter().map(OsString::from).collect()
    }

    #[test]
    fn the_host_comes_from_the_file_name_or_helms_plugin_name() {
        assert_eq!(detect("/home/u/.krew/bin/kubectl-trainer_audit".as_ref(), None), Host::Kubectl);
        assert_eq!(detect("kubectl-trainer_audit.exe".as_ref(), None), Host::Kubectl);
        assert_eq!(detect("/usr/bin/trainer-audit".as_ref(), Some("trainer-audit")), Host::Helm);
        assert_eq!(detect("/usr/bin/trainer-audit".as_ref(), Some("diff")), Host::Direct);
        assert_eq!(detect("/usr/bin/trainer-audit".as_ref(), None), Host::Direct);
        assert_eq!(Host::Kubectl.program(), "kubectl trainer-audit");
    }

    #[test]
    fn helms_flags_come_back_as_ours_unless_given_or_meaningless() {
        let env = HelmEnv { namespace: Some("kubeflow-system".into()), kube_context: Some("prod".into()) };
        assert_eq!(
            with_helm_env(os(&["check", "--to", "2.3.0"]), &env),
            os(&["check", "--to", "2.3.0", "--context", "prod", "--namespace", "kubeflow-system"])
        );
        // A snapshot is no context; a namespace given to us wins.
        assert_eq!(
            with_helm_env(os(&["check", "--snapshot", "s.yaml", "-n", "x"]), &env),
            os(&["check", "--snapshot", "s.yaml", "-n", "x"])
        );
        assert_eq!(with_helm_env(os(&["status", "--context=a"]), &env), os(&["status", "--context=a"]));
        // status takes no release namespace; rules reads no cluster.
        assert_eq!(with_helm_env(os(&["status"]), &env), os(&["status", "--context", "prod"]));
        assert_eq!(with_helm_env(os(&["rules"]), &env), os(&["rules"]));
        // Helm's fallback namespace is not a choice.
        let fallback = HelmEnv { namespace: Some("default".into()), kube_context: None };
        assert_eq!(with_helm_env(os(&["check"]), &fallback), os(&["check"]));
        assert_eq!(with_helm_env(Vec::new(), &env), Vec::<OsString>::new());
    }
}
