//! `bench fleet`: `check` over a fleet of 50 clusters, each a fake API server (testkit) holding
//! the Helm 2.2.1 scenario and 1,000 TrainJobs, read through one kubeconfig with `--all-contexts`.
//! Whole process, at `--concurrency` 4, 16 and 50 (the fleet size), with peak RSS for each, so
//! the memory bound shows; the peer, measured in the same run, is what users do today: a shell
//! loop running `check --context C` once per context. Charts: the corpus 2.2.1/2.3.0 when
//! `TRAINER_AUDIT_CORPUS` is set (or `../shared/corpus` exists), else the stand-in charts in
//! `tests/rules/charts`.

use std::process::Command;
use std::time::Duration;

use anyhow::{Context, Result};

use crate::measure::{build_release, corpus, median, peak_rss_kib, repo_root, tempfile_dir, time_any_exit};

const CLUSTERS: usize = 50;
const TRAINJOBS: usize = 1_000;

pub fn fleet(runs: usize) -> Result<()> {
    use testkit::fake_api::FakeApiServer;
    use testkit::scenario::{scenario, trainjobs};
    let binary = build_release()?;
    let scratch = tempfile_dir()?;
    let (to, from, charts) = match corpus() {
        Ok(c) => (c.join("charts/kubeflow-trainer-2.3.0.tgz"), c.join("charts/kubeflow-trainer-2.2.1.tgz"), "corpus 2.2.1 → 2.3.0"),
        Err(_) => {
            let dir = repo_root().join("tests/rules/charts");
            (dir.join("to"), dir.join("from"), "stand-in charts (no corpus)")
        }
    };
    let mut objects: Vec<serde_json::Value> =
        scenario("helm-2.2.1").context("scenario")?.into_iter().filter(|o| o["kind"] != "ClusterInfo").collect();
    objects.extend(trainjobs(TRAINJOBS, 20, &["torch-distributed", "deepspeed-distributed"], true));
    let servers = (0..CLUSTERS).map(|_| FakeApiServer::start(objects.clone(), &[], "v1.33.4")).collect::<std::io::Result<Vec<_>>>()?;
    drop(objects);
    let mut config = String::from("apiVersion: v1\nkind: Config\nusers:\n- name: fake\n  user:\n    token: fake-token\nclusters:\n");
    for (i, s) in servers.iter().enumerate() {
        config.push_str(&format!("- name: c{i:02}\n  cluster:\n    server: {}\n", s.url()));
    }
    config.push_str("contexts:\n");
    for i in 0..CLUSTERS {
        config.push_str(&format!("- name: c{i:02}\n  context:\n    cluster: c{i:02}\n    user: fake\n"));
    }
    config.push_str("current-context: c00\n");
    let kubeconfig = scratch.join("kubeconfig");
    std::fs::write(&kubeconfig, config)?;

    let fleet = |concurrency: usize| {
        let mut c = Command::new(&binary);
        c.arg("check")
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .arg("--all-contexts")
            .arg("--chart")
            .arg(&to)
            .arg("--from-chart")
            .arg(&from)
            .args(["--format", "jsonl", "--concurrency", &concurrency.to_string()])
            .env("TRAINER_AUDIT_CACHE_DIR", scratch.join("cache"));
        c
    };
    // The peer: one process per cluster, one after the other.
    let shell_loop = || {
        let mut c = Command::new("sh");
        c.arg("-c")
            .arg(r#"for c in $(seq -f 'c%02g' 0 $(($N - 1))); do "$BIN" check --kubeconfig "$KC" --context "$c" --chart "$TO" --from-chart "$FROM" --format json || [ $? -eq 1 ]; done"#)
            .env("N", CLUSTERS.to_string())
            .env("BIN", &binary)
            .env("KC", &kubeconfig)
            .env("TO", &to)
            .env("FROM", &from)
            .env("TRAINER_AUDIT_CACHE_DIR", scratch.join("cache"));
        c
    };
    let runs = runs.clamp(1, 3);
    let mut results = Vec::new();
    for concurrency in [4, 16, CLUSTERS] {
        let elapsed = median((0..runs).map(|_| time_any_exit(fleet(concurrency))).collect::<Result<Vec<_>>>()?);
        results.push((concurrency, elapsed, peak_rss_kib(fleet(concurrency))));
    }
    let peer = median((0..runs).map(|_| time_any_exit(shell_loop())).collect::<Result<Vec<_>>>()?);
    let mib = |r: Option<u64>| r.map(|k| format!("{:.0} MiB", k as f64 / 1024.0)).unwrap_or_else(|| "n/a".into());
    println!("bench fleet: check over {CLUSTERS} clusters (fake API servers, {TRAINJOBS} TrainJobs each), {charts}, median of {runs} runs");
    for (concurrency, elapsed, rss) in &results {
        println!(
            "  --concurrency {concurrency:<3}        {:>8.2} s   peak RSS {:>8}   ratio to the loop {:.2}x  (target: a few seconds, < 5 s: {})",
            elapsed.as_secs_f64(),
            mib(*rss),
            elapsed.as_secs_f64() / peer.as_secs_f64(),
            if *elapsed < Duration::from_secs(5) { "met" } else { "NOT met" }
        );
    }
    println!("  shell loop, one check per context {:>8.2} s  (peer)", peer.as_secs_f64());
    let rss: Vec<u64> = results.iter().filter_map(|(_, _, r)| *r).collect();
    if let [low, .., high] = rss[..] {
        println!(
            "  memory: {} at concurrency 4 vs {} at {CLUSTERS} ({}: bounded by the concurrency, not the fleet)",
            mib(Some(low)),
            mib(Some(high)),
            if low < high { "grows with the concurrency" } else { "NOT growing with the concurrency" }
        );
    }
    drop(servers);
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(())
}
