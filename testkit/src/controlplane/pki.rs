//! The control plane's certificates, generated per run with rcgen: one CA that both signs the API
//! server's serving certificate (valid for 127.0.0.1, localhost and the in-cluster names) and is
//! its client CA (`--client-ca-file`), an admin client certificate in `system:masters`, and the
//! ServiceAccount token signing key. Nothing is reused between runs or written outside the run's
//! directory.

use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair, KeyUsagePurpose,
    SanType,
};

use super::ControlPlaneError;

/// Paths of the files written by [`write`].
#[derive(Debug, Clone)]
pub struct Pki {
    pub ca_cert: PathBuf,
    pub serving_cert: PathBuf,
    pub serving_key: PathBuf,
    pub admin_cert: PathBuf,
    pub admin_key: PathBuf,
    /// PKCS#8 private key for `--service-account-signing-key-file`.
    pub sa_key: PathBuf,
    /// Its public key for `--service-account-key-file` (which takes public keys only).
    pub sa_pub: PathBuf,
}

/// The admin user's name; its group `system:masters` bypasses RBAC, like kubeadm's admin.conf.
pub const ADMIN_USER: &str = "trainer-audit-admin";

fn pki_err(what: &str, e: impl std::fmt::Display) -> ControlPlaneError {
    ControlPlaneError::Certificates(format!("{what}: {e}"))
}

/// Generates every certificate and key into `dir`.
pub fn write(dir: &Path) -> Result<Pki, ControlPlaneError> {
    let ca_key = KeyPair::generate().map_err(|e| pki_err("CA key", e))?;
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).map_err(|e| pki_err("CA parameters", e))?;
    ca_params.distinguished_name = name("trainer-audit-test-ca", None);
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign, KeyUsagePurpose::DigitalSignature];
    let ca_cert = ca_params.self_signed(&ca_key).map_err(|e| pki_err("CA certificate", e))?;
    let issuer = Issuer::new(ca_params, ca_key);

    let serving_key = KeyPair::generate().map_err(|e| pki_err("serving key", e))?;
    let dns = ["localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"];
    let mut serving =
        CertificateParams::new(dns.iter().map(|s| s.to_string()).collect::<Vec<_>>()).map_err(|e| pki_err("serving parameters", e))?;
    serving.subject_alt_names.push(SanType::IpAddress([127, 0, 0, 1].into()));
    // The first address of --service-cluster-ip-range: the `kubernetes` Service's ClusterIP.
    serving.subject_alt_names.push(SanType::IpAddress([10, 0, 0, 1].into()));
    serving.distinguished_name = name("kube-apiserver", None);
    serving.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    serving.key_usages = vec![KeyUsagePurpose::DigitalSignature, KeyUsagePurpose::KeyEncipherment];
    let serving_cert = serving.signed_by(&serving_key, &issuer).map_err(|e| pki_err("serving certificate", e))?;

    let admin_key = KeyPair::generate().map_err(|e| pki_err("admin key", e))?;
    let mut admin = CertificateParams::new(Vec::<String>::new()).map_err(|e| pki_err("admin parameters", e))?;
    admin.distinguished_name = name(ADMIN_USER, Some("system:masters"));
    admin.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    admin.key_usages = vec![KeyUsagePurpose::DigitalSignature, KeyUsagePurpose::KeyEncipherment];
    let admin_cert = admin.signed_by(&admin_key, &issuer).map_err(|e| pki_err("admin certificate", e))?;

    let sa_key = KeyPair::generate().map_err(|e| pki_err("service account key", e))?;

    let pki = Pki {
        ca_cert: dir.join("ca.crt"),
        serving_cert: dir.join("apiserver.crt"),
        serving_key: dir.join("apiserver.key"),
        admin_cert: dir.join("admin.crt"),
        admin_key: dir.join("admin.key"),
        sa_key: dir.join("sa.key"),
        sa_pub: dir.join("sa.pub"),
    };
    let files = [
        (&pki.ca_cert, ca_cert.pem()),
        (&pki.serving_cert, serving_cert.pem()),
        (&pki.serving_key, serving_key.serialize_pem()),
        (&pki.admin_cert, admin_cert.pem()),
        (&pki.admin_key, admin_key.serialize_pem()),
        (&pki.sa_key, sa_key.serialize_pem()),
        (&pki.sa_pub, sa_key.public_key_pem()),
    ];
    for (path, pem) in files {
        std::fs::write(path, pem).map_err(|e| ControlPlaneError::Io(format!("writing {}", path.display()), e))?;
    }
    Ok(pki)
}

fn name(common: &str, organization: Option<&str>) -> DistinguishedName {
    let mut dn = DistinguishedName::new();
    dn.push(DnType::CommonName, common);
    if let Some(org) = organization {
        dn.push(DnType::OrganizationName, org);
    }
    dn
}
