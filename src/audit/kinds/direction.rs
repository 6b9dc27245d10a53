//! `direction`: which way the move goes. A target below the installed version is a downgrade
//! (the rule's own words): it names the release objects Helm deletes on the way down — what the
//! installed release holds and the target does not render, unless the live object carries
//! `helm.sh/resource-policy: keep` — the CRDs among them and the objects that go with those, and
//! hands the fix the command that protects them. The same version (variant `same`) and a move
//! between a pre-release and a release (variant `prerelease`) are named as such.

use std::collections::BTreeSet;

use serde::Deserialize;

use super::{Check, Hit};
use crate::audit::finding::Severity;
use crate::audit::input::CheckInput;
use crate::objects::{str_at, Origin};
use crate::shell::quote;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {}

const KEEP: &str = "helm.sh/resource-policy";

/// Kind, namespace, name.
type Id = (String, String, String);

impl Check for Params {
    fn check(&self, input: &CheckInput) -> Vec<Hit> {
        let (from, to) = (&input.from, &input.to);
        let subject = format!("release {}/{}", input.namespace, input.release_name);
        let evidence = format!("installed {from}, target {to}");
        match classify(from, to) {
            Move::Upgrade => Vec::new(),
            Move::Same => {
                vec![Hit::new(subject, format!("already at {from}: there is no upgrade to plan")).evidence(evidence).variant("same")]
            }
            Move::Prerelease { kinds, severity } => vec![Hit {
                severity: Some(severity),
                ..Hit::new(subject, format!("{from} → {to} moves from a {kinds}"))
                    .evidence(evidence)
                    .var("kinds", kinds)
                    .variant("prerelease")
            }],
            Move::Down => vec![downgrade(input, subject)],
        }
    }

    /// The direction is the versions' alone; the cluster only adds what keeps and what is lost.
    fn reads_cluster(&self) -> bool {
        false
    }
}

#[derive(Debug, PartialEq)]
enum Move {
    Upgrade,
    Same,
    /// Up, from or to a pre-release (`kinds`: "pre-release to a release"); onto a release is
    /// where a pre-release is meant to go (info), onto a pre-release is a test (warning).
    Prerelease {
        kinds: String,
        severity: Severity,
    },
    /// Below the installed version (semver precedence: 2.3.0-rc.3 is below 2.3.0).
    Down,
}

fn classify(from: &semver::Version, to: &semver::Version) -> Move {
    let pre = |v: &semver::Version| if v.pre.is_empty() { "release" } else { "pre-release" };
    match to.cmp(from) {
        std::cmp::Ordering::Equal => Move::Same,
        std::cmp::Ordering::Less => Move::Down,
        std::cmp::Ordering::Greater if from.pre.is_empty() && to.pre.is_empty() => Move::Upgrade,
        std::cmp::Ordering::Greater => Move::Prerelease {
            kinds: format!("{} to a {}", pre(from), pre(to)),
            severity: if to.pre.is_empty() { Severity::Info } else { Severity::Warning },
        },
    }
}

/// The downgrade `from` → `to`: what Helm deletes, and the command that keeps the CRDs.
fn downgrade(input: &CheckInput, subject: String) -> Hit {
    let (from, to) = (&input.from, &input.to);
    // What Helm compares: the stored release manifest (else the installed chart's render) against
    // the target's release objects; the difference is deleted unless the live object keeps.
    let mut held: Vec<Id> = input.release_objects();
    let basis = if held.is_empty() {
        held = input.installed.map(|i| release_objects(&i.objects)).unwrap_or_default();
        format!("the {from} chart's release objects")
    } else {
        format!("the {from} release's manifest")
    };
    let rendered: BTreeSet<Id> = release_objects(&input.target.objects).into_iter().collect();
    let gone: Vec<&Id> = held.iter().filter(|id| !rendered.contains(*id)).collect();
    let keeps = |id: &Id| input.live(&id.0, &id.1, &id.2).is_some_and(|o| str_at(o, &["metadata", "annotations", KEEP]) == "keep");
    let (kept, deleted): (Vec<&Id>, Vec<&Id>) = gone.into_iter().partition(|id| keeps(id));
    let crds: Vec<&str> = deleted.iter().filter(|id| id.0 == "CustomResourceDefinition").map(|id| id.2.as_str()).collect();
    let mut message = format!("{from} → {to} is a downgrade");
    let mut hit = Hit::new(subject, String::new()).evidence(format!("installed {from}, target {to}; compared: {basis} against {to}'s"));
    let held_crds: Vec<&str> = held.iter().filter(|id| id.0 == "CustomResourceDefinition").map(|id| id.2.as_str()).collect();
    let kept_crds: Vec<&str> = kept.iter().filter(|id| id.0 == "CustomResourceDefinition").map(|id| id.2.as_str()).collect();
    if crds.is_empty() && !kept_crds.is_empty() {
        // The CRDs the target drops keep: Helm leaves them, at the installed schema.
        let one = kept_crds.len() == 1;
        message.push_str(&format!(
            ": {to} does not render {} {} that the {from} release holds, but the live {} {KEEP}: keep, so Helm leaves {} in place at {from}'s schema ({to}'s own copy is never applied by an upgrade)",
            if one { "the CRD" } else { "the CRDs" },
            kept_crds.join(", "),
            if one { "one carries" } else { "ones carry" },
            if one { "it" } else { "them" }
        ));
        hit = hit.var("kept", kept_crds.join(", ")).variant("crds-kept");
    } else if crds.is_empty() && held_crds.is_empty() {
        // Both charts keep their CRDs in crds/ (or the release leaves them out): Helm's upgrade
        // neither applies nor deletes them, so nothing happens to the CRDs at all.
        message.push_str(&format!(
            ": the {from} release holds no CRD (a chart's crds/ directory is never part of a release, and helm upgrade neither applies nor deletes it), so Helm leaves the CRDs as they are, at {from}'s schema or whatever the cluster holds, under {to}'s controller"
        ));
        hit = hit.variant("crds-outside");
    } else if crds.is_empty() {
        // The target renders every CRD the release holds: Helm applies the target's in place.
        let changed = crd_changes(input, &held_crds);
        let change = match (&changed, input.installed) {
            (_, None) => String::new(),
            (c, Some(_)) if c.is_empty() => "; their schemas are the same, so the CRDs do not change".to_string(),
            (c, Some(_)) => format!(
                "; {to}'s lack {} that {from}'s declare, and the API server prunes those fields from the objects it stores (TA-FLD-001 names live objects that set one)",
                super::support::listed(c, 3, ", ")
            ),
        };
        message.push_str(&format!(
            ": {to} renders every CRD the {from} release holds ({}), so Helm deletes none and applies {to}'s in place of {from}'s{change}",
            held_crds.join(", ")
        ));
        for c in &changed {
            hit = hit.evidence(format!("{to}'s CRD lacks: {c}"));
        }
        hit = hit.variant("crds-rendered");
    } else {
        let in_crds_dir: Vec<&str> = input
            .target
            .crds
            .iter()
            .filter(|c| c.origin == Origin::CrdsDir && crds.contains(&c.name.as_str()))
            .map(|c| c.name.as_str())
            .collect();
        let (them, their) = if crds.len() == 1 { ("it", "its kind") } else { ("them", "their kinds") };
        let lost: Vec<String> = crds
            .iter()
            .filter_map(|name| {
                let kind = input.state.crd(name).map(|c| str_at(c, &["spec", "names", "kind"]).to_string())?;
                let n = input.state.of_kind(&kind).count();
                Some(format!("{kind}: {n}"))
            })
            .collect();
        message.push_str(&format!(
            ": {} {} {} of {from} without {KEEP}: keep, and {to} does not render {them}{}, so helm upgrade (and a rollback) to {to} deletes {them}, and with {them} every object of {their}{}",
            if crds.len() == 1 { "the CRD" } else { "the CRDs" },
            crds.join(", "),
            if crds.len() == 1 { "is a release object" } else { "are release objects" },
            if in_crds_dir.is_empty() {
                String::new()
            } else {
                format!(" ({to} ships {} in crds/, which helm upgrade never applies)", if in_crds_dir.len() == crds.len() { them.to_string() } else { in_crds_dir.join(", ") })
            },
            if lost.is_empty() { String::new() } else { format!(" (in the cluster now: {})", lost.join(", ")) }
        ));
        let names: Vec<String> = crds.iter().map(|c| quote(c)).collect();
        hit = hit.var("commands", format!("kubectl annotate crd {} {KEEP}=keep --overwrite", names.join(" ")));
    }
    let others = deleted.len() - crds.len();
    if others > 0 {
        let named: Vec<String> = deleted.iter().filter(|id| id.0 != "CustomResourceDefinition").map(|id| name(id)).collect();
        message.push_str(&format!(
            "; Helm also deletes {} {to} does not render ({})",
            super::counted(others, "other object"),
            super::support::listed(&named, 3, ", ")
        ));
    }
    hit.message = message;
    for id in &deleted {
        hit = hit.evidence(format!("deleted: {}", name(id)));
    }
    for id in &kept {
        hit = hit.evidence(format!("kept (live {KEEP}: keep): {}", name(id)));
    }
    hit.var("crds", crds.join(", "))
}

/// The schema paths (and versions) the installed chart's copy of each CRD declares that the
/// target's lacks: what the API server stops keeping once Helm applies the target's.
fn crd_changes(input: &CheckInput, names: &[&str]) -> Vec<String> {
    let Some(installed) = input.installed else { return Vec::new() };
    let mut out = Vec::new();
    for name in names {
        let (Some(old), Some(new)) = (installed.crds.iter().find(|c| c.name == *name), input.target.crds.iter().find(|c| c.name == *name))
        else {
            continue;
        };
        for v in &old.versions {
            match new.versions.iter().find(|n| n.name == v.name) {
                None => out.push(format!("{name} version {}", v.name)),
                Some(n) => out.extend(v.schema.keys().filter(|p| !n.schema.contains_key(*p)).map(|p| format!("{name} {} {p}", v.name))),
            }
        }
    }
    out
}

fn release_objects(objects: &[crate::objects::Object]) -> Vec<Id> {
    objects
        .iter()
        .filter(|o| o.origin == Origin::Template)
        .map(|o| (o.identity.kind.clone(), o.identity.namespace.clone(), o.identity.name.clone()))
        .collect()
}

fn name(id: &Id) -> String {
    match id.1.as_str() {
        "" => format!("{}/{}", id.0, id.2),
        ns => format!("{}/{ns}/{}", id.0, id.2),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> semver::Version {
        semver::Version::parse(s).unwrap()
    }

    #[test]
    fn moves_are_named_by_their_direction() {
        assert_eq!(classify(&v("2.2.1"), &v("2.3.0")), Move::Upgrade);
        assert_eq!(classify(&v("2.3.0"), &v("2.3.0")), Move::Same);
        assert_eq!(classify(&v("2.3.0"), &v("2.2.1")), Move::Down);
        assert_eq!(classify(&v("2.3.0"), &v("2.3.0-rc.3")), Move::Down, "a release's own pre-release is below it");
        assert_eq!(
            classify(&v("2.3.0-rc.3"), &v("2.3.0")),
            Move::Prerelease { kinds: "pre-release to a release".into(), severity: Severity::Info }
        );
        assert_eq!(
            classify(&v("2.2.1"), &v("2.3.0-rc.3")),
            Move::Prerelease { kinds: "release to a pre-release".into(), severity: Severity::Warning }
        );
    }
}
