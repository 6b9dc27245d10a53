//! Rules as data: YAML files in `rules/` (embedded at build time) and any `--rules DIR`, each
//! rule naming a check kind (code) with typed params, a severity, where it runs (an upgrade, or
//! the chart review of `hooks`), the versions and engines it applies to, the phase of the change
//! its fix belongs to, and the words a finding carries (title, why with its source, a fix
//! template), optionally worded differently per variant the kind reports, and the text Helm, the
//! API server or a controller prints when the predicted failure happens (`expect`, quoted from the
//! format strings in their source, so rehearsals can compare it with what the real binaries
//! print). Everything is checked when the rules load: a bad file, kind, param or range fails
//! naming the file and line.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use kube_version::KubeVersion;

use super::finding::{FixLine, Phase, Severity};
use super::kinds::{kind, Check, KINDS};
use crate::engine::{Adoption, Engine};
use helm_render::version::Constraint;

/// The fix variable holding the Helm flags that reach the chart repository (` --plain-http`):
/// never written in a rule; appended wherever a command line names `{repository}`.
pub const REGISTRY_FLAGS: &str = "registry_flags";

/// Fix variables a kind or the engine fills with whole command lines, already quoted: a command
/// line `$ {var}` is replaced by them as they are. `unpack_chart` unpacks the target chart into
/// `trainer-audit-chart/<chart name>/`, from the repository or from the local chart the run used.
pub const COMMAND_VARS: &[&str] = &["commands", "unpack_chart", "rollback", "uninstall"];

/// The rule packs shipped with the tool.
pub const EMBEDDED: &[(&str, &str)] = &[
    ("rules/trainer.yaml", include_str!("../../rules/trainer.yaml")),
    ("rules/hooks.yaml", include_str!("../../rules/hooks.yaml")),
    ("rules/schema.yaml", include_str!("../../rules/schema.yaml")),
    ("rules/gitops.yaml", include_str!("../../rules/gitops.yaml")),
    ("rules/neighbours.yaml", include_str!("../../rules/neighbours.yaml")),
];

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Applies {
    /// Installed versions the rule applies to (a Helm constraint, e.g. `>=2.0.0-0, <2.3.0-0`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<Constraint>,
    /// Target versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<Constraint>,
}

/// Where a rule runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// `check`, `plan` and `runbook`: the cluster, the release and the two charts.
    #[default]
    Upgrade,
    /// `hooks`: one rendered chart under a deployment engine.
    Review,
}

/// Words (and severity) a rule gives one variant of its kind's hits.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Variant {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub severity: Option<Severity>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// A short text each cited file's lines must contain, keyed by the citation as written in
    /// `source` (`path#L1-L9`, or the whole URL where that tail is ambiguous); checked by
    /// `cargo xtask citations`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub quotes: BTreeMap<String, String>,
    /// Texts the cited files must NOT contain, keyed like `quotes`: a claim of absence ("the CRD
    /// sets no keep policy", "no Chart.yaml sets kubeVersion"). A cited directory (`tree/…`, a
    /// chart at its tag) must contain the text in none of its files' names or contents. Checked by
    /// `cargo xtask citations` like the quotes.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub absent: super::quotes::Absent,
    /// What the upgrade command needs for this variant's findings (the rule's `adopt` otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adopt: Option<Adoption>,
    /// When this variant's fix is done (the rule's `phase` otherwise): a case whose fix must come
    /// before the upgrade where the rule's others come after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<Phase>,
}

/// Who prints an expected text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Printer {
    /// The `helm` command (its `Error: …` line).
    Helm,
    /// The API server, in the response to a request (shown by whoever made it).
    KubeApiserver,
    /// An event a controller records (e.g. the Job controller's `FailedCreate`).
    Event,
    /// A controller's log or exit (the Trainer manager, Kueue).
    Controller,
}

impl Printer {
    pub fn as_str(self) -> &'static str {
        match self {
            Printer::Helm => "helm",
            Printer::KubeApiserver => "kube-apiserver",
            Printer::Event => "event",
            Printer::Controller => "controller",
        }
    }
}

/// A text the failure a rule predicts prints: a substring of the message, fixed by the format
/// string in the printer's source (cited in `source`), for the versions it holds for.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    pub by: Printer,
    pub text: String,
    /// Kubernetes versions the text holds for (all when absent), e.g. `>=1.32`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubernetes: Option<Constraint>,
    /// Helm versions the text holds for (all when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub helm: Option<Constraint>,
    /// Where the format string is (file at a tag, with lines).
    pub source: String,
    /// The format string (or a part of it) each cited file's lines must contain, keyed by the citation as written in
    /// `source` (`path#L1-L9`, or the whole URL where that tail is ambiguous); checked by
    /// `cargo xtask citations`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub quotes: BTreeMap<String, String>,
    /// Texts the cited files must NOT contain, keyed like `quotes`: a claim of absence ("the CRD
    /// sets no keep policy", "no Chart.yaml sets kubeVersion"). A cited directory (`tree/…`, a
    /// chart at its tag) must contain the text in none of its files' names or contents. Checked by
    /// `cargo xtask citations` like the quotes.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub absent: super::quotes::Absent,
}

impl Expect {
    /// Whether the text holds on a cluster of this version's minor (unknown: it may).
    pub fn holds_on(&self, kube: Option<&KubeVersion>) -> bool {
        match (&self.kubernetes, kube) {
            (Some(c), Some(k)) => c.matches(&semver::Version::new(k.major.into(), k.minor.into(), 0)),
            _ => true,
        }
    }
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// One id per concept: a concept checked both in an upgrade and in the chart review is two
    /// entries (one per scope, same kind) under one id.
    pub id: String,
    /// Retired ids this rule was known by; `explain` resolves them and says they were renamed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
    pub kind: String,
    pub severity: Severity,
    #[serde(default)]
    pub scope: Scope,
    #[serde(default)]
    pub phase: Phase,
    #[serde(default)]
    pub applies: Applies,
    /// Engines the rule applies to (all when empty).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub engines: Vec<Engine>,
    /// The kind's params as written (checked into [`Rule::check`] at load).
    #[serde(default, skip_serializing_if = "Json::is_null")]
    pub params: Json,
    pub title: String,
    pub why: String,
    pub source: String,
    /// A short text each cited file's lines must contain, keyed by the citation as written in
    /// `source` (`path#L1-L9`, or the whole URL where that tail is ambiguous); checked by
    /// `cargo xtask citations`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub quotes: BTreeMap<String, String>,
    /// Texts the cited files must NOT contain, keyed like `quotes`: a claim of absence ("the CRD
    /// sets no keep policy", "no Chart.yaml sets kubeVersion"). A cited directory (`tree/…`, a
    /// chart at its tag) must contain the text in none of its files' names or contents. Checked by
    /// `cargo xtask citations` like the quotes.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub absent: super::quotes::Absent,
    /// `{release}`, `{namespace}`, `{from}`, `{to}` and the kind's own variables are filled in.
    pub fix: String,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub variants: BTreeMap<String, Variant>,
    /// What the predicted failure prints.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expect: Vec<Expect>,
    /// What the upgrade command needs to take over the objects this rule finds (the plan's Helm
    /// command adds `--take-ownership`, and `--force-conflicts` for `force-conflicts`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adopt: Option<Adoption>,
    /// Where it was loaded from (`rules/trainer.yaml:12`).
    #[serde(skip_deserializing)]
    pub origin: String,
    /// The kind with these params.
    #[serde(skip)]
    pub check: Option<Arc<dyn Check>>,
}

#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct RuleError(pub String);

/// What a run asks the rules for: where they run, and (when known) the versions and the engine
/// of the change, and whether there is a cluster. A rule is applicable when its scope is this
/// one, its `applies` ranges hold `from` and `to`, its `engines` (all when empty) hold the
/// engine, and its kind does not read a cluster the run does not have.
#[derive(Debug, Clone, Copy)]
pub struct Applicable<'a> {
    pub scope: Scope,
    /// The hop (`from`, `to`); None: versions do not select (the chart review).
    pub versions: Option<(&'a semver::Version, &'a semver::Version)>,
    /// None: every engine.
    pub engine: Option<Engine>,
    /// False: there is no cluster (a GitOps reference reviewed alone), so kinds that read it
    /// do not run.
    pub cluster: bool,
}

impl Rule {
    /// The one test of whether a rule runs ([`RuleSet::applicable`]).
    pub fn applicable(&self, when: &Applicable) -> bool {
        let versions = when.versions.is_none_or(|(from, to)| {
            self.applies.from.as_ref().is_none_or(|c| c.matches(from)) && self.applies.to.as_ref().is_none_or(|c| c.matches(to))
        });
        let engine = when.engine.is_none_or(|e| self.engines.is_empty() || self.engines.contains(&e));
        let cluster = when.cluster || self.check.as_ref().is_some_and(|c| !c.reads_cluster());
        self.scope == when.scope && versions && engine && cluster
    }

    /// The fix with `{name}` placeholders filled from `vars` (unknown ones are left as written),
    /// line by line: a line starting `$ ` is a command, and values filled into it are
    /// shell-quoted, except the [`COMMAND_VARS`], filled with whole command lines. In a
    /// command, `{repository}` is followed by the [`REGISTRY_FLAGS`] var (the flags that reach it).
    /// A line starting `restore $ ` is a command that undoes, after the upgrade, a temporary
    /// change the commands before it make ([`FixLine::Restore`]), filled in the same way.
    pub fn fix_lines(fix: &str, vars: &BTreeMap<String, String>) -> Vec<FixLine> {
        let filled = |command: &str| {
            let mut text = command.to_string();
            for (k, v) in vars.iter().filter(|(k, _)| k.as_str() != REGISTRY_FLAGS) {
                let mut value = crate::shell::quote(v);
                // A command that names the repository must reach it as given to us
                // (`--plain-http`): seen failing as printed in the rehearsals.
                if k == "repository" {
                    value.push_str(vars.get(REGISTRY_FLAGS).map(String::as_str).unwrap_or(""));
                }
                text = text.replace(&format!("{{{k}}}"), &value);
            }
            text
        };
        let mut out = Vec::new();
        for line in fix.trim_end().lines() {
            if let Some(command) = line.strip_prefix("restore $ ") {
                out.push(FixLine::Restore(filled(command)));
                continue;
            }
            match line.strip_prefix("$ ") {
                Some(command) if COMMAND_VARS.iter().any(|v| command.trim() == format!("{{{v}}}")) => {
                    let name = command.trim().trim_start_matches('{').trim_end_matches('}');
                    let lines = vars.get(name).map(String::as_str).unwrap_or("");
                    out.extend(lines.lines().map(|l| FixLine::Command(l.to_string())));
                }
                Some(command) => out.push(FixLine::Command(filled(command))),
                None => {
                    let mut text = line.to_string();
                    for (k, v) in vars.iter().filter(|(k, _)| k.as_str() != REGISTRY_FLAGS) {
                        text = text.replace(&format!("{{{k}}}"), v);
                    }
                    // A var of several lines (a list) gives one text line each.
                    out.extend(text.lines().map(|l| FixLine::Text(l.to_string())));
                }
            }
        }
        out
    }

    /// The variant a hit selects, when the rule words it.
    pub fn variant(&self, name: Option<&str>) -> Option<&Variant> {
        name.and_then(|n| self.variants.get(n))
    }
}

fn line_of(text: &str, id: &str) -> usize {
    text.lines().position(|l| l.trim_start().trim_start_matches("- ").trim() == format!("id: {id}")).map(|i| i + 1).unwrap_or(1)
}

/// Parses and validates one rule file.
pub fn parse_rules(name: &str, text: &str) -> Result<Vec<Rule>, RuleError> {
    let mut rules: Vec<Rule> =
        serde_saphyr::from_str(text).map_err(|e| RuleError(format!("{name}: {}", e.to_string().lines().next().unwrap_or(""))))?;
    for rule in rules.iter_mut() {
        let at = format!("{name}:{}", line_of(text, &rule.id));
        let bad = |what: String| RuleError(format!("{at}: rule {}: {what}", rule.id));
        if !rule.id.starts_with("TA-") {
            return Err(bad("ids start with TA-".into()));
        }
        let Some(spec) = kind(&rule.kind) else {
            let known: Vec<&str> = KINDS.iter().map(|k| k.name).collect();
            return Err(bad(format!("unknown kind {:?} (known: {})", rule.kind, known.join(", "))));
        };
        if rule.scope == Scope::Review && !spec.reviews {
            return Err(bad(format!("kind {} reads the cluster, so it cannot run in a chart review (scope: review)", rule.kind)));
        }
        if let Some(unknown) = rule.variants.keys().find(|v| !spec.variants.contains(&v.as_str())) {
            let known = if spec.variants.is_empty() { "none".to_string() } else { spec.variants.join(", ") };
            return Err(bad(format!("kind {} has no variant {unknown:?} (its variants: {known})", rule.kind)));
        }
        let fixes = std::iter::once(&rule.fix).chain(rule.variants.values().filter_map(|v| v.fix.as_ref()));
        for fix in fixes {
            let first_command = fix.lines().position(|l| l.starts_with("$ "));
            if let Some(at) = fix.lines().position(|l| l.starts_with("restore $ ")) {
                if first_command.is_none_or(|c| c > at) {
                    return Err(bad("a `restore $ ` line undoes the command before it, and this one has none".into()));
                }
            }
        }
        if let Some(e) = rule.expect.iter().find(|e| e.text.trim().is_empty() || e.source.trim().is_empty()) {
            return Err(bad(format!("an expect entry of {} needs a text and its source", e.by.as_str())));
        }
        let sources = std::iter::once((&rule.source, &rule.quotes, &rule.absent))
            .chain(rule.variants.values().filter_map(|v| v.source.as_ref().map(|s| (s, &v.quotes, &v.absent))))
            .chain(rule.expect.iter().map(|e| (&e.source, &e.quotes, &e.absent)));
        for (source, quotes, absent) in sources {
            if let Some(key) = super::quotes::unquoted_key(source, quotes) {
                return Err(bad(format!("quote key {key:?} names no citation in its source (write the citation as it appears there)")));
            }
            if let Some(key) = super::quotes::unabsent_key(source, absent) {
                return Err(bad(format!("absent key {key:?} names no citation in its source (write the citation as it appears there)")));
            }
        }
        let check = spec.build(rule.params.clone()).map_err(|e| bad(format!("params of kind {}: {e}", rule.kind)))?;
        rule.check = Some(Arc::from(check));
        rule.origin = at;
    }
    Ok(rules)
}

/// The rule `id` names in `scope` (its first entry in any scope when it has none there).
pub fn find<'a>(rules: &'a [Rule], id: &str, scope: Scope) -> Option<&'a Rule> {
    rules.iter().find(|r| r.id == id && r.scope == scope).or_else(|| rules.iter().find(|r| r.id == id))
}

/// What an id a user typed names: the rule's entries (one per scope), and the retired id it was
/// given under, when it is an alias.
pub fn resolve<'a>(rules: &'a [Rule], id: &str) -> (Vec<&'a Rule>, Option<String>) {
    let named: Vec<&Rule> = rules.iter().filter(|r| r.id.eq_ignore_ascii_case(id)).collect();
    if !named.is_empty() {
        return (named, None);
    }
    let Some(current) = rules.iter().find(|r| r.aliases.iter().any(|a| a.eq_ignore_ascii_case(id))) else {
        return (Vec::new(), None);
    };
    (rules.iter().filter(|r| r.id == current.id).collect(), Some(id.to_ascii_uppercase()))
}

/// The rules a run audits with, loaded once per run ([`RuleSet::load`]) and shared by every
/// cluster, hop and report of it (cloning shares them).
#[derive(Debug, Clone)]
pub struct RuleSet(Arc<[Rule]>);

impl std::ops::Deref for RuleSet {
    type Target = [Rule];
    fn deref(&self) -> &[Rule] {
        &self.0
    }
}

impl From<Vec<Rule>> for RuleSet {
    fn from(rules: Vec<Rule>) -> RuleSet {
        RuleSet(rules.into())
    }
}

/// The built-in rules: the embedded packs are part of the binary and load in every build
/// (`tests::embedded_rules_load`), so a request made without a rule set (tests, the library's
/// defaults) gets them. Commands load theirs with [`RuleSet::load`], which reports a failure.
impl Default for RuleSet {
    fn default() -> RuleSet {
        RuleSet::builtin().expect("the embedded rule packs load (audit::rules::tests::embedded_rules_load)")
    }
}

impl RuleSet {
    /// The embedded rules, parsed once per process.
    pub fn builtin() -> Result<RuleSet, RuleError> {
        static BUILTIN: std::sync::OnceLock<Result<RuleSet, String>> = std::sync::OnceLock::new();
        BUILTIN.get_or_init(|| load(None).map(RuleSet::from).map_err(|e| e.0)).clone().map_err(RuleError)
    }

    /// The embedded rules plus every `*.yaml` in `extra` ([`load`]).
    pub fn load(extra: Option<&Path>) -> Result<RuleSet, RuleError> {
        match extra {
            None => RuleSet::builtin(),
            Some(_) => load(extra).map(RuleSet::from),
        }
    }

    /// The rules that run for `when` ([`Rule::applicable`]), in file order.
    pub fn applicable<'s>(&'s self, when: &'s Applicable<'s>) -> impl Iterator<Item = &'s Rule> + 's {
        self.0.iter().filter(move |r| r.applicable(when))
    }
}

/// The embedded rules plus every `*.yaml` in `extra` (sorted by file name). An id is defined at
/// most once per scope, its entries share one kind, and no alias names a live rule. Runs load a
/// [`RuleSet`] once instead.
pub fn load(extra: Option<&Path>) -> Result<Vec<Rule>, RuleError> {
    super::compat::embedded().map_err(|e| RuleError(e.to_string()))?;
    let mut rules = Vec::new();
    for (name, text) in EMBEDDED {
        rules.extend(parse_rules(name, text)?);
    }
    if let Some(dir) = extra {
        let mut files: Vec<_> = std::fs::read_dir(dir)
            .map_err(|e| RuleError(format!("cannot read rules directory {}: {e}", dir.display())))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "yml"))
            .collect();
        files.sort();
        for path in files {
            let text = std::fs::read_to_string(&path).map_err(|e| RuleError(format!("cannot read {}: {e}", path.display())))?;
            rules.extend(parse_rules(&path.display().to_string(), &text)?);
        }
    }
    check_ids(&rules)?;
    Ok(rules)
}

fn check_ids(rules: &[Rule]) -> Result<(), RuleError> {
    let mut seen: BTreeMap<(&str, bool), &Rule> = BTreeMap::new();
    for r in rules {
        if seen.insert((r.id.as_str(), r.scope == Scope::Review), r).is_some() {
            return Err(RuleError(format!("{}: rule id {} is defined twice", r.origin, r.id)));
        }
        if let Some(other) = rules.iter().find(|o| o.id == r.id && o.kind != r.kind) {
            return Err(RuleError(format!(
                "{}: rule id {} names kind {} here and {} at {}: one id is one concept",
                r.origin, r.id, r.kind, other.kind, other.origin
            )));
        }
        if let Some(alias) = r.aliases.iter().find(|a| rules.iter().any(|o| o.id == **a)) {
            return Err(RuleError(format!("{}: rule {}: alias {alias} is the id of a rule", r.origin, r.id)));
        }
        if let Some(alias) = r.aliases.iter().find(|a| rules.iter().any(|o| o.id != r.id && o.aliases.contains(a))) {
            return Err(RuleError(format!("{}: rule {}: alias {alias} is also another rule's alias", r.origin, r.id)));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str =
        "- id: TA-T-001\n  kind: finalizer\n  severity: warning\n  params: {finalizer: x/y}\n  title: t\n  why: w\n  source: s\n  fix: f\n";

    #[test]
    fn embedded_rules_load() {
        let rules = load(None).unwrap();
        assert!(rules.iter().all(|r| r.check.is_some()));
        assert!(rules.iter().any(|r| r.scope == Scope::Review));
    }

    #[test]
    fn bad_params_fail_at_load_with_file_and_line() {
        assert!(parse_rules("x.yaml", GOOD).is_ok());
        let missing = GOOD.replace("  params: {finalizer: x/y}\n", "");
        let err = parse_rules("x.yaml", &format!("# c\n{missing}")).unwrap_err().0;
        assert!(err.starts_with("x.yaml:2: rule TA-T-001: params of kind finalizer: missing field `finalizer`"), "{err}");
        let unknown = GOOD.replace("{finalizer: x/y}", "{finalizer: x/y, finaliser: z}");
        let err = parse_rules("x.yaml", &unknown).unwrap_err().0;
        assert!(err.contains("unknown field `finaliser`"), "{err}");
        let typed = GOOD.replace("{finalizer: x/y}", "{finalizer: [x]}");
        assert!(parse_rules("x.yaml", &typed).unwrap_err().0.contains("params of kind finalizer"));
        let range = GOOD.replace("  params:", "  applies: {to: \">=2.x.y\"}\n  params:");
        assert!(parse_rules("x.yaml", &range).unwrap_err().0.contains("x.yaml"), "applies parsed at load");
        let gate = GOOD.replace("kind: finalizer", "kind: upgrade-gate").replace("{finalizer: x/y}", "{via: \"not a range\"}");
        assert!(parse_rules("x.yaml", &gate).unwrap_err().0.contains("is not a version or version range"));
        let scope = GOOD.replace("  severity:", "  scope: review\n  severity:");
        assert!(parse_rules("x.yaml", &scope).unwrap_err().0.contains("cannot run in a chart review"));
        let restore = GOOD.replace("  fix: f\n", "  fix: \"restore $ undo\\n$ do\"\n");
        assert!(parse_rules("x.yaml", &restore).unwrap_err().0.contains("undoes the command before it"));
        let variant = GOOD.replace("  fix: f\n", "  fix: f\n  variants: {nope: {severity: info}}\n");
        assert!(parse_rules("x.yaml", &variant).unwrap_err().0.contains("has no variant \"nope\""));
        let expect = |e: &str| GOOD.replace("  fix: f\n", &format!("  fix: f\n  expect:\n  - {e}\n"));
        let good = parse_rules("x.yaml", &expect("{by: helm, text: 'in progress', kubernetes: '>=1.32', source: s}")).unwrap();
        let k = |minor| Some(kube_version::KubeVersion::new(1, minor));
        assert!(
            good[0].expect[0].holds_on(k(32).as_ref()) && !good[0].expect[0].holds_on(k(31).as_ref()) && good[0].expect[0].holds_on(None)
        );
        assert!(parse_rules("x.yaml", &expect("{by: kubelet, text: t, source: s}")).unwrap_err().0.contains("unknown variant"));
        assert!(parse_rules("x.yaml", &expect("{by: helm, text: t}")).unwrap_err().0.contains("source"));
        assert!(parse_rules("x.yaml", &expect("{by: helm, text: '', source: s}")).unwrap_err().0.contains("needs a text"));
        assert!(parse_rules("x.yaml", &expect("{by: helm, text: t, source: s, kubernetes: 'one'}")).is_err());
        let quoted = |q: &str| GOOD.replace("  source: s\n", &format!("  source: https://x/a.go#L1-L2; b.go#L3\n  quotes: {q}\n"));
        assert!(parse_rules("x.yaml", &quoted("{a.go#L1-L2: func a, b.go#L3: b}")).is_ok());
        assert!(parse_rules("x.yaml", &quoted("{c.go#L1: c}")).unwrap_err().0.contains("quote key \"c.go#L1\" names no citation"));
        assert!(parse_rules("x.yaml", &quoted("{b.go#L3: ''}")).is_err(), "an empty quote");
        assert!(parse_rules("x.yaml", &expect("{by: helm, text: t, source: x.go#L9, quotes: {x.go#L9: '%s failed'}}")).is_ok());
        // Claims of absence: one text or several per citation, keyed like quotes.
        let absent = |a: &str| GOOD.replace("  source: s\n", &format!("  source: https://x/tree/v1/chart; b.go#L3\n  absent: {a}\n"));
        let one = parse_rules("x.yaml", &absent("{https://x/tree/v1/chart: kubeVersion}")).unwrap();
        assert_eq!(one[0].absent["https://x/tree/v1/chart"].iter().collect::<Vec<_>>(), ["kubeVersion"]);
        let many = parse_rules("x.yaml", &absent("{b.go#L3: [ca.crt, tls.crt]}")).unwrap();
        assert_eq!(many[0].absent["b.go#L3"].iter().collect::<Vec<_>>(), ["ca.crt", "tls.crt"]);
        assert!(parse_rules("x.yaml", &absent("{c.go: x}")).unwrap_err().0.contains("absent key \"c.go\" names no citation"));
        assert!(parse_rules("x.yaml", &absent("{b.go#L3: []}")).is_err(), "no text");
        assert!(parse_rules("x.yaml", &absent("{b.go#L3: ['']}")).is_err(), "an empty text");
    }

    #[test]
    fn one_id_per_scope_one_kind_per_id_and_aliases_that_name_no_rule() {
        let review = GOOD
            .replace("  severity:", "  scope: review\n  severity:")
            .replace("kind: finalizer\n", "kind: crd-keep\n")
            .replace("  params: {finalizer: x/y}\n", "");
        let upgrade = GOOD.replace("kind: finalizer\n", "kind: crd-keep\n").replace("  params: {finalizer: x/y}\n", "");
        let both = |a: &str, b: &str| -> Result<(), RuleError> {
            let mut rules = parse_rules("a.yaml", a)?;
            rules.extend(parse_rules("b.yaml", b)?);
            check_ids(&rules)
        };
        assert!(both(&upgrade, &review).is_ok(), "one id in two scopes");
        assert!(both(&upgrade, &upgrade).unwrap_err().0.contains("defined twice"));
        assert!(both(GOOD, &review).unwrap_err().0.contains("one id is one concept"));
        let aliased = review.replace("- id: TA-T-001\n", "- id: TA-T-001\n  aliases: [TA-T-000]\n");
        assert!(both(&upgrade, &aliased).is_ok());
        let rules: Vec<Rule> = [parse_rules("a.yaml", &upgrade).unwrap(), parse_rules("b.yaml", &aliased).unwrap()].concat();
        let (entries, alias) = resolve(&rules, "ta-t-000");
        assert_eq!((entries.len(), alias.as_deref()), (2, Some("TA-T-000")));
        assert_eq!(find(&rules, "TA-T-001", Scope::Review).unwrap().origin, "b.yaml:1");
        let taken = review.replace("- id: TA-T-001\n", "- id: TA-T-002\n  aliases: [TA-T-001]\n");
        assert!(both(&upgrade, &taken).unwrap_err().0.contains("alias TA-T-001 is the id of a rule"));
    }

    #[test]
    fn one_test_says_whether_a_rule_runs() {
        let rule = &parse_rules("x.yaml", &GOOD.replace("  params:", "  applies: {to: \">=2.3.0-0\"}\n  engines: [argocd]\n  params:"))
            .unwrap()[0];
        let (v22, v23) = (semver::Version::new(2, 2, 0), semver::Version::new(2, 3, 0));
        let when = |scope, to, engine| Applicable { scope, versions: Some((&v22, to)), engine, cluster: true };
        assert!(rule.applicable(&when(Scope::Upgrade, &v23, Some(Engine::Argocd))));
        assert!(rule.applicable(&when(Scope::Upgrade, &v23, None)), "no engine asked: every engine");
        assert!(!rule.applicable(&when(Scope::Upgrade, &v22, Some(Engine::Argocd))), "applies.to");
        assert!(!rule.applicable(&when(Scope::Upgrade, &v23, Some(Engine::Helm))), "engines");
        assert!(!rule.applicable(&when(Scope::Review, &v23, Some(Engine::Argocd))), "scope");
        // The finalizer kind reads the cluster: it does not run without one.
        assert!(!rule.applicable(&Applicable { cluster: false, ..when(Scope::Upgrade, &v23, None) }));
        let set = RuleSet::from(vec![rule.clone()]);
        assert_eq!(set.applicable(&when(Scope::Upgrade, &v23, None)).count(), 1);
    }

    #[test]
    fn commands_naming_the_repository_carry_the_registry_flags() {
        let vars: BTreeMap<String, String> = [
            ("repository".to_string(), "oci://127.0.0.1:5000/charts/x".to_string()),
            (REGISTRY_FLAGS.to_string(), " --plain-http".to_string()),
            ("to".to_string(), "2.3.0".to_string()),
        ]
        .into();
        let lines =
            Rule::fix_lines("Pull {repository} {to}:\n$ helm pull {repository} --version {to} --untar\nrestore $ rm -r {to}", &vars);
        assert_eq!(
            lines,
            [
                FixLine::Text("Pull oci://127.0.0.1:5000/charts/x 2.3.0:".into()),
                FixLine::Command("helm pull oci://127.0.0.1:5000/charts/x --plain-http --version 2.3.0 --untar".into()),
                FixLine::Restore("rm -r 2.3.0".into()),
            ]
        );
    }
}
