//! `cargo bench`: in-process render of the corpus 2.3.0 chart with runtimes-all.yaml against
//! Helm's own engine (the oracle's in-process `Chart.render`) timed in the same run. Needs
//! `TRAINER_AUDIT_CORPUS`; without it the project's fixture chart is timed alone.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use helm_render::chart::Chart;
use helm_render::render::{render_chart, render_templates, RenderOptions};

const RUNS: usize = 50;

/// Runs per measurement: `TRAINER_AUDIT_BENCH_RUNS` (set by `cargo xtask bench render`), else 50.
fn runs() -> usize {
    std::env::var("TRAINER_AUDIT_BENCH_RUNS").ok().and_then(|r| r.parse().ok()).filter(|n| *n > 0).unwrap_or(RUNS)
}

fn median(work: impl Fn()) -> f64 {
    work();
    let runs = runs();
    let mut samples: Vec<f64> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            work();
            start.elapsed().as_secs_f64()
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    samples[runs / 2]
}

fn main() {
    let corpus = std::env::var_os("TRAINER_AUDIT_CORPUS").map(PathBuf::from);
    let (chart_path, values_path) = match &corpus {
        Some(c) => (c.join("charts/kubeflow-trainer-2.3.0.tgz"), Some(c.join("values/runtimes-all.yaml"))),
        None => (Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/charts/demo"), None),
    };
    let chart = if chart_path.is_dir() { Chart::load_dir(&chart_path) } else { Chart::load_archive_file(&chart_path) }
        .unwrap_or_else(|e| panic!("cannot load {}: {e}", chart_path.display()));
    let values = match &values_path {
        Some(p) => helm_render::values::read_values_file(&std::fs::read_to_string(p).expect("values file")).expect("values"),
        None => Default::default(),
    };
    let mut options = RenderOptions { values, ..Default::default() };
    options.release.name = "kubeflow-trainer".into();
    options.release.namespace = "kubeflow-system".into();
    let templates = median(|| drop(render_templates(&chart, &options).expect("render")));
    let full = median(|| drop(render_chart(&chart, &options).expect("render")));
    if std::env::var_os("TRAINER_AUDIT_BENCH_RUNS").is_some() {
        // The fields `cargo xtask bench render` reads; it times the oracle itself.
        println!("bench-median-seconds: {templates}");
        println!("bench-median-full-seconds: {full}");
        return;
    }
    println!("render {}", chart_path.display());
    println!("  engine (like Helm's Chart.render)      {:>8.2} ms", templates * 1e3);
    println!("  helm template content (sorted, hooks)  {:>8.2} ms", full * 1e3);
    let Some(values_path) = values_path else { return };
    let script = std::env::temp_dir().join(format!("trainer-audit-bench-oracle-{}.py", std::process::id()));
    std::fs::write(&script, include_str!("../../../xtask/src/oracle_bench.py")).expect("write oracle script");
    let out = Command::new("python3").arg(&script).arg(&chart_path).arg(&values_path).arg(runs().to_string()).output();
    let _ = std::fs::remove_file(&script);
    match out {
        Ok(out) if out.status.success() => {
            let oracle: f64 = String::from_utf8_lossy(&out.stdout).trim().parse().expect("oracle timing");
            println!("  helm Chart.render (oracle)             {:>8.2} ms", oracle * 1e3);
            println!("  ratio engine / helm {:.3}x (target <= 0.5x), full / helm {:.3}x", templates / oracle, full / oracle);
        }
        _ => println!("  oracle not available (python3 with helm-python-sdk, installed by `cargo xtask test`); no ratio"),
    }
}
