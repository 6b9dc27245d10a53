//! Rehearsals that run a real Trainer controller manager binary (built from
//! `github.com/kubeflow/trainer/v2` at the tag by `cargo xtask controlplane`, module
//! `tests/controlplane/trainer-v2.3.0`) to observe what a rule predicts the controller does.

use serde_json::Value as Json;

use crate::lab::{Lab, NAMESPACE, RELEASE};
use crate::printed;
use testkit::standin::Record;

/// The Trainer 2.3.0 controller manager in the control plane's bin directory.
pub const MANAGER_2_3_0: &str = "trainer-controller-manager-v2.3.0";

/// The Trainer controller Deployment's manager container: (command, args).
fn manager_argv(lab: &Lab) -> (Vec<String>, Vec<String>) {
    let deployment = lab.get_json(&format!("deployment -n {NAMESPACE} {RELEASE}-controller-manager"));
    let containers = deployment.pointer("/spec/template/spec/containers").and_then(Json::as_array).cloned().unwrap_or_default();
    let manager = containers.iter().find(|c| c["name"] == "manager").unwrap_or_else(|| panic!("no manager container: {deployment}"));
    let strings = |v: &Json| -> Vec<String> { v.as_array().into_iter().flatten().filter_map(|s| s.as_str().map(String::from)).collect() };
    (strings(&manager["command"]), strings(&manager["args"]))
}

fn quote(arg: &str) -> String {
    format!("'{}'", arg.replace('\'', r"'\''"))
}

/// TA-NB-006: a Helm 2.2.1 install whose controller Deployment was edited to pass
/// `--enable-http2` (2.2's manager defines it, 2.3's does not). `check --to 2.3.0` must report
/// the error, and the real 2.3.0 manager, started with the container's arguments as they stand
/// (what its Pod runs once the upgrade swaps the image and the edit stays), must exit as the
/// finding says, with Go's `flag provided but not defined`.
pub fn removed_flag_stops_the_2_3_manager() {
    let Some(mut lab) = Lab::start("removed-flag-2.3.0", &["2.2.1", "2.3.0"]) else { return };
    lab.standin_start();
    lab.shell_ok(&format!(
        "helm install {RELEASE} {} --version 2.2.1 -n {NAMESPACE} --create-namespace --plain-http --wait --timeout 3m",
        lab.repo()
    ));
    lab.shell_ok(&format!(
        "kubectl patch deployment -n {NAMESPACE} {RELEASE}-controller-manager --type=json \
         -p '[{{\"op\": \"add\", \"path\": \"/spec/template/spec/containers/0/args/-\", \"value\": \"--enable-http2\"}}]'"
    ));
    let check = printed::check(&lab, "2.3.0");
    let finding = check
        .errors()
        .into_iter()
        .find(|f| f.id == "TA-NB-006")
        .cloned()
        .unwrap_or_else(|| panic!("check reports no TA-NB-006 error: {:?}\n{}", check.summary(), check.ran));
    assert_eq!(finding.subject, format!("Deployment/{NAMESPACE}/{RELEASE}-controller-manager"), "{finding:?}");
    let predicted = finding.message.split('"').nth(1).unwrap_or_else(|| panic!("no quoted exit text in: {}", finding.message)).to_string();
    assert_eq!(predicted, "flag provided but not defined: -enable-http2");

    let (command, args) = manager_argv(&lab);
    lab.note(&format!("manager container: command {command:?}, args {args:?}"));
    assert!(args.iter().any(|a| a == "--enable-http2"), "{args:?}");
    // The image's entrypoint is the manager; `command` (if any) names it, the rest are arguments.
    let argv: Vec<String> = command.iter().skip(1).chain(&args).map(|a| quote(a)).collect();
    let ran = lab.shell(&format!("timeout 60 {MANAGER_2_3_0} {}", argv.join(" ")));
    lab.note(&format!(
        "the 2.3.0 manager with the edited arguments: exit {:?}\n{}",
        ran.code,
        ran.stderr.lines().take(3).collect::<Vec<_>>().join("\n")
    ));
    assert_eq!(ran.code, Some(2), "Go's flag package exits 2 on an undefined flag:\n{ran}");
    assert!(ran.stderr.contains(&predicted), "the manager did not print what check predicted ({predicted:?}):\n{ran}");
    lab.note(&format!("OBSERVED TA-NB-006 {}: the real 2.3.0 manager printed {predicted:?} and exited 2", finding.subject));

    // And as its Pod: the image swapped to 2.3.0 with the edit kept (what the upgrade does to a
    // Deployment whose arguments an edit owns), rolled out; the new Pod's 2.3.0 manager exits at
    // its start with that text, and the kubelet stand-in restarts it in a crash loop.
    let records_before = lab.standin_records().len();
    lab.shell_ok(&format!(
        "kubectl set image deployment/{RELEASE}-controller-manager -n {NAMESPACE} manager=ghcr.io/kubeflow/trainer/trainer-controller-manager:v2.3.0"
    ));
    let exited = crate::running::poll(120, || {
        lab.standin_records().into_iter().skip(records_before).find_map(|r| match r {
            Record::ControllerExited { pod, exit_code, output } => Some((pod, exit_code, output)),
            _ => None,
        })
    });
    let (pod, code, output) = exited.unwrap_or_else(|| panic!("the 2.3.0 manager's Pod did not exit: {:#?}", lab.standin_records()));
    lab.note(&format!("the rolled-out 2.3.0 manager Pod {pod}: exit {code}: {}", output.lines().next().unwrap_or_default()));
    let started: Vec<String> = lab
        .standin_records()
        .into_iter()
        .skip(records_before)
        .filter_map(|r| match r {
            Record::ControllerStarted { pod: p, binary, .. } if p == pod => Some(binary),
            _ => None,
        })
        .collect();
    assert_eq!(started.first().map(String::as_str), Some(MANAGER_2_3_0), "{pod} ran {started:?}");
    assert_eq!(code, 2, "{output}");
    assert!(output.contains(&predicted), "the Pod's manager did not print {predicted:?}:\n{output}");
    lab.note(&format!("OBSERVED TA-NB-006 {}: as its Pod, the 2.3.0 manager exited 2 with {predicted:?}", finding.subject));

    feature_gates_and_pins_stop_the_managers(&lab);
}

/// The controller Configuration the 2.3.0 chart renders with `values` (its ConfigMap's
/// `controller_manager_config.yaml`, from `helm template`), written to `file` in the run directory.
fn rendered_config(lab: &Lab, values: &str, file: &str) -> String {
    let ran = lab.shell_ok(&format!(
        "helm template {RELEASE} {} --version 2.3.0 -n {NAMESPACE} --plain-http {values} --show-only templates/manager/configmap.yaml",
        lab.repo()
    ));
    // Helm prints `Pulled: …` and `Digest: …` before the manifest when it pulls from a registry.
    let manifest = ran.stdout.find("---").map(|at| &ran.stdout[at..]).unwrap_or(&ran.stdout);
    let configmap: Json = serde_saphyr::from_str(manifest).unwrap_or_else(|e| panic!("the rendered ConfigMap: {e}\n{ran}"));
    let config = configmap["data"]["controller_manager_config.yaml"].as_str().unwrap_or_else(|| panic!("no Configuration rendered: {ran}"));
    assert!(config.contains("kind: Configuration"), "{config}");
    std::fs::write(lab.run_dir().join(file), config).unwrap();
    file.to_string()
}

/// TA-CFG-001 with the real managers, on this Helm 2.2.1 install going to 2.3.0: `check` with a
/// gate the 2.3.0 manager does not know, and with the image pinned to 2.1.0, 2.2.1 and 2.0.0
/// (`image.tag`), against each manager started with the Configuration the 2.3.0 chart renders
/// with those values (what its Pod runs after the upgrade): the gate and the 2.1.0 and 2.0.0
/// pins stop the manager at start-up with the text the finding names; 2.2.1 loads the
/// Configuration and goes on (it then needs the in-cluster environment only a Pod has).
pub fn feature_gates_and_pins_stop_the_managers(lab: &Lab) {
    let check_with = |set: &str| -> Vec<printed::Finding> {
        let repo = lab.repo();
        let ran = lab.audit(&["check", "--to", "2.3.0", "--repo", &repo, "--plain-http", "--set", set, "--format", "json"]);
        let report: Json = serde_json::from_str(&ran.stdout).unwrap_or_else(|e| panic!("check JSON: {e}\n{ran}"));
        report["findings"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|f| f["id"] == "TA-CFG-001")
            .map(|f| printed::Finding {
                id: "TA-CFG-001".into(),
                severity: f["severity"].as_str().unwrap_or_default().into(),
                subject: f["subject"].as_str().unwrap_or_default().into(),
                message: f["message"].as_str().unwrap_or_default().into(),
            })
            .collect()
    };
    // (values set, the binary the Pod would run, the text that must stop it, or None: it starts).
    let cases: [(&str, &str, Option<&str>); 4] = [
        ("manager.config.featureGates.MadeUp=true", MANAGER_2_3_0, Some("unrecognized feature gate: MadeUp")),
        ("image.tag=v2.1.0", "trainer-controller-manager-v2.1.0", Some("strict decoding error: unknown field \"statusServer\"")),
        ("image.tag=v2.0.0", "trainer-controller-manager-v2.0.0", Some("flag provided but not defined: -config")),
        ("image.tag=v2.2.1", "trainer-controller-manager-v2.2.1", None),
    ];
    for (i, (set, binary, stops)) in cases.iter().enumerate() {
        let found = check_with(set);
        assert_eq!(found.len(), 1, "check --set {set}: TA-CFG-001 findings {found:?}");
        let f = &found[0];
        match stops {
            Some(text) => assert!(f.severity == "error" && f.message.contains(text), "check --set {set} must predict {text:?}: {f:?}"),
            None => assert_eq!(f.severity, "warning", "check --set {set}: the pinned controller accepts the configuration: {f:?}"),
        }
        let config = rendered_config(lab, &format!("--set {set}"), &format!("cfg-{i}.yaml"));
        let ran = lab.shell(&format!("timeout 60 {binary} --config={config}"));
        let said = ran
            .stderr
            .lines()
            .chain(ran.stdout.lines())
            .filter(|l| l.contains("error") || l.contains("flag provided"))
            .take(2)
            .collect::<Vec<_>>()
            .join("\n");
        lab.note(&format!("--set {set}: {binary} --config: exit {:?}: {said}", ran.code));
        match stops {
            Some(text) => {
                assert!(matches!(ran.code, Some(1) | Some(2)), "{binary} was to stop at start-up:\n{ran}");
                // The managers log JSON: the quotes of the error text are escaped there.
                let printed = format!("{}{}", ran.stdout, ran.stderr).replace("\\\"", "\"");
                assert!(printed.contains(text), "{binary} did not print {text:?}:\n{ran}");
                lab.note(&format!("OBSERVED TA-CFG-001 values {set}: {binary} printed {text:?} and exited {:?}", ran.code));
            }
            None => {
                let log = format!("{}{}", ran.stdout, ran.stderr);
                assert!(
                    log.contains("Creating manager") && !log.contains("strict decoding"),
                    "{binary} was to load the Configuration:\n{ran}"
                );
                lab.note(&format!("OBSERVED TA-CFG-001 (older) values {set}: {binary} loaded the 2.3.0 chart's Configuration"));
            }
        }
    }
}
