//! Every object a printed command names exists: in the cluster as read, in the target chart as
//! rendered for this release and namespace, or made by an earlier command of the same list. A
//! command that names a default (`deployment/kubeflow-trainer-controller-manager` for a release
//! called `trainer`) fails when a person runs it, at the worst moment: the runbook's last block
//! (issue 29 §4, seen on the control plane). [`unknown_names`] checks a list of commands — a
//! finding's fix, a plan's steps, a runbook's blocks — and returns what they name that does not
//! exist; the tests run it over every format for several release names and namespaces, and the
//! state explorer over every state it builds.
//!
//! Commands are read as a shell reads them (quotes, `;`, `|`, `&&`, `$(…)`, `if … then … fi`);
//! the `kubectl` verbs that name objects (`get`, `describe`, `delete`, `annotate`, `label`,
//! `patch`, `edit`, `wait`, `scale`, `rollout`, `set`, `create clusterrolebinding`) and the `helm`
//! commands that name a release (`upgrade` without `--install`, `rollback`, `history`, `status`,
//! `get`, `uninstall`) are checked; listing a kind (`kubectl get trainjobs -A`), selectors and
//! files are not names.

use crate::cluster::release::Release;
use crate::cluster::ClusterState;
use crate::inventory::Inventory;
use crate::objects::str_at;

/// An object (or Helm release) a command names that exists nowhere it could.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unknown {
    pub command: String,
    /// `Deployment/ml-platform/kubeflow-trainer-controller-manager`, `Helm release ns/name`.
    pub object: String,
}

impl std::fmt::Display for Unknown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (in `{}`)", self.object, self.command)
    }
}

/// One object a command names: its kind (as the command spells the type), namespace (empty for
/// none given) and name.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Named {
    kind: String,
    namespace: Option<String>,
    name: String,
}

/// Where names are looked up.
pub struct World<'a> {
    pub state: &'a ClusterState,
    /// The charts the commands install or upgrade to, rendered for this release.
    pub targets: Vec<&'a Inventory>,
    /// Helm releases the cluster holds.
    pub releases: &'a [Release],
}

/// Kinds by the words `kubectl` takes for them (singular, plural, short name; a `.group`
/// suffix is dropped first), and whether they are cluster-scoped.
const KINDS: &[(&str, &[&str], bool)] = &[
    ("Deployment", &["deployment", "deployments", "deploy"], false),
    ("CustomResourceDefinition", &["customresourcedefinition", "customresourcedefinitions", "crd", "crds"], true),
    ("Namespace", &["namespace", "namespaces", "ns"], true),
    ("Secret", &["secret", "secrets"], false),
    ("ConfigMap", &["configmap", "configmaps", "cm"], false),
    ("Job", &["job", "jobs"], false),
    ("ResourceQuota", &["resourcequota", "resourcequotas", "quota"], false),
    ("LimitRange", &["limitrange", "limitranges", "limits"], false),
    ("ServiceAccount", &["serviceaccount", "serviceaccounts", "sa"], false),
    ("Service", &["service", "services", "svc"], false),
    ("ClusterRole", &["clusterrole", "clusterroles"], true),
    ("ClusterRoleBinding", &["clusterrolebinding", "clusterrolebindings"], true),
    ("Role", &["role", "roles"], false),
    ("RoleBinding", &["rolebinding", "rolebindings"], false),
    ("ValidatingWebhookConfiguration", &["validatingwebhookconfiguration", "validatingwebhookconfigurations"], true),
    ("MutatingWebhookConfiguration", &["mutatingwebhookconfiguration", "mutatingwebhookconfigurations"], true),
    ("TrainJob", &["trainjob", "trainjobs"], false),
    ("TrainingRuntime", &["trainingruntime", "trainingruntimes"], false),
    ("ClusterTrainingRuntime", &["clustertrainingruntime", "clustertrainingruntimes"], true),
    ("JobSet", &["jobset", "jobsets"], false),
    ("LocalQueue", &["localqueue", "localqueues"], false),
    ("Pod", &["pod", "pods", "po"], false),
    ("PriorityClass", &["priorityclass", "priorityclasses", "pc"], true),
];

/// The kind a `kubectl` type word means, and whether it is cluster-scoped.
fn kind_of(word: &str) -> Option<(&'static str, bool)> {
    let word = word.to_ascii_lowercase();
    let bare = word.split('.').next().unwrap_or(&word);
    KINDS.iter().find(|(kind, words, _)| words.contains(&bare) || kind.eq_ignore_ascii_case(bare)).map(|(k, _, c)| (*k, *c))
}

/// The simple commands of a command line, each as its words: split at `;`, `|`, `&&`, `||`,
/// newlines, `$(` and `)`, with quotes removed as the shell removes them, and the `if`/`then`/
/// `else`/`fi`/`!` keywords and redirections (`> file`) dropped.
fn simple_commands(line: &str) -> Vec<Vec<String>> {
    let mut commands: Vec<Vec<String>> = vec![Vec::new()];
    let mut word: Option<String> = None;
    let mut chars = line.chars().peekable();
    let mut redirect = false;
    let end_word = |word: &mut Option<String>, commands: &mut Vec<Vec<String>>, redirect: &mut bool| {
        if let Some(w) = word.take() {
            if std::mem::take(redirect) {
                return;
            }
            let current = commands.last_mut().expect("never empty");
            if current.is_empty() && matches!(w.as_str(), "if" | "then" | "else" | "elif" | "fi" | "!" | "do" | "done") {
                return;
            }
            current.push(w);
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    w.push(q);
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                while let Some(q) = chars.next() {
                    match q {
                        '"' => break,
                        '\\' => {
                            if let Some(n) = chars.next() {
                                w.push(n);
                            }
                        }
                        _ => w.push(q),
                    }
                }
            }
            '\\' => {
                if let Some(n) = chars.next() {
                    word.get_or_insert_with(String::new).push(n);
                }
            }
            '$' if chars.peek() == Some(&'(') => {
                chars.next();
                end_word(&mut word, &mut commands, &mut redirect);
                commands.push(Vec::new());
            }
            ';' | '|' | '&' | '\n' | '(' | ')' => {
                end_word(&mut word, &mut commands, &mut redirect);
                if !commands.last().is_some_and(Vec::is_empty) {
                    commands.push(Vec::new());
                }
            }
            '>' | '<' => {
                end_word(&mut word, &mut commands, &mut redirect);
                while chars.peek().is_some_and(|n| matches!(n, '>' | '&')) {
                    chars.next();
                }
                redirect = true;
            }
            c if c.is_whitespace() => end_word(&mut word, &mut commands, &mut redirect),
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    end_word(&mut word, &mut commands, &mut redirect);
    commands.retain(|c| !c.is_empty());
    commands
}

/// `kubectl` flags that take a value as the next word.
const KUBECTL_VALUED: &[&str] = &[
    "-n",
    "--namespace",
    "-o",
    "--output",
    "-l",
    "--selector",
    "-p",
    "--patch",
    "--type",
    "--timeout",
    "--field-selector",
    "--context",
    "--kubeconfig",
    "-f",
    "--filename",
    "--field-manager",
    "--cascade",
    "--subresource",
    "--resource",
    "--verb",
    "--clusterrole",
    "--serviceaccount",
    "--hard",
    "-c",
    "--container",
    "--for",
    "--replicas",
    "--as",
    "--user",
    "--cluster",
    "-k",
    "--kustomize",
];

/// The words of a `kubectl` command without its flags, and the flags' values by name.
fn split_flags(words: &[String], valued: &[&str]) -> (Vec<String>, Vec<(String, String)>) {
    let mut positional = Vec::new();
    let mut flags = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let w = &words[i];
        if let Some((flag, value)) = w.split_once('=').filter(|(f, _)| f.starts_with('-')) {
            flags.push((flag.to_string(), value.to_string()));
        } else if w.starts_with('-') && w.len() > 1 {
            if valued.contains(&w.as_str()) {
                flags.push((w.clone(), words.get(i + 1).cloned().unwrap_or_default()));
                i += 1;
            } else {
                flags.push((w.clone(), String::new()));
            }
        } else {
            positional.push(w.clone());
        }
        i += 1;
    }
    (positional, flags)
}

fn flag<'a>(flags: &'a [(String, String)], names: &[&str]) -> Option<&'a str> {
    flags.iter().find(|(f, _)| names.contains(&f.as_str())).map(|(_, v)| v.as_str())
}

/// The objects one `kubectl` command names (what it reads or changes by name).
fn kubectl_names(words: &[String]) -> Vec<Named> {
    let (positional, flags) = split_flags(words, KUBECTL_VALUED);
    let namespace = flag(&flags, &["-n", "--namespace"]).map(str::to_string);
    let mut args = positional.iter().map(String::as_str);
    let Some(verb) = args.next() else { return Vec::new() };
    let rest: Vec<&str> = match verb {
        "get" | "describe" | "delete" | "annotate" | "label" | "patch" | "edit" | "wait" | "scale" => args.collect(),
        // `rollout status deployment/x`, `set image deployment/x c=i`.
        "rollout" | "set" => args.skip(1).collect(),
        "create" => {
            let what: Vec<&str> = args.collect();
            let mut named = Vec::new();
            if what.first() == Some(&"clusterrolebinding") || what.first() == Some(&"rolebinding") {
                if let Some(role) = flag(&flags, &["--clusterrole"]) {
                    named.push(Named { kind: "ClusterRole".into(), namespace: None, name: role.into() });
                }
                for sa in flags.iter().filter(|(f, _)| f == "--serviceaccount").map(|(_, v)| v) {
                    if let Some((ns, name)) = sa.split_once(':') {
                        named.push(Named { kind: "ServiceAccount".into(), namespace: Some(ns.into()), name: name.into() });
                    }
                }
            }
            return named;
        }
        _ => return Vec::new(),
    };
    let names_with = |kind: &str, name: &str| Named { kind: kind.into(), namespace: namespace.clone(), name: name.into() };
    // `type/name …`
    if rest.first().is_some_and(|a| a.contains('/')) {
        return rest.iter().filter_map(|a| a.split_once('/')).map(|(k, n)| names_with(k, n)).collect();
    }
    let Some((kind, names)) = rest.split_first() else { return Vec::new() };
    // Label and annotation arguments (`key=value`, `key-`) end the names.
    names
        .iter()
        .take_while(|n| !n.contains('=') && !n.ends_with('-'))
        .filter(|_| !kind.contains(','))
        .map(|n| names_with(kind, n))
        .collect()
}

/// A Helm release (namespace, name) and revision a `helm` command needs to exist.
fn helm_release(words: &[String]) -> Option<(Option<String>, String, Option<i64>)> {
    const VALUED: &[&str] = &[
        "-n",
        "--namespace",
        "--version",
        "--timeout",
        "-f",
        "--values",
        "--set",
        "--set-string",
        "--set-file",
        "--set-json",
        "--revision",
        "-o",
        "--output",
        "--kube-context",
        "--kubeconfig",
        "--max",
        "--description",
        "--post-renderer",
        "--repo",
        "--username",
        "--password",
        "--ca-file",
        "--cert-file",
        "--key-file",
        "--history-max",
        "--wait",
        "--cascade",
    ];
    let (positional, flags) = split_flags(words, VALUED);
    let namespace = flag(&flags, &["-n", "--namespace"]).map(str::to_string);
    let mut args = positional.iter();
    let verb = args.next()?.as_str();
    let install = flag(&flags, &["--install", "-i"]).is_some();
    let revision = |s: Option<&String>| s.and_then(|r| r.parse::<i64>().ok());
    match verb {
        "upgrade" if install => None,
        "upgrade" | "history" | "status" | "uninstall" => Some((namespace, args.next()?.clone(), None)),
        "rollback" => {
            let name = args.next()?.clone();
            Some((namespace, name, revision(args.next())))
        }
        "get" => {
            let _what = args.next()?;
            let name = args.next()?.clone();
            Some((namespace, name, flag(&flags, &["--revision"]).and_then(|r| r.parse().ok())))
        }
        _ => None,
    }
}

impl World<'_> {
    fn exists(&self, kind: &str, namespace: &str, name: &str) -> bool {
        let in_state = self.state.of_kind(kind).any(|o| {
            str_at(o, &["metadata", "name"]) == name && (namespace.is_empty() || str_at(o, &["metadata", "namespace"]) == namespace)
        });
        in_state
            || self.targets.iter().any(|t| {
                t.objects.iter().any(|o| {
                    o.identity.kind == kind && o.identity.name == name && (namespace.is_empty() || o.identity.namespace == namespace)
                })
            })
    }

    fn release(&self, namespace: &str, name: &str) -> Option<&Release> {
        self.releases.iter().find(|r| r.current.name == name && r.current.namespace == namespace)
    }
}

/// What `commands` (command lines as printed, in the order they run) name that exists neither in
/// the cluster, nor in the target charts, nor as made by an earlier command of the list.
pub fn unknown_names(commands: &[String], world: &World) -> Vec<Unknown> {
    let mut made: Vec<(String, String, String)> = Vec::new();
    let mut unknown = Vec::new();
    for line in commands {
        for words in simple_commands(line) {
            let Some((program, args)) = words.split_first() else { continue };
            match program.as_str() {
                "kubectl" => {
                    for n in kubectl_names(args) {
                        let Some((kind, cluster_scoped)) = kind_of(&n.kind) else { continue };
                        let namespace =
                            if cluster_scoped { String::new() } else { n.namespace.clone().unwrap_or_else(|| "default".into()) };
                        let known = made.iter().any(|(k, ns, name)| k == kind && ns == &namespace && name == &n.name);
                        if !known && !world.exists(kind, &namespace, &n.name) {
                            let object =
                                if namespace.is_empty() { format!("{kind}/{}", n.name) } else { format!("{kind}/{namespace}/{}", n.name) };
                            unknown.push(Unknown { command: line.clone(), object });
                        }
                    }
                    // What the command makes, for the commands after it.
                    let (positional, _) = split_flags(args, KUBECTL_VALUED);
                    if let [verb, what, name, ..] = positional.as_slice() {
                        if verb == "create" {
                            if let Some((kind, cluster_scoped)) = kind_of(what) {
                                let (_, flags) = split_flags(args, KUBECTL_VALUED);
                                let ns = if cluster_scoped {
                                    String::new()
                                } else {
                                    flag(&flags, &["-n", "--namespace"]).unwrap_or("default").to_string()
                                };
                                made.push((kind.to_string(), ns, name.clone()));
                            }
                        }
                    }
                }
                "helm" => {
                    if let Some((namespace, name, revision)) = helm_release(args) {
                        let namespace = namespace.unwrap_or_else(|| "default".into());
                        match world.release(&namespace, &name) {
                            None => unknown.push(Unknown { command: line.clone(), object: format!("Helm release {namespace}/{name}") }),
                            Some(r) => {
                                if let Some(rev) = revision.filter(|rev| r.record(*rev).is_none()) {
                                    unknown.push(Unknown {
                                        command: line.clone(),
                                        object: format!("Helm release {namespace}/{name} revision {rev}"),
                                    });
                                }
                            }
                        }
                    }
                }
                _ => {}
            }
        }
    }
    unknown
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<Vec<String>> {
        simple_commands(line)
    }

    #[test]
    fn command_lines_split_as_a_shell_splits_them() {
        assert_eq!(words("kubectl get crd 'a b' x"), [["kubectl", "get", "crd", "a b", "x"]]);
        assert_eq!(
            words("unkept=$(kubectl get crd a -o jsonpath='{x}' | grep -v '=keep$' || true); if [ -n \"$unkept\" ]; then echo no >&2; false; else helm upgrade r c; fi"),
            vec![
                vec!["unkept="],
                vec!["kubectl", "get", "crd", "a", "-o", "jsonpath={x}"],
                vec!["grep", "-v", "=keep$"],
                vec!["true"],
                vec!["[", "-n", "$unkept", "]"],
                vec!["echo", "no"],
                vec!["false"],
                vec!["helm", "upgrade", "r", "c"],
            ]
        );
        assert_eq!(
            words("helm get values r -n ns --revision 2 -o yaml > 'r values.yaml'"),
            [["helm", "get", "values", "r", "-n", "ns", "--revision", "2", "-o", "yaml"]]
        );
    }

    #[test]
    fn kubectl_names_are_read_from_every_form() {
        let names = |line: &str| {
            kubectl_names(&words(line)[0][1..])
                .into_iter()
                .map(|n| format!("{}:{}:{}", n.kind, n.namespace.unwrap_or_default(), n.name))
                .collect::<Vec<_>>()
        };
        assert_eq!(names("kubectl -n ml rollout status deployment/x --timeout=5m"), ["deployment:ml:x"]);
        assert_eq!(names("kubectl annotate crd a b helm.sh/resource-policy=keep --overwrite"), ["crd::a", "crd::b"]);
        assert_eq!(names("kubectl label clustertrainingruntime t trainer.kubeflow.org/managed-by-"), ["clustertrainingruntime::t"]);
        assert_eq!(names("kubectl get trainjobs.trainer.kubeflow.org -A -o yaml"), Vec::<String>::new());
        assert_eq!(names("kubectl get trainjobs,clustertrainingruntimes -A"), Vec::<String>::new());
        assert_eq!(names("kubectl -n ns get jobs -l app.kubernetes.io/component=runtimes-installer"), Vec::<String>::new());
        assert_eq!(names("kubectl patch resourcequota q -n team --type merge -p '{}'"), ["resourcequota:team:q"]);
        assert_eq!(
            names("kubectl create clusterrolebinding b --clusterrole=r --serviceaccount=ml:sa"),
            ["ClusterRole::r", "ServiceAccount:ml:sa"]
        );
        assert_eq!(kind_of("deploy"), Some(("Deployment", false)));
        assert_eq!(kind_of("customresourcedefinitions.apiextensions.k8s.io"), Some(("CustomResourceDefinition", true)));
    }

    #[test]
    fn helm_commands_name_the_release_they_need() {
        let release = |line: &str| helm_release(&words(line)[0][1..]);
        assert_eq!(release("helm upgrade r oci://x --version 2 -n ns --wait --timeout 10m"), Some((Some("ns".into()), "r".into(), None)));
        assert_eq!(release("helm upgrade --install r oci://x -n ns"), None);
        assert_eq!(release("helm rollback r 3 -n ns --force-conflicts"), Some((Some("ns".into()), "r".into(), Some(3))));
        assert_eq!(release("helm get values r -n ns --revision 2 -o yaml"), Some((Some("ns".into()), "r".into(), Some(2))));
        assert_eq!(release("helm show values oci://x --version 2"), None);
    }
}
