//! State `K` of campaign `S`: every dimension drawn from [`Rng::for_state`]`(S, K)`, so the
//! generator is deterministic per seed and one state can be rebuilt alone. Helm histories are
//! random walks of operations that Helm accepts ([`super::helm::History::apply`] refuses the
//! rest), so every history is one Helm can leave behind. The weights favour what platform teams
//! have after a bad week: 2.1/2.2 releases on their way to 2.3, failed and interrupted
//! operations, mirrored neighbours, quotas with no room.

use serde_json::{json, Value as Json};

use super::helm::History;
use super::rng::Rng;
use super::state::{
    Applied, ImageForm, Install, JobState, LegacyJob, LimitRange, Neighbour, Op, Outcome, Quota, State, TrainJob, UserRuntime,
};

/// Chart versions the explorer's registry serves (the corpus's, and 2.3.0 relabelled as 2.3.1
/// and 2.4.0 as the rehearsals do).
pub const VERSIONS: &[&str] =
    &["2.0.0", "2.0.1", "2.1.0-rc.1", "2.1.0", "2.2.0-rc.0", "2.2.0-rc.1", "2.2.0", "2.2.1", "2.3.0-rc.3", "2.3.0", "2.3.1", "2.4.0"];

/// Versions made from the 2.3.0 chart by changing only its version.
pub const RELABELLED: &[&str] = &["2.3.1", "2.4.0"];

const INSTALLED: &[(u32, &str)] = &[
    (4, "2.0.0"),
    (1, "2.0.1"),
    (10, "2.1.0"),
    (1, "2.1.0-rc.1"),
    (6, "2.2.0"),
    (1, "2.2.0-rc.1"),
    (18, "2.2.1"),
    (2, "2.3.0-rc.3"),
    (10, "2.3.0"),
    (3, "2.3.1"),
];

const RELEASES: &[(u32, &str)] = &[(12, "kubeflow-trainer"), (3, "trainer"), (2, "kft"), (1, "ml-trainer")];
const NAMESPACES: &[(u32, &str)] = &[(12, "kubeflow-system"), (3, "ml-platform"), (2, "kubeflow"), (1, "trainer-system")];
const TEAMS: &[&str] = &["team-a", "team-b", "research"];

fn parse(v: &str) -> semver::Version {
    semver::Version::parse(v).expect("a version of VERSIONS")
}

/// The ClusterTrainingRuntimes a chart version ships (what TrainJobs commonly name).
fn builtin_runtimes(version: &str) -> &'static [&'static str] {
    if parse(version) < semver::Version::new(2, 2, 0) {
        &[]
    } else {
        &["torch-distributed", "deepspeed-distributed"]
    }
}

/// User values, with the first chart version whose values.yaml has the key (None: a key no
/// chart has — a typo, or a subchart key written the way users guess it).
const VALUES: &[(&str, &str, Option<&str>)] = &[
    ("runtimes.torchDistributed.enabled", "true", Some("2.2.0")),
    ("runtimes.deepspeedDistributed.enabled", "true", Some("2.2.0")),
    ("runtimes.defaultEnabled", "true", Some("2.2.0")),
    ("jobset.install", "false", Some("2.0.0")),
    ("jobset.enabled", "false", None),
    ("jobset.controller.replicas", "2", Some("2.0.0")),
    ("jobset.controler.replicas", "2", None),
    ("runtime.torchDistributed.enabled", "true", None),
    ("manager.replica", "2", None),
    ("manager.labels", "{\"team\":\"ml-platform\"}", Some("2.0.0")),
    ("manager.annotations", "{\"prometheus.io/scrape\":\"true\"}", Some("2.0.0")),
    ("crds.enabled", "false", Some("2.3.0")),
    ("image.tag", "\"v2.1.0\"", Some("2.0.0")),
    ("dataCache.enabled", "true", Some("2.2.0")),
    ("webhook.failurePolicy", "\"Ignore\"", Some("2.0.0")),
    (
        "manager.resources",
        "{\"requests\":{\"cpu\":\"100m\",\"memory\":\"128Mi\"},\"limits\":{\"cpu\":\"500m\",\"memory\":\"512Mi\"}}",
        Some("2.0.0"),
    ),
    (
        "runtimes.installer.resources",
        "{\"requests\":{\"cpu\":\"50m\",\"memory\":\"64Mi\"},\"limits\":{\"cpu\":\"100m\",\"memory\":\"128Mi\"}}",
        Some("2.3.0"),
    ),
    ("runtimes.installer.image.registry", "\"harbor.corp.example/mirror\"", Some("2.3.0")),
];

/// Versions each neighbour is drawn from (Kueue's span the Trainer APIs its builds require).
const NEIGHBOURS: &[(&str, &[&str])] = &[
    ("kueue", &["0.14.0", "0.14.5", "0.15.2", "0.16.9", "0.17.0", "0.17.3"]),
    ("jobset", &["0.8.2", "0.10.1", "0.11.0", "0.12.0"]),
    ("lws", &["0.6.2", "0.7.0", "0.8.0"]),
    ("volcano", &["1.11.2", "1.12.1"]),
    ("scheduler-plugins", &["0.31.8", "0.32.7"]),
];

/// Quota lines: a resource and how many of it the target may need.
const QUOTA_RESOURCES: &[&str] = &[
    "count/configmaps",
    "configmaps",
    "count/secrets",
    "count/jobs.batch",
    "count/deployments.apps",
    "count/replicasets.apps",
    "count/serviceaccounts",
    "pods",
    "requests.cpu",
    "requests.memory",
    "limits.cpu",
    "limits.memory",
];

impl State {
    /// State `index` of campaign `seed`.
    pub fn generate(seed: u64, index: u64) -> State {
        let mut rng = Rng::for_state(seed, index);
        let release = rng.weighted(RELEASES).to_string();
        let namespace = rng.weighted(NAMESPACES).to_string();
        let install = match rng.below(100) {
            0..=79 => Install::Helm(history(&mut rng, &release)),
            80..=89 => Install::Kustomize(rng.pick(&["2.1.0", "2.2.0", "2.2.1"]).to_string()),
            90..=97 => Install::ArgoCd(rng.pick(&["2.1.0", "2.2.1", "2.3.0"]).to_string()),
            _ => Install::None,
        };
        // kustomize manifests have no release: the objects are named as the chart names them
        // for `kubeflow-trainer`, the release that adopts them.
        let release = if matches!(install, Install::Kustomize(_)) { "kubeflow-trainer".to_string() } else { release };
        let installed = installed_version(&install, &release);
        let to = target(&mut rng, installed.as_deref());
        let kube = if rng.chance(6) {
            None
        } else {
            Some(rng.weighted(&[(1, "1.30.6"), (2, "1.31.4"), (5, "1.32.5"), (6, "1.33.4"), (4, "1.34.2"), (2, "1.36.1")]).to_string())
        };
        let psa = match rng.below(100) {
            0..=54 => None,
            55..=69 => Some("baseline"),
            70..=93 => Some("restricted"),
            _ => Some("privileged"),
        }
        .map(String::from);
        let applied = *rng.weighted(&[(4, Applied::Helm3), (2, Applied::ClientSide), (3, Applied::ServerSide)]);
        let values = values(&mut rng, installed.as_deref());
        let manager_image = rng.chance(5).then(|| rng.pick(&["v2.1.0", "v2.2.0", "v2.2.1", "v2.3.0"]).to_string());
        let neighbours = neighbours(&mut rng);
        let runtimes: Vec<UserRuntime> =
            if rng.chance(20) { vec![UserRuntime { name: "team-torch".into(), installer_label: rng.chance(40) }] } else { Vec::new() };
        let mut state = State {
            install,
            release,
            namespace,
            to,
            kube,
            psa,
            applied,
            values,
            manager_image,
            neighbours,
            quotas: Vec::new(),
            limit_ranges: Vec::new(),
            runtimes,
            trainjobs: Vec::new(),
            legacy: Vec::new(),
        };
        state.trainjobs = trainjobs(&mut rng, &state, installed.as_deref());
        state.legacy = legacy(&mut rng, &state);
        state.quotas = quotas(&mut rng, &state);
        state.limit_ranges = limit_ranges(&mut rng, &state);
        state
    }
}

/// The version a state's install runs (the last applied one), for the draws that depend on it.
fn installed_version(install: &Install, release: &str) -> Option<String> {
    match install {
        Install::Helm(ops) => {
            let mut h = History::default();
            let mut version = None;
            for op in ops {
                if let Ok(applied) = h.apply(release, op) {
                    version = applied.version.or(version);
                }
            }
            version
        }
        Install::Kustomize(v) | Install::ArgoCd(v) => Some(v.clone()),
        Install::None => None,
    }
}

/// A history Helm accepts, one to five operations long.
fn history(rng: &mut Rng, release: &str) -> Vec<Op> {
    let outcome = |rng: &mut Rng| *rng.weighted(&[(85, Outcome::Ok), (10, Outcome::Failed), (5, Outcome::Killed)]);
    let first =
        Op::Install(rng.weighted(INSTALLED).to_string(), *rng.weighted(&[(92, Outcome::Ok), (5, Outcome::Failed), (3, Outcome::Killed)]));
    let mut ops = vec![first];
    let mut h = History::default();
    h.apply(release, &ops[0]).expect("a first install");
    // A pipeline that upgrades in place on every run makes long histories (Helm's list order
    // changes past revision 9).
    if rng.chance(5) {
        let version = match &ops[0] {
            Op::Install(v, _) => v.clone(),
            _ => unreachable!("the first op installs"),
        };
        for _ in 0..8 + rng.below(4) {
            let op = Op::Upgrade(version.clone(), Outcome::Ok);
            if h.apply(release, &op).is_ok() {
                ops.push(op);
            }
        }
    }
    let more = ops.len() - 1 + *rng.weighted(&[(35, 0usize), (35, 1), (18, 2), (8, 3), (4, 4)]);
    let mut tries = 0;
    while ops.len() <= more && tries < 20 {
        tries += 1;
        let current = h.last().map(|r| r.version.clone()).unwrap_or_default();
        let op = match rng.below(100) {
            0..=64 => Op::Upgrade(next_version(rng, &current), outcome(rng)),
            65..=76 => {
                let last = h.last().map_or(1, |r| r.number);
                Op::Rollback(
                    1 + rng.below(last.max(1) as usize) as i64,
                    *rng.weighted(&[(85, Outcome::Ok), (10, Outcome::Failed), (5, Outcome::Killed)]),
                )
            }
            77..=88 => Op::Uninstall(*rng.weighted(&[(70, Outcome::Ok), (30, Outcome::Killed)])),
            89..=95 => Op::Install(next_version(rng, &current), outcome(rng)),
            _ => Op::Unknown,
        };
        let mut trial = h.clone();
        if trial.apply(release, &op).is_ok() {
            h = trial;
            ops.push(op);
        }
    }
    ops
}

/// A version to move to from `current`: mostly forward, sometimes sideways or back.
fn next_version(rng: &mut Rng, current: &str) -> String {
    let now = semver::Version::parse(current).ok();
    let ahead: Vec<&str> = VERSIONS.iter().copied().filter(|v| now.as_ref().is_none_or(|n| parse(v) > *n)).collect();
    if !ahead.is_empty() && rng.chance(80) {
        // The next minor is the usual step; any later one sometimes.
        return if rng.chance(60) { ahead[0].to_string() } else { rng.pick(&ahead).to_string() };
    }
    rng.pick(VERSIONS).to_string()
}

/// The `--to` of the run, relative to what is installed.
fn target(rng: &mut Rng, installed: Option<&str>) -> String {
    let installed = installed.and_then(|v| semver::Version::parse(v).ok());
    match rng.below(100) {
        0..=54 => "2.3.0",
        55..=66 => "2.3.1",
        67..=78 => "2.4.0",
        79..=83 => "2.3.0-rc.3",
        84..=88 => match &installed {
            Some(v) => return v.to_string(),
            None => "2.3.0",
        },
        89..=93 => "2.2.1",
        94..=96 => "2.1.0",
        _ => "^2.3",
    }
    .to_string()
}

fn values(rng: &mut Rng, installed: Option<&str>) -> Vec<(String, Json)> {
    let mut out: Vec<(String, Json)> = Vec::new();
    let count = *rng.weighted(&[(40, 0usize), (30, 1), (20, 2), (10, 3)]);
    let installed = installed.map(parse);
    for _ in 0..count {
        // Keys the installed chart knows, mostly; a typo or a key of another version sometimes.
        let (path, json, since) = *rng.pick(VALUES);
        let known = since.is_some_and(|s| installed.as_ref().is_none_or(|v| *v >= parse(s)));
        if !known && rng.chance(60) {
            continue;
        }
        if out.iter().any(|(p, _)| p == path || p.starts_with(&format!("{path}.")) || path.starts_with(&format!("{p}."))) {
            continue;
        }
        out.push((path.to_string(), serde_json::from_str(json).expect("catalogue JSON")));
    }
    out
}

fn neighbours(rng: &mut Rng) -> Vec<Neighbour> {
    let mut out = Vec::new();
    for (kind, versions) in NEIGHBOURS {
        let percent = if *kind == "kueue" { 30 } else { 8 };
        if rng.chance(percent) {
            let image = *rng.weighted(&[
                (40, ImageForm::Official),
                (20, ImageForm::Mirror),
                (8, ImageForm::Port),
                (12, ImageForm::Digest),
                (8, ImageForm::Latest),
                (12, ImageForm::Label),
            ]);
            out.push(Neighbour { kind: kind.to_string(), version: rng.pick(versions).to_string(), image });
        }
    }
    if rng.chance(6) {
        out.push(Neighbour { kind: "training-operator".into(), version: "1.9.2".into(), image: ImageForm::Official });
    }
    out
}

fn trainjobs(rng: &mut Rng, state: &State, installed: Option<&str>) -> Vec<TrainJob> {
    if installed.is_none() || rng.chance(25) {
        return Vec::new();
    }
    let mut runtimes: Vec<String> = installed.map(builtin_runtimes).unwrap_or_default().iter().map(|s| s.to_string()).collect();
    runtimes.extend(state.runtimes.iter().map(|r| r.name.clone()));
    if runtimes.is_empty() {
        runtimes.push("torch-distributed".into());
    }
    let kueue = state.neighbours.iter().any(|n| n.kind == "kueue");
    let legacy_schema = installed.is_some_and(|v| parse(v) < semver::Version::new(2, 2, 0));
    let count = 1 + rng.below(6);
    (0..count)
        .map(|i| {
            let job_state = match rng.below(100) {
                0..=44 => JobState::Running,
                45..=69 => JobState::Complete,
                70..=79 => JobState::Failed("DeadlineExceeded".into()),
                80..=89 => JobState::Failed("JobSetFailed".into()),
                _ => JobState::Failed("TrainJobRuntimeNotSupported".into()),
            };
            TrainJob {
                namespace: rng.pick(TEAMS).to_string(),
                name: format!("job-{i}"),
                runtime: rng.pick(&runtimes).clone(),
                state: job_state,
                suspended: rng.chance(12),
                managed_by: rng.chance(6).then(|| "kueue.x-k8s.io/multikueue".to_string()),
                queue: (kueue && rng.chance(50)).then(|| "user-queue".to_string()),
                auto_procs: legacy_schema && rng.chance(30),
            }
        })
        .collect()
}

fn legacy(rng: &mut Rng, state: &State) -> Vec<LegacyJob> {
    if !state.neighbours.iter().any(|n| n.kind == "training-operator") {
        return Vec::new();
    }
    (0..1 + rng.below(3))
        .map(|i| LegacyJob {
            namespace: rng.pick(TEAMS).to_string(),
            name: format!("legacy-{i}"),
            kind: rng.pick(&["PyTorchJob", "TFJob", "MPIJob"]).to_string(),
            state: rng.pick(&["Running", "Succeeded", "Failed"]).to_string(),
        })
        .collect()
}

fn quotas(rng: &mut Rng, state: &State) -> Vec<Quota> {
    let mut out = Vec::new();
    let mut namespaces = vec![state.namespace.clone()];
    namespaces.extend(state.trainjobs.iter().map(|t| t.namespace.clone()));
    namespaces.dedup();
    for (i, ns) in namespaces.iter().enumerate() {
        if !rng.chance(if i == 0 { 25 } else { 20 }) {
            continue;
        }
        let lines = 1 + rng.below(2);
        let hard: Vec<(String, String, String)> = (0..lines)
            .map(|_| {
                let resource = rng.pick(QUOTA_RESOURCES).to_string();
                let (used, hard) = quota_numbers(rng, &resource);
                (resource, used, hard)
            })
            .fold(Vec::new(), |mut acc, line| {
                if !acc.iter().any(|(r, _, _): &(String, String, String)| *r == line.0) {
                    acc.push(line);
                }
                acc
            });
        out.push(Quota { namespace: ns.clone(), name: format!("quota-{i}"), hard });
    }
    out
}

/// `(used, hard)` for a quota line: full, nearly full, or roomy. Object counts are relative to
/// what the namespace holds (`*`, `+N`); compute quotas carry numbers.
fn quota_numbers(rng: &mut Rng, resource: &str) -> (String, String) {
    let slack = *rng.weighted(&[(35, 0u64), (25, 1), (15, 2), (25, 50)]);
    let (unit, used) = match resource {
        "requests.cpu" | "limits.cpu" => ("", 2 + rng.below(4) as u64),
        "requests.memory" | "limits.memory" => ("Gi", 2 + rng.below(8) as u64),
        _ => return ("*".into(), format!("+{slack}")),
    };
    (format!("{used}{unit}"), format!("{}{unit}", used + slack))
}

fn limit_ranges(rng: &mut Rng, state: &State) -> Vec<LimitRange> {
    if !rng.chance(12) {
        return Vec::new();
    }
    let limits = match rng.below(4) {
        0 => vec![("max".into(), "cpu".into(), "1".into())],
        1 => vec![("max".into(), "memory".into(), "1Gi".into())],
        2 => vec![("defaultRequest".into(), "cpu".into(), "100m".into()), ("default".into(), "cpu".into(), "500m".into())],
        _ => vec![("min".into(), "memory".into(), "256Mi".into())],
    };
    vec![LimitRange { namespace: state.namespace.clone(), name: "limits".into(), limits }]
}

/// The JSON of a catalogue value (for tests and the oracles).
pub fn value_catalogue() -> Vec<(String, Json, Option<String>)> {
    VALUES.iter().map(|(p, j, s)| (p.to_string(), serde_json::from_str(j).unwrap_or(json!(null)), s.map(String::from))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_are_deterministic_and_their_descriptions_rebuild_them() {
        for k in 0..300 {
            let a = State::generate(42, k);
            assert_eq!(a, State::generate(42, k));
            let line = a.to_string();
            let parsed: State = line.parse().unwrap_or_else(|e| panic!("{e}: {line}"));
            assert_eq!(parsed, a, "{line}");
        }
        assert_ne!(State::generate(42, 0), State::generate(43, 0));
    }

    #[test]
    fn generated_histories_are_ones_helm_accepts() {
        for k in 0..300 {
            let s = State::generate(7, k);
            if let Install::Helm(ops) = &s.install {
                let mut h = History::default();
                for op in ops {
                    h.apply(&s.release, op).unwrap_or_else(|e| panic!("{s}: {op}: {e}"));
                }
            }
        }
    }

    #[test]
    fn the_catalogue_parses() {
        assert_eq!(value_catalogue().len(), VALUES.len());
    }
}

/// Live states: the dimensions the live differential can make for real on the test control plane
/// (one release `kubeflow-trainer` in `kubeflow-system`, the charts and controllers the rehearsals
/// build, Kubernetes 1.36.1), drawn per seed as [`State::generate`] draws offline ones.
pub mod live {
    use super::*;

    /// The versions the live lab installs and targets.
    pub const VERSIONS: &[&str] = &["2.1.0", "2.2.1", "2.3.0", "2.3.1", "2.4.0"];

    impl State {
        pub fn generate_live(seed: u64, index: u64) -> State {
            // Another stream than the offline states of the same seed.
            let mut rng = Rng::for_state(seed ^ 0x6c69_7665, index);
            let first = rng.weighted(&[(2, "2.1.0"), (5, "2.2.1"), (4, "2.3.0")]).to_string();
            let mut ops = vec![Op::Install(first.clone(), Outcome::Ok)];
            let mut values: Vec<(String, Json)> = Vec::new();
            // 2.2 applies its runtimes in the release that creates their webhook, before any
            // manager serves it (refused with webhooks on): only 2.3's hook installs them here.
            if first == "2.3.0" {
                values.push(("runtimes.torchDistributed.enabled".into(), json!(true)));
            }
            // What happened since: nothing, an upgrade that worked, failed or was killed, a
            // rollback after a failure, an uninstall kept in history, an interrupted one, a status
            // rewritten to unknown.
            let next = if first == "2.3.0" { "2.3.1" } else { "2.3.0" };
            match rng.below(100) {
                0..=29 => {}
                30..=44 => ops.push(Op::Upgrade(next.into(), Outcome::Ok)),
                45..=59 => ops.push(Op::Upgrade(next.into(), Outcome::Failed)),
                60..=69 => ops.push(Op::Upgrade(next.into(), Outcome::Killed)),
                70..=77 => ops.extend([Op::Upgrade(next.into(), Outcome::Failed), Op::Rollback(1, Outcome::Ok)]),
                78..=87 => ops.push(Op::Uninstall(Outcome::Ok)),
                88..=93 if first == "2.3.0" => ops.push(Op::Uninstall(Outcome::Killed)),
                _ => ops.push(Op::Unknown),
            }
            let to = rng.weighted(&[(5, "2.3.0"), (3, "2.3.1"), (2, "2.4.0"), (1, "2.2.1")]).to_string();
            let psa = match rng.below(100) {
                0..=59 => None,
                60..=74 => Some("baseline".to_string()),
                _ => Some("restricted".to_string()),
            };
            let mut state = State {
                install: Install::Helm(ops),
                release: "kubeflow-trainer".into(),
                namespace: "kubeflow-system".into(),
                to,
                kube: Some("1.36.1".into()),
                psa,
                applied: Applied::ServerSide,
                values,
                manager_image: None,
                neighbours: Vec::new(),
                quotas: Vec::new(),
                limit_ranges: Vec::new(),
                runtimes: Vec::new(),
                trainjobs: Vec::new(),
                legacy: Vec::new(),
            };
            if rng.chance(60) {
                // 2.3 ships torch-distributed (the installer applies it); before, the team's own.
                let runtime = if first == "2.3.0" { "torch-distributed" } else { "team-torch" };
                if runtime == "team-torch" {
                    state.runtimes.push(UserRuntime { name: runtime.into(), installer_label: false });
                }
                state.trainjobs = (0..1 + rng.below(2))
                    .map(|i| TrainJob {
                        namespace: "team-a".into(),
                        name: format!("job-{i}"),
                        runtime: runtime.into(),
                        state: JobState::Running,
                        suspended: rng.chance(20),
                        managed_by: None,
                        queue: None,
                        auto_procs: false,
                    })
                    .collect();
            }
            if rng.chance(35) {
                let ns = if !state.trainjobs.is_empty() && rng.chance(40) { "team-a" } else { "kubeflow-system" };
                let resource = *rng.pick(&["count/configmaps", "count/secrets", "count/jobs.batch", "pods", "count/replicasets.apps"]);
                let slack = *rng.weighted(&[(5, 0u64), (3, 1), (2, 20)]);
                state.quotas.push(Quota {
                    namespace: ns.into(),
                    name: "quota".into(),
                    hard: vec![(resource.into(), "*".into(), format!("+{slack}"))],
                });
            } else if rng.chance(15) {
                state.quotas.push(Quota {
                    namespace: "kubeflow-system".into(),
                    name: "compute".into(),
                    hard: vec![("requests.cpu".into(), "0".into(), "8".into())],
                });
            }
            if rng.chance(12) {
                let limits = match rng.below(2) {
                    0 => vec![("max".into(), "cpu".into(), "1".into())],
                    _ => vec![("min".into(), "memory".into(), "256Mi".into())],
                };
                state.limit_ranges.push(LimitRange { namespace: "kubeflow-system".into(), name: "limits".into(), limits });
            }
            state
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn live_states_are_histories_helm_accepts_in_the_live_space() {
            for k in 0..200 {
                let s = State::generate_live(3, k);
                assert_eq!(s, State::generate_live(3, k));
                assert_eq!(s.to_string().parse::<State>().unwrap(), s);
                let Install::Helm(ops) = &s.install else { panic!("{s}") };
                let mut h = History::default();
                for op in ops {
                    h.apply(&s.release, op).unwrap_or_else(|e| panic!("{s}: {e}"));
                }
                assert!(s.installed_versions().iter().all(|v| VERSIONS.contains(v)), "{s}");
            }
        }
    }
}
