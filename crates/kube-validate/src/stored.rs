//! Stored objects under a set of CRDs: one [`Validator`] per CRD (its storage version, compiled
//! once for the cluster's version), and for each stored object of a kind they define, where it
//! stands on its next write — valid, ratcheted (accepted until the invalid field itself changes)
//! or rejected on every update (the controller's status and finalizer writes included) — with the
//! fields that write would prune and the rules that could not be evaluated. `check` (the `schema`
//! kind), `status` and `migrate` all ask this one module, so they agree.

use std::collections::BTreeMap;

use rayon::prelude::*;
use serde::Serialize;
use serde_json::Value;

use super::cel::Unevaluated;
use super::memo::Memo;
use super::{FieldError, Validator, WriteOutcome};
use kube_version::KubeVersion;

/// Objects below which a share of a survey is not worth handing to another thread.
const MIN_SHARE: usize = 256;

/// Shares per core: more than one, so a core slowed by other work (the summary `status` makes
/// beside the survey, another process) hands its remaining shares to the others.
const SHARES_PER_THREAD: usize = 8;

/// The Kubernetes version assumed when the cluster's is unknown (a snapshot without
/// `ClusterInfo` and no `--kube-version`): the newest the validator models.
pub const ASSUMED_KUBE: KubeVersion = KubeVersion::new(1, 36);

/// Validators for a set of CRDs at one cluster version.
pub struct CrdSet {
    validators: Vec<(String, Validator)>,
    /// CRDs that could not be compiled (`name: reason`); their objects are not assessed.
    pub skipped: Vec<String>,
    pub kube: KubeVersion,
}

impl std::fmt::Debug for CrdSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CrdSet").field("crds", &self.crd_names()).field("kube", &self.kube).finish()
    }
}

/// Where a stored object stands under the CRDs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Standing {
    /// Every write of it as it is validates.
    Valid,
    /// No error, but a rule could not be evaluated here (never counted as valid).
    Unevaluated,
    /// Updates that leave the invalid fields alone pass (ratcheting); changing them, or writing
    /// the object anew (a restore from backup), is rejected.
    Ratcheted,
    /// Even an update that changes nothing but metadata is rejected: the controller can no longer
    /// write it (status, finalizers), and nor can anyone else.
    Rejected,
}

/// One stored object's outlook under its CRD.
#[derive(Debug, Clone, Serialize)]
pub struct Assessment {
    pub kind: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    pub name: String,
    /// The CRD that judged it (`trainjobs.trainer.kubeflow.org`).
    pub crd: String,
    pub standing: Standing,
    /// Errors that remain on a metadata-only update.
    pub on_any_update: Vec<FieldError>,
    /// Errors ratcheting forgives until the field changes.
    pub when_field_changes: Vec<FieldError>,
    /// Errors a write of the object as new would raise (create, restore from a backup).
    pub as_new: Vec<FieldError>,
    /// Fields the target drops: gone from reads once the CRD is in, from storage on the next write.
    pub pruned: Vec<String>,
    pub unevaluated: Vec<Unevaluated>,
    /// What the API server prints for the write that fails (empty when none does).
    pub message: String,
}

impl Assessment {
    /// `Kind/[namespace/]name`, as reports write subjects.
    pub fn subject(&self) -> String {
        if self.namespace.is_empty() {
            format!("{}/{}", self.kind, self.name)
        } else {
            format!("{}/{}/{}", self.kind, self.namespace, self.name)
        }
    }

    /// Whether anything about the object needs reporting.
    pub fn notable(&self) -> bool {
        self.standing != Standing::Valid || !self.pruned.is_empty()
    }
}

/// Counts for one kind.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct KindTally {
    pub kind: String,
    pub crd: String,
    /// The version objects were validated at (the CRD's storage version).
    pub version: String,
    pub objects: usize,
    pub valid: usize,
    pub ratcheted: usize,
    pub rejected: usize,
    pub unevaluated: usize,
    /// Objects the next write would strip of fields (counted beside their standing).
    pub pruned: usize,
}

/// Every stored object of the CRDs' kinds, assessed.
#[derive(Debug, Clone, Serialize)]
pub struct Survey {
    pub kube: KubeVersion,
    /// One line per kind the CRDs define, sorted by kind.
    pub kinds: Vec<KindTally>,
    /// The objects with something to report, sorted by kind, namespace, name.
    pub notable: Vec<Assessment>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<String>,
}

impl CrdSet {
    /// Compiles each CRD's storage version for `kube`. CRDs that fail to compile are listed in
    /// [`CrdSet::skipped`] rather than failing the set.
    pub fn new<'a>(crds: impl IntoIterator<Item = &'a Value>, kube: KubeVersion) -> CrdSet {
        let mut validators = Vec::new();
        let mut skipped = Vec::new();
        for crd in crds {
            let name = crd.pointer("/metadata/name").and_then(Value::as_str).unwrap_or("<unnamed>").to_string();
            match Validator::from_crd(crd, None, kube.clone()) {
                Ok(v) => validators.push((name, v)),
                Err(e) => skipped.push(format!("{name}: {e}")),
            }
        }
        validators.sort_by(|a, b| a.0.cmp(&b.0));
        CrdSet { validators, skipped, kube }
    }

    pub fn crd_names(&self) -> Vec<&str> {
        self.validators.iter().map(|(n, _)| n.as_str()).collect()
    }

    pub fn validators(&self) -> impl Iterator<Item = (&str, &Validator)> {
        self.validators.iter().map(|(n, v)| (n.as_str(), v))
    }

    /// The validator for an object's group and kind (any version of the group: the API server
    /// serves a CRD's objects at its storage version once read).
    pub fn for_object(&self, obj: &Value) -> Option<(&str, &Validator)> {
        let kind = obj.get("kind").and_then(Value::as_str)?;
        let api = obj.get("apiVersion").and_then(Value::as_str)?;
        let group = api.rsplit_once('/').map_or("", |(g, _)| g);
        self.validators().find(|(_, v)| v.kind == kind && v.group == group)
    }

    /// Validates a write of `obj` (a create when `stored` is None, else an update of `stored`),
    /// with both at the CRD's storage version. None when no CRD of the set defines its kind.
    pub fn validate(&self, obj: &Value, stored: Option<&Value>) -> Option<WriteOutcome> {
        self.validate_with(obj, stored, &mut Memo::new())
    }

    /// [`CrdSet::validate`], answered from `memo` when a write of the same shape was validated
    /// (see [`crate::memo`]).
    pub fn validate_with(&self, obj: &Value, stored: Option<&Value>, memo: &mut Memo) -> Option<WriteOutcome> {
        let (_, v) = self.for_object(obj)?;
        let obj = at_version(v, obj);
        let stored = stored.map(|s| at_version(v, s));
        Some(memo.validate(v, &obj, stored.as_deref()))
    }

    /// One stored object's outlook; None when no CRD of the set defines its kind.
    pub fn assess(&self, obj: &Value) -> Option<Assessment> {
        self.assess_with(obj, &mut Memo::new())
    }

    /// [`CrdSet::assess`], answered from `memo` when an object of the same shape was assessed
    /// (see [`crate::memo`]: the same assessment but for the object's name and namespace).
    pub fn assess_with(&self, obj: &Value, memo: &mut Memo) -> Option<Assessment> {
        let (crd, v) = self.for_object(obj)?;
        // Writes of the main resource keep the stored status as it is, and cluster reads keep
        // only a summary of it (the cluster reader normalises objects so): judge the object without it.
        let obj = at_version(v, obj);
        let outlook = memo.outlook(v, &obj, true);
        let meta = |k: &str| obj.pointer(&format!("/metadata/{k}")).and_then(Value::as_str).unwrap_or("").to_string();
        let name = meta("name");
        let standing = if !outlook.on_any_update.is_empty() {
            Standing::Rejected
        } else if !outlook.when_field_changes.is_empty() || !outlook.as_new.errors.is_empty() {
            Standing::Ratcheted
        } else if !outlook.as_new.unevaluated.is_empty() {
            Standing::Unevaluated
        } else {
            Standing::Valid
        };
        let kind_group = format!("{}.{}", v.kind, v.group);
        let message = match standing {
            Standing::Rejected => {
                WriteOutcome { errors: outlook.on_any_update.clone(), ..WriteOutcome::default() }.status_message(&kind_group, &name)
            }
            Standing::Ratcheted if !outlook.as_new.errors.is_empty() => outlook.as_new.status_message(&kind_group, &name),
            _ => String::new(),
        };
        Some(Assessment {
            kind: v.kind.clone(),
            namespace: meta("namespace"),
            name,
            crd: crd.to_string(),
            standing,
            on_any_update: outlook.on_any_update,
            when_field_changes: outlook.when_field_changes,
            as_new: outlook.as_new.errors,
            pruned: outlook.as_new.pruned,
            unevaluated: outlook.as_new.unevaluated,
            message,
        })
    }

    /// Assesses every object of the set's kinds; the others are passed over. The objects are
    /// shared out over the machine's cores (rayon's pool, in order-keeping shares); the result does not
    /// depend on how.
    pub fn survey<'a>(&self, objects: impl IntoIterator<Item = &'a Value>) -> Survey {
        self.survey_keeping(objects, true)
    }

    /// The survey's counts only: the notable objects are not kept (`status` prints counts).
    pub fn tally<'a>(&self, objects: impl IntoIterator<Item = &'a Value>) -> Survey {
        self.survey_keeping(objects, false)
    }

    fn survey_keeping<'a>(&self, objects: impl IntoIterator<Item = &'a Value>, keep: bool) -> Survey {
        let mut kinds: BTreeMap<String, KindTally> = self
            .validators()
            .map(|(crd, v)| {
                (
                    v.kind.clone(),
                    KindTally { kind: v.kind.clone(), crd: crd.to_string(), version: v.version.clone(), ..KindTally::default() },
                )
            })
            .collect();
        let objects: Vec<&Value> = objects.into_iter().collect();
        let mut notable = Vec::new();
        // SHARES_PER_THREAD shares per core, none under MIN_SHARE objects; the shares come back
        // in order. Each of rayon's splits keeps one memo over the shares it takes.
        let size = objects.len().div_ceil(rayon::current_num_threads().max(1) * SHARES_PER_THREAD).max(MIN_SHARE);
        let parts: Vec<_> = objects.par_chunks(size).map_init(Memo::new, |memo, chunk| self.survey_part(chunk, keep, memo)).collect();
        for part in parts {
            for (kind, t) in part.0 {
                if let Some(sum) = kinds.get_mut(&kind) {
                    sum.objects += t.objects;
                    sum.valid += t.valid;
                    sum.unevaluated += t.unevaluated;
                    sum.ratcheted += t.ratcheted;
                    sum.rejected += t.rejected;
                    sum.pruned += t.pruned;
                }
            }
            notable.extend(part.1);
        }
        notable.sort_by(|a, b| (&a.kind, &a.namespace, &a.name).cmp(&(&b.kind, &b.namespace, &b.name)));
        Survey { kube: self.kube.clone(), kinds: kinds.into_values().collect(), notable, skipped: self.skipped.clone() }
    }

    /// One share of [`CrdSet::survey`]: counts per kind, and the notable assessments.
    fn survey_part(&self, objects: &[&Value], keep: bool, memo: &mut Memo) -> (BTreeMap<String, KindTally>, Vec<Assessment>) {
        let mut kinds: BTreeMap<String, KindTally> = BTreeMap::new();
        let mut notable = Vec::new();
        for obj in objects {
            let Some(a) = self.assess_with(obj, memo) else { continue };
            let t = kinds.entry(a.kind.clone()).or_default();
            t.objects += 1;
            match a.standing {
                Standing::Valid => t.valid += 1,
                Standing::Unevaluated => t.unevaluated += 1,
                Standing::Ratcheted => t.ratcheted += 1,
                Standing::Rejected => t.rejected += 1,
            }
            t.pruned += usize::from(!a.pruned.is_empty());
            if keep && a.notable() {
                notable.push(a);
            }
        }
        (kinds, notable)
    }
}

/// The object as the API server hands it to validation at the CRD's version: a CRD without a
/// conversion webhook serves every version by rewriting `apiVersion` (strategy `None`).
/// Borrowed when it is already there (the usual case), since a copy of each of 50,000 objects
/// was a tenth of `check`.
fn at_version<'a>(v: &Validator, obj: &'a Value) -> std::borrow::Cow<'a, Value> {
    let api = format!("{}/{}", v.group, v.version);
    if obj.get("apiVersion").and_then(Value::as_str) == Some(api.as_str()) {
        return std::borrow::Cow::Borrowed(obj);
    }
    let mut obj = obj.clone();
    if let Some(m) = obj.as_object_mut() {
        m.insert("apiVersion".into(), Value::String(api));
    }
    std::borrow::Cow::Owned(obj)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn crd() -> Value {
        json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "things.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced", "names": {"kind": "Thing", "plural": "things"},
                "versions": [{"name": "v1", "served": true, "storage": true, "subresources": {"status": {}},
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                        "spec": {"type": "object", "properties": {
                            "size": {"type": "integer", "maximum": 10},
                            "mode": {"type": "string", "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "mode is immutable"}]},
                            "name": {"type": "string"}}},
                        "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}}]}})
    }

    fn thing(name: &str, spec: Value) -> Value {
        json!({"apiVersion": "example.com/v1beta1", "kind": "Thing", "metadata": {"name": name, "namespace": "ns"}, "spec": spec})
    }

    #[test]
    fn each_standing_and_the_tally() {
        let set = CrdSet::new([&crd()], KubeVersion::new(1, 33));
        let objects = [
            thing("ok", json!({"size": 3, "name": "a"})),
            thing("too-big", json!({"size": 11})),
            thing("typed", json!({"mode": 4})),
            thing("extra", json!({"size": 1, "old": {"x": 1}})),
            json!({"apiVersion": "other.io/v1", "kind": "Thing", "metadata": {"name": "x"}}),
        ];
        let survey = set.survey(objects.iter());
        let tally = set.tally(objects.iter());
        assert_eq!(tally.kinds, survey.kinds, "the counts alone are the survey's");
        assert!(tally.notable.is_empty() && survey.notable.len() == 3);
        assert_eq!(
            survey.kinds,
            vec![KindTally {
                kind: "Thing".into(),
                crd: "things.example.com".into(),
                version: "v1".into(),
                objects: 4,
                valid: 2,
                ratcheted: 1,
                rejected: 1,
                unevaluated: 0,
                pruned: 1
            }]
        );
        let by_name = |n: &str| survey.notable.iter().find(|a| a.name == n).unwrap();
        let big = by_name("too-big");
        assert_eq!(big.standing, Standing::Ratcheted);
        assert_eq!(
            big.when_field_changes[0].to_string(),
            "spec.size: Invalid value: 11: spec.size in body should be less than or equal to 10"
        );
        assert!(big.message.starts_with("Thing.example.com \"too-big\" is invalid: spec.size: Invalid value: 11"), "{}", big.message);
        // A type error under a transition rule: the rule reads oldSelf, so ratcheting never
        // forgives it and every update fails.
        let typed = by_name("typed");
        assert_eq!(typed.standing, Standing::Rejected, "{typed:#?}");
        assert_eq!(
            typed.message,
            "Thing.example.com \"typed\" is invalid: spec.mode: Invalid value: \"string\": invalid data, expected string, got int64 evaluating rule: mode is immutable"
        );
        assert_eq!(by_name("extra").pruned, vec!["spec.old".to_string()]);
        assert_eq!(by_name("extra").standing, Standing::Valid);
        assert_eq!(by_name("extra").subject(), "Thing/ns/extra");
    }

    /// Many shares, memos kept across them: the same survey as each object assessed alone.
    #[test]
    fn a_survey_in_many_shares_is_each_object_assessed_alone() {
        let set = CrdSet::new([&crd()], KubeVersion::new(1, 33));
        let objects: Vec<Value> = (0..6_000)
            .map(|i| match i % 4 {
                0 => thing(&format!("ok-{i}"), json!({"size": i % 10, "name": "a"})),
                1 => thing(&format!("big-{i}"), json!({"size": 11 + i % 3})),
                2 => thing(&format!("typed-{i}"), json!({"mode": i})),
                _ => thing(&format!("extra-{i}"), json!({"size": 1, "old": {"x": i}})),
            })
            .collect();
        let survey = set.survey(objects.iter());
        let mut alone: Vec<Assessment> = objects.iter().filter_map(|o| set.assess(o)).filter(Assessment::notable).collect();
        alone.sort_by(|a, b| (&a.kind, &a.namespace, &a.name).cmp(&(&b.kind, &b.namespace, &b.name)));
        assert_eq!(format!("{:?}", survey.notable), format!("{alone:?}"));
        let t = &survey.kinds[0];
        assert_eq!((t.objects, t.valid, t.ratcheted, t.rejected, t.pruned), (6_000, 3_000, 1_500, 1_500, 1_500));
    }

    #[test]
    fn no_ratcheting_before_1_30() {
        let set = CrdSet::new([&crd()], KubeVersion::new(1, 29));
        let a = set.assess(&thing("too-big", json!({"size": 11}))).unwrap();
        assert_eq!(a.standing, Standing::Rejected);
    }

    #[test]
    fn a_broken_crd_is_skipped_not_fatal() {
        let bad = json!({"metadata": {"name": "bad.example.com"}, "spec": {"group": "example.com"}});
        let set = CrdSet::new([&bad, &crd()], KubeVersion::new(1, 33));
        assert_eq!(set.crd_names(), vec!["things.example.com"]);
        assert!(set.skipped[0].starts_with("bad.example.com: "), "{:?}", set.skipped);
    }
}
