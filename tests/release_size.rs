//! The release record size trainer-audit computes (helm_render::release_record) against the
//! Secret the real `helm` (v4.2.3) writes, on the test control plane: each corpus chart installed
//! (with `TRAINER_AUDIT_CORPUS`), and a chart made to land just under and just over Kubernetes'
//! 1 MiB limit on a Secret's data, which helm must then store and fail to store.

use std::path::Path;

use base64::Engine;
use gotmpl::Map;
use helm_render::chart::Chart;
use helm_render::release_record::{record_size, RecordMeta, RecordSize, MAX_RECORD_BYTES};
use helm_render::render::{render_chart, RenderOptions};
use testkit::controlplane::{self, ControlPlane};

/// The stored size trainer-audit computes for the record `helm install` leaves (revision 1,
/// deployed, applied server-side).
fn ours(chart: &Chart, name: &str, namespace: &str) -> RecordSize {
    let mut options = RenderOptions::default();
    options.release.name = name.to_string();
    options.release.namespace = namespace.to_string();
    let rendered = render_chart(chart, &options).expect("renders");
    let config = Map::default();
    let meta = RecordMeta {
        name,
        namespace,
        revision: 1,
        status: "deployed",
        description: "Install complete",
        apply_method: "ssa",
        config: &config,
    };
    record_size(chart, &rendered, &meta).expect("the release JSON")
}

/// The length of the stored text of the Secret `helm` wrote (its `data.release`, once the API's
/// own base64 is undone).
fn stored(cp: &ControlPlane, name: &str, namespace: &str) -> usize {
    let secret = format!("secret/sh.helm.release.v1.{name}.v1");
    let out = cp
        .kubectl_ok(&cp.admin_kubeconfig, &["get", "-n", namespace, &secret, "-o", "jsonpath={.data.release}"], None)
        .expect("the record");
    base64::engine::general_purpose::STANDARD.decode(out.trim()).expect("base64").len()
}

fn install(cp: &ControlPlane, name: &str, namespace: &str, chart: &str) -> std::process::Output {
    cp.helm(&cp.admin_kubeconfig, &["install", name, chart, "-n", namespace, "--create-namespace", "--no-hooks", "--take-ownership"])
}

/// A chart whose one file of pseudo-random text makes the record about `target` bytes.
fn sized_chart(dir: &Path, target: usize) -> (Chart, usize) {
    std::fs::create_dir_all(dir.join("templates")).unwrap();
    std::fs::write(dir.join("Chart.yaml"), "apiVersion: v2\nname: sized\nversion: 0.1.0\n").unwrap();
    std::fs::write(dir.join("templates/cm.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: sized\ndata:\n  a: b\n").unwrap();
    let text = |n: usize| {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"[(x % 64) as usize] as char
            })
            .collect::<String>()
    };
    let (mut lo, mut hi) = (0usize, target * 2);
    let mut last = (Chart::load_dir(dir).unwrap(), 0);
    while hi - lo > 64 {
        let mid = (lo + hi) / 2;
        std::fs::write(dir.join("blob.txt"), text(mid)).unwrap();
        let chart = Chart::load_dir(dir).unwrap();
        let size = ours(&chart, "sized", "sized").stored;
        if size < target {
            lo = mid;
        } else {
            hi = mid;
        }
        last = (chart, size);
    }
    last
}

#[test]
fn release_records_are_sized_as_helm_writes_them() {
    let test = "release_records_are_sized_as_helm_writes_them";
    let Some(cp) = controlplane::fresh_or_skip(test) else { return };
    let scratch = tempfile::tempdir().unwrap();
    // Just under and just over the limit, by twice the stated uncertainty.
    let margin = MAX_RECORD_BYTES / 50;
    for (label, target, fits) in [("under", MAX_RECORD_BYTES - margin, true), ("over", MAX_RECORD_BYTES + margin, false)] {
        let dir = scratch.path().join(label);
        let (chart, size) = sized_chart(&dir, target);
        assert_eq!(size <= MAX_RECORD_BYTES, fits, "{label}: ours {size}");
        let ns = format!("sized-{label}");
        let out = install(&cp, "sized", &ns, &dir.display().to_string());
        let stderr = String::from_utf8_lossy(&out.stderr);
        if fits {
            assert!(out.status.success(), "{label}: helm install failed: {stderr}");
            let real = stored(&cp, "sized", &ns);
            let diff = real.abs_diff(size);
            eprintln!("{label}: helm stored {real} bytes, trainer-audit computed {size} ({diff} apart)");
            assert!(diff <= ours(&chart, "sized", &ns).uncertainty(), "{label}: helm {real}, ours {size}");
        } else {
            assert!(!out.status.success(), "{label}: a {size}-byte record was stored");
            assert!(stderr.contains("Too long: may not be more than 1048576 bytes"), "{label}: {stderr}");
        }
    }
    let Some(corpus) = std::env::var_os("TRAINER_AUDIT_CORPUS") else {
        controlplane::skipped(test, "TRAINER_AUDIT_CORPUS is unset: the corpus charts' records are not compared");
        return;
    };
    for version in ["2.3.0", "2.2.1", "2.1.0"] {
        let path = Path::new(&corpus).join(format!("charts/kubeflow-trainer-{version}.tgz"));
        let chart = Chart::load_archive_file(&path).expect("corpus chart");
        let ns = format!("trainer-{}", version.replace('.', "-"));
        let out = install(&cp, "kubeflow-trainer", &ns, &path.display().to_string());
        assert!(out.status.success(), "{version}: {}", String::from_utf8_lossy(&out.stderr));
        let real = stored(&cp, "kubeflow-trainer", &ns);
        let size = ours(&chart, "kubeflow-trainer", &ns);
        let diff = real.abs_diff(size.stored);
        eprintln!("kubeflow-trainer {version}: helm stored {real} bytes, trainer-audit computed {} ({diff} apart)", size.stored);
        assert!(diff <= size.uncertainty(), "{version}: helm {real}, ours {}", size.stored);
        // Only one Trainer release's cluster-scoped objects fit in one control plane.
        let _ = cp.helm(&cp.admin_kubeconfig, &["uninstall", "kubeflow-trainer", "-n", &ns]);
    }
}
