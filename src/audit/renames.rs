//! Values keys a Trainer chart release renamed, derived from the charts' `values.yaml` and
//! templates at their tags (each leaf path of one release's values against the next's: the only
//! key removed with a successor from 2.0.0 to 2.3.0 is `manager.annotations`). A user's value
//! under the old name is carried under the new one in the printed upgrade, and TA-VAL-001 names
//! the rename.

/// One renamed key.
#[derive(Debug, Clone, Copy)]
pub struct Rename {
    pub from: &'static str,
    pub to: &'static str,
    /// The first release with the new name.
    pub since: (u64, u64, u64),
    /// What the key controls (the target chart's values.yaml comment).
    pub controls: &'static str,
    pub source: &'static str,
}

pub const RENAMES: &[Rename] = &[Rename {
    from: "manager.annotations",
    to: "manager.podAnnotations",
    since: (2, 2, 0),
    controls: "annotations on the controller manager's Pods",
    source: "https://github.com/kubeflow/trainer/blob/v2.1.0/charts/kubeflow-trainer/values.yaml#L59-L60 (declared; no 2.0/2.1 template reads it) \
             vs https://github.com/kubeflow/trainer/blob/v2.2.0/charts/kubeflow-trainer/values.yaml#L61-L62 and \
             https://github.com/kubeflow/trainer/blob/v2.2.0/charts/kubeflow-trainer/templates/manager/_helpers.tpl#L48-L59",
}];

fn version(v: (u64, u64, u64)) -> semver::Version {
    semver::Version::new(v.0, v.1, v.2)
}

/// The renames an upgrade `from` → `to` crosses.
pub fn crossed(from: &semver::Version, to: &semver::Version) -> Vec<&'static Rename> {
    RENAMES.iter().filter(|r| *from < version(r.since) && version(r.since) <= *to).collect()
}

/// `--set-string` arguments (unquoted) that carry the user's values under renamed keys to their
/// new names, for an upgrade `from` → `to`; a value already set under the new name wins.
pub fn carried(user_values: &serde_json::Value, from: &semver::Version, to: &semver::Version) -> Vec<String> {
    let mut out = Vec::new();
    for r in crossed(from, to) {
        let at = |path: &str| path.split('.').try_fold(user_values, |v, k| v.get(k));
        let Some(old) = at(r.from).and_then(serde_json::Value::as_object) else { continue };
        let new = at(r.to).and_then(serde_json::Value::as_object);
        for (key, value) in old {
            if new.is_some_and(|n| n.contains_key(key)) {
                continue;
            }
            let text = match value {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            // Helm's strvals: `.` splits keys and `,` splits assignments unless escaped.
            let escape = |s: &str| s.replace('\\', "\\\\").replace('.', "\\.").replace(',', "\\,").replace('=', "\\=");
            out.push(format!("{}.{}={}", r.to, escape(key), text.replace('\\', "\\\\").replace(',', "\\,")));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> semver::Version {
        semver::Version::parse(s).unwrap()
    }

    #[test]
    fn annotations_are_carried_to_pod_annotations_across_2_2() {
        let values = serde_json::json!({"manager": {"annotations": {"prometheus.io/scrape": "true", "team": "a,b"}}});
        assert_eq!(
            carried(&values, &v("2.1.0"), &v("2.3.0")),
            ["manager.podAnnotations.prometheus\\.io/scrape=true", "manager.podAnnotations.team=a\\,b"]
        );
        assert!(carried(&values, &v("2.2.0"), &v("2.3.0")).is_empty(), "2.2 already has the new name");
        let both = serde_json::json!({"manager": {"annotations": {"a": "1"}, "podAnnotations": {"a": "2"}}});
        assert!(carried(&both, &v("2.0.0"), &v("2.3.0")).is_empty(), "the new name set by the user wins");
    }

    /// What `--set-string` makes of each carried argument is the user's value under the new key.
    #[test]
    fn the_carried_arguments_parse_back_to_the_values() {
        let values = serde_json::json!({"manager": {"annotations": {"prometheus.io/scrape": "true", "team": "a,b"}}});
        let mut map = gotmpl::Map::new();
        for arg in carried(&values, &v("2.1.0"), &v("2.3.0")) {
            helm_render::strvals::parse_into(&arg, &mut map, helm_render::strvals::Mode::Strings).unwrap();
        }
        let back = crate::objects::to_serde(&gotmpl::Value::map(map));
        assert_eq!(back, serde_json::json!({"manager": {"podAnnotations": {"prometheus.io/scrape": "true", "team": "a,b"}}}));
    }
}
