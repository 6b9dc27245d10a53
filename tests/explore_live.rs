//! The explorer's live differential (issue 29 §7, `cargo xtask explore --live`): states drawn
//! per seed from what the test control plane can make for real ([`State::generate_live`]) are
//! made with the real `helm`, API server and controllers (`explore_live/make.rs`), then judged
//! (`explore_live/differential.rs`): `check` and `plan` live against the offline oracles, then
//! against what the upgrade really does. A disagreement prints the seed, the state's index and
//! its description (`cargo xtask explore --live --replay '<line>'` makes it again).
//!
//! Settings come from the environment (`cargo xtask explore --live` sets them):
//! `TRAINER_AUDIT_EXPLORE_SEED` (1), `TRAINER_AUDIT_EXPLORE_STATES` (2),
//! `TRAINER_AUDIT_EXPLORE_FIRST` (0), `TRAINER_AUDIT_EXPLORE_REPLAY` (a description instead).
//! `#[ignore]`d like every corpus test. Reuses the rehearsals' lab, observations and verdict.

mod support;

#[path = "explore_live/differential.rs"]
mod differential;
#[allow(dead_code)]
#[path = "rehearsal/lab.rs"]
mod lab;
#[path = "explore_live/make.rs"]
mod make;
#[allow(dead_code)]
#[path = "rehearsal/observe.rs"]
mod observe;
#[allow(dead_code)]
#[path = "rehearsal/printed.rs"]
mod printed;
#[allow(dead_code)]
#[path = "rehearsal/running.rs"]
mod running;
#[allow(dead_code)]
#[path = "rehearsal/users.rs"]
mod users;
#[allow(dead_code)]
#[path = "rehearsal/verdict.rs"]
mod verdict;

use testkit::explore::charts::Charts;
use testkit::explore::generate::live::VERSIONS;
use testkit::explore::State;

fn setting(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

#[test]
#[ignore = "needs TRAINER_AUDIT_CORPUS (the real Trainer charts in a registry)"]
fn explore_live() {
    let seed = setting("TRAINER_AUDIT_EXPLORE_SEED", 1);
    let first = setting("TRAINER_AUDIT_EXPLORE_FIRST", 0);
    let count = setting("TRAINER_AUDIT_EXPLORE_STATES", 2);
    let states: Vec<(Option<u64>, State)> = match std::env::var("TRAINER_AUDIT_EXPLORE_REPLAY").ok().filter(|l| !l.is_empty()) {
        Some(line) => vec![(None, line.parse().unwrap_or_else(|e| panic!("{e}")))],
        None => (first..first + count).map(|k| (Some(k), State::generate_live(seed, k))).collect(),
    };
    let corpus = support::corpus();
    let charts = Charts::new(&corpus);
    let started = std::time::Instant::now();
    let (mut made, mut not_made, mut found) = (0, Vec::new(), Vec::new());
    for (index, state) in &states {
        let name: &'static str = Box::leak(format!("explore-{seed}-{}", index.map_or("replay".into(), |k| k.to_string())).into_boxed_str());
        let Some(mut lab) = lab::Lab::start(name, VERSIONS) else { return };
        lab.note(&format!("state: {state}"));
        if let Err(why) = make::make(&mut lab, state) {
            lab.note(&format!("not made: {why}"));
            not_made.push(format!("{name}: {why}"));
            continue;
        }
        made += 1;
        for d in differential::differential(&mut lab, state, &charts) {
            let rebuild = match index {
                Some(k) => format!("cargo xtask explore --live --seed {seed} --state {k}"),
                None => format!("cargo xtask explore --live --replay '{state}'"),
            };
            println!(
                "LIVE DISAGREEMENT {} ({})\n  state: {state}\n  expected: {}\n  actual:   {}\n  rebuild: {rebuild}",
                d.class, d.area, d.expected, d.actual
            );
            found.push((name, d.class));
        }
    }
    println!(
        "explore --live: {} states (seed {seed}), {made} made, {} not made as described, {} disagreements in {:.0} s",
        states.len(),
        not_made.len(),
        found.len(),
        started.elapsed().as_secs_f64()
    );
    not_made.iter().for_each(|n| println!("  not made: {n}"));
    assert!(found.is_empty(), "{} live disagreements: {found:?}", found.len());
}
