//! Every command the tool prints runs as printed: the `helm upgrade` line carries all the user's
//! value flags, quoted, with absolute paths (checked by letting bash split it), and every `sh`
//! block of every scenario's runbook and every command of its plan passes `bash -n` and
//! `shellcheck`. The scenarios run against the small fixture charts, so no corpus is needed.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use support::{stderr, stdout};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn snapshot(name: &str) -> String {
    root().join("snapshots").join(format!("{name}.yaml")).to_string_lossy().into_owned()
}

/// `trainer-audit ARGS` run in `cwd` with an isolated home.
fn run_in(cwd: &Path, home: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_trainer-audit"))
        .args(args)
        .current_dir(cwd)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("TRAINER_AUDIT_CACHE_DIR", home.join("cache"))
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// The argv bash makes of a command line (the line's words, one per line).
fn bash_words(line: &str) -> Vec<String> {
    let out = Command::new("bash").arg("-c").arg(format!("printf '%s\\n' {line}")).output().unwrap();
    assert!(out.status.success(), "bash could not run: {line}\n{}", stderr(&out));
    stdout(&out).lines().map(str::to_string).collect()
}

#[test]
fn printed_helm_upgrade_carries_every_value_flag_quoted_and_absolute() {
    let work = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("my values.yaml"), "extra: 1\n").unwrap();
    std::fs::write(work.path().join("it's.txt"), "note").unwrap();
    let args = [
        "plan",
        "--snapshot",
        &snapshot("helm-2.2.1"),
        "--chart",
        &trainer_stand_in(),
        "-f",
        "my values.yaml",
        "--set",
        "a=two words,b=$HOME",
        "--set-string",
        "c=007",
        "--set-json",
        r#"d={"x":[1,"y z"]}"#,
        "--set-file",
        "e=it's.txt",
        "--set-literal",
        "f=a,b",
        "--format",
        "json",
    ];
    let out = run_in(work.path(), home.path(), &args);
    assert!(out.status.success(), "{}", stderr(&out));
    let plan: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let line = plan["plan"]["steps"][0]["upgrade"][0].as_str().unwrap();
    let dir = std::fs::canonicalize(work.path()).unwrap_or_else(|_| work.path().to_path_buf());
    let abs = |name: &str| {
        let given = work.path().join(name);
        if given.exists() && dir != work.path() {
            // The tool makes paths absolute without resolving links; accept either spelling.
            given.to_string_lossy().into_owned()
        } else {
            dir.join(name).to_string_lossy().into_owned()
        }
    };
    let words = bash_words(line);
    let expected: Vec<String> = [
        "helm",
        "upgrade",
        "kubeflow-trainer",
        &trainer_stand_in(),
        "--version",
        "2.3.0",
        "-n",
        "kubeflow-system",
        "--reset-then-reuse-values",
        "-f",
        &abs("my values.yaml"),
        "--set-json",
        r#"d={"x":[1,"y z"]}"#,
        "--set",
        "a=two words,b=$HOME",
        "--set-string",
        "c=007",
        "--set-file",
        &format!("e={}", abs("it's.txt")),
        "--set-literal",
        "f=a,b",
        "--take-ownership",
        "--wait",
        "--timeout",
        "10m",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    assert_eq!(words, expected, "printed: {line}");
}

/// `sh` blocks of a Markdown text, each as its lines (indentation removed).
fn sh_blocks(markdown: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<Vec<String>> = None;
    for line in markdown.lines() {
        let trimmed = line.trim_start();
        match (&mut current, trimmed) {
            (None, "```sh") => current = Some(Vec::new()),
            (Some(lines), "```") => {
                blocks.push(lines.join("\n") + "\n");
                current = None;
            }
            (Some(lines), _) => lines.push(trimmed.to_string()),
            _ => {}
        }
    }
    assert!(current.is_none(), "unclosed sh block");
    blocks
}

fn shellcheck() -> Option<PathBuf> {
    let found = Command::new("shellcheck").arg("--version").stdout(Stdio::null()).status().is_ok_and(|s| s.success());
    if !found {
        assert!(!support::in_ci(), "shellcheck is required in CI (`cargo xtask test` installs it)");
        eprintln!("SKIPPED: shellcheck is not installed (run `cargo xtask test`, which installs it)");
    }
    found.then(|| PathBuf::from("shellcheck"))
}

/// `bash -n` and `shellcheck` on one piece of shell.
fn check_shell(what: &str, script: &str, shellcheck: Option<&Path>) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("block.sh");
    std::fs::write(&file, format!("#!/usr/bin/env bash\n{script}")).unwrap();
    let out = Command::new("bash").arg("-n").arg(&file).output().unwrap();
    assert!(out.status.success(), "{what}: bash -n fails:\n{script}\n{}", stderr(&out));
    if let Some(sc) = shellcheck {
        let out = Command::new(sc).args(["--shell=bash", "--severity=style"]).arg(&file).output().unwrap();
        assert!(out.status.success(), "{what}: shellcheck:\n{script}\n{}", stdout(&out));
    }
}

/// The small Trainer 2.3.0 stand-in of the rule fixtures (a chart of another name is refused).
fn trainer_stand_in() -> String {
    root().join("tests/rules/charts/to").to_string_lossy().into_owned()
}

/// Every command the runbook and the plan print for one scenario (the installed chart is not
/// given: its checks are reported as not run, TA-READ-002, and the commands still print).
fn commands_of(scenario: &str) {
    commands_with(scenario, None, &trainer_stand_in());
}

/// The same against the real charts: the scenario's installed version to 2.3.0.
fn commands_with_corpus(scenario: &str, installed: &str) {
    let corpus = support::corpus();
    let chart = |v: &str| corpus.join(format!("charts/kubeflow-trainer-{v}.tgz")).to_string_lossy().into_owned();
    commands_with(scenario, Some(&chart(installed)), &chart("2.3.0"));
}

fn commands_with(scenario: &str, from: Option<&str>, to: &str) {
    let shellcheck = shellcheck();
    let work = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let snapshot = snapshot(scenario);
    let mut base = vec!["--snapshot", &snapshot, "--chart", to];
    base.extend(from.iter().flat_map(|f| ["--from-chart", *f]));
    let runbook: Vec<&str> = ["runbook"].into_iter().chain(base.iter().copied()).collect();
    let out = run_in(work.path(), home.path(), &runbook);
    assert!(out.status.success(), "{}", stderr(&out));
    let book = stdout(&out);
    let blocks = sh_blocks(&book);
    // The same version installed and targeted: nothing to run (issue 20 §2).
    if from == Some(to) {
        assert!(blocks.is_empty() && book.contains("Already at "), "{book}");
        return;
    }
    assert!(blocks.len() >= 3, "{book}");
    for (i, block) in blocks.iter().enumerate() {
        check_shell(&format!("{scenario} runbook block {i}"), block, shellcheck.as_deref());
    }
    let plan: Vec<&str> = ["plan", "--format", "json"].into_iter().chain(base.iter().copied()).collect();
    let out = run_in(work.path(), home.path(), &plan);
    assert!(out.status.success(), "{}", stderr(&out));
    let plan: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    for step in plan["plan"]["steps"].as_array().unwrap() {
        let mut commands: Vec<&str> = Vec::new();
        for key in ["upgrade", "verify"] {
            commands.extend(step[key].as_array().unwrap().iter().map(|c| c.as_str().unwrap()));
        }
        for f in step["preconditions"].as_array().unwrap() {
            commands.extend(f["commands"].as_array().into_iter().flatten().map(|c| c.as_str().unwrap()));
        }
        for c in commands {
            assert!(!c.contains('\n') || c.lines().count() == 1, "one command per entry: {c}");
            check_shell(&format!("{scenario} plan command"), &format!("{c}\n"), shellcheck.as_deref());
        }
    }
}

macro_rules! scenario_commands {
    ($($test:ident: $name:literal;)*) => {
        $(
            #[test]
            fn $test() {
                commands_of($name);
            }
        )*
    };
}

scenario_commands! {
    commands_of_helm_2_2_1: "helm-2.2.1";
    commands_of_helm_2_1_0: "helm-2.1.0";
    commands_of_kustomize_2_2_0: "kustomize-2.2.0";
    commands_of_helm_2_3_0: "helm-2.3.0";
    commands_of_argocd_2_2_1: "argocd-2.2.1";
}

macro_rules! corpus_commands {
    ($($test:ident: $name:literal, $installed:literal;)*) => {
        $(
            #[test]
            #[ignore = "needs the corpus: TRAINER_AUDIT_CORPUS=DIR cargo test -- --include-ignored"]
            fn $test() {
                commands_with_corpus($name, $installed);
            }
        )*
    };
}

corpus_commands! {
    corpus_commands_of_helm_2_2_1: "helm-2.2.1", "2.2.1";
    corpus_commands_of_helm_2_1_0: "helm-2.1.0", "2.1.0";
    corpus_commands_of_kustomize_2_2_0: "kustomize-2.2.0", "2.2.0";
    corpus_commands_of_helm_2_3_0: "helm-2.3.0", "2.3.0";
    corpus_commands_of_argocd_2_2_1: "argocd-2.2.1", "2.2.1";
}

/// TA-CRD-010's commands unpack the target chart from where the run read it (a chart directory
/// or a local archive, which `helm pull` cannot read) and apply the CRD file at the printed
/// path: run as printed with bash, `kubectl` replaced by a stand-in that reads the `-f` file.
#[test]
fn crd_fix_commands_unpack_a_local_chart_and_apply_the_printed_path() {
    let work = tempfile::tempdir().unwrap();
    let charts = root().join("tests/rules/charts");
    // A packaged chart: one top directory named after the chart, as `helm package` writes it.
    let stage = work.path().join("stage");
    std::fs::create_dir_all(&stage).unwrap();
    let copied = Command::new("cp").arg("-R").arg(charts.join("to")).arg(stage.join("kubeflow-trainer")).status().unwrap();
    assert!(copied.success());
    let archive = work.path().join("target chart.tgz");
    let packed = Command::new("tar").arg("-czf").arg(&archive).arg("-C").arg(&stage).arg("kubeflow-trainer").status().unwrap();
    assert!(packed.success());
    let shims = work.path().join("shims");
    std::fs::create_dir_all(&shims).unwrap();
    let kubectl = shims.join("kubectl");
    std::fs::write(
        &kubectl,
        "#!/bin/sh\nwhile [ $# -gt 0 ]; do if [ \"$1\" = -f ]; then grep -q '^kind: CustomResourceDefinition' \"$2\" || exit 3; echo \"$2\" >> \"$APPLIED\"; fi; shift; done\n",
    )
    .unwrap();
    std::fs::set_permissions(&kubectl, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let snapshot = root().join("tests/rules/TA-CRD-010/cluster.yaml");
    for chart in [charts.join("to"), archive.clone()] {
        let cwd = tempfile::tempdir().unwrap();
        let out = run_in(
            cwd.path(),
            work.path(),
            &[
                "check",
                "--snapshot",
                snapshot.to_str().unwrap(),
                "--chart",
                chart.to_str().unwrap(),
                "--from-chart",
                charts.join("from").to_str().unwrap(),
                "--format",
                "json",
            ],
        );
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", stderr(&out)));
        let finding = report["findings"].as_array().unwrap().iter().find(|f| f["id"] == "TA-CRD-010").expect("TA-CRD-010 fires");
        let commands: Vec<&str> = finding["commands"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
        let applied = cwd.path().join("applied.txt");
        let path = format!("{}:{}", shims.display(), std::env::var("PATH").unwrap_or_default());
        let ran = Command::new("bash")
            .arg("-euo")
            .arg("pipefail")
            .arg("-c")
            .arg(commands.join("\n"))
            .current_dir(cwd.path())
            .env("PATH", path)
            .env("APPLIED", &applied)
            .output()
            .unwrap();
        assert!(ran.status.success(), "{commands:#?}\n{}", stderr(&ran));
        let applied = std::fs::read_to_string(&applied).unwrap();
        assert_eq!(applied.trim(), "trainer-audit-chart/kubeflow-trainer/crds/jobsets.yaml", "{commands:#?}");
        assert!(!cwd.path().join("trainer-audit-chart").exists(), "the last command cleans up");
    }
}

/// TA-RT-002's "if still stuck after the upgrade" command runs unattended in the runbook after the
/// upgrade: when the new controller already removed the finalizer (or the runtime is gone) it does
/// nothing and succeeds; while the finalizer is there it patches it away. Run as printed with
/// bash `-euo pipefail`, `kubectl` replaced by a stand-in that answers `get` from `$FINALIZERS`
/// and records every `patch`.
#[test]
fn finalizer_fix_succeeds_when_the_controller_already_removed_it() {
    let work = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let out = run_in(
        work.path(),
        home.path(),
        &["check", "--snapshot", &snapshot("helm-2.2.1"), "--chart", &trainer_stand_in(), "--format", "json"],
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", stderr(&out)));
    let finding = report["findings"].as_array().unwrap().iter().find(|f| f["id"] == "TA-RT-002").expect("TA-RT-002 fires");
    let commands: Vec<&str> = finding["commands"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
    assert!(!commands.is_empty());
    let shims = work.path().join("shims");
    std::fs::create_dir_all(&shims).unwrap();
    let kubectl = shims.join("kubectl");
    std::fs::write(
        &kubectl,
        "#!/bin/sh\ncase \"$1\" in get) printf '%s' \"$FINALIZERS\";; patch) echo \"$*\" >> \"$PATCHED\";; *) exit 3;; esac\n",
    )
    .unwrap();
    std::fs::set_permissions(&kubectl, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", shims.display(), std::env::var("PATH").unwrap_or_default());
    for (finalizers, patches) in
        [("", 0), ("[\"other.example.com/keep\"]", 0), ("[\"trainer.kubeflow.org/resource-in-use\"]", commands.len())]
    {
        let patched = work.path().join(format!("patched-{}.txt", finalizers.len()));
        let ran = Command::new("bash")
            .arg("-euo")
            .arg("pipefail")
            .arg("-c")
            .arg(commands.join("\n"))
            .env("PATH", &path)
            .env("FINALIZERS", finalizers)
            .env("PATCHED", &patched)
            .output()
            .unwrap();
        assert!(ran.status.success(), "finalizers {finalizers:?}: {commands:#?}\n{}", stderr(&ran));
        let lines = std::fs::read_to_string(&patched).unwrap_or_default();
        assert_eq!(lines.lines().count(), patches, "finalizers {finalizers:?}: {lines}");
        assert!(lines.lines().all(|l| l.starts_with("patch ") && l.contains("resource-in-use")), "{lines}");
    }
}

/// TA-NB-007 seen with the real JobSet controller: on a release Helm 4 applies server-side, an
/// upgrade to a chart that declares the rotator's keys again stops on the conflict, so the plan's
/// upgrade command carries `--force-conflicts` then, and only then (a target that no longer
/// declares them, or a client-side release, gets none).
#[test]
fn a_redeclared_cert_secret_puts_force_conflicts_on_the_upgrade() {
    let home = tempfile::tempdir().unwrap();
    let rules = root().join("tests/rules");
    let upgrade = |cluster: &str, chart: &str| -> String {
        let (c, t, f) = (rules.join("TA-NB-007").join(cluster), rules.join("TA-NB-007").join(chart), rules.join("charts/from"));
        let out = run_in(
            &root(),
            home.path(),
            &[
                "plan",
                "--snapshot",
                c.to_str().unwrap(),
                "--chart",
                t.to_str().unwrap(),
                "--from-chart",
                f.to_str().unwrap(),
                "--format",
                "json",
            ],
        );
        assert!(out.status.success(), "{}", stderr(&out));
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        doc["plan"]["steps"][0]["upgrade"][0].as_str().unwrap().to_string()
    };
    assert!(upgrade("cluster.yaml", "to-2.2").contains(" --force-conflicts "), "{}", upgrade("cluster.yaml", "to-2.2"));
    for (cluster, chart) in [("cluster.yaml", "to-2.3"), ("quiet.yaml", "to-2.2")] {
        let line = upgrade(cluster, chart);
        assert!(!line.contains("--force-conflicts"), "{cluster} → {chart}: {line}");
    }
}

/// Issue 29 §4: every object a printed command names — in `check`'s fixes, `plan`'s steps and
/// `runbook`'s blocks — exists in the cluster or in the target chart as rendered for this release
/// and namespace (`trainer_audit::plan::named`), never a default name: for release names the
/// chart prefixes (`trainer` → `trainer-kubeflow-trainer-controller-manager`) and ones it does not,
/// namespaces other than `kubeflow-system`, and every form the plan's commands take by release
/// state (an upgrade, one from the deployed revision under a failed one, a rollback first, a fresh
/// install with the saved values). The states are the charts rendered as that release
/// (`testkit::helm_state`).
fn printed_names_exist(from: &Path, to: &Path, release: &str, namespace: &str, statuses: &[&str]) {
    use trainer_audit::plan::named::{unknown_names, World};
    let load = |p: &Path| {
        if p.is_dir() {
            helm_render::chart::Chart::load_dir(p).unwrap()
        } else {
            helm_render::chart::Chart::load_archive_file(p).unwrap()
        }
    };
    let (from_chart, to_chart) = (load(from), load(to));
    // The history: the installed chart, then the target's for the last revision when it is a
    // change that did not complete (failed, pending), else the installed one's again.
    let revisions: Vec<testkit::helm_state::Revision> = statuses
        .iter()
        .enumerate()
        .map(|(i, status)| {
            let last = i + 1 == statuses.len();
            let chart = if last && matches!(*status, "failed" | "pending-upgrade") { &to_chart } else { &from_chart };
            testkit::helm_state::Revision { status, chart }
        })
        .collect();
    let objects = testkit::helm_state::objects(release, namespace, &revisions, "v1.33.4");
    let work = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let snapshot = work.path().join("cluster.yaml");
    std::fs::write(&snapshot, testkit::helm_state::snapshot_yaml(objects)).unwrap();
    let state = trainer_audit::cluster::snapshot::read_file(&snapshot).unwrap();
    let (releases, errors) = state.releases();
    assert!(errors.is_empty(), "{errors:?}");
    let rendered = helm_render::render::render_chart(
        &to_chart,
        &helm_render::render::RenderOptions {
            release: helm_render::context::ReleaseInfo { name: release.into(), namespace: namespace.into(), is_upgrade: true, revision: 2 },
            ..Default::default()
        },
    )
    .unwrap();
    let target = trainer_audit::inventory::Inventory::build(&to_chart, &rendered, namespace);
    let world = World { state: &state, targets: vec![&target], releases: &releases };
    let (snapshot, from, to) =
        (snapshot.to_string_lossy().into_owned(), from.to_string_lossy().into_owned(), to.to_string_lossy().into_owned());
    let base = ["--snapshot", snapshot.as_str(), "--chart", to.as_str(), "--from-chart", from.as_str()];
    let case = format!("release {release} in {namespace}, history {statuses:?}");
    let mut printed: Vec<(String, String)> = Vec::new();

    let out = run_in(work.path(), home.path(), &[&["check", "--format", "json"][..], &base].concat());
    assert!(matches!(out.status.code(), Some(0 | 1)), "{case}: check: {}", stderr(&out));
    let report: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    for f in report["findings"].as_array().unwrap() {
        for c in f["commands"].as_array().into_iter().flatten() {
            printed.push((format!("check {}", f["id"]), c.as_str().unwrap().to_string()));
        }
    }
    let out = run_in(work.path(), home.path(), &[&["plan", "--format", "json"][..], &base].concat());
    assert!(out.status.success(), "{case}: plan: {}", stderr(&out));
    let plan: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let steps = plan["plan"]["steps"].as_array().unwrap();
    assert!(!steps.is_empty(), "{case}: the plan has no step");
    for step in steps {
        for key in ["upgrade", "verify"] {
            printed.extend(step[key].as_array().unwrap().iter().map(|c| (format!("plan {key}"), c.as_str().unwrap().to_string())));
        }
    }
    // The verification names the manager Deployment the target renders for this release.
    let manager = format!("deployment/{}", trainer_audit::plan::manager_deployment(&target).unwrap().identity.name);
    assert!(
        steps[0]["verify"].as_array().unwrap().iter().any(|c| c.as_str().unwrap().contains(&manager)),
        "{case}: no {manager}: {}",
        steps[0]["verify"]
    );
    let out = run_in(work.path(), home.path(), &[&["runbook"][..], &base].concat());
    assert!(out.status.success(), "{case}: runbook: {}", stderr(&out));
    printed.extend(sh_blocks(&stdout(&out)).into_iter().map(|b| ("runbook".to_string(), b)));

    let commands: Vec<String> = printed.iter().map(|(_, c)| c.clone()).collect();
    let unknown = unknown_names(&commands, &world);
    assert!(
        unknown.is_empty(),
        "{case}: printed commands name what exists nowhere:\n{}",
        unknown.iter().map(|u| format!("  {u}")).collect::<Vec<_>>().join("\n")
    );
    // And the release and namespace printed are these, never the defaults.
    for (what, c) in &printed {
        if c.contains("helm ") && release != "kubeflow-trainer" {
            assert!(
                !c.contains(" kubeflow-trainer ") || c.contains("charts/kubeflow-trainer"),
                "{case}: {what} names the default release: {c}"
            );
        }
        if namespace != "kubeflow-system" {
            assert!(!c.contains("kubeflow-system"), "{case}: {what} names the default namespace: {c}");
        }
    }
}

/// Release names (one the chart prefixes, one holding the chart's name, the default) × namespaces
/// × the release states whose plans differ in form, on the fixture charts.
#[test]
fn printed_names_exist_for_any_release_name_namespace_and_state() {
    let charts = root().join("tests/rules/charts");
    for (release, namespace) in [("trainer", "ml-platform"), ("kubeflow-trainer-prod", "team-a"), ("kubeflow-trainer", "kubeflow-system")] {
        for statuses in [&["deployed"][..], &["deployed", "failed"], &["deployed", "pending-upgrade"], &["superseded", "uninstalled"]] {
            printed_names_exist(&charts.join("from"), &charts.join("to"), release, namespace, statuses);
        }
    }
}

/// The same on the real charts (2.1.0 and 2.2.1 installed, to 2.3.0), one release state per
/// name and namespace (each runs check, plan and runbook over the real charts: ≈ 20 s).
#[test]
#[ignore = "needs the corpus: TRAINER_AUDIT_CORPUS=DIR cargo test -- --include-ignored"]
fn corpus_printed_names_exist_for_any_release_name_namespace_and_state() {
    let corpus = support::corpus();
    let chart = |v: &str| corpus.join(format!("charts/kubeflow-trainer-{v}.tgz"));
    let cases: [(&str, &str, &str, &[&str]); 3] = [
        ("2.2.1", "trainer", "ml-platform", &["deployed", "failed"]),
        ("2.2.1", "kubeflow-trainer-prod", "team-a", &["deployed", "pending-upgrade"]),
        ("2.1.0", "ml", "kubeflow-system", &["superseded", "uninstalled"]),
    ];
    for (from, release, namespace, statuses) in cases {
        printed_names_exist(&chart(from), &chart("2.3.0"), release, namespace, statuses);
    }
}
