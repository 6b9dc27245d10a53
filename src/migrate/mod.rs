//! `migrate`: converts objects that a newer Trainer API would reject or silently strip into the
//! form that API accepts, and says, per object, what could not be carried and why. Two
//! conversions live here: Trainer 2.1 TrainJobs and runtimes to the 2.2+ API (`trainjob`,
//! `overrides`, `nproc`, `runtime`), and legacy Training Operator v1 PyTorchJobs to TrainJobs
//! (`legacy`). The library never talks to a cluster: it takes objects (from files, a snapshot or a
//! live read done elsewhere) and returns [`Conversion`]s; `output` turns those into the `List` for
//! `kubectl apply --server-side`, per-object diffs, the pre-CRD patch commands and the report.
//! Validation against the target CRDs is a step the caller plugs in through [`TargetSchema`]
//! ([`TargetCrds`]: trainer-audit's validator over the target chart's CRDs).
//!
//! Sources are the Trainer API types and controller code at the tags (`T@v2.1.0 path#Lx` means
//! <https://github.com/kubeflow/trainer/blob/v2.1.0/path#Lx>); every [`Note`] carries its own.

pub mod input;
mod legacy;
mod nproc;
pub mod output;
mod overrides;
pub mod quantity;
mod runtime;
pub mod target_crds;
mod trainjob;

use serde::Serialize;
use serde_json::Value as Json;

use crate::objects::str_at;
pub use target_crds::{SchemaVerdict, TargetCrds, TargetSchema};

/// The Trainer API group and version every converted object uses.
pub const TRAINER_API_VERSION: &str = "trainer.kubeflow.org/v1alpha1";
/// The `runtimePatches[].manager` written by default; a domain-prefixed path, as the 2.3 webhook
/// requires (T@v2.3.0 `pkg/runtime/framework/plugins/jobset/jobset.go#L176`).
pub const DEFAULT_PATCH_MANAGER: &str = "trainer-audit.dev/migrate";
/// The field manager the printed `kubectl apply --server-side` uses.
pub const FIELD_MANAGER: &str = "trainer-audit-migrate";
/// The runtime the migration guide targets (T@v2.3.0 `docs/operator-guides/migration.md#L74-L81`).
pub const DEFAULT_LEGACY_RUNTIME: &str = "torch-distributed";

#[derive(Debug, thiserror::Error)]
pub enum MigrateError {
    #[error("--patch-manager {0:?} is not a domain-prefixed path such as example.com/migrate (Trainer 2.2+ requires one)")]
    PatchManager(String),
    #[error("--runtime {0:?} is not a valid runtime name (a DNS subdomain: lower-case letters, digits, '-' and '.')")]
    RuntimeName(String),
}

/// Where the objects came from: it decides what must be written back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Source {
    /// Manifests (a GitOps repository, files): every converted object belongs in the output.
    Files,
    /// Objects stored in a cluster (live or snapshot): only objects that need a write do.
    Cluster,
}

#[derive(Debug, Clone)]
pub struct Options {
    /// Convert legacy `kubeflow.org/v1` jobs instead of Trainer 2.1 objects.
    pub legacy: bool,
    pub source: Source,
    /// `runtimePatches[].manager` for what the converter writes.
    pub patch_manager: String,
    /// The runtime converted PyTorchJobs reference.
    pub legacy_runtime: String,
    /// Create converted legacy jobs suspended, so nothing starts before a review.
    pub suspend_legacy: bool,
    /// Keep each conversion's `original` and `converted` objects (what `migrate` writes). A
    /// check reads only the verdicts and notes: without, the objects are dropped (`converted`
    /// left as `Some(null)`, so [`Conversion::refused`] still answers) and each object is
    /// converted, validated and let go in one step, so 25,000 pairs of copies never sit in
    /// memory at once.
    pub keep_objects: bool,
}

impl Options {
    pub fn new(legacy: bool, source: Source) -> Options {
        Options {
            legacy,
            source,
            patch_manager: DEFAULT_PATCH_MANAGER.to_string(),
            legacy_runtime: DEFAULT_LEGACY_RUNTIME.to_string(),
            suspend_legacy: false,
            keep_objects: true,
        }
    }

    /// Checks the user-supplied names before anything is converted.
    pub fn validate(&self) -> Result<(), MigrateError> {
        if !is_domain_prefixed_path(&self.patch_manager) {
            return Err(MigrateError::PatchManager(self.patch_manager.clone()));
        }
        if !is_dns_subdomain(&self.legacy_runtime) {
            return Err(MigrateError::RuntimeName(self.legacy_runtime.clone()));
        }
        Ok(())
    }
}

/// apiVersion, kind, namespace and name of an object.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct ObjectId {
    pub api_version: String,
    pub kind: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    pub name: String,
}

impl ObjectId {
    pub fn of(o: &Json) -> ObjectId {
        ObjectId {
            api_version: str_at(o, &["apiVersion"]).to_string(),
            kind: str_at(o, &["kind"]).to_string(),
            namespace: str_at(o, &["metadata", "namespace"]).to_string(),
            name: str_at(o, &["metadata", "name"]).to_string(),
        }
    }
}

impl std::fmt::Display for ObjectId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.namespace.is_empty() {
            write!(f, "{} {}", self.kind, self.name)
        } else {
            write!(f, "{} {}/{}", self.kind, self.namespace, self.name)
        }
    }
}

/// How much of a field made it across.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Level {
    /// The whole object is not converted (it is not in the output).
    Refused,
    /// This field or value is not carried; the object is converted without it.
    Lost,
    /// Carried, but its behaviour differs or needs a look; the text says how.
    Review,
    /// Carried faithfully; the text says where it went and why that is the same.
    Converted,
}

impl Level {
    pub fn word(self) -> &'static str {
        match self {
            Level::Refused => "refused",
            Level::Lost => "lost",
            Level::Review => "review",
            Level::Converted => "converted",
        }
    }
}

/// One statement about one field of one object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Note {
    pub level: Level,
    /// The field in the original object (`spec.podTemplateOverrides[0].spec.volumes`).
    pub path: String,
    pub text: String,
    /// Where the fact is checked (`T@v2.2.0 pkg/apis/trainer/v1alpha1/trainjob_types.go#L124`).
    pub source: String,
}

impl Note {
    pub fn new(level: Level, path: impl Into<String>, text: impl Into<String>, source: impl Into<String>) -> Note {
        Note { level, path: path.into(), text: text.into(), source: source.into() }
    }
}

/// One JSON Patch (RFC 6902) operation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PatchOp {
    pub op: &'static str,
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<Json>,
}

/// What happened to one input object.
#[derive(Debug, Clone, Serialize)]
pub struct Conversion {
    pub id: ObjectId,
    /// The object as read, server-set fields removed.
    #[serde(skip)]
    pub original: Json,
    /// The converted object; None when refused.
    #[serde(skip)]
    pub converted: Option<Json>,
    /// Whether `converted` belongs in the List to apply (see [`Source`]).
    pub write: bool,
    pub notes: Vec<Note>,
    /// Edits that must reach the stored object while the source (2.1) CRDs are still installed:
    /// once the 2.2+ CRDs are in, `spec.trainer` is immutable and a stored string
    /// `numProcPerNode` makes every write to the object fail.
    pub before_crds: Vec<PatchOp>,
    pub schema: SchemaVerdict,
}

impl Conversion {
    pub fn refused(&self) -> bool {
        self.converted.is_none()
    }

    /// Anything not carried faithfully (refused or lost).
    pub fn incomplete(&self) -> bool {
        self.refused() || self.notes.iter().any(|n| n.level <= Level::Lost)
    }
}

/// Converts every object that needs it. Objects the target API already accepts as they are, and
/// objects of other kinds, are passed over (they are counted in `passed_over`).
pub fn migrate(objects: &[Json], options: &Options, schema: &dyn TargetSchema) -> Migration {
    // A stored object is rewritten in place: the List's apply is an update of the object as the
    // `--before-crds` patches left it. Files and legacy jobs are written anew.
    let in_place = options.source == Source::Cluster && !options.legacy;
    let mut conversions = if options.legacy {
        validated(legacy::convert_all(objects, options), in_place, schema)
    } else if options.keep_objects {
        validated(trainjob::convert_all(objects, options), in_place, schema)
    } else {
        lean(objects, options, in_place, schema)
    };
    conversions.sort_by(|a, b| a.id.cmp(&b.id));
    let passed_over = objects.len().saturating_sub(conversions.len());
    Migration { conversions, passed_over, legacy: options.legacy, validated_against: schema.describe() }
}

/// The conversions with their verdicts, each object converted, validated and let go in one
/// step ([`Options::keep_objects`] off): no copies pile up, and one checker per share of the
/// objects (the validator's memo) serves all of that share's writes.
fn lean(objects: &[Json], options: &Options, in_place: bool, schema: &dyn TargetSchema) -> Vec<Conversion> {
    let convert = trainjob::Converter::new(objects, options);
    let share = |part: &[Json], schema: &dyn TargetSchema| {
        let mut check = schema.checker();
        let mut out = Vec::new();
        for o in part {
            let Some(mut c) = convert.convert(o) else { continue };
            // The stored object as the `--before-crds` patch leaves it, patched in place: the
            // original is not kept.
            let mut stored = std::mem::take(&mut c.original);
            if in_place {
                target_crds::patch(&mut stored, &c.before_crds);
            }
            if let Some(object) = &c.converted {
                let verdict = check(&target_crds::Write { object, stored: in_place.then_some(&stored), patch: &[] });
                judge(&mut c, verdict);
            }
            if let Some(converted) = &mut c.converted {
                *converted = Json::Null;
            }
            out.push(c);
        }
        out
    };
    match schema.shared() {
        Some(shared) => crate::par::map_chunks(objects, |part| share(part, shared)).concat(),
        None => share(objects, schema),
    }
}

/// The conversions with their verdicts under `schema` (a rejected one refused).
fn validated(mut conversions: Vec<Conversion>, in_place: bool, schema: &dyn TargetSchema) -> Vec<Conversion> {
    let writes: Vec<target_crds::Write> = conversions
        .iter()
        .filter_map(|c| {
            let object = c.converted.as_ref()?;
            Some(target_crds::Write { object, stored: in_place.then_some(&c.original), patch: &c.before_crds })
        })
        .collect();
    let mut verdicts = schema.check_all(&writes).into_iter();
    drop(writes);
    for c in conversions.iter_mut().filter(|c| c.converted.is_some()) {
        judge(c, verdicts.next().unwrap_or(SchemaVerdict::NotValidated { reason: "not validated".into() }));
    }
    conversions
}

/// Records the verdict on a converted object; a rejected one is refused.
fn judge(c: &mut Conversion, verdict: SchemaVerdict) {
    c.schema = verdict;
    if let SchemaVerdict::Rejected { errors, .. } = &c.schema {
        c.notes.push(Note::new(
            Level::Refused,
            "",
            format!("the converted object fails the target schema: {}", errors.join("; ")),
            "target CRD schema",
        ));
        c.converted = None;
        c.write = false;
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Migration {
    pub conversions: Vec<Conversion>,
    /// Input objects that needed nothing.
    pub passed_over: usize,
    /// Legacy jobs → TrainJobs (new objects) rather than 2.1 → 2.2+ (stored objects).
    pub legacy: bool,
    /// What the converted objects were validated against (`the 2.3.0 CRDs at Kubernetes 1.33`).
    pub validated_against: String,
}

impl Migration {
    pub fn incomplete(&self) -> bool {
        self.conversions.iter().any(Conversion::incomplete)
    }
}

/// `example.com/name`: a DNS subdomain, a slash, and a non-empty path (what Kubernetes'
/// `IsDomainPrefixedPath` accepts, narrowed to the common characters).
/// `1 object`, `3 objects`: a count with its noun in the number it takes.
pub(crate) fn counted(n: usize, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}

pub fn is_domain_prefixed_path(s: &str) -> bool {
    match s.split_once('/') {
        Some((host, path)) => {
            is_dns_subdomain(host)
                && !path.is_empty()
                && s.len() <= 253
                && path.chars().all(|c| c.is_ascii_alphanumeric() || "-._~/%!$&'()*+,;=:@".contains(c))
        }
        None => false,
    }
}

/// A DNS-1123 subdomain (Kubernetes object names of most kinds).
pub fn is_dns_subdomain(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 253
        && s.split('.').all(|label| {
            !label.is_empty()
                && label.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
                && !label.starts_with('-')
                && !label.ends_with('-')
        })
}

/// The TrainJob name rule: an RFC 1035 label of at most 63 characters (T@v2.3.0
/// `pkg/apis/trainer/v1alpha1/trainjob_types.go#L36-L37`).
pub fn is_trainjob_name(s: &str) -> bool {
    s.len() <= 63
        && s.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && s.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !s.ends_with('-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(is_domain_prefixed_path("trainer-audit.dev/migrate"));
        assert!(is_domain_prefixed_path("kueue.x-k8s.io/manager"));
        assert!(!is_domain_prefixed_path("migrate"));
        assert!(!is_domain_prefixed_path("Bad_Host/x"));
        assert!(!is_domain_prefixed_path("host.io/"));
        assert!(is_trainjob_name("job-a1"));
        assert!(!is_trainjob_name("1job"));
        assert!(!is_trainjob_name("job.a"));
        assert!(!is_trainjob_name(&"a".repeat(64)));
        assert!(is_dns_subdomain("torch-distributed"));
        assert!(!is_dns_subdomain("Torch"));
    }

    #[test]
    fn a_schema_rejection_refuses_the_object() {
        let job = serde_json::json!({"apiVersion": TRAINER_API_VERSION, "kind": "TrainJob", "metadata": {"name": "j", "namespace": "n"},
            "spec": {"runtimeRef": {"name": "r"}, "labels": {"a": "b"}}});
        let reject = |_: &Json, _: Option<&Json>| SchemaVerdict::Rejected { errors: vec!["spec.x: Invalid value".into()], pruned: vec![] };
        let m = migrate(std::slice::from_ref(&job), &Options::new(false, Source::Files), &reject);
        assert!(m.conversions[0].refused() && !m.conversions[0].write);
        assert!(m.conversions[0].notes.iter().any(|n| n.level == Level::Refused && n.text.contains("spec.x: Invalid value")));
        assert_eq!(output::list(&m)["items"], serde_json::json!([]));
        let accept = |_: &Json, _: Option<&Json>| SchemaVerdict::Accepted { pruned: vec![], unevaluated: vec![] };
        let m = migrate(&[job], &Options::new(false, Source::Files), &accept);
        assert_eq!(output::list(&m)["items"].as_array().map(Vec::len), Some(1));
        assert_eq!(m.passed_over, 0);
    }

    /// Without the objects (a check), each object is converted and validated in one step: the
    /// same conversions, notes, verdicts and order as in one piece, a runtime in another share
    /// still found, and no object kept; a validator that cannot be shared between threads runs
    /// them one after another.
    #[test]
    fn lean_conversions_are_the_kept_ones_without_objects() {
        let job = |name: &str, spec: Json| serde_json::json!({"apiVersion": TRAINER_API_VERSION, "kind": "TrainJob", "metadata": {"name": name, "namespace": "n"}, "spec": spec});
        let mut objects =
            vec![serde_json::json!({"apiVersion": TRAINER_API_VERSION, "kind": "ClusterTrainingRuntime", "metadata": {"name": "r"},
            "spec": {"mlPolicy": {"torch": {"numProcPerNode": "gpu"}}}})];
        // Enough objects for several shares on the pool's threads.
        for i in 0..300 {
            objects.push(job(&format!("j{i}"), serde_json::json!({"runtimeRef": {"name": "r"}, "labels": {"a": "b"}})));
            objects.push(job(&format!("k{i}"), serde_json::json!({"runtimeRef": {"name": "r"}, "trainer": {"numProcPerNode": "cpu"}})));
            objects.push(job(&format!("ok{i}"), serde_json::json!({"runtimeRef": {"name": "r"}, "trainer": {"numProcPerNode": 2}})));
        }
        // A verdict that depends on the object: every other write is rejected.
        let schema = |o: &Json, _: Option<&Json>| {
            if o.pointer("/metadata/name").and_then(Json::as_str).is_some_and(|n| n.starts_with('k')) {
                SchemaVerdict::Rejected { errors: vec!["spec.trainer: Invalid value".into()], pruned: vec![] }
            } else {
                SchemaVerdict::Accepted { pruned: vec!["spec.x".into()], unevaluated: vec![] }
            }
        };
        let kept = migrate(&objects, &Options::new(false, Source::Cluster), &schema);
        let lean_options = Options { keep_objects: false, ..Options::new(false, Source::Cluster) };
        // The same validator, shared between threads: one checker per share.
        struct Shared<F>(F);
        impl<F: Fn(&Json, Option<&Json>) -> SchemaVerdict + Sync> TargetSchema for Shared<F> {
            fn check(&self, object: &Json, stored: Option<&Json>) -> SchemaVerdict {
                (self.0)(object, stored)
            }
            fn shared(&self) -> Option<&(dyn TargetSchema + Sync)> {
                Some(self)
            }
        }
        for lean in [migrate(&objects, &lean_options, &schema), migrate(&objects, &lean_options, &Shared(schema))] {
            assert!(kept.conversions.len() > 8 && kept.conversions.iter().any(Conversion::refused));
            assert_eq!(serde_json::to_value(&lean).ok(), serde_json::to_value(&kept).ok());
            assert_eq!(lean.passed_over, kept.passed_over);
            for (b, k) in lean.conversions.iter().zip(&kept.conversions) {
                assert_eq!((b.refused(), b.incomplete()), (k.refused(), k.incomplete()));
                assert!(b.original.is_null() && b.converted.as_ref().is_none_or(Json::is_null));
            }
        }
    }

    #[test]
    fn options_are_checked() {
        let mut o = Options::new(false, Source::Files);
        assert!(o.validate().is_ok());
        o.patch_manager = "nodomain".into();
        assert!(matches!(o.validate(), Err(MigrateError::PatchManager(_))));
        o.patch_manager = DEFAULT_PATCH_MANAGER.into();
        o.legacy_runtime = "Bad Name".into();
        assert!(matches!(o.validate(), Err(MigrateError::RuntimeName(_))));
    }
}
