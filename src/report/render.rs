//! `helm template`'s output choices over a rendered chart: `--show-only` (the documents of the
//! templates a pattern names) and `--output-dir` (each template's documents in a file under a
//! directory, as Helm writes them).

use std::io::Write;
use std::path::{Path, PathBuf};

use helm_render::manifest::{source_block, split_manifests};
use helm_render::render::Rendered;

/// Which parts of a rendered chart are written.
#[derive(Debug, Clone, Copy)]
pub struct Parts {
    /// The chart's `crds/` files.
    pub crds: bool,
    pub hooks: bool,
    /// Test hooks (with `hooks`).
    pub tests: bool,
}

pub use super::document::OutputError;

/// `--show-only`: documents whose `# Source:` path (without the chart name) matches a pattern;
/// a pattern that matches none fails, as in Helm.
pub fn show_only(text: &str, patterns: &[String]) -> Result<String, OutputError> {
    let docs = split_manifests(text);
    let mut out = String::new();
    for pattern in patterns {
        let mut found = false;
        for doc in &docs {
            let Some(source) = doc.lines().next().and_then(|l| l.strip_prefix("# Source: ")) else { continue };
            let Some((_, path)) = source.split_once('/') else { continue };
            if helm_render::chart::ignore::glob_match(pattern, path) {
                found = true;
                out.push_str(&format!("---\n{doc}\n"));
            }
        }
        if !found {
            return Err(OutputError::NoTemplate(pattern.clone()));
        }
    }
    Ok(out)
}

/// `--output-dir`: each document appended to `dir/<template path>`, as `helm template` does;
/// returns the files written, in the order first written.
pub fn write_dir(rendered: &Rendered, dir: &Path, parts: Parts) -> Result<Vec<PathBuf>, OutputError> {
    let mut blocks: Vec<(String, String)> = Vec::new();
    if parts.crds {
        blocks.extend(rendered.crds.iter().map(|c| (c.path.clone(), c.content.clone())));
    }
    blocks.extend(rendered.manifests.iter().map(|m| (m.path.clone(), m.content.clone())));
    if parts.hooks {
        blocks.extend(
            rendered
                .hooks
                .iter()
                .filter(|h| parts.tests || !h.events.iter().any(|e| e == "test"))
                .map(|h| (h.path.clone(), h.content.clone())),
        );
    }
    let mut written: Vec<PathBuf> = Vec::new();
    for (path, content) in blocks {
        if path.split('/').any(|p| p == ".." || p.is_empty()) {
            return Err(OutputError::Outside { dir: dir.display().to_string(), path });
        }
        let target = dir.join(&path);
        let io = |source: std::io::Error| OutputError::Write(format!("cannot write {}: {source}", target.display()));
        std::fs::create_dir_all(target.parent().unwrap_or(dir)).map_err(io)?;
        let first = !written.contains(&target);
        let mut file = std::fs::OpenOptions::new().create(true).write(true).append(!first).truncate(first).open(&target).map_err(io)?;
        file.write_all(source_block(&path, &content).as_bytes()).map_err(io)?;
        if first {
            written.push(target);
        }
    }
    Ok(written)
}
