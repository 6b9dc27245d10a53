//! `cert-secret-ssa`: a Secret the release declares with the keys a certificate rotator writes
//! (the Trainer ≤ 2.2 chart's webhook cert Secret declares them empty), in a release Helm 4
//! applies server-side. The apply made Helm a field manager of those keys; the rotator then
//! rewrote them with an update, which moves their ownership to its own manager. Applying the
//! empty keys again conflicts with it, so an upgrade to a chart that still declares them fails
//! (Helm v4.2.3 applies every object without forcing unless told to, and fails the upgrade on a
//! conflict). A target that declares the Secret without those keys applies no value for them:
//! Helm claims nothing there, nothing conflicts and the rotator keeps them; only a rollback to
//! the revision that declares them conflicts again. A target that declares them again gets the
//! `redeclared` variant, whose upgrade command carries `--force-conflicts` (the rule says why).
//!
//! The cluster state keeps no Secrets but Helm records (secrets are never read), so the kind
//! reads the release: its stored apply method and the manifest Helm applied (the installed
//! render when the record holds none).

use serde::Deserialize;
use serde_json::Value as Json;

use super::{Check, Hit};
use crate::audit::input::CheckInput;
use crate::objects::{Object, Origin};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// The data keys a controller writes at run time (`tls.crt`, …).
    pub keys: Vec<String>,
}

impl Params {
    /// The keys of `keys` the Secret declares in `data` or `stringData`, sorted.
    fn declared(&self, secret: &Json) -> Vec<String> {
        let mut found: Vec<String> = ["data", "stringData"]
            .iter()
            .filter_map(|f| secret.get(*f).and_then(Json::as_object))
            .flat_map(|m| m.keys())
            .filter(|k| self.keys.contains(k))
            .cloned()
            .collect();
        found.sort();
        found.dedup();
        found
    }
}

impl Check for Params {
    fn check(&self, input: &CheckInput) -> Vec<Hit> {
        if input.engine() != crate::engine::Engine::Helm {
            return Vec::new();
        }
        let Some(release) = input.release else { return Vec::new() };
        // The revision the upgrade starts from (a pending release's rollback target). A fresh
        // install over an uninstalled release finds the Secrets deleted with it.
        let base = release.base();
        if !release.upgrade_server_side() || release.route().installs_afresh() {
            return Vec::new();
        }
        let stored = base.objects();
        let (applied, whence): (Vec<&Object>, &str) = if stored.is_empty() {
            match input.installed {
                Some(inv) => (inv.objects.iter().filter(|o| o.origin == Origin::Template).collect(), "the installed chart's render"),
                None => return Vec::new(),
            }
        } else {
            (stored.iter().collect(), "the release manifest")
        };
        let (ns, name, revision) = (&base.namespace, &base.name, base.revision);
        let mut hits = Vec::new();
        for secret in applied.into_iter().filter(|o| o.identity.kind == "Secret") {
            let owned = self.declared(&secret.body);
            if owned.is_empty() {
                continue;
            }
            let id = &secret.identity;
            // A target without the Secret deletes it: another matter than field ownership.
            let Some(target) = input.target.objects.iter().find(|o| o.origin == Origin::Template && o.identity == *id) else {
                continue;
            };
            let keys = owned.iter().map(|k| format!(".data.{k}")).collect::<Vec<_>>().join(", ");
            let still = self.declared(&target.body);
            let evidence =
                format!("{whence} of {ns}/{name} revision {revision} declares {id} with {keys}; the release's apply method is ssa");
            let hit = if still.is_empty() {
                Hit::new(
                    id.to_string(),
                    format!(
                        "the {} chart declares {id} without {keys}: Helm's server-side apply sets none of them, so nothing conflicts and the rotator's manager keeps them; a rollback to revision {revision} applies them again and conflicts",
                        input.to
                    ),
                )
                .variant("dropped")
            } else {
                Hit::new(
                    id.to_string(),
                    format!(
                        "{id} is declared with {keys} and the {} chart declares them again: Helm's server-side apply conflicts with the manager that rewrote them (the certificate rotator) and the upgrade fails",
                        input.to
                    ),
                )
                .evidence(format!("{} declares {}", target.source, still.iter().map(|k| format!(".data.{k}")).collect::<Vec<_>>().join(", ")))
                .variant("redeclared")
            };
            hits.push(
                hit.located(secret.source.clone())
                    .evidence(evidence)
                    .var("secret", id.name.as_str())
                    .var("namespace", id.namespace.as_str())
                    .var("keys", keys)
                    .var("revision", revision.to_string()),
            );
        }
        hits
    }
}

#[cfg(test)]
mod tests {
    use super::Params;
    use serde_json::json;

    #[test]
    fn only_the_listed_keys_count_in_data_and_string_data() {
        let p = Params { keys: vec!["tls.crt".into(), "ca.crt".into()] };
        let s = json!({"data": {"tls.crt": "", "other": ""}, "stringData": {"ca.crt": "", "tls.crt": "x"}});
        assert_eq!(p.declared(&s), ["ca.crt", "tls.crt"]);
        assert!(p.declared(&json!({"metadata": {"name": "x"}})).is_empty());
        assert!(p.declared(&json!({"data": null})).is_empty());
    }
}
