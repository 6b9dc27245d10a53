//! Helm release records as Helm stores them (a Secret holding base64 of base64 of gzipped
//! JSON), for tests and scenario fixtures; the product only decodes them.

use base64::Engine;
use serde_json::Value as Json;
use trainer_audit::objects::str_at;

/// Encodes a release JSON as a Secret record with Helm's layout exactly.
pub fn encode_secret(release: &Json, gzip: bool) -> Json {
    let json = serde_json::to_vec(release).unwrap_or_default();
    let bytes = if gzip {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        let _ = std::io::Write::write_all(&mut gz, &json);
        gz.finish().unwrap_or_default()
    } else {
        json
    };
    let b64 = base64::engine::general_purpose::STANDARD;
    let name = str_at(release, &["name"]);
    let revision = release.get("version").and_then(Json::as_i64).unwrap_or(1);
    serde_json::json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "helm.sh/release.v1",
        "metadata": {
            "name": format!("sh.helm.release.v1.{name}.v{revision}"),
            "namespace": str_at(release, &["namespace"]),
            "labels": {"owner": "helm", "name": name, "status": str_at(release, &["info", "status"]), "version": revision.to_string()},
        },
        "data": {"release": b64.encode(b64.encode(bytes))},
    })
}
