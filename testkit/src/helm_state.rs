//! A Helm install of a Trainer chart as a cluster snapshot holds it, for any release name,
//! namespace and history: the chart rendered by trainer-audit's engine (byte-identical to Helm's,
//! `cargo xtask conformance`) as that release, its objects with the ownership metadata Helm sets
//! (the `app.kubernetes.io/managed-by: Helm` label, the `meta.helm.sh/release-name`/`-namespace`
//! annotations, field manager `helm`), the `crds/` CRDs as Helm creates them at install (no
//! metadata), and one release record per revision, encoded as Helm stores it. What tests of
//! names need: every object is named as the chart names it for that release.

use helm_render::chart::Chart;
use helm_render::context::ReleaseInfo;
use helm_render::render::{render_chart, RenderOptions};
use serde_json::{json, Value as Json};
use trainer_audit::objects::{objects_in, Origin};

use crate::release::encode_secret;

/// One revision of the history: its status and the chart it was made with. The last revision's
/// chart is the one whose objects the cluster holds.
pub struct Revision<'a> {
    pub status: &'a str,
    pub chart: &'a Chart,
}

/// The objects of a snapshot of `revisions` of release `release` in `namespace` (values: the
/// chart's defaults), with a ClusterInfo of Kubernetes `kube`.
pub fn objects(release: &str, namespace: &str, revisions: &[Revision], kube: &str) -> Vec<Json> {
    let mut out = vec![
        json!({"apiVersion": "trainer-audit.dev/v1alpha1", "kind": "ClusterInfo", "serverVersion": kube}),
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace, "labels": {"kubernetes.io/metadata.name": namespace}}}),
    ];
    let render = |chart: &Chart| {
        let options = RenderOptions {
            release: ReleaseInfo { name: release.into(), namespace: namespace.into(), is_upgrade: false, revision: 1 },
            ..Default::default()
        };
        render_chart(chart, &options).unwrap_or_else(|e| panic!("render {}: {e}", chart.metadata.version))
    };
    let managed = json!([{"manager": "helm", "operation": "Apply", "apiVersion": "v1", "time": "2026-06-20T10:00:00Z"}]);
    if let Some(first) = revisions.first() {
        for crd in &render(first.chart).crds {
            for o in objects_in(&crd.content, &crd.path, Origin::CrdsDir, "") {
                let mut body = o.body;
                body["metadata"]["managedFields"] = managed.clone();
                out.push(body);
            }
        }
    }
    for (i, r) in revisions.iter().enumerate() {
        let rendered = render(r.chart);
        let manifest = rendered.release_manifest(false);
        let last = i + 1 == revisions.len();
        if last && !matches!(r.status, "uninstalled") {
            for o in objects_in(&manifest, "manifest", Origin::Template, namespace) {
                let mut body = o.body;
                let meta = body["metadata"].as_object_mut().expect("rendered objects have metadata");
                if !o.identity.namespace.is_empty() {
                    meta.insert("namespace".into(), json!(o.identity.namespace));
                }
                let labels = meta.entry("labels").or_insert_with(|| json!({}));
                labels["app.kubernetes.io/managed-by"] = json!("Helm");
                let annotations = meta.entry("annotations").or_insert_with(|| json!({}));
                annotations["meta.helm.sh/release-name"] = json!(release);
                annotations["meta.helm.sh/release-namespace"] = json!(namespace);
                meta.insert("managedFields".into(), managed.clone());
                out.push(body);
            }
        }
        let m = &r.chart.metadata;
        let record = json!({
            "name": release,
            "namespace": namespace,
            "version": i + 1,
            "info": {"status": r.status, "description": format!("revision {} {}", i + 1, r.status)},
            "chart": {"metadata": {"name": m.name, "version": m.version, "appVersion": m.app_version, "apiVersion": "v2"}},
            "config": {},
            "manifest": manifest,
            "hooks": [],
            "apply_method": "ssa",
        });
        out.push(encode_secret(&record, true));
    }
    out
}

/// `objects` as a `kubectl get -o yaml`-style List, the text a `--snapshot` file holds.
pub fn snapshot_yaml(objects: Vec<Json>) -> String {
    crate::scenario::list_yaml(objects)
}
