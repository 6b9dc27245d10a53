//! How findings cite Trainer's own source, which is at its release tags: a chart that is not one (a build of Trainer's master as 2.4.0-dev, a
//! fork's version) is cited as such: every finding whose source points into kubeflow/trainer says
//! that the cited lines are those of the nearest release tag, not of the audited chart, and
//! nothing checked them against it.

use super::compat::Compat;

/// Whether a source cites kubeflow/trainer at a tag (`…/kubeflow/trainer/blob/v2.3.0/…` or
/// `kubeflow/trainer@v2.3.0 …`).
pub fn cites_trainer(source: &str) -> bool {
    source.contains("github.com/kubeflow/trainer/blob/v") || source.contains("kubeflow/trainer@v")
}

/// What a finding's Trainer citations must say when a chart of this run is not a release tag
/// (`role`: "target", "installed"); None for a release tag.
pub fn untagged(compat: &Compat, role: &str, version: &semver::Version) -> Option<String> {
    if compat.is_trainer_tag(version) {
        return None;
    }
    let nearest = match compat.nearest_trainer_tag(version) {
        Some(t) => format!("the nearest release below it is v{t}"),
        None => "no release is below it".to_string(),
    };
    Some(format!(
        "the {role} chart {version} is not a Trainer release tag (tags as of {}: {}): the kubeflow/trainer lines cited are those of the tags written ({nearest}), not checked against {version}",
        compat.trainer_tags_as_of, compat.trainer_tags_source
    ))
}

/// The untagged-chart notes of an upgrade `from` → `to` (the installed one first).
pub fn upgrade_notes(compat: &Compat, from: &semver::Version, to: &semver::Version) -> Vec<String> {
    let mut notes: Vec<String> = untagged(compat, "installed", from).into_iter().collect();
    if to != from {
        notes.extend(untagged(compat, "target", to));
    }
    notes
}

/// The source with the notes appended when it cites Trainer.
pub fn qualify(source: &str, notes: &[String]) -> String {
    if notes.is_empty() || !cites_trainer(source) {
        return source.to_string();
    }
    format!("{source} [{}]", notes.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compat() -> Compat {
        let v = |s: &str| semver::Version::parse(s).unwrap();
        Compat {
            trainer_tags: vec![v("2.2.1"), v("2.3.0-rc.3"), v("2.3.0")],
            trainer_tags_as_of: "2026-08-21".into(),
            trainer_tags_source: "https://github.com/kubeflow/trainer/tags".into(),
            ..Compat::default()
        }
    }

    #[test]
    fn a_dev_build_is_cited_at_the_nearest_release_tag_not_as_it() {
        let c = compat();
        let dev = semver::Version::parse("2.4.0-dev").unwrap();
        let note = untagged(&c, "target", &dev).unwrap();
        assert!(note.contains("the target chart 2.4.0-dev is not a Trainer release tag"), "{note}");
        assert!(note.contains("v2.3.0"), "{note}");
        let source = "https://github.com/kubeflow/trainer/blob/v2.3.0/pkg/x.go#L1-L2";
        let q = qualify(source, std::slice::from_ref(&note));
        assert!(q.starts_with(source) && q.contains("not checked against 2.4.0-dev"), "{q}");
        // Helm's lines are Helm's whatever the chart is.
        let helm = "https://github.com/helm/helm/blob/v4.2.3/pkg/action/upgrade.go#L1";
        assert_eq!(qualify(helm, &[note]), helm);
        // Release tags and their release candidates are cited as themselves.
        for tagged in ["2.3.0", "2.3.0-rc.3"] {
            assert!(untagged(&c, "target", &semver::Version::parse(tagged).unwrap()).is_none(), "{tagged}");
        }
        // An rc the table does not know is not a tag; its nearest release is below it.
        let rc = untagged(&c, "target", &semver::Version::parse("2.3.0-rc.9").unwrap()).unwrap();
        assert!(rc.contains("v2.2.1"), "{rc}");
    }

    #[test]
    fn the_embedded_table_knows_the_releases_the_rules_cite() {
        let c = crate::audit::compat::embedded().unwrap();
        for v in ["2.0.0", "2.0.1", "2.1.0", "2.2.0", "2.2.1", "2.3.0", "2.3.0-rc.3"] {
            assert!(c.is_trainer_tag(&semver::Version::parse(v).unwrap()), "{v}");
        }
        assert!(!c.is_trainer_tag(&semver::Version::parse("2.4.0-dev").unwrap()));
    }
}
