//! Where Helm keeps a release's records (its storage driver, `HELM_DRIVER`): a Secret per
//! revision (the default), a ConfigMap per revision, an SQL table or memory (helm/helm v4.2.3
//! `pkg/action/action.go` `Configuration.Init`). Secrets and ConfigMaps hold at most 1 MiB of
//! data (`core.MaxSecretSize`), which bounds a record; SQL and memory do not.

use serde::Serialize;

/// A Helm storage driver.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum HelmDriver {
    Secret,
    #[value(name = "configmap")]
    ConfigMap,
    Sql,
    Memory,
}

impl HelmDriver {
    /// The kind of object a record is, and so the limit it lives under, when it is one.
    pub fn object_kind(self) -> Option<&'static str> {
        match self {
            HelmDriver::Secret => Some("Secret"),
            HelmDriver::ConfigMap => Some("ConfigMap"),
            HelmDriver::Sql | HelmDriver::Memory => None,
        }
    }

    /// `HELM_DRIVER` as Helm reads it (`secret`, `secrets` and empty are the Secret driver).
    pub fn from_env_value(v: &str) -> Option<HelmDriver> {
        match v {
            "" | "secret" | "secrets" => Some(HelmDriver::Secret),
            "configmap" | "configmaps" => Some(HelmDriver::ConfigMap),
            "sql" => Some(HelmDriver::Sql),
            "memory" => Some(HelmDriver::Memory),
            _ => None,
        }
    }

    /// The driver whose records a cluster holds (a record's kind: `Secret`, `ConfigMap`).
    pub fn of_record_kind(kind: &str) -> Option<HelmDriver> {
        match kind {
            "Secret" => Some(HelmDriver::Secret),
            "ConfigMap" => Some(HelmDriver::ConfigMap),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            HelmDriver::Secret => "secret",
            HelmDriver::ConfigMap => "configmap",
            HelmDriver::Sql => "sql",
            HelmDriver::Memory => "memory",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drivers_read_as_helm_reads_them() {
        for (v, d) in
            [("", HelmDriver::Secret), ("secrets", HelmDriver::Secret), ("configmaps", HelmDriver::ConfigMap), ("sql", HelmDriver::Sql)]
        {
            assert_eq!(HelmDriver::from_env_value(v), Some(d), "{v:?}");
        }
        assert_eq!(HelmDriver::from_env_value("etcd"), None);
        assert_eq!(HelmDriver::Sql.object_kind(), None);
        assert_eq!(HelmDriver::of_record_kind("ConfigMap"), Some(HelmDriver::ConfigMap));
    }
}
