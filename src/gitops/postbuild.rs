//! Which Flux `Kustomization` (kustomize.toolkit.fluxcd.io) applies each file of the tree, and
//! its post-build substitution applied to the documents it covers: variables from
//! `spec.postBuild.substituteFrom` ConfigMaps/Secrets in list order, then `substitute` on top
//! (kustomize-controller docs, spec/v1 "Post build variable substitution"). A Kustomization
//! covers the files under its `spec.path` (relative to the tree root, which is taken to be the
//! root of the source it reads); the most specific path wins. `spec.targetNamespace` becomes the
//! namespace of the objects it covers. Documents labelled or annotated
//! `kustomize.toolkit.fluxcd.io/substitute: disabled` are left alone. A variable whose value
//! comes from a Secret is never written out: the scalar it lands in is redacted as values from
//! `valuesFrom` Secrets are.

use std::collections::{BTreeMap, BTreeSet};

use base64::Engine as _;

use super::envsubst::{substitute_node_redacting, unsubstituted, Use, UseKind};
use super::model::{Location, Problem};
use super::tree::{normalize, Doc, Tree};
use super::yaml::Pos;

pub const GROUP: &str = "kustomize.toolkit.fluxcd.io";
const DISABLE_KEY: &str = "kustomize.toolkit.fluxcd.io/substitute";

/// One Flux Kustomization's build settings.
#[derive(Debug, Clone)]
struct Build {
    name: String,
    at: Location,
    path: String,
    vars: BTreeMap<String, String>,
    /// Variables whose value comes from a Secret (substituted redacted).
    secret: BTreeSet<String>,
    /// Where each variable's value is written (the line a version bump changes).
    defined_at: BTreeMap<String, Location>,
    always: bool,
    /// substituteFrom objects the tree does not hold (their variables are unknown).
    missing: Vec<String>,
    target_namespace: Option<String>,
}

/// What substitution did, per document (by index in `tree.docs`).
#[derive(Debug, Default)]
pub struct Applied {
    /// The problems it left.
    pub problems: BTreeMap<usize, Vec<Problem>>,
    /// Each substituted variable: where it is used, its name, where its value is written.
    pub defined: BTreeMap<usize, Vec<(Pos, String, Location)>>,
}

impl Applied {
    pub fn problems_of(&self, doc: usize) -> impl Iterator<Item = &Problem> {
        self.problems.get(&doc).into_iter().flatten()
    }

    /// The variable substituted into the single-line scalar that starts at `at`, if any.
    pub fn definition(&self, doc: usize, at: Pos) -> Option<(&str, &Location)> {
        let uses = self.defined.get(&doc)?;
        uses.iter().find(|(pos, _, _)| pos.line == at.line && pos.column >= at.column).map(|(_, name, loc)| (name.as_str(), loc))
    }
}

/// Applies every Kustomization's substitution to the documents it covers.
pub fn apply(tree: &mut Tree) -> Applied {
    let builds: Vec<Build> = tree.of_kind(GROUP, "Kustomization").map(|k| build(tree, k)).collect();
    let mut applied = Applied::default();
    let problems = &mut applied.problems;
    let missing: Vec<Problem> = builds
        .iter()
        .flat_map(|b| b.missing.iter().map(|m| Problem::at(format!("{m} is not in this tree: its variables are unknown"), b.at.clone())))
        .collect();
    tree.problems.extend(missing);
    for index in 0..tree.docs.len() {
        let doc = &tree.docs[index];
        let dir = super::tree::dir_of(&doc.file).to_string();
        let covering = builds
            .iter()
            .filter(|b| b.path.is_empty() || dir == b.path || dir.starts_with(&format!("{}/", b.path)))
            .max_by_key(|b| b.path.len());
        let disabled = ["labels", "annotations"].iter().any(|m| doc.node.str_at(&["metadata", m, DISABLE_KEY]) == Some("disabled"));
        let Some(build) = covering else {
            let uses = unsubstituted(&doc.node);
            let list = messages(doc, &uses, None);
            if !list.is_empty() {
                problems.insert(index, list);
            }
            continue;
        };
        let doc = &mut tree.docs[index];
        if let Some(ns) = &build.target_namespace {
            if doc.kind != "Namespace" && !doc.kind.starts_with("Cluster") {
                doc.namespace = Some(ns.clone());
            }
        }
        if disabled || (!build.always && build.vars.is_empty()) {
            let uses = unsubstituted(&doc.node);
            let list = messages(doc, &uses, Some((build, disabled)));
            if !list.is_empty() {
                problems.insert(index, list);
            }
            continue;
        }
        let uses = substitute_node_redacting(&mut doc.node, &build.vars, &build.secret);
        refresh_identity(doc);
        let defined: Vec<(Pos, String, Location)> = uses
            .iter()
            .filter(|u| u.kind == UseKind::Defined)
            .filter_map(|u| build.defined_at.get(&u.name).map(|at| (u.at, u.name.clone(), at.clone())))
            .collect();
        if !defined.is_empty() {
            applied.defined.insert(index, defined);
        }
        let list = messages(doc, &uses, Some((build, false)));
        if !list.is_empty() {
            problems.insert(index, list);
        }
    }
    applied
}

/// Substitution may have changed the name or namespace the document is indexed by.
fn refresh_identity(doc: &mut Doc) {
    if let Some(name) = doc.node.str_at(&["metadata", "name"]) {
        doc.name = name.to_string();
    }
}

fn build(tree: &Tree, k: &Doc) -> Build {
    let spec = |keys: &[&str]| {
        let mut path = vec!["spec"];
        path.extend_from_slice(keys);
        k.node.str_at(&path).map(str::to_string)
    };
    let path = spec(&["path"]).and_then(|p| normalize(&p)).unwrap_or_default();
    let mut vars = BTreeMap::new();
    let mut defined_at = BTreeMap::new();
    let mut secret = BTreeSet::new();
    let mut missing = Vec::new();
    if let Some(from) = k.node.path(&["spec", "postBuild", "substituteFrom"]) {
        for item in from.items() {
            let kind = item.str_at(&["kind"]).unwrap_or("ConfigMap");
            let name = item.str_at(&["name"]).unwrap_or("");
            let optional = item.bool_at(&["optional"]).unwrap_or(false);
            match tree.find("", kind, name, k.namespace.as_deref()) {
                Some(obj) => {
                    for (key, value) in data_of(obj) {
                        let field = if obj.node.path(&["stringData", &key]).is_some() { "stringData" } else { "data" };
                        defined_at.insert(key.clone(), obj.loc_of(&[field, &key]));
                        if obj.kind == "Secret" {
                            secret.insert(key.clone());
                        } else {
                            secret.remove(&key);
                        }
                        vars.insert(key, value);
                    }
                }
                None if optional => {}
                None => missing.push(format!("{kind} {name} (spec.postBuild.substituteFrom of Kustomization {})", k.name)),
            }
        }
    }
    if let Some(inline) = k.node.path(&["spec", "postBuild", "substitute"]) {
        for (key, value) in inline.entries() {
            let name = super::yaml::key_string(key);
            defined_at.insert(name.clone(), k.loc(value.at));
            secret.remove(&name);
            vars.insert(name, value.text().unwrap_or("").to_string());
        }
    }
    Build {
        name: format!("{}/{}", k.namespace.as_deref().unwrap_or("-"), k.name),
        at: k.loc(k.node.at),
        path,
        vars,
        secret,
        defined_at,
        always: k.node.str_at(&["spec", "postBuild", "substituteStrategy"]) == Some("Always"),
        missing,
        target_namespace: spec(&["targetNamespace"]),
    }
}

/// A ConfigMap's `data`, or a Secret's `stringData` and decoded `data`.
pub fn data_of(obj: &Doc) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    if let Some(data) = obj.node.get("data") {
        for (k, v) in data.entries() {
            let text = v.text().unwrap_or("").to_string();
            let value = if obj.kind == "Secret" {
                let compact: String = text.split_whitespace().collect();
                base64::engine::general_purpose::STANDARD
                    .decode(compact.as_bytes())
                    .ok()
                    .and_then(|b| String::from_utf8(b).ok())
                    .unwrap_or_default()
            } else {
                text
            };
            out.insert(super::yaml::key_string(k), value);
        }
    }
    if obj.kind == "Secret" {
        if let Some(data) = obj.node.get("stringData") {
            for (k, v) in data.entries() {
                out.insert(super::yaml::key_string(k), v.text().unwrap_or("").to_string());
            }
        }
    }
    out
}

fn messages(doc: &Doc, uses: &[Use], build: Option<(&Build, bool)>) -> Vec<Problem> {
    let mut out = Vec::new();
    for u in uses {
        let at = doc.loc(u.at);
        let message = match (u.kind, build) {
            (UseKind::Defined, _) => continue,
            (UseKind::Unsupported, _) => {
                format!("{} is a substitution function trainer-audit does not evaluate: the value is unknown", u.name)
            }
            (UseKind::Undefined, None) => format!(
                "${{{}}} is left as written: no Flux Kustomization in this tree covers {} (spec.path), so its value is unknown",
                u.name, doc.file
            ),
            (UseKind::Undefined, Some((_, true))) => format!(
                "${{{}}} is left as written: substitution is disabled for {} {} ({DISABLE_KEY})",
                u.name, doc.kind, doc.name
            ),
            (UseKind::Undefined, Some((b, false))) if b.vars.is_empty() && !b.always => format!(
                "${{{}}} is left as written: Kustomization {} ({}) defines no variables, and Flux skips substitution then (unless spec.postBuild.substituteStrategy is Always)",
                u.name, b.name, b.at
            ),
            (UseKind::Undefined, Some((b, false))) => {
                let mut m = format!(
                    "${{{}}} has no value and no default in Kustomization {} ({}): Flux substitutes an empty string",
                    u.name, b.name, b.at
                );
                if !b.missing.is_empty() {
                    m.push_str(&format!(", unless it comes from {}", b.missing.join(", ")));
                }
                m
            }
        };
        out.push(Problem::at(message, at));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gitops::tree::{Files, SourceFile};

    fn tree(list: &[(&str, &str)]) -> Tree {
        Tree::parse(Files {
            files: list.iter().map(|(p, t)| SourceFile { path: p.to_string(), text: t.to_string() }).collect(),
            problems: vec![],
        })
    }

    const KS: &str = "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: apps, namespace: flux-system}\nspec:\n  path: ./apps\n  targetNamespace: team\n  postBuild:\n    substitute:\n      ver: \"2.3.0\"\n    substituteFrom:\n      - kind: ConfigMap\n        name: vars\n";
    const CM: &str =
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: vars, namespace: flux-system}\ndata:\n  ver: \"1.0.0\"\n  env: prod\n";

    #[test]
    fn substitutes_covered_documents_with_inline_winning() {
        let mut t = tree(&[
            ("clusters/ks.yaml", KS),
            ("clusters/vars.yaml", CM),
            ("apps/x.yaml", "kind: X\nmetadata: {name: a}\nspec: {v: \"${ver}\", e: \"${env}\", m: \"${missing}\"}\n"),
            ("other/y.yaml", "kind: Y\nmetadata: {name: b}\nspec: {v: \"${ver}\"}\n"),
        ]);
        let applied = apply(&mut t);
        let problems = &applied.problems;
        let x = t.docs.iter().position(|d| d.kind == "X").unwrap();
        assert_eq!(t.docs[x].node.str_at(&["spec", "v"]), Some("2.3.0"));
        let v_at = t.docs[x].node.path(&["spec", "v"]).unwrap().at;
        let (name, at) = applied.definition(x, v_at).unwrap();
        assert_eq!((name, at.file.as_str(), at.line), ("ver", "clusters/ks.yaml", 9));
        assert_eq!(t.docs[x].node.str_at(&["spec", "e"]), Some("prod"));
        assert_eq!(t.docs[x].namespace.as_deref(), Some("team"));
        assert_eq!(problems[&x].len(), 1);
        assert!(problems[&x][0].message.contains("${missing} has no value"), "{:?}", problems[&x]);
        assert_eq!(problems[&x][0].at.as_ref().unwrap().line, 3);
        let y = t.docs.iter().position(|d| d.kind == "Y").unwrap();
        assert!(problems[&y][0].message.contains("no Flux Kustomization in this tree covers other/y.yaml"));
    }

    #[test]
    fn a_missing_substitute_from_is_named() {
        let mut t = tree(&[("ks.yaml", KS), ("apps/x.yaml", "kind: X\nmetadata: {name: a}\nspec: {m: \"${other}\"}\n")]);
        let problems = apply(&mut t).problems;
        assert!(t.problems.iter().any(|p| p.message.contains("ConfigMap vars")));
        let x = t.docs.iter().position(|d| d.kind == "X").unwrap();
        assert!(problems[&x][0].message.contains("unless it comes from ConfigMap vars"));
    }

    #[test]
    fn secret_variables_are_substituted_redacted_unless_set_inline() {
        let ks = KS.replace("        name: vars\n", "        name: vars\n      - kind: Secret\n        name: creds\n");
        let secret = "apiVersion: v1\nkind: Secret\nmetadata: {name: creds, namespace: flux-system}\nstringData:\n  token: s3cret\n  ver: \"9.9.9\"\n";
        let mut t = tree(&[
            ("clusters/ks.yaml", &ks),
            ("clusters/vars.yaml", CM),
            ("clusters/creds.yaml", secret),
            ("apps/x.yaml", "kind: X\nmetadata: {name: a}\nspec: {t: \"Bearer ${token}\", v: \"${ver}\"}\n"),
        ]);
        apply(&mut t);
        let x = t.docs.iter().find(|d| d.kind == "X").unwrap();
        assert_eq!(x.node.str_at(&["spec", "t"]), Some(crate::gitops::envsubst::REDACTED));
        // `ver` comes from the Secret too, but the inline substitute wins and is not secret.
        assert_eq!(x.node.str_at(&["spec", "v"]), Some("2.3.0"));
    }
}
