//! `removed-flag`: the live Trainer controller passes a command-line flag the target's manager no
//! longer defines. The chart passes only `--config`, so such a flag comes from a Helm
//! post-renderer, a kustomize patch or an edit, and survives the upgrade with it; the manager
//! parses its flags with Go's `flag` package on the default set (exit on error), so an undefined
//! flag stops it before it starts serving. The flag names and the version that dropped them are
//! the rule's params.

use serde::Deserialize;
use serde_json::Value as Json;

use super::{Check, Hit};
use crate::audit::input::CheckInput;
use crate::cluster::neighbours::is_trainer_deployment;
use crate::objects::str_at;
use crate::objects::workload::{containers, Container, ImageRef};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Flag names without dashes (`enable-http2`).
    pub flags: Vec<String>,
    /// The first release whose manager no longer defines them (its pre-releases included).
    #[serde(deserialize_with = "release")]
    pub removed_in: semver::Version,
}

fn release<'de, D: serde::Deserializer<'de>>(d: D) -> Result<semver::Version, D::Error> {
    let text = String::deserialize(d)?;
    helm_render::version::parse_strict(&text)
        .ok_or_else(|| serde::de::Error::custom(format!("removed_in {text:?} is not a version like 2.3.0")))
}

/// Where the flag sits in an argument list: the argument as written and the flag's name, for
/// every argument Go's `flag` package would read as one of `flags` (`-name`, `--name`,
/// `--name=value`; parsing stops at `--`).
fn named<'a>(argv: &'a [String], flags: &[String]) -> Vec<(&'a str, String)> {
    let mut out = Vec::new();
    for arg in argv {
        if arg == "--" {
            break;
        }
        let Some(rest) = arg.strip_prefix('-') else { continue };
        let rest = rest.strip_prefix('-').unwrap_or(rest);
        let name = rest.split_once('=').map_or(rest, |(n, _)| n);
        if let Some(flag) = flags.iter().find(|f| f.as_str() == name) {
            out.push((arg.as_str(), flag.clone()));
        }
    }
    out
}

/// The controller's container in a Trainer Deployment: the manager image, or the chart's
/// container name when the image was mirrored under another name.
fn is_manager(c: &Container) -> bool {
    ImageRef::parse(&c.image).repository.ends_with("trainer-controller-manager") || c.name == "manager"
}

/// The ConfigMap the Deployment mounts as the manager's configuration (the chart's volume
/// `manager-config`, named `<fullname>-config`), where `tls.nextProtos` goes instead.
fn config_map(d: &Json) -> String {
    d.pointer("/spec/template/spec/volumes")
        .and_then(Json::as_array)
        .and_then(|vs| vs.iter().find(|v| str_at(v, &["name"]) == "manager-config"))
        .map(|v| str_at(v, &["configMap", "name"]).to_string())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "<fullname>-config".to_string())
}

/// What the container runs after its executable: the rest of `command`, then `args` (as the
/// kubelet joins them).
fn argv(c: &Container) -> Vec<String> {
    c.command.iter().skip(1).chain(&c.args).cloned().collect()
}

impl Check for Params {
    fn check(&self, input: &CheckInput) -> Vec<Hit> {
        let to = &input.to;
        if (to.major, to.minor, to.patch) < (self.removed_in.major, self.removed_in.minor, self.removed_in.patch) {
            return Vec::new();
        }
        // The Deployments in the release's stored manifest: a post-renderer's output is stored there.
        let stored: Vec<Json> = input
            .release
            .map(|r| r.base().objects().into_iter().filter(|o| o.identity.kind == "Deployment").map(|o| o.body).collect())
            .unwrap_or_default();
        let mut hits = Vec::new();
        for d in input.state.of_kind("Deployment").filter(|d| is_trainer_deployment(d)) {
            let (ns, name) = (str_at(d, &["metadata", "namespace"]), str_at(d, &["metadata", "name"]));
            let recorded = stored.iter().find(|s| str_at(s, &["metadata", "name"]) == name);
            for c in containers(d).iter().filter(|c| is_manager(c)) {
                let args = argv(c);
                for (arg, flag) in named(&args, &self.flags) {
                    let in_manifest = recorded.map(|s| {
                        containers(s)
                            .iter()
                            .filter(|rc| rc.name == c.name)
                            .any(|rc| !named(&argv(rc), std::slice::from_ref(&flag)).is_empty())
                    });
                    let origin = match in_manifest {
                        Some(true) => "the release's stored manifest carries it too: a Helm post-renderer adds it, and adds it again on an upgrade run with the same post-renderer".to_string(),
                        Some(false) => "the release's stored manifest does not carry it: a patch applied outside Helm (kustomize, kubectl) or an edit added it".to_string(),
                        None => "no Helm release manifest names this Deployment: the manifests that installed it (a kustomize patch) carry it".to_string(),
                    };
                    hits.push(
                        Hit::new(
                            format!("Deployment/{ns}/{name}"),
                            format!(
                                "container {} passes {arg}, a flag the {to} controller no longer defines (removed in {}): the manager exits at start with \"flag provided but not defined: -{flag}\"",
                                c.name, self.removed_in
                            ),
                        )
                        .evidence(format!("container {} args: {}", c.name, args.join(" ")))
                        .evidence(origin)
                        .var("arg", arg)
                        .var("flag", flag.as_str())
                        .var("deployment", name)
                        .var("namespace", ns)
                        .var("container", c.name.as_str())
                        .var("configmap", config_map(d)),
                    );
                }
            }
        }
        hits
    }
}

#[cfg(test)]
mod tests {
    use super::named;

    fn args(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn every_go_spelling_of_the_flag_is_found_until_the_terminator() {
        let flags = ["enable-http2".to_string()];
        let argv = args(&["--config=/c.yaml", "-enable-http2", "--enable-http2=false", "--enable-http2x", "--", "--enable-http2"]);
        let found: Vec<&str> = named(&argv, &flags).into_iter().map(|(a, _)| a).collect();
        assert_eq!(found, ["-enable-http2", "--enable-http2=false"]);
        assert!(named(&args(&["--config=/c.yaml", "enable-http2", "---enable-http2"]), &flags).is_empty());
    }
}
