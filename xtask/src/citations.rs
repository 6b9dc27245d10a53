//! `cargo xtask citations [--show]`: every citation in the rule packs and `rules/compat.yaml`
//! checked against the cited repository at its tag. A citation into a repository the Go module
//! proxy serves (Helm, Kubernetes through `k8s.io/kubernetes` and its staging modules, Trainer,
//! Kueue, JobSet, LWS, scheduler-plugins, Volcano, Flux's helm-controller, Argo CD, …) is mapped to
//! that module at that version, downloaded into the Go module cache (`go mod download -json`, so
//! a rerun reads the cache and needs no network) and its cited lines must contain the citation's
//! `quote` (whitespace runs compared as one space). Prints `N of M citations verified`, then each
//! citation it cannot check and why (a docs site, an issue, a branch, a version the proxy does not
//! serve); a missing file, a line past its end, a missing or absent quote fails, and so does a
//! quote that is only a name (`trainer_audit::audit::quotes::only_a_name`). A claim of absence
//! (`absent:`, keyed like `quotes:`) is checked the other way round: the cited lines, file, or
//! every file under a cited directory (a chart at its tag) must not contain its text, in any
//! letter case. `--show` prints the cited lines of every citation instead (to write or review
//! quotes).

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::{Command, Stdio};

use anyhow::{bail, Context, Result};
use trainer_audit::audit::{compat, quotes, rules};

/// One citation as found in a source text.
#[derive(Debug, Clone, PartialEq)]
enum Cited {
    /// A file in a repository at a ref: `key` is how a `quotes` map names it.
    File { repo: String, reference: String, path: String, lines: Option<(usize, usize)>, key: String, url: Option<String> },
    /// Something no module can check, and why.
    Other { text: String, reason: String },
}

/// A source text with its quotes and where it is.
struct Source {
    origin: String,
    text: String,
    quotes: BTreeMap<String, String>,
    /// Texts a cited file (or directory) must not contain: claims of absence.
    absent: quotes::Absent,
    /// A quote every file citation of this source must contain when `quotes` has none for it.
    implied: Option<String>,
}

/// Text with parenthesised asides removed (they hold words, not citations).
fn without_asides(text: &str) -> String {
    let mut out = String::new();
    let mut depth = 0usize;
    for c in text.chars() {
        match c {
            '(' => depth += 1,
            ')' if depth > 0 => depth -= 1,
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out
}

fn lines_of(fragment: &str) -> Option<(usize, usize)> {
    let rest = fragment.strip_prefix('L')?;
    let (a, b) = match rest.split_once("-L") {
        Some((a, b)) => (a.parse().ok()?, b.parse().ok()?),
        None => {
            let a = rest.parse().ok()?;
            (a, a)
        }
    };
    Some((a, b))
}

/// The citations in a source text.
fn citations(text: &str) -> Vec<Cited> {
    let mut out = Vec::new();
    let mut context: Option<(String, String)> = None;
    let cleaned = without_asides(text);
    for raw in cleaned.split(|c: char| c.is_whitespace() || c == ';' || c == ',') {
        let token = raw.trim_matches(|c: char| matches!(c, '.' | ':' | '`' | '"' | '\'' | '*'));
        if token.is_empty() {
            continue;
        }
        if let Some(rest) = token.strip_prefix("https://github.com/") {
            let mut parts: Vec<String> = rest.splitn(5, '/').map(str::to_string).collect();
            // A tag with a slash (`api/v0.21.1`, a nested module's tag) spans two segments.
            if parts.len() == 5 && !is_version(&parts[3]) && parts[4].split('/').next().is_some_and(is_version) {
                let (tag, path) = parts[4].split_once('/').map(|(a, b)| (a.to_string(), b.to_string())).unwrap_or_default();
                parts[3] = format!("{}/{tag}", parts[3]);
                parts[4] = path;
            }
            let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
            match parts[..] {
                [owner, repo, "blob" | "tree", reference, path] => {
                    let (path, fragment) = path.split_once('#').unwrap_or((path, ""));
                    let repo = format!("{owner}/{repo}");
                    context = Some((repo.clone(), reference.to_string()));
                    let key = token.split_once(&format!("/{reference}/")).map(|(_, k)| k).unwrap_or(path).to_string();
                    out.push(Cited::File {
                        repo,
                        reference: reference.to_string(),
                        path: path.to_string(),
                        lines: lines_of(fragment),
                        key,
                        url: Some(token.to_string()),
                    });
                }
                _ => out.push(Cited::Other { text: token.into(), reason: "a GitHub page that is not a file at a ref".into() }),
            }
        } else if token.starts_with("http://") || token.starts_with("https://") {
            out.push(Cited::Other {
                text: token.into(),
                reason: "a documentation site, not a repository the Go module proxy serves".into(),
            });
        } else if let Some((repo, reference)) = token.split_once('@').filter(|(r, _)| r.matches('/').count() == 1) {
            context = Some((repo.to_string(), reference.to_string()));
        } else if token.contains('#') && token.split('#').nth(1).is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())) {
            out.push(Cited::Other { text: token.into(), reason: "an issue or pull request, not a file at a tag".into() });
        } else if is_path(token) {
            let (path, fragment) = token.split_once('#').unwrap_or((token, ""));
            match &context {
                Some((repo, reference)) => out.push(Cited::File {
                    repo: repo.clone(),
                    reference: reference.clone(),
                    path: path.to_string(),
                    lines: lines_of(fragment),
                    key: token.to_string(),
                    url: None,
                }),
                None => out.push(Cited::Other { text: token.into(), reason: "a path with no repository@tag before it".into() }),
            }
        }
    }
    out
}

/// `v1.2.3`-like.
fn is_version(text: &str) -> bool {
    text.strip_prefix('v').is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
}

/// A token that names a file: a path ending in a file name with an extension, maybe with lines.
fn is_path(token: &str) -> bool {
    let path = token.split('#').next().unwrap_or(token);
    let name = path.rsplit('/').next().unwrap_or(path);
    let ok_chars = path.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '.' | '_' | '-'));
    ok_chars
        && name
            .rsplit_once('.')
            .is_some_and(|(stem, ext)| !stem.is_empty() && (1..=5).contains(&ext.len()) && ext.chars().all(|c| c.is_ascii_alphabetic()))
}

/// The Go module, version and path inside it for a file at a ref, or why there is none.
fn module_for(repo: &str, reference: &str, path: &str) -> Result<(String, String, String), String> {
    // Nested modules: a tag `api/vX` of kustomize's api module; helm-controller's api/ directory.
    if let ("kubernetes-sigs/kustomize", Some(version), Some(inner)) = (repo, reference.strip_prefix("api/"), path.strip_prefix("api/")) {
        return Ok(("sigs.k8s.io/kustomize/api".into(), version.into(), inner.into()));
    }
    if let ("fluxcd/helm-controller", Some(inner)) = (repo, path.strip_prefix("api/")) {
        return Ok(("github.com/fluxcd/helm-controller/api".into(), reference.into(), inner.into()));
    }
    if repo == "golang/go" {
        return Err("the Go standard library, which the module proxy does not serve".into());
    }
    let tag = reference.strip_prefix('v').filter(|r| r.starts_with(|c: char| c.is_ascii_digit()));
    let Some(numbers) = tag else {
        return Err(format!("{reference} is not a version tag (a branch or another ref): nothing fixes its content"));
    };
    let major = numbers.split('.').next().unwrap_or("0");
    let suffix = |m: &str| if m == "0" || m == "1" { String::new() } else { format!("/v{m}") };
    let plain = |module: &str| Ok((module.to_string(), reference.to_string(), path.to_string()));
    match repo {
        "helm/helm" => plain(&format!("helm.sh/helm/v{major}")),
        "kubernetes/kubernetes" => match path.strip_prefix("staging/src/k8s.io/") {
            Some(rest) => {
                let (module, inner) = rest.split_once('/').ok_or("a staging directory, not a file")?;
                let minor_patch = numbers.split_once('.').map(|(_, mp)| mp).unwrap_or(numbers);
                Ok((format!("k8s.io/{module}"), format!("v0.{minor_patch}"), inner.to_string()))
            }
            None => plain("k8s.io/kubernetes"),
        },
        "kubeflow/trainer" => plain(&format!("github.com/kubeflow/trainer{}", suffix(major))),
        "kubernetes-sigs/kueue" => plain("sigs.k8s.io/kueue"),
        "kubernetes-sigs/jobset" => plain("sigs.k8s.io/jobset"),
        "kubernetes-sigs/lws" => plain("sigs.k8s.io/lws"),
        "kubernetes-sigs/scheduler-plugins" => plain("sigs.k8s.io/scheduler-plugins"),
        "kubernetes-sigs/structured-merge-diff" => plain(&format!("sigs.k8s.io/structured-merge-diff{}", suffix(major))),
        "kubernetes-sigs/controller-runtime" => plain("sigs.k8s.io/controller-runtime"),
        "kubernetes-sigs/yaml" => plain("sigs.k8s.io/yaml"),
        "volcano-sh/volcano" => plain("volcano.sh/volcano"),
        "volcano-sh/apis" => plain("volcano.sh/apis"),
        "fluxcd/helm-controller" => plain("github.com/fluxcd/helm-controller"),
        "argoproj/argo-cd" => plain(&format!("github.com/argoproj/argo-cd{}", suffix(major))),
        "open-policy-agent/cert-controller" => plain("github.com/open-policy-agent/cert-controller"),
        "yaml/go-yaml" => plain(&format!("go.yaml.in/yaml{}", suffix(major))),
        other => Err(format!("{other}: no Go module known for this repository")),
    }
}

fn gather() -> Result<Vec<Source>> {
    let mut out = Vec::new();
    for (name, text) in rules::EMBEDDED {
        let parsed = rules::parse_rules(name, text).map_err(|e| anyhow::anyhow!("{e}"))?;
        for r in parsed {
            let at = |what: &str| format!("{} {} {what}", r.origin, r.id);
            out.push(Source {
                origin: at("source"),
                text: r.source.clone(),
                quotes: r.quotes.clone(),
                absent: r.absent.clone(),
                implied: None,
            });
            for (variant, v) in &r.variants {
                if let Some(s) = &v.source {
                    out.push(Source {
                        origin: at(&format!("variant {variant}")),
                        text: s.clone(),
                        quotes: v.quotes.clone(),
                        absent: v.absent.clone(),
                        implied: None,
                    });
                }
            }
            for (i, e) in r.expect.iter().enumerate() {
                out.push(Source {
                    origin: at(&format!("expect[{i}]")),
                    text: e.source.clone(),
                    quotes: e.quotes.clone(),
                    absent: e.absent.clone(),
                    implied: None,
                });
            }
        }
    }
    let c = compat::embedded().map_err(|e| anyhow::anyhow!("{e}"))?;
    let file = compat::FILE;
    let mut add = |table: &str, i: usize, text: &str, quotes: &BTreeMap<String, String>, absent: &quotes::Absent| {
        out.push(Source {
            origin: format!("{file} {table}[{i}]"),
            text: text.to_string(),
            quotes: quotes.clone(),
            absent: absent.clone(),
            implied: None,
        });
    };
    c.trainer.iter().enumerate().for_each(|(i, r)| add("trainer", i, &r.source, &r.quotes, &r.absent));
    c.jobset_features.iter().enumerate().for_each(|(i, r)| add("jobset_features", i, &r.source, &r.quotes, &r.absent));
    c.kueue.iter().enumerate().for_each(|(i, r)| add("kueue", i, &r.source, &r.quotes, &r.absent));
    c.helm.iter().enumerate().for_each(|(i, r)| add("helm", i, &r.source, &r.quotes, &r.absent));
    c.kubernetes_tested.iter().enumerate().for_each(|(i, r)| add("kubernetes_tested", i, &r.source, &r.quotes, &Default::default()));
    for r in &c.removed_apis {
        out.push(Source {
            origin: format!("{} {} {}", compat::KUBE_APIS_FILE, r.api, r.kind),
            text: r.source.clone(),
            quotes: r.quotes.clone(),
            absent: Default::default(),
            implied: None,
        });
    }
    for b in &c.kueue_builds {
        out.push(Source {
            origin: format!("{} {}", compat::KUEUE_BUILDS_FILE, b.kueue),
            text: b.source.clone(),
            quotes: b.quotes.clone(),
            absent: quotes::Absent::new(),
            implied: Some(format!("github.com/kubeflow/trainer/v2 {}", b.trainer)),
        });
    }
    Ok(out)
}

/// Whether a download error means the proxy does not serve that version (rather than a broken
/// network, which must fail the run).
fn not_served(error: &str) -> bool {
    ["not available", "404", "410", "unknown revision", "invalid version", "no matching versions"].iter().any(|m| error.contains(m))
}

/// `go mod download -json` of every module@version at once: the directory of each, or the error.
fn download(wanted: &BTreeSet<(String, String)>) -> Result<BTreeMap<(String, String), Result<PathBuf, String>>> {
    let mut out = BTreeMap::new();
    // A module already extracted in the cache is read from there without asking Go (which would
    // re-verify every zip): a warm rerun costs milliseconds per module.
    let cache =
        Command::new("go").args(["env", "GOMODCACHE"]).output().ok().map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
    let mut missing = Vec::new();
    for (module, version) in wanted {
        let dir = cache.as_ref().map(|c| c.join(format!("{}@{version}", escape_module(module))));
        match dir.filter(|d| d.join("go.mod").is_file() || d.join("LICENSE").is_file()) {
            Some(dir) => {
                out.insert((module.clone(), version.clone()), Ok(dir));
            }
            None => missing.push(format!("{module}@{version}")),
        }
    }
    if missing.is_empty() {
        return Ok(out);
    }
    let output = Command::new("go")
        .args(["mod", "download", "-json"])
        .args(&missing)
        .current_dir(std::env::temp_dir())
        .env("GOFLAGS", "-mod=mod")
        // Some cited modules need a newer Go than the machine's (k8s.io/api v0.38 needs 1.27): the
        // go command fetches that toolchain through the module proxy, as `cargo xtask kube-apis` does.
        .env("GOTOOLCHAIN", format!("{}+auto", crate::kube_apis::TOOLCHAIN))
        .stdin(Stdio::null())
        .output()
        .context("running go mod download (is Go installed?)")?;
    for item in serde_json::Deserializer::from_slice(&output.stdout).into_iter::<serde_json::Value>() {
        let item = item.context("reading go mod download -json output")?;
        let key = (item["Path"].as_str().unwrap_or("").to_string(), item["Version"].as_str().unwrap_or("").to_string());
        let result = match (item["Dir"].as_str(), item["Error"].as_str()) {
            (Some(dir), None) => Ok(PathBuf::from(dir)),
            (_, Some(e)) => Err(e.lines().map(str::trim).rfind(|l| !l.is_empty()).unwrap_or(e).to_string()),
            _ => Err("go mod download printed neither Dir nor Error".to_string()),
        };
        out.insert(key, result);
    }
    for key in wanted {
        out.entry(key.clone()).or_insert_with(|| Err(String::from_utf8_lossy(&output.stderr).trim().to_string()));
    }
    Ok(out)
}

/// A module path as the module cache spells it (upper-case letters as `!` and the lower-case one).
fn escape_module(module: &str) -> String {
    module.chars().flat_map(|c| if c.is_ascii_uppercase() { vec!['!', c.to_ascii_lowercase()] } else { vec![c] }).collect()
}

fn squash(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// One file citation to check: where it is, its module and path there, and what its lines must
/// (`quote`) and must not (`absent`) contain.
struct Check {
    origin: String,
    cited: String,
    module: String,
    version: String,
    inner: String,
    lines: Option<(usize, usize)>,
    quote: Option<String>,
    absent: Option<Vec<String>>,
}

/// The files under `dir` whose relative path or content holds `text` in any letter case
/// (whitespace runs compared as one space). An empty directory proves nothing, so it is an error. The Go module zip holds
/// what the tag holds except nested modules and `vendor/`, which no citation here names.
fn holders(dir: &std::path::Path, text: &str) -> Result<Vec<String>> {
    let wanted = squash(text).to_lowercase();
    let mut found = Vec::new();
    let mut files = 0usize;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d)? {
            let path = entry?.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            files += 1;
            let relative = path.strip_prefix(dir).unwrap_or(&path).display().to_string();
            let content = std::fs::read(&path).map(|b| String::from_utf8_lossy(&b).into_owned()).unwrap_or_default();
            if relative.to_lowercase().contains(&wanted) || squash(&content).to_lowercase().contains(&wanted) {
                found.push(relative);
            }
        }
    }
    if files == 0 {
        bail!("the directory holds no file: an absence there proves nothing");
    }
    found.sort();
    Ok(found)
}

/// The texts of a claim of absence that `cited` holds after all, in any letter case
/// (`schedulerName` absent is not shown by `SchedulerName` absent) and with whitespace runs
/// compared as one space.
fn held_in<'a>(cited: &str, texts: &'a [String]) -> Vec<&'a String> {
    let lower = squash(cited).to_lowercase();
    texts.iter().filter(|a| lower.contains(&squash(a).to_lowercase())).collect()
}

/// `cargo xtask citations [--show]`.
pub fn run(args: &[String]) -> Result<()> {
    let show = match args {
        [] => false,
        [flag] if flag == "--show" => true,
        other => bail!("cargo xtask citations: unexpected arguments {other:?} (only --show)"),
    };
    let started = std::time::Instant::now();
    let sources = gather()?;
    let mut problems: Vec<String> = Vec::new();
    // Every citation with where it is, its module (or why none) and its quote.
    let mut checks = Vec::new();
    let mut unchecked: Vec<String> = Vec::new();
    let mut wanted = BTreeSet::new();
    for s in &sources {
        let cited = citations(&s.text);
        for (what, key) in s.quotes.keys().map(|k| ("quote", k)).chain(s.absent.keys().map(|k| ("absent", k))) {
            let named =
                cited.iter().filter(|c| matches!(c, Cited::File { key: k, url, .. } if k == key || url.as_deref() == Some(key))).count();
            if named != 1 {
                problems.push(format!("{}: {what} key {key:?} names {named} file citations (exactly one expected)", s.origin));
            }
        }
        for c in cited {
            match c {
                Cited::Other { text, reason } => unchecked.push(format!("{}: {text}: {reason}", s.origin)),
                Cited::File { repo, reference, path, lines, key, url } => {
                    let absent: Option<Vec<String>> = s
                        .absent
                        .get(&key)
                        .or_else(|| url.as_ref().and_then(|u| s.absent.get(u)))
                        .map(|t| t.iter().map(String::from).collect());
                    // A claim of absence alone needs no quote; without either, the implied one.
                    let quote = s.quotes.get(&key).or_else(|| url.as_ref().and_then(|u| s.quotes.get(u))).cloned().or_else(|| {
                        if absent.is_some() {
                            None
                        } else {
                            s.implied.clone()
                        }
                    });
                    match module_for(&repo, &reference, &path) {
                        Ok((module, version, inner)) => {
                            wanted.insert((module.clone(), version.clone()));
                            checks.push(Check {
                                origin: s.origin.clone(),
                                cited: format!("{repo}@{reference} {key}"),
                                module,
                                version,
                                inner,
                                lines,
                                quote,
                                absent,
                            });
                        }
                        Err(reason) => unchecked.push(format!("{}: {repo}@{reference} {key}: {reason}", s.origin)),
                    }
                }
            }
        }
    }
    let dirs = download(&wanted)?;
    let (mut verified, mut moved, mut absences) = (0usize, 0usize, 0usize);
    for check in &checks {
        let Check { origin, cited, module, version, inner, lines, quote, absent } = check;
        let dir = match &dirs[&(module.clone(), version.clone())] {
            Ok(dir) => dir,
            Err(e) if not_served(e) => {
                unchecked.push(format!("{origin}: {cited}: the Go module proxy does not serve {module}@{version} ({e})"));
                moved += 1;
                continue;
            }
            Err(e) => {
                problems.push(format!("{origin}: {cited}: downloading {module}@{version}: {e}"));
                continue;
            }
        };
        let file = dir.join(inner);
        if file.is_dir() {
            // A directory citation (`tree/`): its quote names an entry in it; a claim of absence
            // holds for every file under it, names and contents.
            let entries: Vec<String> =
                std::fs::read_dir(&file)?.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect();
            let mut ok = true;
            match quote {
                Some(q) if entries.iter().any(|e| e == q) => {}
                Some(q) => {
                    problems.push(format!("{origin}: {cited}: the directory has no entry {q:?}"));
                    ok = false;
                }
                None if absent.is_some() => {}
                None => {
                    problems.push(format!("{origin}: {cited}: no quote (for a directory: the name of a file in it)"));
                    ok = false;
                }
            }
            if let Some(texts) = absent {
                let mut held = false;
                for a in texts {
                    match holders(&file, a) {
                        Ok(found) if found.is_empty() => {}
                        Ok(found) => {
                            problems.push(format!("{origin}: {cited}: claimed absent, but {a:?} is in {}", found.join(", ")));
                            held = true;
                        }
                        Err(e) => {
                            problems.push(format!("{origin}: {cited}: {e}"));
                            held = true;
                        }
                    }
                }
                if held {
                    ok = false;
                } else {
                    absences += 1;
                }
            }
            verified += usize::from(ok);
            continue;
        }
        let top = inner.split('/').next().unwrap_or("");
        if !file.exists() && !top.is_empty() && !dir.join(top).exists() && dir.join("go.mod").exists() {
            unchecked
                .push(format!("{origin}: {cited}: {top}/ is not in {module}@{version} (a nested module or a directory Go leaves out)"));
            moved += 1;
            continue;
        }
        let text = match std::fs::read_to_string(&file) {
            Ok(t) => t,
            Err(e) => {
                problems.push(format!("{origin}: {cited}: {module}@{version} has no file {inner} ({e})"));
                continue;
            }
        };
        let all: Vec<&str> = text.lines().collect();
        let cited_text = match lines {
            Some((a, b)) if *a >= 1 && a <= b && *b <= all.len() => all[a - 1..*b].join("\n"),
            Some((a, b)) => {
                problems.push(format!("{origin}: {cited}: lines {a}-{b} are not in {inner}, which has {} lines", all.len()));
                continue;
            }
            None => text.clone(),
        };
        if show {
            println!("== {origin}: {cited}");
            for l in cited_text.lines().take(400) {
                println!("   | {l}");
            }
        }
        let mut ok = true;
        match quote {
            Some(q) if !squash(&cited_text).contains(&squash(q)) => {
                problems.push(format!("{origin}: {cited}: the cited lines do not contain the quote {q:?}"));
                ok = false;
            }
            Some(q) => {
                if let Some(why) = quotes::only_a_name(q) {
                    problems
                        .push(format!("{origin}: {cited}: the quote {q:?} is only a name ({why}): quote the line that supports the claim"));
                    ok = false;
                }
            }
            None if absent.is_some() => {}
            None => {
                problems.push(format!(
                    "{origin}: {cited}: no quote (add `quotes: {{{}: …}}` with a short text the lines contain)",
                    cited.split(' ').nth(1).unwrap_or("")
                ));
                ok = false;
            }
        }
        if let Some(texts) = absent {
            let held = held_in(&cited_text, texts);
            if held.is_empty() {
                absences += 1;
            } else {
                problems.push(format!("{origin}: {cited}: claimed absent, but the cited lines contain {held:?}"));
                ok = false;
            }
        }
        verified += usize::from(ok);
    }
    let total = checks.len() + unchecked.len() - moved;
    println!("{verified} of {total} citations verified ({absences} of them claims of absence) ({:.1} s)", started.elapsed().as_secs_f64());
    if !unchecked.is_empty() {
        println!("not checkable ({}):", unchecked.len());
        for u in &unchecked {
            println!("  {u}");
        }
    }
    if !problems.is_empty() {
        eprintln!("failed ({}):", problems.len());
        for p in &problems {
            eprintln!("  {p}");
        }
        bail!("{} citations failed", problems.len());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claim_of_absence_fails_on_any_case_or_spacing_of_its_text() {
        let secret = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: x\n";
        let texts = |t: &[&str]| t.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(held_in(secret, &texts(&["tls.crt", "stringData"])).is_empty());
        // `metadata:` holds `data:`: the checker says so rather than proving a wrong absence.
        assert_eq!(held_in(secret, &texts(&["data:"])), [&"data:".to_string()]);
        assert_eq!(held_in("spec:\n  SchedulerName: x", &texts(&["schedulerName"])).len(), 1);
        assert_eq!(held_in("a\n   b", &texts(&["a b"])).len(), 1);
    }

    #[test]
    fn a_directory_holds_a_text_in_a_file_name_or_content_and_an_empty_one_proves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("templates/crd")).unwrap();
        std::fs::write(dir.path().join("Chart.yaml"), "apiVersion: v2\nname: c\n").unwrap();
        std::fs::write(dir.path().join("templates/crd/optimizationjobs.yaml"), "kind: CustomResourceDefinition\n").unwrap();
        assert!(holders(dir.path(), "kubeVersion").unwrap().is_empty());
        assert_eq!(holders(dir.path(), "OptimizationJobs").unwrap(), ["templates/crd/optimizationjobs.yaml"]);
        assert_eq!(holders(dir.path(), "kind:  customresourcedefinition").unwrap(), ["templates/crd/optimizationjobs.yaml"]);
        let empty = tempfile::tempdir().unwrap();
        assert!(holders(empty.path(), "anything").is_err());
    }

    #[test]
    fn citations_in_asides_are_words_and_urls_are_keys() {
        let cited = citations(
            "https://github.com/kubeflow/trainer/tree/v2.3.0/charts/kubeflow-trainer (no kubeVersion: absent, https://github.com/helm/helm/blob/v4.2.3/x.go); helm/helm@v4.2.3 pkg/action/upgrade.go",
        );
        let keys: Vec<String> = cited
            .iter()
            .filter_map(|c| match c {
                Cited::File { key, .. } => Some(key.clone()),
                Cited::Other { .. } => None,
            })
            .collect();
        assert_eq!(keys, ["charts/kubeflow-trainer", "pkg/action/upgrade.go"]);
    }
}
