//! What each Trainer version needs from its neighbours, as data: `rules/compat.yaml` (embedded),
//! read once, validated when the rules load (an unknown key, a bad version or range, overlapping
//! rows or a row without a source fail naming the file and line), and looked up by the check
//! kinds that would otherwise hard-code versions (the Kubernetes minimum, the JobSet and LWS a
//! chart bundles, JobSet features, Kueue's TrainJob API, Helm flag minimums). `explain` prints
//! the rows a rule rests on through [`Compat::rows`].

use std::sync::LazyLock;

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use crate::version::{parse_lenient, Constraint};

pub const FILE: &str = "rules/compat.yaml";
const TEXT: &str = include_str!("../../rules/compat.yaml");

#[derive(Debug, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct CompatError {
    pub file: String,
    pub line: u64,
    pub message: String,
}

/// A bundled subchart: its version and the API version the controller reads.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Bundle {
    pub bundled: String,
    pub api: String,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TrainerRow {
    pub versions: Constraint,
    /// `MAJOR.MINOR`.
    pub kubernetes: String,
    pub jobset: Bundle,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lws: Option<Bundle>,
    pub source: String,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct JobSetFeature {
    pub name: String,
    pub since: String,
    /// Where a runtime uses it, under the runtime's `spec`.
    pub runtime_path: String,
    /// The values at `runtime_path` that use it (any value when empty).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
    /// Where the JobSet CRD declares it (with `values` in the enum there, when given).
    pub crd_path: String,
    pub source: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Evidence {
    /// An issue with the maintainers' confirmation.
    Reported,
    /// Read from the code; no report seen.
    Derived,
    /// A release note of a change in no tag yet.
    Announced,
}

impl Evidence {
    pub fn as_str(self) -> &'static str {
        match self {
            Evidence::Reported => "reported",
            Evidence::Derived => "derived",
            Evidence::Announced => "announced",
        }
    }
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct KueueRow {
    pub kueue: Constraint,
    pub built_against: String,
    /// The TrainJob field Kueue writes (a path in the TrainJob CRD schema).
    pub writes: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub works: Option<Constraint>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub breaks: Option<Constraint>,
    pub evidence: Evidence,
    pub effect: String,
    pub source: String,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct HelmFlag {
    pub flag: String,
    pub min: String,
    pub commands: Vec<String>,
    pub source: String,
}

/// One table of the file, as kinds name the tables they read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Table {
    Trainer,
    JobSetFeatures,
    Kueue,
    Helm,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    trainer: Vec<serde_saphyr::Spanned<TrainerRow>>,
    jobset_features: Vec<serde_saphyr::Spanned<JobSetFeature>>,
    kueue: Vec<serde_saphyr::Spanned<KueueRow>>,
    helm: Vec<serde_saphyr::Spanned<HelmFlag>>,
}

/// The tables, validated.
#[derive(Debug, Clone, Default)]
pub struct Compat {
    pub trainer: Vec<TrainerRow>,
    pub jobset_features: Vec<JobSetFeature>,
    pub kueue: Vec<KueueRow>,
    pub helm: Vec<HelmFlag>,
}

static EMBEDDED: LazyLock<Result<Compat, String>> = LazyLock::new(|| parse(FILE, TEXT).map_err(|e| e.to_string()));

/// The embedded tables, or why they are invalid (reported when the rules load).
pub fn embedded() -> Result<&'static Compat, String> {
    EMBEDDED.as_ref().map_err(Clone::clone)
}

/// The embedded tables for the kinds; empty when invalid (loading the rules has failed then, so
/// no kind runs).
pub fn get() -> &'static Compat {
    static EMPTY: LazyLock<Compat> = LazyLock::new(Compat::default);
    EMBEDDED.as_ref().unwrap_or(&EMPTY)
}

fn version(text: &str) -> Option<semver::Version> {
    parse_lenient(text.trim_start_matches('v'))
}

/// Versions probed for overlapping rows: every X.Y.0 and X.Y.0-0 a table could name.
fn probes() -> impl Iterator<Item = semver::Version> {
    (0..4u64).flat_map(|major| {
        (0..=40u64).flat_map(move |minor| {
            let release = semver::Version::new(major, minor, 0);
            let mut pre = release.clone();
            pre.pre = semver::Prerelease::new("0").unwrap_or_default();
            [release, pre]
        })
    })
}

/// Reads and validates compat text (`name` is how errors name the file).
pub fn parse(name: &str, text: &str) -> Result<Compat, CompatError> {
    let at = |line: u64, message: String| CompatError { file: name.to_string(), line, message };
    let raw: Raw = serde_saphyr::from_str(text).map_err(|e| {
        let message = e.to_string();
        let line = message
            .split("line ")
            .nth(1)
            .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(1);
        at(line, message.lines().next().unwrap_or("").to_string())
    })?;
    let line = |s: &serde_saphyr::Location| s.line().max(1);
    for row in &raw.trainer {
        let (r, l) = (&row.value, line(&row.referenced));
        require_source(&r.source).map_err(|m| at(l, m))?;
        let minor_ok = r.kubernetes.split_once('.').is_some_and(|(a, b)| a == "1" && b.parse::<u64>().is_ok());
        if !minor_ok {
            return Err(at(l, format!("kubernetes {:?} is not a Kubernetes version like 1.31", r.kubernetes)));
        }
        for b in std::iter::once(&r.jobset).chain(r.lws.as_ref()) {
            if version(&b.bundled).is_none() || b.api.is_empty() {
                return Err(at(l, format!("bundled {:?} must be a version and api a version name like v1alpha2", b.bundled)));
            }
        }
    }
    for row in &raw.jobset_features {
        let (f, l) = (&row.value, line(&row.referenced));
        require_source(&f.source).map_err(|m| at(l, m))?;
        if version(&f.since).is_none() {
            return Err(at(l, format!("since {:?} is not a version", f.since)));
        }
        for p in [&f.runtime_path, &f.crd_path] {
            Path::parse(p).map_err(|m| at(l, m))?;
        }
    }
    for row in &raw.kueue {
        let (k, l) = (&row.value, line(&row.referenced));
        require_source(&k.source).map_err(|m| at(l, m))?;
        if version(&k.built_against).is_none() {
            return Err(at(l, format!("built_against {:?} is not a version", k.built_against)));
        }
        Path::parse(&k.writes).map_err(|m| at(l, m))?;
        if k.works.is_none() && k.breaks.is_none() {
            return Err(at(l, "a Kueue row says what works or what breaks (works:, breaks:)".into()));
        }
    }
    for row in &raw.helm {
        let (h, l) = (&row.value, line(&row.referenced));
        require_source(&h.source).map_err(|m| at(l, m))?;
        if !h.flag.starts_with("--") || version(&h.min).is_none() {
            return Err(at(l, format!("flag {:?} must start with -- and min {:?} be a version", h.flag, h.min)));
        }
    }
    overlaps(&raw.trainer, |r| &r.versions, "Trainer").map_err(|(l, m)| at(l, m))?;
    overlaps(&raw.kueue, |r| &r.kueue, "Kueue").map_err(|(l, m)| at(l, m))?;
    Ok(Compat {
        trainer: raw.trainer.into_iter().map(|s| s.value).collect(),
        jobset_features: raw.jobset_features.into_iter().map(|s| s.value).collect(),
        kueue: raw.kueue.into_iter().map(|s| s.value).collect(),
        helm: raw.helm.into_iter().map(|s| s.value).collect(),
    })
}

fn require_source(source: &str) -> Result<(), String> {
    if source.trim().is_empty() {
        Err("every row names its public source (source:)".into())
    } else {
        Ok(())
    }
}

/// Two rows of one table matching the same version make a lookup ambiguous.
fn overlaps<T>(rows: &[serde_saphyr::Spanned<T>], range: impl Fn(&T) -> &Constraint, what: &str) -> Result<(), (u64, String)> {
    for v in probes() {
        let matching: Vec<&serde_saphyr::Spanned<T>> = rows.iter().filter(|r| range(&r.value).matches(&v)).collect();
        if let [first, second, ..] = matching[..] {
            return Err((
                second.referenced.line().max(1),
                format!(
                    "{what} {v} matches this row ({}) and the one at line {} ({}): rows must not overlap",
                    range(&second.value),
                    first.referenced.line(),
                    range(&first.value)
                ),
            ));
        }
    }
    Ok(())
}

impl Compat {
    /// The row for a Trainer version.
    pub fn trainer(&self, v: &semver::Version) -> Option<&TrainerRow> {
        self.trainer.iter().find(|r| r.versions.matches(v))
    }

    /// The row for a Kueue version.
    pub fn kueue(&self, v: &semver::Version) -> Option<&KueueRow> {
        self.kueue.iter().find(|r| r.kueue.matches(v))
    }

    /// Helm flags named in `text` (a rule's words), with their minimums.
    pub fn helm_flags_in<'a>(&'a self, text: &'a str) -> impl Iterator<Item = &'a HelmFlag> + 'a {
        self.helm.iter().filter(move |h| {
            text.match_indices(h.flag.as_str())
                .any(|(i, m)| !text[i + m.len()..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '-'))
        })
    }

    /// One table as lines for people (`explain`).
    pub fn rows(&self, table: Table) -> Vec<String> {
        match table {
            Table::Trainer => self
                .trainer
                .iter()
                .map(|r| {
                    let lws = r.lws.as_ref().map(|l| format!(", LWS {} ({})", l.bundled, l.api)).unwrap_or_default();
                    format!(
                        "Trainer {}: Kubernetes >= {}, JobSet {} ({}){lws} — {}",
                        r.versions, r.kubernetes, r.jobset.bundled, r.jobset.api, r.source
                    )
                })
                .collect(),
            Table::JobSetFeatures => self
                .jobset_features
                .iter()
                .map(|f| format!("JobSet >= {}: {} (runtime spec.{}) — {}", f.since, f.name, f.runtime_path, f.source))
                .collect(),
            Table::Kueue => self
                .kueue
                .iter()
                .map(|k| {
                    let works = k.works.as_ref().map(|w| format!(", works with Trainer {w}")).unwrap_or_default();
                    let breaks = k.breaks.as_ref().map(|b| format!(", breaks Trainer {b}")).unwrap_or_default();
                    format!(
                        "Kueue {}: built against Trainer {}, writes {}{works}{breaks} ({}) — {}",
                        k.kueue,
                        k.built_against,
                        k.writes,
                        k.evidence.as_str(),
                        k.source
                    )
                })
                .collect(),
            Table::Helm => self.helm.iter().map(helm_row).collect(),
        }
    }
}

pub fn helm_row(h: &HelmFlag) -> String {
    format!("Helm >= {} for {} ({}) — {}", h.min, h.flag, h.commands.join(", "), h.source)
}

/// A dotted path into an object (`template.spec.failurePolicy.rules[].action`), `[]` stepping
/// into every item of a list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Path(Vec<(String, bool)>);

impl Path {
    pub fn parse(text: &str) -> Result<Path, String> {
        let steps: Vec<(String, bool)> = text
            .split('.')
            .map(|s| match s.strip_suffix("[]") {
                Some(name) => (name.to_string(), true),
                None => (s.to_string(), false),
            })
            .collect();
        if steps.iter().any(|(name, _)| name.is_empty() || name.contains(['[', ']'])) {
            return Err(format!("path {text:?} is not a dotted path like spec.rules[].action"));
        }
        Ok(Path(steps))
    }

    /// The values at this path (none when a step is missing).
    pub fn values<'a>(&self, root: &'a Json) -> Vec<&'a Json> {
        let mut current = vec![root];
        for (name, items) in &self.0 {
            current = current.into_iter().filter_map(|v| v.get(name)).collect();
            if *items {
                current = current.into_iter().filter_map(Json::as_array).flatten().collect();
            }
        }
        current
    }

    /// The schema node at this path in an OpenAPI v3 schema (None when the schema lacks it;
    /// `x-kubernetes-preserve-unknown-fields` on the way keeps anything).
    pub fn schema<'a>(&self, schema: &'a Json) -> Option<&'a Json> {
        let mut node = schema;
        for (name, items) in &self.0 {
            match node.pointer(&format!("/properties/{name}")) {
                Some(next) => node = next,
                None if node.get("x-kubernetes-preserve-unknown-fields").and_then(Json::as_bool) == Some(true) => return Some(node),
                None => return None,
            }
            if *items {
                node = node.get("items")?;
            }
        }
        Some(node)
    }
}

impl std::fmt::Display for Path {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let text: Vec<String> = self.0.iter().map(|(n, items)| if *items { format!("{n}[]") } else { n.clone() }).collect();
        f.write_str(&text.join("."))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_embedded_tables_load_and_answer() {
        let c = embedded().unwrap();
        let v = |s: &str| semver::Version::parse(s).unwrap();
        assert_eq!(c.trainer(&v("2.3.0")).unwrap().kubernetes, "1.31");
        assert_eq!(c.trainer(&v("2.2.0-rc.1")).unwrap().jobset.bundled, "0.11.0");
        assert!(c.trainer(&v("2.1.0")).unwrap().lws.is_none());
        assert_eq!(c.kueue(&v("0.17.3")).unwrap().writes, "spec.runtimePatches");
        assert_eq!(c.kueue(&v("0.16.9")).unwrap().writes, "spec.podTemplateOverrides");
        assert!(c.kueue(&v("0.13.0")).is_none(), "no TrainJob integration before 0.14");
        let flags: Vec<&str> = c.helm_flags_in("helm upgrade --take-ownership --server-side=true").map(|h| h.flag.as_str()).collect();
        assert_eq!(flags, ["--take-ownership", "--server-side"]);
        assert_eq!(c.helm_flags_in("--take-ownership-x").count(), 0);
        assert!(c.rows(Table::Kueue).iter().all(|r| r.contains(" — ")));
    }

    const ROW: &str =
        "  - versions: \">=2.0.0-0, <2.1.0-0\"\n    kubernetes: \"1.29\"\n    jobset: {bundled: \"0.8.2\", api: v1alpha2}\n    source: s\n";

    fn file(trainer: &str) -> String {
        format!("# c\ntrainer:\n{trainer}jobset_features: []\nkueue: []\nhelm: []\n")
    }

    #[test]
    fn bad_rows_fail_with_file_and_line() {
        assert!(parse("c.yaml", &file(ROW)).is_ok());
        let err = parse("c.yaml", &file(&ROW.replace("source: s", "source: ''"))).unwrap_err().to_string();
        assert!(err.starts_with("c.yaml:3: every row names its public source"), "{err}");
        let err = parse("c.yaml", &file(&ROW.replace("\"1.29\"", "\"129\""))).unwrap_err().to_string();
        assert!(err.starts_with("c.yaml:3: kubernetes \"129\""), "{err}");
        let overlapping = format!("{ROW}{}", ROW.replace("<2.1.0-0", "<2.2.0-0"));
        let err = parse("c.yaml", &file(&overlapping)).unwrap_err().to_string();
        assert!(err.starts_with("c.yaml:7: Trainer 2.0.0 matches this row"), "{err}");
        let unknown = parse("c.yaml", &file(&ROW.replace("    source: s\n", "    source: s\n    extra: 1\n"))).unwrap_err();
        assert!(unknown.to_string().contains("extra"), "{unknown}");
        let range = parse("c.yaml", &file(&ROW.replace(">=2.0.0-0, <2.1.0-0", "two"))).unwrap_err();
        assert!(range.to_string().contains("'two' is not a version"), "{range}");
        assert!(range.line >= 3, "{range}");
    }

    #[test]
    fn paths_walk_objects_and_schemas() {
        let p = Path::parse("template.spec.failurePolicy.rules[].action").unwrap();
        let runtime = json!({"template": {"spec": {"failurePolicy": {"rules": [{"action": "RestartJob"}, {"action": "FailJobSet"}]}}}});
        assert_eq!(p.values(&runtime), [&json!("RestartJob"), &json!("FailJobSet")]);
        assert!(p.values(&json!({"template": {}})).is_empty());
        let crd = Path::parse("spec.failurePolicy.rules[].action").unwrap();
        let schema = json!({"properties": {"spec": {"properties": {"failurePolicy": {"properties": {"rules": {"items": {"properties": {"action": {"enum": ["FailJobSet"]}}}}}}}}}});
        assert_eq!(crd.schema(&schema), Some(&json!({"enum": ["FailJobSet"]})));
        assert!(Path::parse("spec.volumeClaimPolicies").unwrap().schema(&schema).is_none());
        let open = json!({"properties": {"spec": {"x-kubernetes-preserve-unknown-fields": true}}});
        assert!(Path::parse("spec.volumeClaimPolicies").unwrap().schema(&open).is_some());
        assert!(Path::parse("a..b").is_err() && Path::parse("a[x]").is_err());
        assert_eq!(p.to_string(), "template.spec.failurePolicy.rules[].action");
    }
}
