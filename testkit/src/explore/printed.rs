//! What a person copies from trainer-audit's output, taken apart: the command lines of a plan
//! (`--format json`: each step's precondition commands, upgrade, verification and rollback) and
//! the `sh` blocks of a runbook, split into shell words, and the objects each `kubectl` or `helm`
//! command names (`kubectl -n NS rollout status deployment/NAME`, `kubectl annotate crd NAME`,
//! `helm upgrade RELEASE CHART -n NS`), so the explorer can hold every name against the state
//! and the rendered target.

use serde_json::Value as Json;

/// A command line from the plan or runbook, where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Printed {
    /// `plan step 1 upgrade`, `runbook block 3`, …
    pub place: String,
    pub line: String,
}

/// An object a command names.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Named {
    /// The resource as typed (`deployment`, `crd`, `clustertrainingruntime`, `ns`, …), lowercased.
    pub resource: String,
    pub namespace: Option<String>,
    pub name: String,
}

/// A `helm` command's release, namespace and, for a rollback, the revision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HelmCall {
    pub verb: String,
    pub release: String,
    pub namespace: Option<String>,
    pub revision: Option<i64>,
    pub flags: Vec<String>,
}

/// Every command line of a plan report (`plan --format json`, or a fleet line's `report`).
pub fn plan_commands(report: &Json) -> Vec<Printed> {
    let mut out = Vec::new();
    let steps = report.pointer("/plan/steps").and_then(Json::as_array).cloned().unwrap_or_default();
    for step in &steps {
        let n = step["number"].as_i64().unwrap_or(0);
        for pre in step["preconditions"].as_array().into_iter().flatten() {
            for c in pre["commands"].as_array().into_iter().flatten().filter_map(Json::as_str) {
                out.push(Printed {
                    place: format!("plan step {n} {} {}", pre["id"].as_str().unwrap_or(""), pre["subject"].as_str().unwrap_or("")),
                    line: c.into(),
                });
            }
        }
        // A rollback the plan calls dangerous is prose, not a command.
        let keys: &[&str] = if step["rollback_dangerous"] == true { &["upgrade", "verify"] } else { &["upgrade", "verify", "rollback"] };
        for key in keys {
            let lines: Vec<String> = match &step[*key] {
                Json::String(s) => s.lines().map(String::from).collect(),
                Json::Array(a) => a.iter().filter_map(Json::as_str).map(String::from).collect(),
                _ => Vec::new(),
            };
            for l in lines {
                out.push(Printed { place: format!("plan step {n} {key}"), line: l });
            }
        }
    }
    out.retain(|p| !p.line.trim().is_empty() && !p.line.trim_start().starts_with('#'));
    out
}

/// The fixes a plan puts into the upgrade command itself (`--take-ownership`,
/// `--force-conflicts`): the un-fixed attempts of a printed command run it with none of them,
/// then with each alone, then as printed — one fix can hide what another cures.
pub const COMMAND_FIXES: [&str; 2] = [" --take-ownership", " --force-conflicts"];

/// `--install` is a fix the command carries too where Helm refuses a plain upgrade of a release
/// with no deployed revision (TA-REL-003): without it Helm says "has no deployed releases".
/// Elsewhere (a kustomize install moved to Helm) it is what makes the release, not a fix.
pub const INSTALL_FIX: &str = " --install";

/// The attempts of a printed upgrade command, without its fixes first.
pub fn attempts_of(command: &str) -> Vec<String> {
    attempts_with(command, &COMMAND_FIXES)
}

/// The attempts of a printed upgrade command: without any of `fixes`, with each alone, then as
/// printed (each attempt once).
pub fn attempts_with(command: &str, fixes: &[&str]) -> Vec<String> {
    let present: Vec<&str> = fixes.iter().copied().filter(|f| command.contains(f)).collect();
    let without = |keep: &[&str]| present.iter().filter(|f| !keep.contains(f)).fold(command.to_string(), |c, f| c.replace(f, ""));
    let mut attempts = vec![without(&[])];
    attempts.extend(present.iter().map(|f| without(&[f])));
    attempts.push(command.to_string());
    attempts.into_iter().fold(Vec::new(), |mut seen, a| {
        if !seen.contains(&a) {
            seen.push(a);
        }
        seen
    })
}

/// Fenced ```` ```sh ```` blocks of Markdown, in order, each with the fence's indentation removed;
/// an unclosed block is a broken runbook, not a shorter one (it panics).
pub fn sh_blocks(markdown: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<(usize, Vec<String>)> = None;
    for line in markdown.lines() {
        let indent = line.len() - line.trim_start().len();
        match &mut current {
            None if line.trim() == "```sh" => current = Some((indent, Vec::new())),
            None => {}
            Some((_, lines)) if line.trim() == "```" => {
                blocks.push(lines.join("\n"));
                current = None;
            }
            Some((fence, lines)) => {
                let cut = indent.min(*fence).min(line.len());
                lines.push(line[cut..].to_string());
            }
        }
    }
    assert!(current.is_none(), "an unclosed sh block in:\n{markdown}");
    blocks
}

/// Every simple command of a runbook's `sh` blocks.
pub fn runbook_commands(markdown: &str) -> Vec<Printed> {
    let mut out = Vec::new();
    for (i, block) in sh_blocks(markdown).iter().enumerate() {
        for line in join_continuations(block) {
            for command in simple_commands(&line) {
                out.push(Printed { place: format!("runbook block {}", i + 1), line: command });
            }
        }
    }
    out
}

fn join_continuations(block: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut pending = String::new();
    for line in block.lines() {
        if let Some(head) = line.strip_suffix('\\') {
            pending.push_str(head);
            pending.push(' ');
            continue;
        }
        pending.push_str(line);
        out.push(std::mem::take(&mut pending));
    }
    if !pending.is_empty() {
        out.push(pending);
    }
    out
}

/// A line cut at `&&`, `||`, `;`, `|` and the words of `if`/`then`/`fi` (outside quotes), each
/// piece a command; comments dropped.
fn simple_commands(line: &str) -> Vec<String> {
    let mut pieces = Vec::new();
    let mut current = String::new();
    let (mut single, mut double) = (false, false);
    let chars: Vec<char> = line.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '#' if !single && !double && (current.is_empty() || current.ends_with(' ')) => break,
            ';' | '|' | '&' if !single && !double => {
                pieces.push(std::mem::take(&mut current));
                while i + 1 < chars.len() && matches!(chars[i + 1], '|' | '&') {
                    i += 1;
                }
                i += 1;
                continue;
            }
            _ => {}
        }
        current.push(c);
        i += 1;
    }
    pieces.push(current);
    pieces
        .into_iter()
        .map(|p| {
            let p = p.trim();
            let p = ["then ", "else ", "do ", "if ", "! "].iter().fold(p, |p, kw| p.strip_prefix(kw).unwrap_or(p).trim());
            p.to_string()
        })
        .filter(|p| !p.is_empty() && !matches!(p.as_str(), "fi" | "done" | "then" | "else"))
        .collect()
}

/// The words of a command as the shell reads them (quotes removed); redirections and what
/// follows `$(` are cut.
pub fn words(command: &str) -> Vec<String> {
    let cut = command.split(" > ").next().unwrap_or(command);
    let cut = cut.split("$(").next().unwrap_or(cut);
    shlex::split(cut).unwrap_or_else(|| cut.split_whitespace().map(String::from).collect())
}

/// Flags of kubectl and helm that take a value (so their value is not a positional word).
const VALUED: &[&str] = &[
    "-n",
    "--namespace",
    "-o",
    "--output",
    "-l",
    "--selector",
    "-f",
    "--filename",
    "--type",
    "-p",
    "--patch",
    "--timeout",
    "--field-selector",
    "--version",
    "--set",
    "--set-string",
    "--set-json",
    "--set-file",
    "--set-literal",
    "--values",
    "--for",
    "--subresource",
    "--cascade",
    "--revision",
    "--kube-version",
    "--from-file",
    "--server-side",
    "--field-manager",
    "--context",
    "--kubeconfig",
    "--repo",
    "--description",
    "--username",
    "--history-max",
    "--post-renderer",
    "-c",
    "--container",
];

/// The namespace flag's value and the positional words.
fn split_flags(words: &[String]) -> (Option<String>, Vec<String>, Vec<String>) {
    let mut namespace = None;
    let mut positional = Vec::new();
    let mut flags = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let w = &words[i];
        if let Some((flag, value)) = w.split_once('=').filter(|(f, _)| f.starts_with('-')) {
            if flag == "-n" || flag == "--namespace" {
                namespace = Some(value.to_string());
            }
            flags.push(flag.to_string());
        } else if VALUED.contains(&w.as_str()) {
            if (w == "-n" || w == "--namespace") && i + 1 < words.len() {
                namespace = Some(words[i + 1].clone());
            }
            flags.push(w.clone());
            i += 1;
        } else if w.starts_with('-') {
            flags.push(w.clone());
        } else {
            positional.push(w.clone());
        }
        i += 1;
    }
    (namespace, positional, flags)
}

/// The objects a `kubectl` command names (none for other commands, lists and selectors).
pub fn kubectl_names(command: &str) -> Vec<Named> {
    let words = words(command);
    if words.first().map(String::as_str) != Some("kubectl") {
        return Vec::new();
    }
    let (namespace, positional, flags) = split_flags(&words[1..]);
    if flags
        .iter()
        .any(|f| f == "-l" || f == "--selector" || f == "-f" || f == "--filename" || f == "-A" || f == "--all-namespaces" || f == "--all")
    {
        return Vec::new();
    }
    let Some(verb) = positional.first() else { return Vec::new() };
    let rest: &[String] = match verb.as_str() {
        "get" | "describe" | "delete" | "annotate" | "label" | "patch" | "edit" | "scale" | "wait" => &positional[1..],
        "rollout" => positional.get(2..).unwrap_or(&[]),
        "logs" => &positional[1..],
        "set" => positional.get(2..).unwrap_or(&[]),
        _ => return Vec::new(),
    };
    let mut out = Vec::new();
    let mut resource: Option<String> = None;
    for word in rest {
        // `key=value` and `key-` are labels and annotations, not names.
        if word.contains('=') || word.ends_with('-') && matches!(verb.as_str(), "annotate" | "label") {
            continue;
        }
        if let Some((r, name)) = word.split_once('/') {
            out.push(Named { resource: r.to_ascii_lowercase(), namespace: namespace.clone(), name: name.to_string() });
            continue;
        }
        match &resource {
            None => {
                // A comma list of types (`get a,b`) names no object.
                if word.contains(',') {
                    return Vec::new();
                }
                resource = Some(word.to_ascii_lowercase());
            }
            Some(r) => out.push(Named { resource: r.clone(), namespace: namespace.clone(), name: word.clone() }),
        }
    }
    out
}

/// A `helm` command's release and namespace.
pub fn helm_call(command: &str) -> Option<HelmCall> {
    let words = words(command);
    if words.first().map(String::as_str) != Some("helm") {
        return None;
    }
    let (namespace, positional, flags) = split_flags(&words[1..]);
    let verb = positional.first()?.clone();
    let release = match verb.as_str() {
        "upgrade" | "install" | "rollback" | "status" | "history" | "uninstall" | "get" => {
            if verb == "get" { positional.get(2)? } else { positional.get(1)? }.clone()
        }
        _ => return None,
    };
    let revision = if verb == "rollback" { positional.get(2).and_then(|r| r.parse().ok()) } else { None };
    Some(HelmCall { verb, release, namespace, revision, flags })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubectl_names_are_read_as_the_shell_and_kubectl_read_them() {
        let n = kubectl_names("kubectl -n ml-platform rollout status deployment/trainer-kubeflow-trainer-controller-manager --timeout=5m");
        assert_eq!(
            n,
            [Named {
                resource: "deployment".into(),
                namespace: Some("ml-platform".into()),
                name: "trainer-kubeflow-trainer-controller-manager".into()
            }]
        );
        let n = kubectl_names("kubectl get crd trainjobs.trainer.kubeflow.org clustertrainingruntimes.trainer.kubeflow.org");
        assert_eq!(n.len(), 2);
        assert_eq!(
            kubectl_names("kubectl annotate clustertrainingruntime torch-distributed helm.sh/resource-policy=keep")[0].name,
            "torch-distributed"
        );
        assert!(kubectl_names("kubectl get clustertrainingruntimes").is_empty());
        assert!(kubectl_names("kubectl -n x get jobs -l app.kubernetes.io/component=runtimes-installer").is_empty());
        assert_eq!(
            kubectl_names("kubectl label ns kubeflow-system pod-security.kubernetes.io/enforce=baseline --overwrite")[0].name,
            "kubeflow-system"
        );
        assert_eq!(kubectl_names("kubectl get clustertrainingruntime torch-distributed -o yaml > torch-distributed.yaml").len(), 1);
    }

    #[test]
    fn runbook_lines_split_into_commands() {
        let md = "x\n```sh\nif kubectl get crd a.b --ignore-not-found -o name | grep -q .; then kubectl annotate crd a.b k=v; fi\nhelm upgrade r c \\\n  -n ns --wait\n```\n";
        let c: Vec<String> = runbook_commands(md).into_iter().map(|p| p.line).collect();
        assert!(c.contains(&"kubectl annotate crd a.b k=v".to_string()), "{c:?}");
        assert!(c.iter().any(|l| l.starts_with("helm upgrade r c")), "{c:?}");
        let h = helm_call(c.iter().find(|l| l.starts_with("helm")).unwrap()).unwrap();
        assert_eq!((h.release.as_str(), h.namespace.as_deref()), ("r", Some("ns")));
        assert_eq!(helm_call("helm rollback t 3 -n ns --wait").unwrap().revision, Some(3));
    }
}
