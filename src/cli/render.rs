//! `trainer-audit render`: `helm template` output for a chart reference, with Helm's flags.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::args::{RegistryArgs, ValuesArgs};
use super::CliError;
use crate::chart::Chart;
use crate::helm::manifest::split_manifests;
use crate::helm::objects::KubeVersion;
use crate::helm::render::{render_chart, RenderOptions, Rendered};
use crate::upgrade::store::load_reference;

#[derive(Debug, Args)]
pub struct RenderArgs {
    /// Chart: oci://host/path/name (with --version), a .tgz, or a chart directory
    #[arg(value_name = "CHART")]
    pub chart: String,
    /// Chart version or range, for oci:// references
    #[arg(long, value_name = "V|RANGE")]
    pub version: Option<String>,
    #[command(flatten)]
    pub values: ValuesArgs,
    /// Release name (helm's NAME argument)
    #[arg(long, default_value = "release-name")]
    pub release: String,
    /// Release namespace
    #[arg(long, short = 'n', default_value = "default")]
    pub namespace: String,
    /// Render as an upgrade (.Release.IsUpgrade)
    #[arg(long)]
    pub is_upgrade: bool,
    /// Kubernetes version for .Capabilities (default v1.36.0, as Helm v4.2.3)
    #[arg(long, value_name = "VERSION")]
    pub kube_version: Option<String>,
    /// Extra API versions for .Capabilities.APIVersions (repeatable, comma-separated)
    #[arg(long = "api-versions", short = 'a', value_name = "VERSION", value_delimiter = ',')]
    pub api_versions: Vec<String>,
    /// Print the chart's crds/ files first
    #[arg(long)]
    pub include_crds: bool,
    /// Leave hooks out
    #[arg(long)]
    pub no_hooks: bool,
    /// Leave test hooks out
    #[arg(long)]
    pub skip_tests: bool,
    /// Only print documents from templates matching PATTERN (repeatable)
    #[arg(long, short = 's', value_name = "PATTERN")]
    pub show_only: Vec<String>,
    /// Write each template's documents under DIR instead of printing them
    #[arg(long, value_name = "DIR")]
    pub output_dir: Option<PathBuf>,
    #[command(flatten)]
    pub registry: RegistryArgs,
}

pub fn run(args: RenderArgs) -> Result<ExitCode, CliError> {
    let chart = load_reference(&args.chart, args.version.as_deref(), &args.registry.client_options()?)?;
    let kube_version = match &args.kube_version {
        Some(v) => Some(
            KubeVersion::parse(v).ok_or_else(|| CliError::Usage(format!("invalid kube version {v:?}: expected MAJOR.MINOR[.PATCH]")))?,
        ),
        None => None,
    };
    let mut options = RenderOptions {
        values: args.values.read()?.merged().clone(),
        kube_version,
        api_versions: args.api_versions.clone(),
        ..RenderOptions::default()
    };
    options.release.name = args.release.clone();
    options.release.namespace = args.namespace.clone();
    options.release.is_upgrade = args.is_upgrade;
    let rendered = render_chart(&chart, &options).map_err(|e| CliError::Render(e.0))?;
    bench_if_asked(&chart, &options);
    for w in &rendered.warnings {
        eprintln!("{w}");
    }
    if let Some(dir) = &args.output_dir {
        return write_dir(&rendered, dir, &args);
    }
    let text = rendered.template_output(args.include_crds, args.no_hooks, args.skip_tests);
    let text = if args.show_only.is_empty() { text } else { show_only(&text, &args.show_only)? };
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes()).map_err(|e| CliError::Io(e.to_string()))?;
    Ok(ExitCode::SUCCESS)
}

/// `--show-only`: documents whose `# Source:` path (without the chart name) matches a pattern.
fn show_only(text: &str, patterns: &[String]) -> Result<String, CliError> {
    let docs = split_manifests(text);
    let mut out = String::new();
    for pattern in patterns {
        let mut found = false;
        for doc in &docs {
            let Some(source) = doc.lines().next().and_then(|l| l.strip_prefix("# Source: ")) else { continue };
            let Some((_, path)) = source.split_once('/') else { continue };
            if crate::chart::ignore::glob_match(pattern, path) {
                found = true;
                out.push_str(&format!("---\n{doc}\n"));
            }
        }
        if !found {
            return Err(CliError::Usage(format!("could not find template {pattern} in chart")));
        }
    }
    Ok(out)
}

/// `--output-dir`: each document appended to DIR/<template path>, as helm template does.
fn write_dir(rendered: &Rendered, dir: &std::path::Path, args: &RenderArgs) -> Result<ExitCode, CliError> {
    let mut blocks: Vec<(String, String)> = Vec::new();
    if args.include_crds {
        blocks.extend(rendered.crds.iter().map(|c| (c.path.clone(), c.content.clone())));
    }
    blocks.extend(rendered.manifests.iter().map(|m| (m.path.clone(), m.content.clone())));
    if !args.no_hooks {
        blocks.extend(
            rendered
                .hooks
                .iter()
                .filter(|h| !(args.skip_tests && h.events.iter().any(|e| e == "test")))
                .map(|h| (h.path.clone(), h.content.clone())),
        );
    }
    let mut written: Vec<PathBuf> = Vec::new();
    for (path, content) in blocks {
        if path.split('/').any(|p| p == ".." || p.is_empty()) {
            return Err(CliError::Usage(format!("refusing to write outside {}: {path}", dir.display())));
        }
        let target = dir.join(&path);
        let io = |e: std::io::Error| CliError::Io(format!("cannot write {}: {e}", target.display()));
        std::fs::create_dir_all(target.parent().unwrap_or(dir)).map_err(io)?;
        let first = !written.contains(&target);
        let mut file = std::fs::OpenOptions::new().create(true).write(true).append(!first).truncate(first).open(&target).map_err(io)?;
        file.write_all(crate::helm::manifest::source_block(&path, &content).as_bytes()).map_err(io)?;
        if first {
            println!("wrote {}", target.display());
            written.push(target);
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `TRAINER_AUDIT_BENCH_RUNS=N`: render N more times in this process and report medians on
/// stderr (used by `cargo xtask bench render` to measure in-process time without process start):
/// the engine step alone (what Helm's `engine.Render`, the oracle's `Chart.render`, does) and
/// the whole `helm template` content (documents split, heads parsed, sorted, hooks set aside).
fn bench_if_asked(chart: &Chart, options: &RenderOptions) {
    let Some(runs) = std::env::var("TRAINER_AUDIT_BENCH_RUNS").ok().and_then(|r| r.parse::<usize>().ok()) else { return };
    let median = |work: &dyn Fn()| {
        let mut samples: Vec<f64> = (0..runs.max(1))
            .map(|_| {
                let start = std::time::Instant::now();
                work();
                start.elapsed().as_secs_f64()
            })
            .collect();
        samples.sort_by(|a, b| a.total_cmp(b));
        samples[samples.len() / 2]
    };
    eprintln!("bench-median-seconds: {}", median(&|| drop(crate::helm::render::render_templates(chart, options))));
    eprintln!("bench-median-full-seconds: {}", median(&|| drop(render_chart(chart, options))));
}
