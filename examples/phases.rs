use std::time::Instant;
use trainer_audit::chart::Chart;
use trainer_audit::helm::render::{render_chart, RenderOptions};
fn main() {
    let c = "/work/shared/corpus";
    let t = Instant::now();
    let chart = Chart::load_archive_file(std::path::Path::new(&format!("{c}/charts/kubeflow-trainer-2.3.0.tgz"))).unwrap();
    println!("load {:?}", t.elapsed());
    let values =
        trainer_audit::helm::values::read_values_file(&std::fs::read_to_string(format!("{c}/values/runtimes-all.yaml")).unwrap()).unwrap();
    let mut o = RenderOptions { values, ..Default::default() };
    o.release.name = "kubeflow-trainer".into();
    for _ in 0..3 {
        let t = Instant::now();
        let r = render_chart(&chart, &o).unwrap();
        println!("render_chart {:?}", t.elapsed());
        let t = Instant::now();
        let _ = trainer_audit::helm::manifest::sort_manifests(&r.templates);
        println!("  sort_manifests alone {:?}", t.elapsed());
        let docs: usize = r.templates.values().map(|v| v.len()).sum();
        println!("  rendered bytes {docs}");
    }
}
