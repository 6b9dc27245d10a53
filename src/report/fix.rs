//! One fix per rule, in every format: the fix of all the findings of one rule, its words said
//! once and its commands covering every subject ([`merged`]: `kubectl label crd a b c …` once
//! instead of once per CRD), and the ways it is shown — text lines, Markdown (words as
//! paragraphs, commands as copyable `sh` blocks, never inside a table cell), shell (words as
//! comments). A fix's restore commands (what undoes a temporary change after the upgrade) always
//! come with it, under [`crate::audit::finding::RESTORE_HEAD`].

use crate::audit::finding::{with_restore_heads, Finding, FixLine};

/// kubectl verbs that take several names of one type in one call, and act on each alone.
const MANY_NAMES: [&str; 3] = ["label", "annotate", "delete"];

/// The fix for all of `members` (one rule's findings, in report order): the lines every finding
/// shares once, the lines naming each subject after one another, commands that differ only in
/// the object they name made one, and each run of restore commands headed. A finding made without
/// marked fix lines gives its fix text, line by line.
pub fn merged(members: &[&Finding]) -> Vec<FixLine> {
    let lines = |f: &Finding| -> Vec<FixLine> {
        if !f.fix_lines.is_empty() {
            return f.fix_lines.clone();
        }
        // Without marks: its fix text, the lines that are its commands (or restores) as such.
        f.fix
            .lines()
            .filter(|l| *l != crate::audit::finding::RESTORE_HEAD)
            .map(|l| {
                if f.commands.iter().any(|c| c == l) {
                    FixLine::Command(l.to_string())
                } else if f.restore.iter().any(|c| c == l) {
                    FixLine::Restore(l.to_string())
                } else {
                    FixLine::Text(l.to_string())
                }
            })
            .collect()
    };
    let all: Vec<Vec<FixLine>> = members.iter().map(|f| lines(f)).collect();
    let mut out: Vec<FixLine> = Vec::new();
    let mut push = |line: &FixLine| {
        if !out.contains(line) {
            out.push(line.clone());
        }
    };
    match all.first() {
        Some(first) if all.iter().all(|l| l.len() == first.len()) => {
            for i in 0..first.len() {
                let at: Vec<&FixLine> = all.iter().map(|l| &l[i]).collect();
                match likewise(&at, members) {
                    Some(lines) => lines.iter().for_each(&mut push),
                    None => at.into_iter().for_each(&mut push),
                }
            }
        }
        _ => all.iter().flatten().for_each(&mut push),
    }
    with_restore_heads(&coalesce(out))
}

/// Words that differ only in the object each finding names (a rule whose fix is prose with a
/// command inside it): the first finding's once, then `likewise for` the others' names.
fn likewise(at: &[&FixLine], members: &[&Finding]) -> Option<Vec<FixLine>> {
    let name = |f: &Finding| f.subject.rsplit('/').next().unwrap_or_default().to_string();
    let texts: Vec<&str> = at.iter().map(|l| if let FixLine::Text(t) = l { Some(t.as_str()) } else { None }).collect::<Option<_>>()?;
    let names: Vec<String> = members.iter().map(|f| name(f)).collect();
    let differ = texts.iter().any(|t| *t != texts[0]);
    let named = names.iter().zip(&texts).all(|(n, t)| !n.is_empty() && t.contains(n.as_str()));
    let general = |(n, t): (&String, &&str)| t.replace(n.as_str(), "\u{0}");
    if !differ || !named || !names.iter().zip(&texts).map(general).all(|g| g == general((&names[0], &texts[0]))) {
        return None;
    }
    let mut others: Vec<&str> = names[1..].iter().map(String::as_str).collect();
    others.dedup();
    Some(vec![FixLine::Text(texts[0].to_string()), FixLine::Text(format!("likewise for {}", others.join(", ")))])
}

/// Consecutive commands (or restore commands) that differ only in the name a many-name kubectl
/// verb acts on, as one command naming them all.
fn coalesce(lines: Vec<FixLine>) -> Vec<FixLine> {
    let mut out: Vec<FixLine> = Vec::new();
    for line in lines {
        let merged = match (out.last(), &line) {
            (Some(FixLine::Command(a)), FixLine::Command(b)) => join_names(a, b).map(FixLine::Command),
            (Some(FixLine::Restore(a)), FixLine::Restore(b)) => join_names(a, b).map(FixLine::Restore),
            _ => None,
        };
        match merged {
            Some(m) => {
                out.pop();
                out.push(m);
            }
            None => out.push(line),
        }
    }
    out
}

/// `kubectl VERB TYPE NAMES… REST` and `kubectl VERB TYPE NAME REST` as one command, when both
/// have the same verb (one of [`MANY_NAMES`]), type and rest and `b` names one more object;
/// None for anything else (a pipe, a redirect, a different flag: kept apart).
fn join_names(a: &str, b: &str) -> Option<String> {
    let (wa, wb) = (shlex::split(a)?, shlex::split(b)?);
    let plain = |c: &str| !c.contains(['|', '>', '<', ';', '&', '$', '`']);
    if !plain(a) || !plain(b) || wb.len() < 4 || wb[0] != "kubectl" || !MANY_NAMES.contains(&wb[1].as_str()) {
        return None;
    }
    // `a` may already name several objects: its names run from word 3 to where `b`'s rest starts.
    let rest = &wb[4..];
    let names_end = wa.len().checked_sub(rest.len())?;
    let names = wa.get(3..names_end)?;
    let same = wa[..3] == wb[..3] && wa[names_end..] == *rest && !names.is_empty();
    let objects = |w: &str| !w.starts_with('-') && !w.contains('=') && !w.ends_with('-');
    if !same || !names.iter().all(|n| objects(n)) || !objects(&wb[3]) || names.contains(&wb[3]) {
        return None;
    }
    let mut words: Vec<&str> = wa[..names_end].iter().map(String::as_str).collect();
    words.push(&wb[3]);
    words.extend(rest.iter().map(String::as_str));
    Some(crate::shell::join(words))
}

/// The fix as text lines: words as they are, commands indented by two spaces.
pub fn text_lines(lines: &[FixLine]) -> Vec<String> {
    lines
        .iter()
        .map(|l| match l {
            FixLine::Command(c) | FixLine::Restore(c) => format!("  {c}"),
            FixLine::Text(t) => t.clone(),
        })
        .collect()
}

/// The fix as shell text: commands as they are, words as `#` comments.
pub fn shell_lines(lines: &[FixLine]) -> Vec<String> {
    lines
        .iter()
        .map(|l| match l {
            FixLine::Command(c) | FixLine::Restore(c) => c.clone(),
            FixLine::Text(t) => format!("# {t}"),
        })
        .collect()
}

/// The fix in Markdown: words as paragraphs, each run of commands one `sh` block holding
/// commands only, every line indented by `indent`.
pub fn markdown(lines: &[FixLine], indent: &str, out: &mut String) {
    let mut in_block = false;
    for line in lines {
        match line {
            FixLine::Command(c) | FixLine::Restore(c) => {
                if !in_block {
                    out.push_str(&format!("{indent}```sh\n"));
                    in_block = true;
                }
                out.push_str(&format!("{indent}{c}\n"));
            }
            FixLine::Text(t) => {
                if in_block {
                    out.push_str(&format!("{indent}```\n\n"));
                    in_block = false;
                }
                out.push_str(&format!("{indent}{t}\n\n"));
            }
        }
    }
    if in_block {
        out.push_str(&format!("{indent}```\n\n"));
    }
}

/// The commands of a fix in the order they run, each run of restore commands after a
/// `# After the upgrade, restore it:` comment: what a shell block of first commands shows.
pub fn commands_with_restores(lines: &[FixLine]) -> Vec<String> {
    lines
        .iter()
        .filter_map(|l| match l {
            FixLine::Command(c) | FixLine::Restore(c) => Some(c.clone()),
            FixLine::Text(t) if t == crate::audit::finding::RESTORE_HEAD => Some(format!("# {t}")),
            FixLine::Text(_) => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_that_name_one_object_each_become_one_command() {
        let a = "kubectl label customresourcedefinition.apiextensions.k8s.io a.x app.kubernetes.io/managed-by=Helm --overwrite";
        let b = "kubectl label customresourcedefinition.apiextensions.k8s.io b.x app.kubernetes.io/managed-by=Helm --overwrite";
        let c = "kubectl label customresourcedefinition.apiextensions.k8s.io 'c x' app.kubernetes.io/managed-by=Helm --overwrite";
        let ab = join_names(a, b).unwrap();
        assert_eq!(ab, "kubectl label customresourcedefinition.apiextensions.k8s.io a.x b.x app.kubernetes.io/managed-by=Helm --overwrite");
        assert_eq!(
            join_names(&ab, c).unwrap(),
            "kubectl label customresourcedefinition.apiextensions.k8s.io a.x b.x 'c x' app.kubernetes.io/managed-by=Helm --overwrite"
        );
        // Another value, a redirect, a verb that takes one name: kept apart.
        assert_eq!(join_names(a, &b.replace("Helm", "Other")), None);
        assert_eq!(join_names("kubectl get crd a -o yaml > a.yaml", "kubectl get crd b -o yaml > b.yaml"), None);
        assert_eq!(join_names("kubectl patch crd a -p x", "kubectl patch crd b -p x"), None);
        assert_eq!(join_names(a, a), None, "the same object twice is one command already");
    }

    #[test]
    fn one_fix_for_a_rule_keeps_its_restore_after_its_commands() {
        let finding = |name: &str| Finding {
            fix_lines: vec![
                FixLine::Text("Relax the namespace for the upgrade:".into()),
                FixLine::Command("kubectl label ns ns1 e=baseline --overwrite".into()),
                FixLine::Restore("kubectl label ns ns1 e=restricted --overwrite".into()),
                FixLine::Text("Or instead do something else.".into()),
            ],
            ..Finding::about("TA-X-001", crate::audit::finding::Severity::Error, &format!("Job/{name}"))
        };
        let (a, b) = (finding("a"), finding("b"));
        let lines = merged(&[&a, &b]);
        let text: Vec<&str> = lines.iter().map(FixLine::text).collect();
        assert_eq!(
            text,
            [
                "Relax the namespace for the upgrade:",
                "kubectl label ns ns1 e=baseline --overwrite",
                crate::audit::finding::RESTORE_HEAD,
                "kubectl label ns ns1 e=restricted --overwrite",
                "Or instead do something else."
            ]
        );
        assert_eq!(
            commands_with_restores(&lines),
            [
                "kubectl label ns ns1 e=baseline --overwrite",
                "# After the upgrade, restore it:",
                "kubectl label ns ns1 e=restricted --overwrite"
            ]
        );
        let mut md = String::new();
        markdown(&lines, "", &mut md);
        assert!(md.contains("After the upgrade, restore it:\n\n```sh\nkubectl label ns ns1 e=restricted --overwrite\n```"), "{md}");
    }

    #[test]
    fn prose_that_differs_only_in_the_object_is_said_once() {
        let finding = |name: &str| Finding {
            fix: format!("before a rollback: kubectl annotate crd {name} keep=1; or take it out"),
            ..Finding::about("TA-X-002", crate::audit::finding::Severity::Warning, &format!("CustomResourceDefinition/{name}"))
        };
        let (a, b, c) = (finding("a.x"), finding("b.x"), finding("c.x"));
        let text: Vec<String> = merged(&[&a, &b, &c]).iter().map(|l| l.text().to_string()).collect();
        assert_eq!(text, ["before a rollback: kubectl annotate crd a.x keep=1; or take it out", "likewise for b.x, c.x"]);
    }
}
