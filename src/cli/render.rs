//! `trainer-audit render`: `helm template` output for a chart reference, with Helm's flags.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::registry_args::RegistryArgs;
use super::{runtime, CliError};
use crate::chart::Chart;
use crate::gotmpl::{Map, Value};
use crate::helm::manifest::split_manifests;
use crate::helm::objects::KubeVersion;
use crate::helm::render::{render_chart, RenderOptions, Rendered};
use crate::helm::strvals::{parse_into, parse_literal, set_path, Mode};
use crate::helm::values::{merge_maps, read_values_file};
use crate::source::cache::Cache;
use crate::source::pull::Puller;
use crate::source::ChartRef;

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

/// Values files bigger than this are refused before reading (Helm has no limit; 32 MiB is far
/// beyond any real values file and keeps a hostile one from exhausting memory).
pub const MAX_VALUES_FILE_BYTES: u64 = 32 * 1024 * 1024;

/// Helm's value flags, shared by every command that renders.
#[derive(Debug, Args, Default, Clone)]
pub struct ValuesArgs {
    /// Values file (repeatable; later files win)
    #[arg(long = "values", short = 'f', value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Set values (a.b=v,c[0]=x,d={x,y})
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Set values as strings
    #[arg(long = "set-string", value_name = "KEY=VALUE")]
    pub set_string: Vec<String>,
    /// Set values from JSON
    #[arg(long = "set-json", value_name = "KEY=JSON")]
    pub set_json: Vec<String>,
    /// Set values from files' contents
    #[arg(long = "set-file", value_name = "KEY=PATH")]
    pub set_file: Vec<String>,
    /// Set one literal string value (no splitting on commas)
    #[arg(long = "set-literal", value_name = "KEY=VALUE")]
    pub set_literal: Vec<String>,
}

impl ValuesArgs {
    /// Helm's `MergeValues`: files first, then --set-json, --set, --set-string, --set-file,
    /// --set-literal, each group in command-line order.
    pub fn merged(&self) -> Result<Map, CliError> {
        let mut base = Map::new();
        for file in &self.files {
            let size = std::fs::metadata(file).map(|m| m.len()).unwrap_or(0);
            if size > MAX_VALUES_FILE_BYTES {
                return Err(CliError::Usage(format!(
                    "values file {} is larger than {} MiB: refused (values files are configuration, not data)",
                    file.display(),
                    MAX_VALUES_FILE_BYTES / (1024 * 1024)
                )));
            }
            let text =
                std::fs::read_to_string(file).map_err(|e| CliError::Io(format!("cannot read values file {}: {e}", file.display())))?;
            let values = read_values_file(&text).map_err(|e| CliError::Usage(format!("failed to parse {}: {e}", file.display())))?;
            merge_maps(&mut base, &values);
        }
        let bad = |flag: &str, e: String| CliError::Usage(format!("failed parsing {flag} data: {e}"));
        for s in &self.set_json {
            parse_into(s, &mut base, Mode::Json).map_err(|e| bad("--set-json", e))?;
        }
        for s in &self.set {
            parse_into(s, &mut base, Mode::Typed).map_err(|e| bad("--set", e))?;
        }
        for s in &self.set_string {
            parse_into(s, &mut base, Mode::Strings).map_err(|e| bad("--set-string", e))?;
        }
        for s in &self.set_file {
            let (key, path) = s.split_once('=').ok_or_else(|| bad("--set-file", format!("key {s:?} has no value")))?;
            let content = std::fs::read_to_string(path).map_err(|e| CliError::Io(format!("cannot read --set-file {path}: {e}")))?;
            let parts: Vec<&str> = key.split('.').collect();
            set_path(&mut base, &parts, Value::string(content));
        }
        for s in &self.set_literal {
            parse_literal(s, &mut base).map_err(|e| bad("--set-literal", e))?;
        }
        Ok(base)
    }
}

/// Loads a chart from any reference (pulling oci:// through the cache).
pub fn load_chart(reference: &str, version: Option<&str>, registry: &RegistryArgs) -> Result<Chart, CliError> {
    let load_err = |e: crate::chart::LoadError| CliError::Usage(format!("cannot load chart {reference}: {e}"));
    match ChartRef::parse(reference)? {
        ChartRef::Archive(path) => Chart::load_archive_file(&path).map_err(load_err),
        ChartRef::Directory(path) => Chart::load_dir(&path).map_err(load_err),
        ChartRef::Oci(oci) => {
            let puller = Puller { client_options: registry.client_options()?, cache: Cache::from_env(), offline: false, progress: false };
            let pulled = runtime()?.block_on(puller.pull(&oci, version))?;
            Chart::from_archive_bytes(&pulled.bytes).map_err(load_err)
        }
    }
}

pub fn run(args: RenderArgs) -> Result<ExitCode, CliError> {
    let chart = load_chart(&args.chart, args.version.as_deref(), &args.registry)?;
    let kube_version = match &args.kube_version {
        Some(v) => Some(
            KubeVersion::parse(v).ok_or_else(|| CliError::Usage(format!("invalid kube version {v:?}: expected MAJOR.MINOR[.PATCH]")))?,
        ),
        None => None,
    };
    let mut options =
        RenderOptions { values: args.values.merged()?, kube_version, api_versions: args.api_versions.clone(), ..RenderOptions::default() };
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
