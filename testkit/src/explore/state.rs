//! One cluster state the explorer builds, as data, and its one-line description: every
//! dimension as a `key=value` token, so a disagreement prints a line that rebuilds the state
//! exactly (`cargo xtask explore --replay '<line>'`), and a person can edit it to try a variant.
//!
//! ```text
//! install=helm:install@2.2.1,upgrade-failed@2.3.0 release=trainer/ml-platform to=2.3.0 kube=1.33.4
//! psa=restricted value=jobset.enabled=false nb=kueue@0.16.9/mirror
//! quota=ml-platform/objects:count/configmaps=4/5 tj=team-a/llama:torch-distributed:running
//! ```

use std::fmt;

use serde_json::Value as Json;

/// How Trainer is installed.
#[derive(Debug, Clone, PartialEq)]
pub enum Install {
    /// A Helm release: the operations that made its history, oldest first.
    Helm(Vec<Op>),
    /// `kubectl apply --server-side -k` of the chart's objects at this version (no release).
    Kustomize(String),
    /// An Argo CD Application rendering the chart at this version (no release record).
    ArgoCd(String),
    /// Nothing installed.
    None,
}

/// One Helm operation in a release's history, as a person or a pipeline ran it.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    /// `helm install` (or `upgrade --install` of an absent or uninstalled release) that ended
    /// deployed, failed (its hooks or --wait failed) or killed while it waited (pending-install).
    Install(String, Outcome),
    /// `helm upgrade` to a version.
    Upgrade(String, Outcome),
    /// `helm rollback` to a revision.
    Rollback(i64, Outcome),
    /// `helm uninstall --keep-history`, completed or killed (uninstalling).
    Uninstall(Outcome),
    /// The last revision's status rewritten to `unknown` (what a storage edit or an old Helm leaves).
    Unknown,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Ok,
    /// Objects applied, then the hooks or the wait failed.
    Failed,
    /// Killed after the objects were applied, while waiting (a dying CI runner).
    Killed,
}

/// How Helm applied the release (`apply_method` in its records).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applied {
    /// Helm 3 records: no apply method (Helm 4 treats them as client-side).
    Helm3,
    ClientSide,
    ServerSide,
}

/// A neighbour component and how its image names its version.
#[derive(Debug, Clone, PartialEq)]
pub struct Neighbour {
    /// `kueue`, `jobset`, `lws`, `volcano`, `scheduler-plugins`, `training-operator`.
    pub kind: String,
    pub version: String,
    pub image: ImageForm,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageForm {
    /// The project's own registry and tag (`registry.k8s.io/kueue/kueue:v0.16.9`).
    Official,
    /// The same tag through a mirror path (`harbor.corp.example/mirror/kueue:v0.16.9`).
    Mirror,
    /// A registry with a port (`registry.corp:5000/kueue/kueue:v0.16.9`).
    Port,
    /// Pinned by digest only: the version is not in the image.
    Digest,
    /// `:latest`: the version is not in the image.
    Latest,
    /// A digest-only image, with the version in the Deployment's `app.kubernetes.io/version`.
    Label,
}

/// A ResourceQuota: `(resource, used, hard)` per line. An object count may be given relative to
/// what the namespace holds: `used` `*` (as the quota controller counts it) and `hard` `+N`
/// (that many more).
#[derive(Debug, Clone, PartialEq)]
pub struct Quota {
    pub namespace: String,
    pub name: String,
    pub hard: Vec<(String, String, String)>,
}

/// A LimitRange item of type Container: `(field, resource, quantity)` (`max`, `cpu`, `500m`).
#[derive(Debug, Clone, PartialEq)]
pub struct LimitRange {
    pub namespace: String,
    pub name: String,
    pub limits: Vec<(String, String, String)>,
}

/// Where a TrainJob stands.
#[derive(Debug, Clone, PartialEq)]
pub enum JobState {
    /// Running: JobSet active, no terminal condition.
    Running,
    Complete,
    /// Failed with this reason (`DeadlineExceeded`, `TrainJobRuntimeNotSupported`, `JobSetFailed`, …).
    Failed(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct TrainJob {
    pub namespace: String,
    pub name: String,
    /// A ClusterTrainingRuntime's name.
    pub runtime: String,
    pub state: JobState,
    pub suspended: bool,
    /// `spec.managedBy`, when another controller manages it.
    pub managed_by: Option<String>,
    /// `kueue.x-k8s.io/queue-name`.
    pub queue: Option<String>,
    /// `numProcPerNode: auto` (a string, as 2.0/2.1 allowed).
    pub auto_procs: bool,
}

/// A Training Operator v1 job: kind and last condition.
#[derive(Debug, Clone, PartialEq)]
pub struct LegacyJob {
    pub namespace: String,
    pub name: String,
    pub kind: String,
    pub state: String,
}

/// A user's own ClusterTrainingRuntime (not the chart's).
#[derive(Debug, Clone, PartialEq)]
pub struct UserRuntime {
    pub name: String,
    /// Copied from a built-in one with the installer's label kept.
    pub installer_label: bool,
}

/// The whole state.
#[derive(Debug, Clone, PartialEq)]
pub struct State {
    pub install: Install,
    pub release: String,
    pub namespace: String,
    /// The target version (or range) passed as `--to`.
    pub to: String,
    /// The API server's version (`None`: the snapshot records none).
    pub kube: Option<String>,
    /// `pod-security.kubernetes.io/enforce` on the release namespace.
    pub psa: Option<String>,
    pub applied: Applied,
    /// The release's user-supplied values: `(dotted path, JSON value)`.
    pub values: Vec<(String, Json)>,
    /// The manager Deployment's image tag set by hand, unlike the chart's.
    pub manager_image: Option<String>,
    pub neighbours: Vec<Neighbour>,
    pub quotas: Vec<Quota>,
    pub limit_ranges: Vec<LimitRange>,
    pub runtimes: Vec<UserRuntime>,
    pub trainjobs: Vec<TrainJob>,
    pub legacy: Vec<LegacyJob>,
}

impl State {
    /// The versions of charts the install applied, oldest first.
    pub fn installed_versions(&self) -> Vec<&str> {
        match &self.install {
            Install::Helm(ops) => ops
                .iter()
                .filter_map(|op| match op {
                    Op::Install(v, _) | Op::Upgrade(v, _) => Some(v.as_str()),
                    _ => None,
                })
                .collect(),
            Install::Kustomize(v) | Install::ArgoCd(v) => vec![v.as_str()],
            Install::None => Vec::new(),
        }
    }

    /// The user values as one JSON object.
    pub fn values_json(&self) -> Json {
        let mut out = Json::Object(Default::default());
        for (path, value) in &self.values {
            let mut at = &mut out;
            let keys: Vec<&str> = path.split('.').collect();
            for (i, key) in keys.iter().enumerate() {
                if !at.is_object() {
                    *at = Json::Object(Default::default());
                }
                let map = at.as_object_mut().expect("an object");
                if i + 1 == keys.len() {
                    map.insert(key.to_string(), value.clone());
                    break;
                }
                at = map.entry(key.to_string()).or_insert_with(|| Json::Object(Default::default()));
            }
        }
        out
    }

    /// Namespaces the state holds objects in, besides the release's.
    pub fn team_namespaces(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .trainjobs
            .iter()
            .map(|t| t.namespace.clone())
            .chain(self.legacy.iter().map(|l| l.namespace.clone()))
            .chain(self.quotas.iter().map(|q| q.namespace.clone()))
            .chain(self.limit_ranges.iter().map(|l| l.namespace.clone()))
            .filter(|n| *n != self.namespace)
            .collect();
        out.sort();
        out.dedup();
        out
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let suffix = |o: &Outcome| match o {
            Outcome::Ok => "",
            Outcome::Failed => "-failed",
            Outcome::Killed => "-killed",
        };
        match self {
            Op::Install(v, o) => write!(f, "install{}@{v}", suffix(o)),
            Op::Upgrade(v, o) => write!(f, "upgrade{}@{v}", suffix(o)),
            Op::Rollback(r, o) => write!(f, "rollback{}@{r}", suffix(o)),
            Op::Uninstall(o) => write!(f, "uninstall{}", suffix(o)),
            Op::Unknown => write!(f, "unknown"),
        }
    }
}

impl ImageForm {
    pub const ALL: [ImageForm; 6] =
        [ImageForm::Official, ImageForm::Mirror, ImageForm::Port, ImageForm::Digest, ImageForm::Latest, ImageForm::Label];

    pub fn name(self) -> &'static str {
        match self {
            ImageForm::Official => "official",
            ImageForm::Mirror => "mirror",
            ImageForm::Port => "port",
            ImageForm::Digest => "digest",
            ImageForm::Latest => "latest",
            ImageForm::Label => "label",
        }
    }

    /// Whether the version can be read from what runs (image tag or version label).
    pub fn tells_version(self) -> bool {
        !matches!(self, ImageForm::Digest | ImageForm::Latest)
    }
}

impl Applied {
    pub fn name(self) -> &'static str {
        match self {
            Applied::Helm3 => "helm3",
            Applied::ClientSide => "csa",
            Applied::ServerSide => "ssa",
        }
    }
}

impl fmt::Display for JobState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JobState::Running => write!(f, "running"),
            JobState::Complete => write!(f, "complete"),
            JobState::Failed(reason) => write!(f, "failed.{reason}"),
        }
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut tokens: Vec<String> = Vec::new();
        tokens.push(match &self.install {
            Install::Helm(ops) => format!("install=helm:{}", ops.iter().map(ToString::to_string).collect::<Vec<_>>().join(",")),
            Install::Kustomize(v) => format!("install=kustomize@{v}"),
            Install::ArgoCd(v) => format!("install=argocd@{v}"),
            Install::None => "install=none".into(),
        });
        tokens.push(format!("release={}/{}", self.release, self.namespace));
        tokens.push(format!("to={}", self.to));
        tokens.push(format!("kube={}", self.kube.as_deref().unwrap_or("unknown")));
        if let Some(level) = &self.psa {
            tokens.push(format!("psa={level}"));
        }
        if self.applied != Applied::Helm3 {
            tokens.push(format!("applied={}", self.applied.name()));
        }
        for (path, value) in &self.values {
            tokens.push(format!("value={path}={value}"));
        }
        if let Some(tag) = &self.manager_image {
            tokens.push(format!("manager={tag}"));
        }
        for n in &self.neighbours {
            tokens.push(format!("nb={}@{}/{}", n.kind, n.version, n.image.name()));
        }
        for q in &self.quotas {
            let lines: Vec<String> = q.hard.iter().map(|(r, used, hard)| format!("{r}={used}/{hard}")).collect();
            tokens.push(format!("quota={}/{}:{}", q.namespace, q.name, lines.join(",")));
        }
        for l in &self.limit_ranges {
            let lines: Vec<String> = l.limits.iter().map(|(field, r, q)| format!("{field}.{r}={q}")).collect();
            tokens.push(format!("limits={}/{}:{}", l.namespace, l.name, lines.join(",")));
        }
        for r in &self.runtimes {
            tokens.push(format!("runtime={}{}", r.name, if r.installer_label { ":installer-label" } else { "" }));
        }
        for t in &self.trainjobs {
            let mut s = format!("tj={}/{}:{}:{}", t.namespace, t.name, t.runtime, t.state);
            if t.suspended {
                s.push_str(":suspended");
            }
            if let Some(m) = &t.managed_by {
                s.push_str(&format!(":managed={m}"));
            }
            if let Some(q) = &t.queue {
                s.push_str(&format!(":queue={q}"));
            }
            if t.auto_procs {
                s.push_str(":auto");
            }
            tokens.push(s);
        }
        for l in &self.legacy {
            tokens.push(format!("legacy={}/{}:{}:{}", l.namespace, l.name, l.kind, l.state));
        }
        write!(f, "{}", tokens.join(" "))
    }
}

/// Why a description does not parse.
#[derive(Debug, thiserror::Error)]
#[error("state description: {0}")]
pub struct ParseError(pub String);

fn bad(what: impl Into<String>) -> ParseError {
    ParseError(what.into())
}

fn ns_name(text: &str, token: &str) -> Result<(String, String), ParseError> {
    let (ns, name) = text.split_once('/').ok_or_else(|| bad(format!("{token}: expected NAMESPACE/NAME")))?;
    Ok((ns.to_string(), name.to_string()))
}

fn outcome(word: &str) -> Result<(&str, Outcome), ParseError> {
    Ok(match word.rsplit_once('-') {
        Some((op, "failed")) => (op, Outcome::Failed),
        Some((op, "killed")) => (op, Outcome::Killed),
        _ => (word, Outcome::Ok),
    })
}

fn parse_op(text: &str) -> Result<Op, ParseError> {
    let (word, arg) = match text.split_once('@') {
        Some((w, a)) => (w, Some(a)),
        None => (text, None),
    };
    if word == "unknown" {
        return Ok(Op::Unknown);
    }
    let (op, result) = outcome(word)?;
    let need = || arg.map(str::to_string).ok_or_else(|| bad(format!("helm op {text}: expected OP@ARG")));
    Ok(match op {
        "install" => Op::Install(need()?, result),
        "upgrade" => Op::Upgrade(need()?, result),
        "rollback" => Op::Rollback(need()?.parse().map_err(|_| bad(format!("helm op {text}: a revision number")))?, result),
        "uninstall" => Op::Uninstall(result),
        _ => return Err(bad(format!("unknown helm op {text}"))),
    })
}

impl std::str::FromStr for State {
    type Err = ParseError;

    fn from_str(text: &str) -> Result<State, ParseError> {
        let mut state = State {
            install: Install::None,
            release: "kubeflow-trainer".into(),
            namespace: "kubeflow-system".into(),
            to: String::new(),
            kube: None,
            psa: None,
            applied: Applied::Helm3,
            values: Vec::new(),
            manager_image: None,
            neighbours: Vec::new(),
            quotas: Vec::new(),
            limit_ranges: Vec::new(),
            runtimes: Vec::new(),
            trainjobs: Vec::new(),
            legacy: Vec::new(),
        };
        for token in text.split_whitespace() {
            let (key, value) = token.split_once('=').ok_or_else(|| bad(format!("{token}: expected KEY=VALUE")))?;
            match key {
                "install" => {
                    state.install = match value.split_once(['@', ':']) {
                        Some(("helm", ops)) => Install::Helm(ops.split(',').map(parse_op).collect::<Result<_, _>>()?),
                        Some(("kustomize", v)) => Install::Kustomize(v.into()),
                        Some(("argocd", v)) => Install::ArgoCd(v.into()),
                        None if value == "none" => Install::None,
                        _ => return Err(bad(format!("{token}: install=helm:OPS, kustomize@V, argocd@V or none"))),
                    }
                }
                "release" => (state.release, state.namespace) = ns_name(value, token)?,
                "to" => state.to = value.into(),
                "kube" => state.kube = (value != "unknown").then(|| value.to_string()),
                "psa" => state.psa = Some(value.into()),
                "applied" => {
                    state.applied = match value {
                        "helm3" => Applied::Helm3,
                        "csa" => Applied::ClientSide,
                        "ssa" => Applied::ServerSide,
                        _ => return Err(bad(format!("{token}: applied=helm3, csa or ssa"))),
                    }
                }
                "value" => {
                    let (path, json) = value.split_once('=').ok_or_else(|| bad(format!("{token}: value=PATH=JSON")))?;
                    let json = serde_json::from_str(json).map_err(|e| bad(format!("{token}: {e}")))?;
                    state.values.push((path.into(), json));
                }
                "manager" => state.manager_image = Some(value.into()),
                "nb" => {
                    let (kind, rest) = value.split_once('@').ok_or_else(|| bad(format!("{token}: nb=KIND@VERSION/FORM")))?;
                    let (version, form) = rest.split_once('/').ok_or_else(|| bad(format!("{token}: nb=KIND@VERSION/FORM")))?;
                    let image = ImageForm::ALL
                        .into_iter()
                        .find(|f| f.name() == form)
                        .ok_or_else(|| bad(format!("{token}: image form {form} (official, mirror, port, digest, latest, label)")))?;
                    state.neighbours.push(Neighbour { kind: kind.into(), version: version.into(), image });
                }
                "quota" | "limits" => {
                    let (at, lines) = value.split_once(':').ok_or_else(|| bad(format!("{token}: {key}=NS/NAME:LINES")))?;
                    let (namespace, name) = ns_name(at, token)?;
                    if key == "quota" {
                        let hard = lines
                            .split(',')
                            .map(|l| {
                                let (r, uh) = l.split_once('=').ok_or_else(|| bad(format!("{token}: RESOURCE=USED/HARD")))?;
                                let (u, h) = uh.split_once('/').ok_or_else(|| bad(format!("{token}: RESOURCE=USED/HARD")))?;
                                Ok((r.to_string(), u.to_string(), h.to_string()))
                            })
                            .collect::<Result<_, ParseError>>()?;
                        state.quotas.push(Quota { namespace, name, hard });
                    } else {
                        let limits = lines
                            .split(',')
                            .map(|l| {
                                let (fr, q) = l.split_once('=').ok_or_else(|| bad(format!("{token}: FIELD.RESOURCE=QUANTITY")))?;
                                let (field, r) = fr.split_once('.').ok_or_else(|| bad(format!("{token}: FIELD.RESOURCE=QUANTITY")))?;
                                Ok((field.to_string(), r.to_string(), q.to_string()))
                            })
                            .collect::<Result<_, ParseError>>()?;
                        state.limit_ranges.push(LimitRange { namespace, name, limits });
                    }
                }
                "runtime" => {
                    let (name, label) = match value.split_once(':') {
                        Some((n, "installer-label")) => (n, true),
                        Some(_) => return Err(bad(format!("{token}: runtime=NAME[:installer-label]"))),
                        None => (value, false),
                    };
                    state.runtimes.push(UserRuntime { name: name.into(), installer_label: label });
                }
                "tj" => {
                    let mut parts = value.split(':');
                    let (namespace, name) = ns_name(parts.next().unwrap_or_default(), token)?;
                    let runtime = parts.next().ok_or_else(|| bad(format!("{token}: tj=NS/NAME:RUNTIME:STATE")))?.to_string();
                    let state_word = parts.next().ok_or_else(|| bad(format!("{token}: tj=NS/NAME:RUNTIME:STATE")))?;
                    let job_state = match state_word {
                        "running" => JobState::Running,
                        "complete" => JobState::Complete,
                        s => match s.strip_prefix("failed.") {
                            Some(reason) => JobState::Failed(reason.into()),
                            None => return Err(bad(format!("{token}: state running, complete or failed.REASON"))),
                        },
                    };
                    let mut job = TrainJob {
                        namespace,
                        name,
                        runtime,
                        state: job_state,
                        suspended: false,
                        managed_by: None,
                        queue: None,
                        auto_procs: false,
                    };
                    for flag in parts {
                        match flag.split_once('=') {
                            None if flag == "suspended" => job.suspended = true,
                            None if flag == "auto" => job.auto_procs = true,
                            Some(("managed", m)) => job.managed_by = Some(m.into()),
                            Some(("queue", q)) => job.queue = Some(q.into()),
                            _ => return Err(bad(format!("{token}: unknown TrainJob flag {flag}"))),
                        }
                    }
                    state.trainjobs.push(job);
                }
                "legacy" => {
                    let mut parts = value.split(':');
                    let (namespace, name) = ns_name(parts.next().unwrap_or_default(), token)?;
                    let kind = parts.next().ok_or_else(|| bad(format!("{token}: legacy=NS/NAME:KIND:STATE")))?.to_string();
                    let st = parts.next().ok_or_else(|| bad(format!("{token}: legacy=NS/NAME:KIND:STATE")))?.to_string();
                    state.legacy.push(LegacyJob { namespace, name, kind, state: st });
                }
                _ => return Err(bad(format!("unknown key {key} in {token}"))),
            }
        }
        if state.to.is_empty() {
            return Err(bad("no to=VERSION"));
        }
        Ok(state)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_description_rebuilds_its_state() {
        let line = "install=helm:install@2.2.1,upgrade-failed@2.3.0,rollback-killed@1,uninstall,unknown release=trainer/ml-platform to=2.3.0 kube=1.33.4 psa=restricted applied=ssa value=jobset.enabled=false value=manager.labels={\"team\":\"a\"} manager=v2.1.0 nb=kueue@0.16.9/mirror quota=ml-platform/objects:count/configmaps=4/5,pods=1/10 limits=team-a/lr:max.cpu=500m runtime=team-torch:installer-label tj=team-a/llama:torch-distributed:failed.DeadlineExceeded:suspended:managed=kueue.x-k8s.io/multikueue:queue=q:auto legacy=team-a/mnist:PyTorchJob:Running";
        let state: State = line.parse().unwrap();
        assert_eq!(state.to_string(), line);
        assert_eq!(state.values_json(), serde_json::json!({"jobset": {"enabled": false}, "manager": {"labels": {"team": "a"}}}));
        assert_eq!(state.installed_versions(), ["2.2.1", "2.3.0"]);
    }

    #[test]
    fn a_bad_description_names_the_token() {
        let e = "install=helm:frobnicate@1 to=2.3.0".parse::<State>().unwrap_err();
        assert!(e.to_string().contains("frobnicate"), "{e}");
        assert!("install=none".parse::<State>().unwrap_err().to_string().contains("to="));
    }
}
