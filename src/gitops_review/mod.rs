//! The GitOps review (`trainer-audit gitops`): for every Kubeflow Trainer reference a GitOps tree
//! holds (with a base, every one added or changed), the chart-side audit of that change without a
//! cluster, as the file's engine will carry it out: the upgrade from the base version to the head
//! version with the file's values, release name and namespace (the upgrade rules: gate, values
//! the target no longer knows, CRDs the engine leaves stale…), the route the gates require, the
//! charts' diff in short, and the chart review for that engine with those options (the review
//! rules). With a cluster, the cluster checks `check` runs are added, still with the file's
//! version and values. Every finding is placed at a line of the GitOps file (`locate`).

mod locate;
mod shown;
mod summary;

pub use shown::repo_prefix;

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde::Serialize;

pub use locate::{LocatedFinding, Related};
pub use summary::DiffSummary;

use crate::audit::finding::{sort_findings, Finding, Severity};
use crate::audit::input::ChartInput;
use crate::audit::rules::{Rule, RuleSet, Scope};
use crate::audit::run::review as review_rules;
use crate::cluster::install::installed_version;
use crate::cluster::ClusterState;
use crate::engine::{Engine, EngineContext};
use crate::gitops::compare::{Change, Comparison, Status};
use crate::gitops::{Location, ObjectKey, Problem, Reference, Scan, VersionKind};
use crate::upgrade::{Request, Upgrade, UpgradeError};
use chart_source::oci::ClientOptions;
use chart_source::reference::OciRef;

/// How the references are audited.
#[derive(Debug, Clone)]
pub struct ReviewOptions {
    /// Take chart versions from this directory instead of each reference's repository.
    pub charts_dir: Option<PathBuf>,
    pub registry: ClientOptions,
    /// The rules of the run (built-in and `--rules`).
    pub rules: RuleSet,
    /// A cluster to add the cluster checks for (a snapshot or a live context, read-only).
    pub cluster: Option<ClusterState>,
    /// The severity at which a reference's verdict is `blocked`.
    pub fail_on: Severity,
}

impl Default for ReviewOptions {
    fn default() -> ReviewOptions {
        ReviewOptions {
            charts_dir: None,
            registry: ClientOptions::default(),
            rules: RuleSet::default(),
            cluster: None,
            fail_on: Severity::Error,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ReviewError {
    /// Auditing one reference failed for a reason that is not the file's (a registry, a chart).
    #[error("{at} {object}: {source}")]
    Reference { at: Location, object: ObjectKey, source: Box<UpgradeError> },
    /// The tree (or its base) cannot be read, or holds no Trainer reference.
    #[error(transparent)]
    Tree(#[from] crate::gitops::GitopsError),
    /// The cluster the review adds its checks for could not be read.
    #[error("{0}")]
    Cluster(String),
}

/// What `gitops` compares the tree against.
#[derive(Debug, Clone)]
pub enum Base {
    /// Another checkout (the target branch of a pull request, say).
    Dir(PathBuf),
    /// The tree as it is at this git revision.
    Revision(String),
}

/// What `gitops` made: the references alone (`--list`), or their review.
#[derive(Debug)]
pub enum Outcome {
    List { scan: Scan, comparison: Option<Comparison> },
    Review(GitopsReview),
}

/// `gitops DIR [--base DIR | --base-ref REV] [--list]`: the tree scanned (and its base, compared),
/// then with `list` the references and changes, else their review. `cluster` reads the cluster
/// the review adds its checks for (None: none), only when there is a review to make.
pub fn run(
    dir: &std::path::Path,
    base: Option<&Base>,
    list: bool,
    cluster: impl FnOnce() -> Result<Option<ClusterState>, String>,
    mut options: ReviewOptions,
) -> Result<Outcome, ReviewError> {
    let head = crate::gitops::scan_dir(dir)?;
    let base = match base {
        Some(Base::Dir(other)) => Some(crate::gitops::scan_dir(other)?),
        Some(Base::Revision(rev)) => Some(crate::gitops::scan_git(dir, rev)?),
        None => None,
    };
    let comparison = base.as_ref().map(|b| crate::gitops::compare::compare(b, &head));
    if list {
        return Ok(Outcome::List { scan: head, comparison });
    }
    crate::gitops::require_trainer_references(dir, &head, base.as_ref())?;
    options.cluster = cluster().map_err(ReviewError::Cluster)?;
    Ok(Outcome::Review(review(&head, base.as_ref().zip(comparison.as_ref()), &options)?))
}

/// One reference's verdict is the tool's one verdict, in the words of the review's own
/// (`check`'s): `ready` (no finding at or above `--fail-on`), `blocked` (one is, or the
/// reference cannot be audited for a reason that is not the file's), or `not-audited` (the files
/// do not say enough: a digest pin, an unresolved variable). The JSON said `pass`/`fail` before
/// the gitops report's schema 2.0.
pub use crate::audit::verdict::Verdict;

/// A reference's counts are the audit's own (one counting for every command).
pub use crate::audit::verdict::Counts;

/// One reference, audited.
#[derive(Debug, Clone, Serialize)]
pub struct ReferenceReview {
    pub engine: Engine,
    pub object: ObjectKey,
    pub at: Location,
    /// `added` or `changed` against a base; `present` without one.
    pub status: &'static str,
    pub repository: Option<String>,
    /// The base's version as written (None: no base, or added).
    pub from_written: Option<String>,
    pub to_written: Option<String>,
    /// The versions audited (resolved when written as ranges).
    pub from: Option<String>,
    pub to: Option<String>,
    /// The versions to pass through, ending with `to` (from the upgrade gates).
    pub route: Vec<String>,
    pub release: Option<String>,
    pub namespace: Option<String>,
    pub verdict: Verdict,
    pub counts: Counts,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<DiffSummary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_audited: Option<String>,
    pub notes: Vec<String>,
    /// What the files leave unknown (undefined variables, missing values files).
    pub problems: Vec<Problem>,
    pub findings: Vec<LocatedFinding>,
}

/// A base reference the head no longer has (the engine will remove the release).
#[derive(Debug, Clone, Serialize)]
pub struct Removed {
    pub engine: Engine,
    pub object: ObjectKey,
    pub at: Location,
}

#[derive(Debug, Clone, Serialize)]
pub struct GitopsReview {
    pub fail_on: Severity,
    /// Whether cluster checks ran.
    pub cluster: bool,
    pub references: Vec<ReferenceReview>,
    /// Against a base: references unchanged (not audited), and removed.
    pub unchanged: Vec<ObjectKey>,
    pub removed: Vec<Removed>,
    /// Problems reading the tree (unparseable files, objects not expanded).
    pub tree_problems: Vec<Problem>,
}

impl GitopsReview {
    /// Every finding, in reference order.
    pub fn findings(&self) -> impl Iterator<Item = &LocatedFinding> {
        self.references.iter().flat_map(|r| r.findings.iter())
    }

    /// The verdict in the words `check` uses, and the exit code: blocked by a reference
    /// blocked, or (when failing on warnings or lower) by one that could not be audited.
    pub fn decision(&self) -> crate::audit::verdict::Decision {
        let counts = Counts::of(self.findings().map(|f| &f.finding));
        let mut d = crate::audit::verdict::Decision::new(counts, self.fail_on, None, None);
        let blocks = |v: Verdict| v == Verdict::Blocked || (v == Verdict::NotAudited && self.fail_on >= Severity::Warning);
        if self.references.iter().any(|r| blocks(r.verdict)) {
            d.verdict = Verdict::Blocked;
        }
        d
    }
}

/// Audits `head` (against `base` when given).
pub fn review(head: &Scan, base: Option<(&Scan, &Comparison)>, options: &ReviewOptions) -> Result<GitopsReview, ReviewError> {
    let rules = &options.rules;
    let mut references = Vec::new();
    for r in &head.references {
        let (status, change, before) = match base {
            None => ("present", None, None),
            Some((scan, cmp)) => match cmp.changes.iter().find(|c| c.object == r.object && c.status != Status::Removed) {
                None => continue,
                Some(c) if c.status == Status::Added => ("added", Some(c), None),
                Some(c) => ("changed", Some(c), scan.references.iter().find(|b| b.object == r.object)),
            },
        };
        references.push(audit(r, before, change, status, head, rules, options)?);
    }
    let (unchanged, removed) = match base {
        None => (Vec::new(), Vec::new()),
        Some((_, cmp)) => (
            cmp.unchanged.clone(),
            cmp.changes
                .iter()
                .filter(|c| c.status == Status::Removed)
                .map(|c| Removed { engine: c.engine, object: c.object.clone(), at: c.at.clone() })
                .collect(),
        ),
    };
    Ok(GitopsReview {
        fail_on: options.fail_on,
        cluster: options.cluster.is_some(),
        references,
        unchanged,
        removed,
        tree_problems: head.problems.clone(),
    })
}

/// Why a reference cannot be audited from the files alone, if it cannot.
fn unknowable(r: &Reference, options: &ReviewOptions) -> Option<String> {
    let version = r.version.as_deref().unwrap_or("");
    if r.version_kind == VersionKind::Digest {
        return Some(format!("the chart is pinned by digest {}: the version it holds is not known", r.digest.as_deref().unwrap_or("?")));
    }
    if crate::gitops::envsubst::has_variables(version) {
        return Some(format!("the version {version:?} holds a variable the tree does not define"));
    }
    if r.repository.is_none() && options.charts_dir.is_none() {
        let written = r.repository_written.as_deref().unwrap_or("(not in the tree)");
        return Some(format!(
            "the chart comes from {written}, not an OCI registry trainer-audit can pull from: pass --charts DIR with the chart archives"
        ));
    }
    None
}

/// A reference the change breaks before any rule runs (its chart does not render with the
/// file's values, or its version does not exist): failed, with the reason.
fn broken(r: &Reference, status: &'static str, before: Option<&Reference>, why: String) -> ReferenceReview {
    ReferenceReview { verdict: Verdict::Blocked, ..not_audited(r, status, before, why) }
}

fn not_audited(r: &Reference, status: &'static str, before: Option<&Reference>, why: String) -> ReferenceReview {
    ReferenceReview {
        engine: r.engine,
        object: r.object.clone(),
        at: r.at.clone(),
        status,
        repository: r.repository.clone().or(r.repository_written.clone()),
        from_written: before.and_then(|b| b.version.clone()),
        to_written: r.version.clone(),
        from: None,
        to: None,
        route: Vec::new(),
        release: r.release_name.clone(),
        namespace: r.release_namespace.clone(),
        verdict: Verdict::NotAudited,
        counts: Counts::default(),
        diff: None,
        not_audited: Some(why),
        notes: r.notes.clone(),
        problems: r.problems.clone(),
        findings: Vec::new(),
    }
}

fn audit(
    r: &Reference,
    before: Option<&Reference>,
    change: Option<&Change>,
    status: &'static str,
    head: &Scan,
    rules: &[Rule],
    options: &ReviewOptions,
) -> Result<ReferenceReview, ReviewError> {
    if let Some(why) = unknowable(r, options) {
        return Ok(not_audited(r, status, before, why));
    }
    match audit_chart(r, before, change, head, rules, options) {
        Ok(mut review) => {
            review.status = status;
            Ok(review)
        }
        Err(UpgradeError::Render(e)) => Ok(broken(r, status, before, format!("the chart does not render with the file's values: {e}"))),
        // From a registry, a version that does not exist is the change's mistake; from a chart
        // directory, the directory's.
        Err(UpgradeError::NoVersion(e)) if options.charts_dir.is_none() => Ok(broken(r, status, before, e)),
        Err(e) => Err(ReviewError::Reference { at: r.at.clone(), object: r.object.clone(), source: Box::new(e) }),
    }
}

fn audit_chart(
    r: &Reference,
    before: Option<&Reference>,
    change: Option<&Change>,
    head: &Scan,
    rules: &[Rule],
    options: &ReviewOptions,
) -> Result<ReferenceReview, UpgradeError> {
    let repository = match r.repository.as_deref().map(OciRef::parse).transpose() {
        Ok(repo) => repo.map(|o| o.repository_ref()),
        Err(e) => return Ok(not_audited(r, "", before, format!("the repository cannot be read: {e}"))),
    };
    let base_version = before.filter(|b| b.version_kind != VersionKind::Digest).and_then(|b| b.version.clone());
    let state = options.cluster.clone().unwrap_or_default();
    let (releases, _) = state.releases();
    let installed = options.cluster.as_ref().and_then(|s| installed_version(s, &releases));
    let context = EngineContext {
        engine: r.engine,
        argocd: head.argocd_version.as_deref().and_then(|v| helm_render::version::parse_lenient(v.trim_start_matches('v'))),
        options: r.options.iter().map(|(k, o)| (k.clone(), o.value.clone())).collect(),
        defaulted: r.options.iter().filter(|(_, o)| o.default).map(|(k, _)| k.clone()).collect(),
    };
    let request = Request {
        // `*` is what Flux and Argo CD take for an unset version: the newest release.
        to: Some(r.version.clone().unwrap_or_else(|| "*".into())),
        repository,
        from: if installed.is_some() { None } else { base_version.clone() },
        release: r.release_name.clone(),
        namespace: r.release_namespace.clone(),
        rules: options.rules.clone(),
        registry: options.registry.clone(),
        file_values: Some(r.values.clone()),
        gitops: Some(context.clone()),
        charts_dir: options.charts_dir.clone(),
        from_target: true,
        without_cluster: options.cluster.is_none(),
        ..Request::default()
    };
    let upgrade = Upgrade::prepare(request, state)?;
    let mut notes: Vec<String> = upgrade.notes.iter().filter(|n| !n.starts_with("installed version")).cloned().collect();
    notes.push(match (&installed, &base_version) {
        (Some(i), Some(b)) if i.version != *b => {
            format!(
                "installed version {} ({}); the base says {b}: the cluster has not reconciled the base, or drifted",
                upgrade.from, i.evidence
            )
        }
        (Some(i), _) => format!("installed version {} ({})", upgrade.from, i.evidence),
        (None, Some(b)) if *b == upgrade.from.to_string() => format!("from the base: {b}"),
        (None, Some(b)) => format!("from the base: {b} (resolved to {})", upgrade.from),
        (None, None) => "no earlier version: the target is reviewed as installed".to_string(),
    });
    notes.extend(r.notes.iter().cloned());
    let mut findings = upgrade.hop(&upgrade.from, &upgrade.to, &mut notes)?;
    let route = if upgrade.from == upgrade.to { Vec::new() } else { upgrade.route()? };
    let target = upgrade.inventory(&upgrade.to, false)?;
    let diff = if upgrade.from == upgrade.to {
        None
    } else {
        upgrade
            .inventory(&upgrade.from, true)
            .ok()
            .map(|installed| summary::summarise(&crate::diff::ChartDiff::compute(&installed, &target)))
    };
    // The review pack sees the chart as the engine applies it: without hooks when it skips them.
    let skips_hooks = context.engine == Engine::Kustomize && context.is_on("skipHooks");
    let mut applied = (*target).clone();
    if skips_hooks {
        applied.hooks.clear();
        applied.objects.retain(|o| o.origin != crate::objects::Origin::Hook);
        notes.push("skipHooks: true: the chart's hooks are not rendered, so the hook review has none to read".into());
    }
    let vars = [("release", &upgrade.release_name), ("namespace", &upgrade.namespace)];
    let vars = vars.into_iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
    let chart = ChartInput { chart: &applied, engine: r.engine, argocd: context.argocd.as_ref(), gitops: Some(&context) };
    let review_from = findings.len();
    findings.extend(review_rules(rules, &chart, &vars));
    let findings = dedupe(findings, review_from, rules);
    let mut located: Vec<LocatedFinding> = findings.into_iter().map(|f| locate::locate(f, rules, r, change, head)).collect();
    located.sort_by(|a, b| {
        (a.finding.severity, &a.finding.id, &a.at, &a.finding.subject).cmp(&(b.finding.severity, &b.finding.id, &b.at, &b.finding.subject))
    });
    let counts = Counts::of(located.iter().map(|f| &f.finding));
    let verdict = if located.iter().any(|f| f.finding.severity <= options.fail_on) { Verdict::Blocked } else { Verdict::Ready };
    Ok(ReferenceReview {
        engine: r.engine,
        object: r.object.clone(),
        at: r.at.clone(),
        status: "",
        repository: r.repository.clone().or(r.repository_written.clone()),
        from_written: base_version,
        to_written: r.version.clone(),
        from: Some(upgrade.from.to_string()),
        to: Some(upgrade.to.to_string()),
        route: route.iter().map(|v| v.to_string()).collect(),
        release: Some(upgrade.release_name.clone()),
        namespace: Some(upgrade.namespace.clone()),
        verdict,
        counts,
        diff,
        not_audited: None,
        notes,
        problems: r.problems.clone(),
        findings: located,
    })
}

/// The upgrade rules and the review pack share chart-only kinds (the same hook or CRD seen by
/// both, under one id): of findings of the same kind about the same subject, the most severe
/// stays, the review's on a tie (it knows the engine's options). Findings from `review_from` on
/// are the review pack's.
fn dedupe(findings: Vec<Finding>, review_from: usize, rules: &[Rule]) -> Vec<Finding> {
    let scope = |i: usize| if i >= review_from { Scope::Review } else { Scope::Upgrade };
    let key = |i: usize, f: &Finding| crate::audit::rules::find(rules, &f.id, scope(i)).map(|r| (r.kind.clone(), f.subject.clone()));
    let mut ranked: Vec<(usize, &Finding)> = findings.iter().enumerate().collect();
    ranked.sort_by_key(|(i, f)| (f.severity, scope(*i) != Scope::Review, *i));
    // (kind, subject) → the rule (id and scope) whose finding stays; a rule's own findings all stay.
    let mut kept_by: std::collections::BTreeMap<(String, String), (String, Scope)> = Default::default();
    let mut keep = BTreeSet::new();
    for (i, f) in ranked {
        if let Some(k) = key(i, f) {
            let owner = (f.id.clone(), scope(i));
            match kept_by.get(&k) {
                Some(kept) if *kept != owner => continue,
                Some(_) => {}
                None => {
                    kept_by.insert(k, owner);
                }
            }
        }
        keep.insert(i);
    }
    let mut out: Vec<Finding> = findings.into_iter().enumerate().filter(|(i, _)| keep.contains(i)).map(|(_, f)| f).collect();
    sort_findings(&mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(id: &str, severity: Severity, subject: &str, message: &str) -> Finding {
        Finding { message: message.into(), ..Finding::about(id, severity, subject) }
    }

    #[test]
    fn the_same_kind_about_the_same_subject_is_reported_once() {
        let rules = RuleSet::default();
        let crd = "CustomResourceDefinition/x";
        let findings = vec![
            // crd-size from the review pack (warning) and from the upgrade rules (error).
            finding("TA-HOOK-104", Severity::Error, crd, "upgrade"),
            // One rule's own findings all stay, even about one subject.
            finding("TA-VAL-001", Severity::Warning, "values a", "one"),
            finding("TA-VAL-001", Severity::Warning, "values a", "two"),
            // The review pack's from here on.
            finding("TA-HOOK-104", Severity::Warning, crd, "review"),
            finding("TA-HOOK-104", Severity::Warning, "CustomResourceDefinition/y", "other subject"),
        ];
        let kept: Vec<(String, String)> = dedupe(findings, 3, &rules).into_iter().map(|f| (f.id, f.message)).collect();
        let want = [("TA-HOOK-104", "upgrade"), ("TA-HOOK-104", "other subject"), ("TA-VAL-001", "one"), ("TA-VAL-001", "two")];
        assert_eq!(kept, want.map(|(a, b)| (a.to_string(), b.to_string())).to_vec());
        // On a tie the review pack's finding (it knows the engine's options) stays, though both
        // carry one id.
        let tie = vec![finding("TA-HOOK-104", Severity::Warning, crd, "upgrade"), finding("TA-HOOK-104", Severity::Warning, crd, "review")];
        let kept = dedupe(tie, 1, &rules);
        assert_eq!((kept.len(), kept[0].message.as_str()), (1, "review"));
    }
}
