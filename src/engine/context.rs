//! The engine a GitOps file deploys the chart with, and the options the file sets: what the
//! kinds whose outcome depends on how the chart is applied read.

use std::collections::BTreeMap;

use super::Engine;

/// Options named `ignoreDifferences.<group>/<kind>[/<name>]` hold what an Argo CD
/// Application's `spec.ignoreDifferences` entries leave out of the diff, joined by
/// [`PATH_SEPARATOR`] (`src/gitops/argocd.rs` writes them).
pub const IGNORE_DIFFERENCES: &str = "ignoreDifferences.";
pub const PATH_SEPARATOR: &str = "; ";

/// The engine a GitOps file deploys the chart with, and the engine options the file sets (with
/// the engine's defaults filled in), by the names `trainer-audit gitops` lists them
/// (`syncOptions.ServerSideApply`, `upgrade.crds`, `includeCRDs`, …). Kinds whose outcome
/// depends on how the chart is applied read it; outside a GitOps review there is none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineContext {
    pub engine: Engine,
    /// The Argo CD version the tree installs, when it says.
    pub argocd: Option<semver::Version>,
    pub options: BTreeMap<String, String>,
    /// Options the file leaves unset (their value is the engine's default).
    pub defaulted: std::collections::BTreeSet<String>,
}

impl EngineContext {
    pub fn option(&self, name: &str) -> Option<&str> {
        self.options.get(name).map(String::as_str)
    }

    /// The option's value as the file's reader words it: `Skip (unset: the default)`.
    pub fn describe(&self, name: &str) -> String {
        let value = self.option(name).unwrap_or("(unset)");
        if self.defaulted.contains(name) {
            format!("{value} (unset: the engine's default)")
        } else {
            value.to_string()
        }
    }

    /// The paths an Argo CD Application's `ignoreDifferences` leaves out of the diff for one
    /// object: entries for its group and kind (`*` matches any), unnamed or naming it.
    pub fn ignored_paths(&self, group: &str, kind: &str, name: &str) -> Vec<&str> {
        let matches = |want: &str, got: &str| want == "*" || want == got;
        self.options
            .iter()
            .filter_map(|(k, v)| {
                let mut parts = k.strip_prefix(IGNORE_DIFFERENCES)?.splitn(3, '/');
                let (g, kd, n) = (parts.next()?, parts.next()?, parts.next());
                (matches(g, group) && matches(kd, kind) && n.is_none_or(|n| n == name)).then_some(v.as_str())
            })
            .flat_map(|v| v.split(PATH_SEPARATOR))
            .collect()
    }

    /// Whether a boolean option is on (`true`, as YAML 1.1 and Argo CD spell it).
    pub fn is_on(&self, name: &str) -> bool {
        self.option(name).is_some_and(|v| v.eq_ignore_ascii_case("true"))
    }
}
