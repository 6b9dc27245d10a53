//! `cargo xtask explore`: the explorer's command line (the machine is `testkit::explore`).
//! Offline: states of a seed built as snapshots and run through the real binary's `check`, `plan`
//! and `runbook`; `--live`: sampled states built on the real control plane by the live
//! differential (`tests/explore_live.rs`, run with its settings in the environment).

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use testkit::explore::run::{explore, rebuild, Options};
use testkit::explore::State;

pub const USAGE: &str = "  explore [--seed S] [--states N] [--first K] [--state K] [--replay 'LINE']
          [--jobs N] [--batch N] [--sample N] [--keep DIR] [--release] [--binary PATH] [--live]
                      the explorer (issue 29 §7): states N of seed S (default 1, 500), or
                      state K alone, or a state description, built as snapshots from the
                      corpus charts and run through check, plan (as fleets of --batch, default
                      100) and, every --sample-th state (default 10; 1: all), check alone and
                      runbook; each answer judged by invariants and by oracles of what Helm,
                      the API server and the controllers do. Prints each disagreement with
                      the line that rebuilds it; fails when there is one. --release runs the
                      release build (faster for long campaigns); --binary: this trainer-audit
                      instead of building one. --live: sampled states on
                      the real control plane (needs TRAINER_AUDIT_CORPUS and Go)";

fn value<'a>(args: &'a [String], i: &mut usize, flag: &str) -> Result<&'a str> {
    *i += 1;
    args.get(*i).map(String::as_str).with_context(|| format!("{flag} needs a value"))
}

pub fn run(args: &[String]) -> Result<()> {
    let (mut seed, mut count, mut first) = (1u64, 500u64, 0u64);
    let (mut jobs, mut batch, mut sample) = (2usize, 100usize, 10u64);
    let (mut replay, mut keep, mut release, mut live) = (None, None, false, false);
    let mut binary: Option<PathBuf> = None;
    let mut i = 0;
    while i < args.len() {
        let flag = args[i].as_str();
        match flag {
            "--seed" => seed = value(args, &mut i, flag)?.parse()?,
            "--states" => count = value(args, &mut i, flag)?.parse()?,
            "--first" => first = value(args, &mut i, flag)?.parse()?,
            "--state" => {
                first = value(args, &mut i, flag)?.parse()?;
                count = 1;
                sample = 1;
            }
            "--replay" => {
                let line = value(args, &mut i, flag)?;
                replay = Some(line.parse::<State>().map_err(|e| anyhow::anyhow!("{e}"))?);
                sample = 1;
            }
            "--jobs" => jobs = value(args, &mut i, flag)?.parse()?,
            "--batch" => batch = value(args, &mut i, flag)?.parse()?,
            "--sample" => sample = value(args, &mut i, flag)?.parse()?,
            "--keep" => keep = Some(PathBuf::from(value(args, &mut i, flag)?)),
            "--release" => release = true,
            // Absolute: the states run in directories of their own, where a relative path
            // names nothing (every state then failed with "exit (other)").
            "--binary" => {
                let path = value(args, &mut i, flag)?;
                binary = Some(std::fs::canonicalize(path).with_context(|| format!("--binary {path}: no such file"))?);
            }
            "--live" => live = true,
            other => bail!("explore: unknown argument {other}\n\n{USAGE}"),
        }
        i += 1;
    }
    let corpus = std::env::var_os("TRAINER_AUDIT_CORPUS").filter(|v| !v.is_empty()).map(PathBuf::from);
    let Some(corpus) = corpus else {
        bail!("explore builds states from the corpus charts: set TRAINER_AUDIT_CORPUS (e.g. ../shared/corpus)")
    };
    if live {
        return crate::explore_live(seed, count, first, replay.map(|r| r.to_string()));
    }
    crate::setup::ensure_docker_registry()?;
    let binary = match binary {
        Some(b) => b,
        None => build_binary(release)?,
    };
    let options = Options { seed, first, count, replay, binary, corpus, jobs, batch, sample, keep };
    let report = explore(&options, &mut |line| println!("{line}")).map_err(anyhow::Error::msg)?;
    for (index, why) in &report.unbuildable {
        println!("unbuildable (Helm could not have made it) {}: {why}", index.map_or("replay".into(), |k| k.to_string()));
    }
    let verdicts: Vec<String> = report.verdicts.iter().map(|(v, n)| format!("{v} {n}")).collect();
    let mut classes: std::collections::BTreeMap<String, usize> = Default::default();
    for o in &report.found {
        for d in &o.disagreements {
            *classes.entry(format!("{} ({})", d.class, d.area)).or_default() += 1;
        }
    }
    println!(
        "explore: {} states (seed {seed}, {}): {}; {} unbuildable; {} with a disagreement in {:.0} s",
        report.states,
        if options.replay.is_some() { "a replayed description".to_string() } else { format!("states {first}..{}", first + count) },
        verdicts.join(", "),
        report.unbuildable.len(),
        report.found.len(),
        report.seconds
    );
    for (class, n) in &classes {
        println!("  {n} × {class}");
    }
    if !report.found.is_empty() {
        let o = &report.found[0];
        bail!("{} states disagree; the first rebuilds with: {}", report.found.len(), rebuild(seed, o.index, &o.state));
    }
    Ok(())
}

/// `cargo build` of the product binary; its path.
fn build_binary(release: bool) -> Result<PathBuf> {
    let mut command = std::process::Command::new(env!("CARGO"));
    command.args(["build", "--quiet", "--bin", "trainer-audit"]);
    if release {
        command.arg("--release");
    }
    let status = command.status()?;
    if !status.success() {
        bail!("cargo build of trainer-audit failed ({status})");
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let target = std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| root.join("target"));
    Ok(target.join(if release { "release" } else { "debug" }).join("trainer-audit"))
}
