#!/bin/sh
# The Helm plugin's command (plugin.yaml): runs the trainer-audit binary from the plugin
# directory's bin/ when there is one, else from PATH, with Helm's arguments. Helm's environment
# (HELM_PLUGIN_NAME, HELM_NAMESPACE, HELM_KUBECONTEXT, KUBECONFIG, HELM_REGISTRY_CONFIG) passes
# through; the binary reads it.
set -eu
if [ -x "${HELM_PLUGIN_DIR:-}/bin/trainer-audit" ]; then
  exec "$HELM_PLUGIN_DIR/bin/trainer-audit" "$@"
fi
if command -v trainer-audit >/dev/null 2>&1; then
  exec trainer-audit "$@"
fi
echo "helm trainer-audit: the trainer-audit binary is not on PATH; install it (cargo install --locked --path <repository>) or put it at ${HELM_PLUGIN_DIR:-<plugin dir>}/bin/trainer-audit" >&2
exit 2
