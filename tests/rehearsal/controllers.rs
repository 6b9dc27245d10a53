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
}
