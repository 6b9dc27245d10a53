//! A test that hunts for lies (issue 20 §7): over every scenario snapshot (`snapshots/`, the
//! from-states `testkit::scenario` describes: Helm 2.1.0, 2.2.1, 2.3.0, kustomize 2.2.0, Argo CD
//! 2.2.1, neighbours), each input is swapped for a wrong one — another namespace or release,
//! another chart, a contradicting version, no `ClusterInfo`, no installed chart, an empty GitOps
//! tree — and every command that reads the cluster must then never say `ready` with exit 0, and
//! must name the input that is wrong. The baseline run of each scenario (its installed chart of
//! the right version given) must not be refused, or the property would hold vacuously.
//!
//! The charts are the small stand-ins of the rule fixtures, copied with the scenario's version
//! (`stand_in`); with `TRAINER_AUDIT_CORPUS` the same property runs over the real charts.

mod support;

use std::path::Path;
use std::process::Output;

use support::{run, stderr, stdout};
use testkit::scenario::SCENARIOS;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The installed version a scenario's name ends with.
fn installed(name: &str) -> &str {
    name.rsplit('-').next().unwrap()
}

/// A copy of a stand-in chart (`from` or `to` of the rule fixtures) under `dir`, as `version`.
fn stand_in(which: &str, version: &str, dir: &Path) -> String {
    let src = Path::new(ROOT).join("tests/rules/charts").join(which);
    let dest = dir.join(format!("{which}-{version}"));
    copy_dir(&src, &dest);
    let chart = std::fs::read_to_string(src.join("Chart.yaml")).unwrap();
    let chart: String = chart
        .lines()
        .map(|l| if l.starts_with("version:") { format!("version: {version}") } else { l.to_string() })
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(dest.join("Chart.yaml"), chart + "\n").unwrap();
    dest.to_string_lossy().into_owned()
}

fn copy_dir(src: &Path, dest: &Path) {
    std::fs::create_dir_all(dest).unwrap();
    for entry in std::fs::read_dir(src).unwrap() {
        let entry = entry.unwrap();
        let to = dest.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &to);
        } else {
            std::fs::copy(entry.path(), &to).unwrap();
        }
    }
}

/// The snapshot without its ClusterInfo item.
fn without_cluster_info(text: &str) -> String {
    let mut skipping = false;
    let mut out = String::new();
    for line in text.lines() {
        if line.starts_with("- ") {
            skipping = line.starts_with("- apiVersion: trainer-audit.dev/");
        }
        if !skipping {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// The charts one scenario runs with.
struct Charts {
    /// The installed chart, at the installed version.
    from: String,
    /// The target chart (2.3.0).
    to: String,
    /// A Trainer chart of another version than the installed one.
    other: String,
}

/// What a mutated run must do.
enum Expect {
    /// Exit 2, naming each of these.
    Refused(Vec<String>),
    /// Not ready: exit 1 (the gate) or a `blocked` verdict line (`plan`), naming each of these.
    Blocked(Vec<String>),
    /// Not a wrong input here (a release name for a kustomize install, which has none: the
    /// release Helm will create): the run goes on and names it.
    Named(Vec<String>),
}

struct Mutation {
    what: String,
    args: Vec<String>,
    expect: Expect,
}

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|a| a.to_string()).collect()
}

/// Every mutation of one scenario's inputs.
fn mutations(scenario: &str, snapshot: &str, bare: &str, c: &Charts, not_trainer: &str) -> Vec<Mutation> {
    let base = |extra: &[&str]| {
        let mut a = s(&["--snapshot", snapshot, "--chart", &c.to, "--from-chart", &c.from]);
        a.extend(s(extra));
        a
    };
    let m = |what: &str, args: Vec<String>, expect: Expect| Mutation { what: what.into(), args, expect };
    let refused = |names: &[&str]| Expect::Refused(s(names));
    vec![
        m("another namespace", base(&["-n", "not-the-trainer-ns"]), refused(&["not-the-trainer-ns", "holds no Trainer install"])),
        m(
            "another release",
            base(&["--release", "not-the-release"]),
            if scenario.starts_with("kustomize") {
                Expect::Named(s(&["kubeflow-system/not-the-release"]))
            } else {
                refused(&["not-the-release", "holds no Trainer install"])
            },
        ),
        m(
            "another chart as the target",
            s(&["--snapshot", snapshot, "--chart", not_trainer, "--from-chart", &c.from]),
            refused(&[not_trainer, "kuberay-operator"]),
        ),
        m(
            "another chart as the installed one",
            s(&["--snapshot", snapshot, "--chart", &c.to, "--from-chart", not_trainer]),
            refused(&[not_trainer, "kuberay-operator"]),
        ),
        m(
            "the installed chart of another version",
            s(&["--snapshot", snapshot, "--chart", &c.to, "--from-chart", &c.other]),
            refused(&["--from-chart", &c.other]),
        ),
        m("a --from the cluster contradicts", base(&["--from", "9.9.9"]), refused(&["--from 9.9.9"])),
        m("a --kube-version the cluster contradicts", base(&["--kube-version", "1.20"]), refused(&["--kube-version 1.20"])),
        m(
            "no ClusterInfo",
            s(&["--snapshot", bare, "--chart", &c.to, "--from-chart", &c.from]),
            refused(&["Kubernetes version is unknown", "--kube-version"]),
        ),
        m(
            "no installed chart",
            s(&["--snapshot", snapshot, "--chart", &c.to]),
            if installed(scenario) == "2.3.0" {
                // Already at the target: the target chart is the installed one, nothing is missing.
                Expect::Named(s(&["2.3.0 → 2.3.0"]))
            } else {
                Expect::Blocked(s(&["TA-READ-002", "--from-chart", "--repo"]))
            },
        ),
    ]
}

/// Asserts the property on one run; `baseline` is the same command's unmutated run.
fn holds(scenario: &str, command: &str, m: &Mutation, out: &Output) {
    let (code, text, err) = (out.status.code(), stdout(out), stderr(out));
    let said = format!("{scenario} {command} with {}: exit {code:?}\nstdout:\n{text}\nstderr:\n{err}", m.what);
    let first = text.lines().next().unwrap_or("");
    assert!(!(code == Some(0) && first == "ready"), "a lie — ready on a wrong input: {said}");
    match &m.expect {
        Expect::Refused(names) => {
            assert_eq!(code, Some(2), "not refused: {said}");
            assert!(text.is_empty(), "a refused run printed a report: {said}");
            for n in names {
                assert!(err.contains(n.as_str()), "the refusal does not name {n:?}: {said}");
            }
        }
        Expect::Named(names) => {
            assert!(matches!(code, Some(0 | 1)), "{said}");
            for n in names {
                assert!(text.contains(n.as_str()), "the run does not name {n:?}: {said}");
            }
        }
        Expect::Blocked(names) => {
            match command {
                "check" => assert_eq!(code, Some(1), "the gate passed: {said}"),
                "plan" => assert!(first.starts_with("blocked: "), "the plan does not say blocked: {said}"),
                _ => assert_eq!(code, Some(0), "{said}"),
            }
            for n in names {
                assert!(text.contains(n.as_str()), "the run does not name {n:?}: {said}");
            }
        }
    }
}

/// The property over one scenario with these charts.
fn hunt(scenario: &str, snapshot: &Path, charts: &Charts, work: &Path) {
    let home = tempfile::tempdir().unwrap();
    let snap = snapshot.to_string_lossy().into_owned();
    let bare = work.join(format!("{scenario}-bare.yaml"));
    std::fs::write(&bare, without_cluster_info(&std::fs::read_to_string(snapshot).unwrap())).unwrap();
    let bare = bare.to_string_lossy().into_owned();
    let not_trainer = Path::new(ROOT).join("tests/fixtures/charts/not-trainer").to_string_lossy().into_owned();
    for command in ["check", "plan", "runbook"] {
        let mut args = vec![command.to_string()];
        args.extend(s(&["--snapshot", &snap, "--chart", &charts.to, "--from-chart", &charts.from]));
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let baseline = run(home.path(), &refs);
        assert!(matches!(baseline.status.code(), Some(0 | 1)), "{scenario} {command}: the baseline is refused: {}", stderr(&baseline));
        for m in mutations(scenario, &snap, &bare, charts, &not_trainer) {
            if command == "runbook" && !matches!(m.expect, Expect::Refused(_)) {
                continue;
            }
            let mut args = vec![command.to_string()];
            args.extend(m.args.iter().cloned());
            let refs: Vec<&str> = args.iter().map(String::as_str).collect();
            holds(scenario, command, &m, &run(home.path(), &refs));
        }
    }
    // gitops: an empty tree, alone and with the cluster.
    let tree = work.join(format!("{scenario}-empty-tree"));
    std::fs::create_dir_all(&tree).unwrap();
    let t = tree.to_string_lossy().into_owned();
    for args in [vec!["gitops", &t], vec!["gitops", &t, "--snapshot", &snap]] {
        let m = Mutation {
            what: "an empty GitOps tree".into(),
            args: Vec::new(),
            expect: Expect::Refused(s(&[&t, "no Kubeflow Trainer reference"])),
        };
        holds(scenario, "gitops", &m, &run(home.path(), &args));
    }
}

#[test]
fn no_wrong_input_is_ever_ready_on_the_scenario_snapshots() {
    let work = tempfile::tempdir().unwrap();
    assert!(SCENARIOS.len() >= 6);
    for (name, _) in SCENARIOS {
        let version = installed(name);
        let charts = Charts {
            from: stand_in("from", version, work.path()),
            to: Path::new(ROOT).join("tests/rules/charts/to").to_string_lossy().into_owned(),
            other: stand_in("from", "2.0.1", work.path()),
        };
        hunt(name, &Path::new(ROOT).join(format!("snapshots/{name}.yaml")), &charts, work.path());
    }
}

/// The same over the real charts: each scenario's installed chart and the real 2.3.0.
#[test]
#[ignore = "needs the corpus: TRAINER_AUDIT_CORPUS=DIR cargo test -- --include-ignored"]
fn no_wrong_input_is_ever_ready_on_the_real_charts() {
    let corpus = support::corpus();
    let work = tempfile::tempdir().unwrap();
    let chart = |v: &str| corpus.join(format!("charts/kubeflow-trainer-{v}.tgz")).to_string_lossy().into_owned();
    for (name, _) in SCENARIOS {
        let version = installed(name);
        let other = if version == "2.0.1" { "2.0.0" } else { "2.0.1" };
        let charts = Charts { from: chart(version), to: chart("2.3.0"), other: chart(other) };
        hunt(name, &Path::new(ROOT).join(format!("snapshots/{name}.yaml")), &charts, work.path());
    }
}

/// Reversed direction: a target below the installed version must never be `ready`, and the run
/// must say why: the downgrade rule (TA-DIR-001, issue 20 §2) names it, not some other finding
/// that happens to block.
#[test]
fn a_downgrade_is_never_ready() {
    let work = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    for (name, _) in SCENARIOS {
        let version = installed(name);
        let (from, older) = (stand_in("from", version, work.path()), stand_in("from", "2.0.0", work.path()));
        let snap = Path::new(ROOT).join(format!("snapshots/{name}.yaml")).to_string_lossy().into_owned();
        for command in ["check", "plan"] {
            let out = run(home.path(), &[command, "--snapshot", &snap, "--chart", &older, "--from-chart", &from]);
            let m = Mutation {
                what: format!("a target (2.0.0) below the installed {version}"),
                args: Vec::new(),
                expect: Expect::Blocked(s(&["TA-DIR-001", "2.0.0"])),
            };
            holds(name, command, &m, &out);
        }
    }
}
