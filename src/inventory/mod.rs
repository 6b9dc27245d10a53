//! Typed facts about one rendered chart, for reviewers and the audit: objects by identity,
//! CRDs, runtimes (however delivered), hooks, RBAC, images, default values and subcharts.

pub mod crd;
pub mod hook;
pub mod paths;
pub mod rbac;
pub mod runtime;
pub mod schema_compare;
pub mod value_uses;
pub mod values_scope;

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value as Json;

use crate::objects::workload::{containers, ImageRef};
use crate::objects::{objects_in, Object, Origin};
use crd::Crd;
use helm_render::chart::Chart;
use helm_render::render::Rendered;
use hook::HookInfo;
use rbac::Role;
use runtime::Runtime;

#[derive(Debug, Clone, Default, Serialize)]
pub struct ChartSummary {
    pub name: String,
    pub version: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub app_version: String,
    /// Subcharts that rendered (name → version).
    pub subcharts: BTreeMap<String, String>,
}

/// An image and the objects that use it.
#[derive(Debug, Clone, Serialize)]
pub struct ImageUse {
    pub image: ImageRef,
    pub used_by: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Inventory {
    pub chart: ChartSummary,
    /// Release objects and `crds/` files, in Helm's order.
    pub objects: Vec<Object>,
    pub hooks: Vec<HookInfo>,
    pub crds: Vec<Crd>,
    pub runtimes: Vec<Runtime>,
    pub roles: Vec<Role>,
    pub images: Vec<ImageUse>,
    /// The chart's default values flattened to leaf paths.
    pub values: BTreeMap<String, Json>,
    /// Where the chart's templates read `.Values.<path>`.
    #[serde(skip)]
    pub value_uses: Vec<value_uses::ValueUse>,
    /// Every values key the chart and its subcharts know, scope by scope.
    #[serde(skip)]
    pub values_scope: values_scope::ValuesScope,
}

impl Inventory {
    /// Facts from a render of `chart` into `namespace`.
    pub fn build(chart: &Chart, rendered: &Rendered, namespace: &str) -> Inventory {
        let mut objects: Vec<Object> = Vec::new();
        for crd in &rendered.crds {
            objects.extend(objects_in(&crd.content, &crd.path, Origin::CrdsDir, namespace));
        }
        for m in &rendered.manifests {
            objects.extend(objects_in(&m.content, &m.path, Origin::Template, namespace));
        }
        let hook_objects: Vec<(usize, Object)> = rendered
            .hooks
            .iter()
            .enumerate()
            .flat_map(|(i, h)| objects_in(&h.content, &h.path, Origin::Hook, namespace).into_iter().map(move |o| (i, o)))
            .collect();
        let everything: Vec<&Object> = objects.iter().chain(hook_objects.iter().map(|(_, o)| o)).collect();
        let roles = rbac::roles(&everything);
        let hooks: Vec<HookInfo> = hook_objects.iter().map(|(i, o)| HookInfo::build(&rendered.hooks[*i], o, &everything, &roles)).collect();
        let mounts = |config_map: &str| -> Vec<String> {
            hooks.iter().filter(|h| h.config_maps.iter().any(|c| c == config_map)).map(|h| h.identity.name.clone()).collect()
        };
        let runtimes = runtime::runtimes(&everything, &mounts, namespace);
        let crds = everything.iter().filter_map(|o| Crd::from_object(o)).collect();
        let images = image_uses(&everything, &runtimes);
        let mut values = BTreeMap::new();
        flatten_values(&crate::objects::to_serde(&chart.values), "", &mut values);
        let subcharts = chart.dependencies.iter().map(|d| (d.name().to_string(), d.metadata.version.clone())).collect();
        let scope = values_scope::ValuesScope::of(chart);
        Inventory {
            chart: ChartSummary {
                name: chart.metadata.name.clone(),
                version: chart.metadata.version.clone(),
                app_version: chart.metadata.app_version.clone(),
                subcharts,
            },
            objects,
            hooks,
            crds,
            runtimes,
            roles,
            images,
            values,
            value_uses: scope.uses.clone(),
            values_scope: scope,
        }
    }

    pub fn object(&self, kind: &str, name: &str) -> Option<&Object> {
        self.objects.iter().find(|o| o.identity.kind == kind && o.identity.name == name)
    }
}

fn image_uses(objects: &[&Object], runtimes: &[Runtime]) -> Vec<ImageUse> {
    let mut by_image: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for o in objects {
        for c in containers(&o.body) {
            if !c.image.is_empty() {
                by_image.entry(c.image).or_default().push(o.identity.to_string());
            }
        }
    }
    for r in runtimes.iter().filter(|r| !matches!(r.delivery, runtime::Delivery::ReleaseObject { .. })) {
        for image in &r.images {
            by_image.entry(image.reference.clone()).or_default().push(format!("{}/{}", r.kind, r.name));
        }
    }
    by_image
        .into_iter()
        .map(|(image, mut used_by)| {
            used_by.sort();
            used_by.dedup();
            ImageUse { image: ImageRef::parse(&image), used_by }
        })
        .collect()
}

/// Leaf paths of a values tree (`a.b.c`); lists and empty maps are leaves.
pub fn flatten_values(v: &Json, prefix: &str, out: &mut BTreeMap<String, Json>) {
    match v {
        Json::Object(map) if !map.is_empty() => {
            for (k, child) in map {
                let path = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                flatten_values(child, &path, out);
            }
        }
        other if !prefix.is_empty() => {
            out.insert(prefix.to_string(), other.clone());
        }
        _ => {}
    }
}
