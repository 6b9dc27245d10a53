//! Never `ready` while an input the verdict depends on is unknown: the API server's version (the
//! target's CRDs need a minimum, `kube`), and the version of a Kueue whose image is pinned by
//! digest or tagged `latest` without a version label (its TrainJob integration breaks with some
//! Trainer versions, `kueue`).

use serde_json::Value as Json;

use super::{Disagreement, Situation};

pub fn check(s: &Situation, line: &Json) -> Vec<Disagreement> {
    if line["verdict"] != "ready" {
        return Vec::new();
    }
    let mut out = Vec::new();
    if s.state.kube.is_none() {
        out.push(Disagreement {
            class: "ready-with-unknown-kube-version".into(),
            area: "other",
            expected: "not ready (or refused) without the API server's version: the target's CRDs need a minimum".into(),
            actual: "ready, exit 0".into(),
        });
    }
    for n in s.state.neighbours.iter().filter(|n| n.kind == "kueue" && !n.image.tells_version()) {
        out.push(Disagreement {
            class: "ready-with-unknown-neighbour-version".into(),
            area: "world §2",
            expected: format!(
                "not ready: Kueue's version is not in its image ({}) nor a label, and its TrainJob integration depends on it",
                n.image.name()
            ),
            actual: "ready, exit 0".into(),
        });
    }
    out
}
