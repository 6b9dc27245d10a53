#!/usr/bin/env bash
# The install step of action.yml, also run by tests/action.rs without GitHub: puts trainer-audit on
# the job's PATH. In order:
#   1. one already on PATH is used as it is;
#   2. INPUT_BUILD=true builds it from the action's own checkout (cargo install; needs Rust);
#   3. otherwise the release archive for the runner (RUNNER_OS/RUNNER_ARCH) is downloaded from
#      INPUT_RELEASE_URL (by default this action's repository's release vVERSION, VERSION being
#      INPUT_VERSION or the action's own Cargo.toml version), checked against the release's
#      SHA256SUMS, and, where the GitHub CLI can (`gh attestation verify`), against its build
#      provenance attestation; INPUT_VERIFY_ATTESTATION is auto (verify when gh and a token are
#      there), true (fail without) or false. A mismatch fails the step: nothing is installed.
# The binary goes to RUNNER_TEMP/trainer-audit-vVERSION, appended to GITHUB_PATH.
set -euo pipefail

action_path=${ACTION_PATH:-$(cd "$(dirname "$0")/.." && pwd)}

fail() {
  echo "::error title=trainer-audit install::$*"
  exit 2
}

if command -v trainer-audit >/dev/null 2>&1; then
  echo "trainer-audit is on PATH: $(command -v trainer-audit) ($(trainer-audit --version))"
  exit 0
fi

if [[ ${INPUT_BUILD:-false} == true ]]; then
  cargo install --locked --path "$action_path"
  exit 0
fi
[[ ${INPUT_BUILD:-false} == false ]] || fail "build must be true or false, not '$INPUT_BUILD'"

version=${INPUT_VERSION:-}
version=${version#v}
if [[ -z $version ]]; then
  version=$(sed -n 's/^version = "\([^"]*\)"$/\1/p' "$action_path/Cargo.toml" | head -n 1)
  [[ -n $version ]] || fail "no version in $action_path/Cargo.toml; set the version input"
fi

runner_os=${RUNNER_OS:-$(uname -s)}
runner_arch=${RUNNER_ARCH:-$(uname -m)}
case $runner_os in
  Linux) os=linux ;;
  macOS | Darwin) os=darwin ;;
  *) fail "no release binary for $runner_os runners; set build: true to build from source" ;;
esac
case $runner_arch in
  X64 | x86_64 | amd64) arch=amd64 ;;
  ARM64 | aarch64 | arm64) arch=arm64 ;;
  *) fail "no release binary for $runner_os/$runner_arch runners; set build: true to build from source" ;;
esac

# The action's own repository (releases and attestations live there). github.action_repository is
# empty inside a composite action (actions/runner#2525), so it comes from where the runner put the
# action, RUNNER/_actions/OWNER/REPO/REF, or, for `uses: ./`, from the workflow's repository.
repository=${ACTION_REPOSITORY:-}
if [[ -z $repository && $action_path =~ /_actions/([^/]+)/([^/]+)/[^/]+/?$ ]]; then
  repository=${BASH_REMATCH[1]}/${BASH_REMATCH[2]}
elif [[ -z $repository && -n ${GITHUB_WORKSPACE:-} && $action_path == "$GITHUB_WORKSPACE"* ]]; then
  repository=${GITHUB_REPOSITORY:-}
fi
release_url=${INPUT_RELEASE_URL:-}
if [[ -z $release_url ]]; then
  [[ -n $repository ]] || fail "the action's repository is unknown; set the release-url input"
  release_url=${GITHUB_SERVER_URL:-https://github.com}/$repository/releases/download/v$version
fi
release_url=${release_url%/}
archive=trainer-audit-v$version-$os-$arch.tar.gz
dest=${RUNNER_TEMP:-${TMPDIR:-/tmp}}/trainer-audit-v$version
download=$(mktemp -d)
trap 'rm -rf "$download"' EXIT

fetch() {
  curl --fail --silent --show-error --location --retry 3 --proto '=https,http' --output "$download/$1" "$release_url/$1" ||
    fail "could not download $release_url/$1 (is v$version released for $os/$arch? set version, or build: true)"
}
fetch SHA256SUMS
fetch "$archive"

expected=$(awk -v name="$archive" '$2 == name || $2 == "*" name { print $1 }' "$download/SHA256SUMS")
[[ -n $expected ]] || fail "SHA256SUMS of $release_url names no $archive; not installing it"
if command -v sha256sum >/dev/null 2>&1; then
  actual=$(sha256sum "$download/$archive" | cut -d ' ' -f 1)
else
  actual=$(shasum -a 256 "$download/$archive" | cut -d ' ' -f 1)
fi
if [[ $actual != "$expected" ]]; then
  fail "checksum mismatch for $archive: SHA256SUMS says $expected, the download is $actual; not installing it"
fi
echo "$archive: SHA-256 $actual matches SHA256SUMS"

attestation=${INPUT_VERIFY_ATTESTATION:-auto}
case $attestation in
  auto | true | false) ;;
  *) fail "verify-attestation must be auto, true or false, not '$attestation'" ;;
esac
if [[ $attestation != false ]]; then
  if command -v gh >/dev/null 2>&1 && gh attestation verify --help >/dev/null 2>&1 && [[ -n ${GH_TOKEN:-}${GITHUB_TOKEN:-} ]]; then
    [[ -n $repository ]] || fail "the action's repository is unknown, so the attestation cannot be checked; set verify-attestation: false with a release-url"
    gh attestation verify "$download/$archive" --repo "$repository" ||
      fail "$archive has no valid build provenance attestation from $repository; not installing it"
  elif [[ $attestation == true ]]; then
    fail "verify-attestation is true but the GitHub CLI (gh attestation verify) or a token (GH_TOKEN) is not available"
  else
    echo "::notice title=trainer-audit install::$archive matches SHA256SUMS; its attestation was not verified (no gh attestation or GH_TOKEN)"
  fi
fi

# Unpacked and run beside the download first: only a binary that says it is this version is
# moved onto PATH.
mkdir -p "$download/unpacked"
tar -xzf "$download/$archive" -C "$download/unpacked" trainer-audit || fail "$archive holds no trainer-audit"
installed=$("$download/unpacked/trainer-audit" --version) || fail "trainer-audit from $archive does not run on this $os/$arch runner"
[[ $installed == "trainer-audit $version" ]] || fail "$archive holds '$installed', not trainer-audit $version"
mkdir -p "$dest"
mv -f "$download/unpacked/trainer-audit" "$dest/trainer-audit"
if [[ -n ${GITHUB_PATH:-} ]]; then
  echo "$dest" >>"$GITHUB_PATH"
fi
echo "installed $installed at $dest/trainer-audit"
