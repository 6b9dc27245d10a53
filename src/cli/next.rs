//! The command that comes after `check`: `runbook` with the same inputs, taken from the parsed
//! invocation itself (clap's matches), so that every input flag a user gave — values files, `--set`,
//! the chart and its repository, release, namespace, rule files, registry flags, whatever is
//! added later — is carried without a list kept by hand. An argument is carried when `runbook`
//! has one with the same id; the output choices of `check` are not inputs, and the cluster
//! selection is each cluster's own (added by the printer from where the cluster was read).

use clap::parser::ValueSource;
use clap::{ArgMatches, CommandFactory};

use super::Cli;
use crate::report::document::NextCommand;

/// `check`'s arguments that choose its output, not what it audits.
pub const OUTPUT_CHOICES: [&str; 5] = ["format", "output", "quiet", "verbose", "fail_on"];
/// `check`'s arguments that select the clusters (a fleet's); each cluster's own replace them.
pub const CLUSTER_SELECTION: [&str; 5] = ["snapshot", "context", "all_contexts", "kubeconfig", "concurrency"];

/// What runs after `check` as `matches` (the whole invocation's) parsed it: the runbook for the
/// same upgrade, written to `runbook.md`. None when the invocation is not a `check`.
pub fn after_check(matches: &ArgMatches) -> Option<NextCommand> {
    let ("check", check_matches) = matches.subcommand()? else { return None };
    let root = Cli::command();
    let check = root.find_subcommand("check")?;
    let runbook = root.find_subcommand("runbook")?;
    let mut given: Vec<(usize, Vec<String>)> = Vec::new();
    for arg in check.get_arguments() {
        let id = arg.get_id().as_str();
        if OUTPUT_CHOICES.contains(&id) || CLUSTER_SELECTION.contains(&id) {
            continue;
        }
        if check_matches.value_source(id) != Some(ValueSource::CommandLine) {
            continue;
        }
        let Some(target) = runbook.get_arguments().find(|a| a.get_id() == arg.get_id()) else { continue };
        let flag = match (target.get_long(), target.get_short()) {
            (Some(long), _) => format!("--{long}"),
            (None, Some(short)) => format!("-{short}"),
            (None, None) => continue,
        };
        let mut words = Vec::new();
        if arg.get_action().takes_values() {
            let Ok(Some(occurrences)) = check_matches.try_get_raw_occurrences(id) else { continue };
            for values in occurrences {
                for value in values {
                    words.push(flag.clone());
                    words.push(value.to_string_lossy().into_owned());
                }
            }
        } else {
            words.push(flag);
        }
        let index = check_matches.index_of(id).unwrap_or(usize::MAX);
        given.push((index, words));
    }
    given.sort_by_key(|(index, _)| *index);
    let mut program: Vec<String> = crate::invocation::program().split(' ').map(str::to_string).collect();
    program.push("runbook".into());
    Some(NextCommand {
        program,
        inputs: given.into_iter().flat_map(|(_, words)| words).collect(),
        tail: vec!["-o".into(), "runbook.md".into()],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn next(args: &[&str]) -> String {
        let matches = Cli::command().try_get_matches_from(std::iter::once("trainer-audit").chain(args.iter().copied())).unwrap();
        after_check(&matches).unwrap().for_cluster(None)
    }

    #[test]
    fn every_input_flag_of_check_is_carried_quoted_and_the_output_choices_are_not() {
        let line = next(&[
            "check",
            "--to",
            "2.3.0",
            "-f",
            "a b.yaml",
            "--values=c.yaml",
            "--set",
            "x=1,y=2",
            "--set-string",
            "z=it's",
            "-n",
            "team ns",
            "--format",
            "json",
            "--fail-on",
            "warning",
            "--plain-http",
            "--snapshot",
            "s.yaml",
            "--kube-version",
            "1.33",
        ]);
        assert_eq!(
            line,
            r#"trainer-audit runbook --to 2.3.0 --values 'a b.yaml' --values c.yaml --set x=1,y=2 --set-string "z=it's" --namespace 'team ns' --plain-http --kube-version 1.33 -o runbook.md"#
        );
    }

    /// A flag added to `check` that is an input must reach the runbook: `runbook` must take it too
    /// (or, if it chooses output or clusters, be listed as such above).
    #[test]
    fn runbook_takes_every_input_check_takes() {
        let root = Cli::command();
        let (check, runbook) = (root.find_subcommand("check").unwrap(), root.find_subcommand("runbook").unwrap());
        for arg in check.get_arguments() {
            let id = arg.get_id().as_str();
            if OUTPUT_CHOICES.contains(&id) || CLUSTER_SELECTION.contains(&id) {
                continue;
            }
            assert!(
                runbook.get_arguments().any(|a| a.get_id() == arg.get_id()),
                "check --{} is an input the runbook does not take: add it to runbook, or list it in cli/next.rs",
                arg.get_long().unwrap_or(id)
            );
        }
    }
}
