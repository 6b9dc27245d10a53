//! `schema`: live objects of every kind whose CRD the target chart ships, validated against the
//! target CRD's storage version as the API server would on each object's next write (at the
//! cluster's version, ratcheting included). One rule per outcome — rejected on every update,
//! rejected when the field changes, fields pruned (data loss), rules not evaluated — each hit one
//! constraint on one kind, naming the objects, their values and the API server's message. This
//! kind subsumes the former `field-removed` (schema paths compared between two charts): a field
//! the target drops is exactly what pruning reports, and a retyped one what validation rejects.
//! A hit whose objects `trainer-audit migrate` converts selects the `migrate` variant, whose fix
//! points at the migrate steps (rules of kind `migrate`).

use std::collections::BTreeMap;

use serde::Deserialize;

use super::{Check, Hit};
use crate::audit::input::CheckInput;
use kube_validate::stored::{Assessment, Standing};
use kube_validate::FieldError;

/// The most objects a fix shows patch commands for (the evidence names every object).
const SHOWN: usize = 5;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Every update is rejected, a metadata-only one (the controller's) included.
    Rejected,
    /// Accepted while the invalid field is left alone; rejected when it changes or on re-create.
    Ratcheted,
    /// Fields the target schema does not declare: dropped from reads and on the next write.
    Pruned,
    /// Rules trainer-audit could not evaluate on the objects.
    Unevaluated,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    pub outcome: Outcome,
    /// Kinds to report (default: every kind whose CRD the target ships).
    #[serde(default)]
    pub kinds: Vec<String>,
}

/// Objects sharing one constraint on one kind.
#[derive(Default)]
struct Group<'a> {
    /// (object, what it says about this constraint)
    objects: Vec<(&'a Assessment, String)>,
    /// The field each object breaks it at (`spec.x[3].y`), for its patch.
    fields: Vec<String>,
}

impl Check for Params {
    fn check(&self, input: &CheckInput) -> Vec<Hit> {
        let survey = input.survey();
        let migrated = input.migrated();
        let (converted, refused) = (&migrated.converted, &migrated.refused);
        let mut groups: BTreeMap<(String, String, String), Group> = BTreeMap::new();
        for a in survey.notable.iter().filter(|a| self.kinds.is_empty() || self.kinds.contains(&a.kind)) {
            match self.outcome {
                Outcome::Rejected if a.standing == Standing::Rejected => {
                    for e in &a.on_any_update {
                        group(&mut groups, a, e);
                    }
                }
                Outcome::Ratcheted if a.standing == Standing::Ratcheted => {
                    let errors = if a.when_field_changes.is_empty() { &a.as_new } else { &a.when_field_changes };
                    for e in errors {
                        group(&mut groups, a, e);
                    }
                }
                Outcome::Pruned => {
                    for p in &a.pruned {
                        let path = without_indexes(p);
                        let g = groups.entry((a.kind.clone(), path, String::new())).or_default();
                        g.objects.push((a, p.clone()));
                        g.fields.push(p.clone());
                    }
                }
                Outcome::Unevaluated => {
                    for u in &a.unevaluated {
                        let key = (a.kind.clone(), without_indexes(&u.path), u.rule.clone());
                        let g = groups.entry(key).or_default();
                        g.objects.push((a, u.reason.clone()));
                        g.fields.push(u.path.clone());
                    }
                }
                _ => {}
            }
        }
        let (kube, known) = input.kube();
        let at =
            if known { format!("Kubernetes {kube}") } else { format!("Kubernetes {kube} (assumed: the cluster's version is unknown)") };
        groups
            .into_iter()
            .map(|((kind, path, what), g)| {
                // Each object's name and evidence line, made on the pool's cores (25,000 of them
                // in a large cluster), in order.
                let (names, lines): (Vec<String>, Vec<String>) = crate::par::map(&g.objects, |(a, detail)| {
                    let subject = a.subject();
                    let line = format!("{subject}: {detail}");
                    (subject, line)
                })
                .into_iter()
                .unzip();
                let n = names.len();
                let plural = if n == 1 { kind.clone() } else { format!("{kind}s") };
                let message = match self.outcome {
                    Outcome::Rejected => format!(
                        "{n} {plural} rejected on every update under the {} CRD, even one that changes only metadata (the controller's status and finalizer writes included): {path}: {what}",
                        input.to
                    ),
                    Outcome::Ratcheted => format!(
                        "{n} {plural} invalid under the {} CRD at {path} ({what}): accepted while {path} is left alone (ratcheting), rejected when it changes or when the object is created again (a restore from backup)",
                        input.to
                    ),
                    Outcome::Pruned => format!(
                        "{n} {plural} set {path}, which the {} CRD does not declare: the API server drops it from every read once the CRD is applied, and from storage on the next write",
                        input.to
                    ),
                    Outcome::Unevaluated => format!(
                        "{n} {plural} not fully validated: trainer-audit cannot evaluate the rule `{what}` at {path}; the API server will"
                    ),
                };
                let mut hit = Hit::new(format!("{kind} {path}"), message);
                for line in lines {
                    hit = hit.evidence(line);
                }
                if let Some((a, _)) = g.objects.iter().find(|(a, _)| !a.message.is_empty()) {
                    if matches!(self.outcome, Outcome::Rejected | Outcome::Ratcheted) {
                        hit = hit.evidence(format!("the API server: {}", a.message));
                    }
                }
                hit = hit.evidence(format!("validated against the {} CRD {} at {at}", input.to, g.objects[0].0.crd));
                // A decision, not a command: the value is the user's to choose, so the patches
                // are shown for filling in, never run by the runbook (issue 20 §2b).
                let remove = self.outcome == Outcome::Pruned;
                let mut patches: Vec<String> =
                    g.objects.iter().zip(&g.fields).take(SHOWN).map(|((a, _), field)| format!("- `{}`", patch_command(a, field, remove))).collect();
                if g.objects.len() > SHOWN {
                    patches.push(format!("- and {} more alike: the evidence names every object", g.objects.len() - SHOWN));
                }
                hit = hit.var("kind", kind.as_str()).var("path", path.as_str()).var("crd", g.objects[0].0.crd.as_str()).var("patches", patches.join("\n"));
                let named: std::collections::HashSet<&str> = names.iter().map(String::as_str).collect();
                for (subject, why) in refused.iter().filter(|(s, _)| named.contains(s.as_str())) {
                    hit = hit.evidence(format!("trainer-audit migrate refuses {subject}: {why}"));
                }
                if names.iter().any(|s| converted.contains(s)) {
                    hit = hit.variant("migrate");
                }
                hit
            })
            .collect()
    }
}

fn group<'a>(groups: &mut BTreeMap<(String, String, String), Group<'a>>, a: &'a Assessment, e: &FieldError) {
    let what = if e.detail.is_empty() { e.kind.as_str().to_string() } else { format!("{}: {}", e.kind.as_str(), e.detail) };
    let g = groups.entry((a.kind.clone(), without_indexes(&e.field), what)).or_default();
    g.objects.push((a, e.to_string()));
    g.fields.push(e.field.clone());
}

/// `spec.x[3].y` → `spec.x[*].y`: one constraint however many list items break it.
fn without_indexes(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    let mut rest = path;
    while let Some(open) = rest.find('[') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.find(']') {
            Some(close) if after[..close].chars().all(|c| c.is_ascii_digit()) && close > 0 => {
                out.push_str("[*]");
                rest = &after[close + 1..];
            }
            _ => {
                out.push('[');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The value a person fills into a printed patch.
pub const FILL_IN: &str = "<NEW VALUE AS JSON>";

/// A non-interactive `kubectl patch` of one object at `field`: replacing its value with
/// [`FILL_IN`], or (`remove`) removing it. Quoted except the marker, which must be replaced.
fn patch_command(a: &Assessment, field: &str, remove: bool) -> String {
    let q = crate::shell::quote;
    let ns = if a.namespace.is_empty() { String::new() } else { format!(" -n {}", q(&a.namespace)) };
    let op = if remove {
        serde_json::json!([{"op": "remove", "path": pointer(field)}]).to_string()
    } else {
        serde_json::json!([{"op": "replace", "path": pointer(field), "value": "FILL"}]).to_string().replace("\"FILL\"", FILL_IN)
    };
    format!("kubectl patch {} {}{ns} --type json -p {}", q(&a.crd), q(&a.name), q(&op))
}

/// `spec.x[3].y` and `metadata.labels[app]` as JSON pointers (`/spec/x/3/y`).
fn pointer(field: &str) -> String {
    let mut out = String::new();
    let escape = |s: &str| s.replace('~', "~0").replace('/', "~1");
    for part in field.split('.') {
        let (head, mut rest) = part.split_once('[').map_or((part, ""), |(h, r)| (h, r));
        if !head.is_empty() {
            out.push('/');
            out.push_str(&escape(head));
        }
        while let Some((inside, after)) = rest.split_once(']') {
            out.push('/');
            out.push_str(&escape(inside));
            rest = after.strip_prefix('[').unwrap_or(after);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_become_json_pointers() {
        assert_eq!(pointer("spec.initializer.model.storageUri"), "/spec/initializer/model/storageUri");
        assert_eq!(pointer("spec.x[3].y[0]"), "/spec/x/3/y/0");
        assert_eq!(pointer("metadata.labels[a/b]"), "/metadata/labels/a~1b");
    }

    #[test]
    fn indexes_collapse() {
        assert_eq!(without_indexes("spec.a[3].b[12]"), "spec.a[*].b[*]");
        assert_eq!(without_indexes("metadata.labels[app]"), "metadata.labels[app]");
        assert_eq!(without_indexes("x[]"), "x[]");
        assert_eq!(without_indexes("plain"), "plain");
    }
}
