//! `finalizer`: runtimes carrying a finalizer (stuck Terminating when deleted until a
//! controller removes it), with the command that removes just that finalizer: run only while the
//! runtime still exists and still carries it (after the upgrade the new controller has usually
//! removed it, and a runbook step must not fail then), as a JSON patch that first tests the list
//! entry, so it fails instead of removing another finalizer if the list changed. With
//! `removed_from`, the first release whose controller removes the finalizer: an upgrade to it
//! is a handoff (the rule's own words); an upgrade below it keeps a controller that adds the
//! finalizer, so only runtimes the upgrade deletes (release objects the target no longer
//! renders) or that are already being deleted are named (variant `kept`).

use serde::Deserialize;
use serde_json::Value as Json;

use super::support::{name_of, trainjobs_using};
use super::{Check, Hit};
use crate::audit::input::CheckInput;
use crate::objects::str_at;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    pub finalizer: String,
    /// The first release whose controller removes the finalizer from every runtime.
    #[serde(default)]
    pub removed_from: Option<String>,
}

impl Check for Params {
    fn check(&self, input: &CheckInput) -> Vec<Hit> {
        let finalizer = self.finalizer.as_str();
        let handoff = match self.removed_from.as_deref().and_then(helm_render::version::parse_lenient) {
            Some(first) => (input.to.major, input.to.minor, input.to.patch) >= (first.major, first.minor, first.patch),
            None => true,
        };
        // Below the handoff, what the upgrade deletes: the release's runtimes the target does not
        // render as release objects.
        let deleted: Vec<(String, String)> = input
            .release_objects()
            .into_iter()
            .filter(|(k, _, _)| k == "ClusterTrainingRuntime" || k == "TrainingRuntime")
            .filter(|(k, ns, n)| {
                !input.target.objects.iter().any(|o| &o.identity.kind == k && &o.identity.namespace == ns && &o.identity.name == n)
            })
            .map(|(k, _, n)| (k, n))
            .collect();
        input
        .state
        .runtimes()
        .filter(|o| o.pointer("/metadata/finalizers").and_then(Json::as_array).is_some_and(|f| f.iter().any(|x| x.as_str() == Some(finalizer))))
        .filter(|o| {
            handoff
                || o.pointer("/metadata/deletionTimestamp").is_some_and(|d| !d.is_null())
                || deleted.iter().any(|(k, n)| k == str_at(o, &["kind"]) && n == str_at(o, &["metadata", "name"]))
        })
        .map(|o| {
            let deleting = o.pointer("/metadata/deletionTimestamp").is_some_and(|d| !d.is_null());
            let (kind, name) = (str_at(o, &["kind"]), str_at(o, &["metadata", "name"]));
            let users = trainjobs_using(input, kind, name);
            let index = o
                .pointer("/metadata/finalizers")
                .and_then(Json::as_array)
                .and_then(|f| f.iter().position(|x| x.as_str() == Some(finalizer)))
                .unwrap_or(0);
            let patch = serde_json::json!([
                {"op": "test", "path": format!("/metadata/finalizers/{index}"), "value": finalizer},
                {"op": "remove", "path": format!("/metadata/finalizers/{index}")}
            ]);
            let q = crate::shell::quote;
            let namespace = match str_at(o, &["metadata", "namespace"]) {
                "" => String::new(),
                ns => format!(" -n {}", q(ns)),
            };
            let (kind_q, name_q) = (q(&kind.to_ascii_lowercase()), q(name));
            // A runtime being deleted can be gone at any line (a 2.3 controller already running
            // removes the finalizer at any moment): a command that fails on it then succeeds
            // only if it is gone, and still fails where it is there.
            // (`test -z`, not `!`: a negated command's failure does not stop a `set -e` shell.)
            let gone = format!("test -z \"$(kubectl get {kind_q} {name_q}{namespace} --ignore-not-found -o name)\"");
            let command = format!(
                "if kubectl get {kind_q} {name_q}{namespace} --ignore-not-found -o {} | grep -qF {}; then kubectl patch {kind_q} {name_q}{namespace} --type=json -p {}{}; fi",
                q("jsonpath={.metadata.finalizers}"),
                q(finalizer),
                q(&patch.to_string()),
                if deleting { format!(" || {gone}") } else { String::new() }
            );
            let message = match (deleting, handoff) {
                (true, _) => format!("{} is being deleted and stuck on {finalizer} ({} {} it)", name_of(o), super::counted(users, "TrainJob"), super::agree(users, "uses", "use")),
                (false, true) => format!(
                    "{} carries {finalizer} ({} {} it): deleting it leaves it Terminating until a controller removes the finalizer",
                    name_of(o),
                    super::counted(users, "TrainJob"),
                    super::agree(users, "uses", "use")
                ),
                (false, false) => format!(
                    "{} carries {finalizer} ({} {} it) and the upgrade deletes it ({} does not render it): it stays Terminating until no TrainJob uses it",
                    name_of(o),
                    super::counted(users, "TrainJob"),
                    super::agree(users, "uses", "use"),
                    input.to
                ),
            };
            // Already being deleted, to a target whose controller removes the finalizer from every
            // runtime (2.3): the deletion then completes whenever that controller starts, and an
            // apply while the runtime is Terminating (the installer hook's) does not bring it
            // back — seen after an uninstall kept its history, the runtime lost by the runbook.
            // So the deletion is finished before the upgrade, which re-creates the runtime when
            // the target delivers it.
            let removes_all = input.to >= semver::Version::new(2, 3, 0);
            if deleting && removes_all {
                let delivered = input.target.runtimes.iter().find(|r| r.kind == kind && r.name == name).map(|r| r.delivery.describe());
                let message = format!(
                    "{} is being deleted and held by {finalizer} ({} {} it); the {} controller removes the finalizer from every runtime, so the deletion completes whenever it starts, and an apply while it is Terminating does not bring it back: {}",
                    name_of(o),
                    super::counted(users, "TrainJob"),
                    super::agree(users, "uses", "use"),
                    input.to,
                    match &delivered {
                        Some(d) => format!("finish the deletion before the upgrade so {d} re-creates it"),
                        None => format!("{} does not deliver it, so back it up and re-create it after the deletion", input.to),
                    }
                );
                // The copy is empty where the deletion already completed (see `gone` above); the
                // wait is guarded by `gone` too: kubectl's wait means to ignore NotFound (v0.36.1
                // pkg/cmd/wait/wait.go L393-L395), but a rehearsal's block still stopped on a
                // NotFound after the copy, from the patch or the wait (not told apart).
                let backup = format!("kubectl get {kind_q} {name_q}{namespace} --ignore-not-found -o yaml > {}", q(&format!("{name}-terminating.yaml")));
                let wait = format!("kubectl wait --for=delete {}/{name_q}{namespace} --timeout=120s || {gone}", kind_q);
                return Hit::new(name_of(o), message)
                    .variant("terminating")
                    .evidence(format!("finalizers: {finalizer}, deletionTimestamp set"))
                    .var("kind", kind.to_ascii_lowercase())
                    .var("name", name)
                    .var("finalizer", finalizer)
                    .var("delivery", delivered.unwrap_or_else(|| "nothing in the target: re-create it from the backup after the upgrade".into()))
                    .var("commands", [backup, command, wait].join("\n"));
            }
            let hit = Hit::new(name_of(o), message);
            let hit = if handoff { hit } else { hit.variant("kept") };
            hit
                .evidence(format!("finalizers: {finalizer}{}", if deleting { ", deletionTimestamp set" } else { "" }))
                .var("kind", kind.to_ascii_lowercase())
                .var("name", name)
                .var("finalizer", finalizer)
                .var("commands", command)
        })
        .collect()
    }
}
