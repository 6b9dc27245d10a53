//! `cargo xtask conformance` (chart mode): every chart × every values file rendered by
//! trainer-audit and by Helm's own engine — (a) each template's raw output, (b) the release
//! manifest — compared byte for byte. Defaults to the corpus (`$TRAINER_AUDIT_CORPUS`); `--chart`
//! and `--values` run any chart.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use helm_render::chart::Chart;
use helm_render::render::{render_chart, RenderOptions};
use helm_render::values::{merge_maps, read_values_file};

use crate::setup;

struct Case {
    key: String,
    chart: PathBuf,
    values: Vec<PathBuf>,
}

fn list(dir: &Path, ext: &str) -> Result<Vec<PathBuf>> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("read {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(ext))
        .collect();
    out.sort();
    Ok(out)
}

pub fn run(charts: Vec<String>, values: Vec<String>, name: &str, namespace: &str) -> Result<()> {
    setup::ensure_helm_oracle()?;
    let corpus = std::env::var_os("TRAINER_AUDIT_CORPUS").map(PathBuf::from);
    let charts: Vec<PathBuf> = if charts.is_empty() {
        let corpus = corpus.clone().context("set TRAINER_AUDIT_CORPUS or pass --chart")?;
        list(&corpus.join("charts"), ".tgz")?
    } else {
        charts.into_iter().map(PathBuf::from).collect()
    };
    let value_sets: Vec<Vec<PathBuf>> = if values.is_empty() {
        match &corpus {
            Some(c) if c.join("values").is_dir() => list(&c.join("values"), ".yaml")?.into_iter().map(|v| vec![v]).collect(),
            _ => vec![vec![]],
        }
    } else {
        values.iter().map(|v| vec![PathBuf::from(v)]).collect()
    };
    let mut cases = Vec::new();
    for chart in &charts {
        for set in &value_sets {
            let vname = set.iter().map(|v| v.file_name().unwrap_or_default().to_string_lossy().to_string()).collect::<Vec<_>>().join("+");
            let cname = chart.file_name().unwrap_or_default().to_string_lossy().to_string();
            cases.push(Case {
                key: format!("{cname} × {}", if vname.is_empty() { "defaults".into() } else { vname }),
                chart: chart.clone(),
                values: set.clone(),
            });
        }
    }
    let oracle = oracle(&cases, name, namespace)?;
    let (mut passed, mut failed) = (0, 0);
    println!("{:<58} {:<10} {:<10}", "case", "templates", "manifest");
    let mut details = Vec::new();
    for case in &cases {
        let theirs = &oracle[&case.key];
        let ours = ours(case, name, namespace);
        let (templates_ok, manifest_ok, detail) = compare(theirs, &ours);
        let verdict = |ok: bool| if ok { "ok" } else { "DIFF" };
        println!("{:<58} {:<10} {:<10}", case.key, verdict(templates_ok), verdict(manifest_ok));
        if templates_ok && manifest_ok {
            passed += 1;
        } else {
            failed += 1;
            details.push(format!("== {}\n{detail}", case.key));
        }
    }
    for d in &details {
        println!("{d}");
    }
    println!("{passed} passed, {failed} failed");
    if failed > 0 {
        bail!("{failed} chart cases differ from Helm");
    }
    Ok(())
}

struct Ours {
    templates: Option<BTreeMap<String, String>>,
    manifest: Option<String>,
    error: Option<String>,
}

fn ours(case: &Case, name: &str, namespace: &str) -> Ours {
    let result = (|| -> Result<(BTreeMap<String, String>, String), String> {
        let chart = if case.chart.is_dir() { Chart::load_dir(&case.chart) } else { Chart::load_archive_file(&case.chart) }
            .map_err(|e| e.to_string())?;
        let mut user = gotmpl::Map::new();
        for v in &case.values {
            let text = std::fs::read_to_string(v).map_err(|e| e.to_string())?;
            merge_maps(&mut user, &read_values_file(&text).map_err(|e| e.to_string())?);
        }
        let mut options = RenderOptions { values: user, ..RenderOptions::default() };
        options.release.name = name.into();
        options.release.namespace = namespace.into();
        let rendered = render_chart(&chart, &options).map_err(|e| e.0)?;
        Ok((rendered.templates.clone(), rendered.release_manifest(false)))
    })();
    match result {
        Ok((t, m)) => Ours { templates: Some(t), manifest: Some(m), error: None },
        Err(e) => Ours { templates: None, manifest: None, error: Some(e) },
    }
}

fn first_difference(a: &str, b: &str) -> String {
    let (al, bl): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    for i in 0..al.len().max(bl.len()) {
        if al.get(i) != bl.get(i) {
            return format!("    line {}:\n      helm: {:?}\n      ours: {:?}", i + 1, al.get(i), bl.get(i));
        }
    }
    format!("    (only trailing bytes differ: helm {} bytes, ours {} bytes)", a.len(), b.len())
}

fn compare(theirs: &serde_json::Value, ours: &Ours) -> (bool, bool, String) {
    let mut detail = String::new();
    if let Some(err) = theirs["error"].as_str() {
        let same = ours.error.as_deref() == Some(err);
        if !same {
            detail.push_str(&format!("  helm failed: {err}\n  ours: {:?}\n", ours.error));
        }
        return (same, same, detail);
    }
    if let Some(e) = &ours.error {
        return (false, false, format!("  ours failed: {e}\n"));
    }
    let mut templates_ok = true;
    let theirs_t: BTreeMap<String, String> = serde_json::from_value(theirs["render"].clone()).unwrap_or_default();
    let ours_t = ours.templates.clone().unwrap_or_default();
    for key in theirs_t.keys().chain(ours_t.keys()).collect::<std::collections::BTreeSet<_>>() {
        match (theirs_t.get(key), ours_t.get(key)) {
            (Some(a), Some(b)) if a == b => {}
            (a, b) => {
                templates_ok = false;
                if detail.matches("template ").count() < 5 {
                    detail.push_str(&format!(
                        "  template {key}:\n{}\n",
                        first_difference(a.map(String::as_str).unwrap_or("<absent>"), b.map(String::as_str).unwrap_or("<absent>"))
                    ));
                }
            }
        }
    }
    let theirs_m = theirs["manifest"].as_str().unwrap_or("");
    let ours_m = ours.manifest.as_deref().unwrap_or("");
    let manifest_ok = theirs_m == ours_m;
    if !manifest_ok {
        detail.push_str(&format!("  manifest:\n{}\n", first_difference(theirs_m, ours_m)));
    }
    (templates_ok, manifest_ok, detail)
}

fn oracle(cases: &[Case], name: &str, namespace: &str) -> Result<BTreeMap<String, serde_json::Value>> {
    let input: Vec<serde_json::Value> = cases
        .iter()
        .map(|c| serde_json::json!({"key": c.key, "chart": c.chart, "values": c.values, "name": name, "namespace": namespace}))
        .collect();
    Ok(serde_json::from_value(crate::oracle::run_json("oracle-charts", include_str!("oracle_charts.py"), &serde_json::json!(input))?)?)
}
