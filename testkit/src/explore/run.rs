//! A campaign: states `first..first+count` of a seed (or one replayed description) built as
//! snapshots, checked and planned by the real binary as fleets (one process per batch and
//! target, the clusters' answers read from its JSON Lines), a sample of them also checked alone
//! and given a runbook, every answer judged ([`super::oracle::judge`]). The charts come from a
//! real registry (`docker-registry`) holding every version, as `--to` pulls them for users.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{json, Value as Json};

use super::build::Built;
use super::charts::Charts;
use super::oracle::{judge, Disagreement, Observed};
use super::process::{snapshot_args, Ran, Runner};
use super::state::State;
use crate::registry::Registry;

pub struct Options {
    pub seed: u64,
    pub first: u64,
    pub count: u64,
    /// A description to run instead of generated states.
    pub replay: Option<State>,
    pub binary: PathBuf,
    pub corpus: PathBuf,
    /// Processes at once.
    pub jobs: usize,
    /// States per fleet run.
    pub batch: usize,
    /// Every `sample`-th state is also checked alone and given a runbook (1: all; 0: none).
    pub sample: u64,
    /// Where to write the snapshots of states with a disagreement.
    pub keep: Option<PathBuf>,
}

/// One state's outcome.
#[derive(Debug)]
pub struct Outcome {
    pub index: Option<u64>,
    pub state: State,
    pub verdict: String,
    pub disagreements: Vec<Disagreement>,
}

#[derive(Debug, Default)]
pub struct Report {
    pub states: usize,
    pub verdicts: BTreeMap<String, usize>,
    /// States Helm could not have made (the chart refuses to render with their values).
    pub unbuildable: Vec<(Option<u64>, String)>,
    pub found: Vec<Outcome>,
    pub seconds: f64,
}

const REPOSITORY: &str = "kubeflow/charts/kubeflow-trainer";

/// One cluster's run may take this long before it counts as a hang (a loaded 2-core machine runs
/// a debug build's check in tens of seconds).
const SINGLE_LIMIT: Duration = Duration::from_secs(300);

/// The command that rebuilds a state.
pub fn rebuild(seed: u64, index: Option<u64>, state: &State) -> String {
    match index {
        Some(k) => format!("cargo xtask explore --seed {seed} --state {k}"),
        None => format!("cargo xtask explore --replay '{state}'"),
    }
}

struct Job {
    args: Vec<String>,
    limit: Duration,
}

/// Runs `jobs` on `threads` workers; results in order.
fn run_all(runner: &Runner, jobs: Vec<Job>, threads: usize) -> Vec<Ran> {
    let next = Mutex::new(0usize);
    let results: Mutex<Vec<Option<Ran>>> = Mutex::new(vec![None; jobs.len()]);
    std::thread::scope(|scope| {
        for _ in 0..threads.max(1) {
            scope.spawn(|| loop {
                let i = {
                    let mut n = next.lock().unwrap();
                    let i = *n;
                    *n += 1;
                    i
                };
                let Some(job) = jobs.get(i) else { break };
                let ran = runner.run(&job.args, job.limit);
                results.lock().unwrap()[i] = Some(ran);
            });
        }
    });
    results.into_inner().unwrap().into_iter().map(|r| r.expect("every job ran")).collect()
}

fn well_ended(ran: &Ran) -> bool {
    !ran.timed_out && !ran.panicked() && matches!(ran.code, Some(0..=2))
}

/// The JSON Lines of a fleet run by cluster (the snapshot path).
fn lines_by_cluster(ran: &Ran) -> BTreeMap<String, Json> {
    ran.stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Json>(l).ok())
        .filter_map(|j| Some((j["cluster"].as_str()?.to_string(), j)))
        .collect()
}

pub fn explore(options: &Options, progress: &mut dyn FnMut(&str)) -> Result<Report, String> {
    let started = Instant::now();
    let charts = Charts::new(&options.corpus);
    let registry = Registry::start().ok_or("docker-registry is not installed: `cargo xtask test` installs it")?;
    for (version, archive) in charts.all().map_err(|e| e.to_string())? {
        registry.push_chart(REPOSITORY, &version, "kubeflow-trainer", &version, &archive);
    }
    let repo = registry.repo(REPOSITORY);
    let work = tempfile::Builder::new().prefix("explore-").tempdir().map_err(|e| e.to_string())?;
    let home = work.path().join("home");
    std::fs::create_dir_all(home.join("cache")).map_err(|e| e.to_string())?;
    let runner = Runner { binary: options.binary.clone(), home };
    let indices: Vec<Option<u64>> = match &options.replay {
        Some(_) => vec![None],
        None => (options.first..options.first + options.count).map(Some).collect(),
    };
    let mut report = Report::default();
    for (batch_no, batch) in indices.chunks(options.batch.max(1)).enumerate() {
        let dir = work.path().join(format!("batch-{batch_no}"));
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        // Build every state of the batch.
        let phase = Instant::now();
        let mut built: Vec<(Option<u64>, State, Built, PathBuf)> = Vec::new();
        for index in batch {
            let state = match (index, &options.replay) {
                (Some(k), _) => State::generate(options.seed, *k),
                (None, Some(s)) => s.clone(),
                (None, None) => unreachable!("a replay or an index"),
            };
            match state.build(&charts) {
                Ok(b) => {
                    let file = dir.join(format!("state-{}.json", index.map_or("replay".into(), |k| k.to_string())));
                    let list = json!({"apiVersion": "v1", "kind": "List", "items": b.objects});
                    std::fs::write(&file, serde_json::to_vec(&list).map_err(|e| e.to_string())?).map_err(|e| e.to_string())?;
                    built.push((*index, state, b, file));
                }
                Err(e) => report.unbuildable.push((*index, format!("{state}: {e}"))),
            }
        }
        let build_seconds = phase.elapsed().as_secs_f64();
        let phase = Instant::now();
        // Fleets by target, then the sample alone.
        let mut groups: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        for (i, (_, state, _, _)) in built.iter().enumerate() {
            groups.entry(state.to.clone()).or_default().push(i);
        }
        let common = |to: &str| vec!["--to".to_string(), to.to_string(), "--repo".into(), repo.clone(), "--plain-http".into()];
        let mut jobs = Vec::new();
        let mut job_of: Vec<(String, Vec<usize>)> = Vec::new();
        for (to, members) in &groups {
            let files: Vec<&Path> = members.iter().map(|i| built[*i].3.as_path()).collect();
            // Generous: a fleet that runs out is run again cluster by cluster, where a hang shows.
            let limit = Duration::from_secs(600 + 10 * files.len() as u64);
            for command in ["check", "plan"] {
                let mut args = vec![command.to_string()];
                args.extend(snapshot_args(&files));
                args.extend(common(to));
                args.extend(["--format".into(), "jsonl".into()]);
                jobs.push(Job { args, limit });
                job_of.push((command.to_string(), members.clone()));
            }
        }
        let sampled: Vec<usize> =
            (0..built.len()).filter(|i| options.sample > 0 && built[*i].0.is_none_or(|k| k % options.sample == 0)).collect();
        for i in &sampled {
            let (_, state, _, file) = &built[*i];
            for command in ["check", "runbook"] {
                let mut args = vec![command.to_string(), "--snapshot".into(), file.display().to_string()];
                args.extend(common(&state.to));
                if command == "check" {
                    args.extend(["--format".into(), "json".into()]);
                }
                jobs.push(Job { args, limit: SINGLE_LIMIT });
                job_of.push((format!("single-{command}"), vec![*i]));
            }
        }
        let results = run_all(&runner, jobs, options.jobs);
        let mut observed: Vec<Observed> = built.iter().map(|_| Observed::default()).collect();
        let mut rerun: Vec<(String, usize)> = Vec::new();
        for ((what, members), ran) in job_of.iter().zip(results) {
            match what.as_str() {
                "check" | "plan" => {
                    if !well_ended(&ran) {
                        // Found alone which cluster breaks it.
                        rerun.extend(members.iter().map(|i| (what.clone(), *i)));
                        continue;
                    }
                    let lines = lines_by_cluster(&ran);
                    for i in members {
                        let line = lines.get(&built[*i].3.display().to_string()).cloned();
                        if what == "check" {
                            observed[*i].check = line;
                        } else {
                            observed[*i].plan = line;
                        }
                    }
                }
                "single-check" => observed[members[0]].single_check = Some(ran),
                _ => observed[members[0]].runbook = Some(ran),
            }
        }
        if !rerun.is_empty() {
            let jobs: Vec<Job> = rerun
                .iter()
                .map(|(what, i)| {
                    let mut args = vec![what.clone(), "--snapshot".into(), built[*i].3.display().to_string()];
                    args.extend(common(&built[*i].1.to));
                    args.extend(["--format".into(), "jsonl".into()]);
                    Job { args, limit: SINGLE_LIMIT }
                })
                .collect();
            for ((what, i), ran) in rerun.iter().zip(run_all(&runner, jobs, options.jobs)) {
                if !well_ended(&ran) {
                    observed[*i].broken.push(ran);
                    continue;
                }
                let line = ran.stdout.lines().find_map(|l| serde_json::from_str::<Json>(l).ok());
                if what == "check" {
                    observed[*i].check = line;
                } else {
                    observed[*i].plan = line;
                }
            }
        }
        let run_seconds = phase.elapsed().as_secs_f64();
        let phase = Instant::now();
        for ((index, state, b, file), seen) in built.iter().zip(&observed) {
            let verdict = seen.check.as_ref().and_then(|c| c["verdict"].as_str()).unwrap_or("none").to_string();
            *report.verdicts.entry(verdict.clone()).or_default() += 1;
            report.states += 1;
            let disagreements = judge(state, b, &charts, seen);
            if disagreements.is_empty() {
                continue;
            }
            for d in &disagreements {
                progress(&format!(
                    "DISAGREEMENT {} ({})\n  state: {state}\n  expected: {}\n  actual:   {}\n  rebuild: {}",
                    d.class,
                    d.area,
                    d.expected,
                    d.actual,
                    rebuild(options.seed, *index, state)
                ));
            }
            if let Some(keep) = &options.keep {
                let _ = std::fs::create_dir_all(keep);
                let _ = std::fs::copy(file, keep.join(file.file_name().unwrap_or_default()));
            }
            report.found.push(Outcome { index: *index, state: state.clone(), verdict, disagreements });
        }
        let _ = std::fs::remove_dir_all(&dir);
        progress(&format!(
            "explore: {}/{} states, {} with a disagreement, {:.0} s (this batch: built in {build_seconds:.1} s, run in {run_seconds:.1} s, judged in {:.1} s)",
            report.states,
            indices.len(),
            report.found.len(),
            started.elapsed().as_secs_f64(),
            phase.elapsed().as_secs_f64()
        ));
    }
    report.seconds = started.elapsed().as_secs_f64();
    Ok(report)
}
