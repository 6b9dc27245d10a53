#!/usr/bin/env bash
# The release's build steps: .github/workflows/release.yml runs them on each platform's runner, and
# anyone can run them locally (tests/doors.rs does, for what this machine can build).
#
#   release/build.sh build TARGET DIST
#       cargo build of trainer-audit for the Rust target TARGET (static for the musl targets), then
#       `package` of the result
#   release/build.sh package TARGET BINARY DIST
#       DIST/trainer-audit-vVERSION-OS-ARCH.tar.gz holding BINARY as `trainer-audit`
#   release/build.sh finish DIST BASE_URL [HOMEPAGE]
#       DIST/SHA256SUMS over the four archives, and DIST/trainer-audit.yaml: the krew manifest
#       (plugin/krew/trainer-audit.yaml) filled with BASE_URL (where the assets are downloaded
#       from), HOMEPAGE (by default the repository of a GitHub release URL) and each archive's
#       SHA-256; refuses a release with an archive missing
#   release/build.sh version
#       the crate's version
#
# RELEASE_TAG, when set (the workflow sets it to the pushed tag), must be vVERSION: a tag that
# disagrees with Cargo.toml is refused before anything is built.
# Bash 3.2 (macOS's) runs it: no ${x^^}, no mapfile.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
platforms=(linux-amd64 linux-arm64 darwin-amd64 darwin-arm64)

die() {
  echo "release/build.sh: $*" >&2
  exit 2
}

version() {
  local v
  v=$(sed -n 's/^version = "\([^"]*\)"$/\1/p' "$root/Cargo.toml" | head -n 1)
  [[ -n $v ]] || die "no version in $root/Cargo.toml"
  if [[ -n ${RELEASE_TAG:-} && $RELEASE_TAG != "v$v" ]]; then
    die "the tag $RELEASE_TAG is not v$v, the version in Cargo.toml: bump the version or tag v$v"
  fi
  echo "$v"
}

# The release name of a Rust target: OS-ARCH as Go, krew and the Action's runner mapping name it.
platform_of() {
  case $1 in
    x86_64-unknown-linux-musl) echo linux-amd64 ;;
    aarch64-unknown-linux-musl) echo linux-arm64 ;;
    x86_64-apple-darwin) echo darwin-amd64 ;;
    aarch64-apple-darwin) echo darwin-arm64 ;;
    *) die "no release platform for the target '$1' (one of x86_64/aarch64-unknown-linux-musl, x86_64/aarch64-apple-darwin)" ;;
  esac
}

archive_name() {
  echo "trainer-audit-v$1-$2.tar.gz"
}

sha256_of() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | cut -d ' ' -f 1
  else
    shasum -a 256 "$1" | cut -d ' ' -f 1
  fi
}

cmd_build() {
  local target=$1 dist=$2 v
  v=$(version)
  platform_of "$target" >/dev/null
  # ring and psm compile C and assembly for the target. A musl target on a Linux host of the same
  # architecture takes Debian's musl-gcc (musl-tools); arm64 from an amd64 host takes Debian's
  # gcc-aarch64-linux-gnu as compiler and linker (Rust's musl targets bring their own C library).
  case $target in
    *-linux-musl)
      local arch=${target%%-*} cc
      if [[ $(uname -m) == "$arch" ]]; then
        cc=musl-gcc
      else
        cc=$arch-linux-gnu-gcc
        local linker_var
        linker_var=CARGO_TARGET_$(echo "$target" | tr '[:lower:]-' '[:upper:]_')_LINKER
        export "$linker_var=${!linker_var:-$cc}"
      fi
      local cc_var=CC_${target//-/_}
      export "$cc_var=${!cc_var:-$cc}"
      command -v "${!cc_var}" >/dev/null 2>&1 || die "${!cc_var} (the C compiler for $target) is not on PATH"
      ;;
  esac
  (cd "$root" && cargo build --locked --release --target "$target" --bin trainer-audit --config profile.release.strip=true)
  local target_dir=${CARGO_TARGET_DIR:-$root/target}
  cmd_package "$target" "$target_dir/$target/release/trainer-audit" "$dist"
  echo "trainer-audit v$v for $target: $dist/$(archive_name "$v" "$(platform_of "$target")")"
}

cmd_package() {
  local target=$1 binary=$2 dist=$3 v platform stage
  v=$(version)
  platform=$(platform_of "$target")
  [[ -x $binary ]] || die "$binary is not an executable"
  mkdir -p "$dist"
  stage=$(mktemp -d)
  cp "$binary" "$stage/trainer-audit"
  chmod 0755 "$stage/trainer-audit"
  local archive
  archive=$(cd "$dist" && pwd)/$(archive_name "$v" "$platform")
  # The same bytes for the same binary where the tar is GNU's (the Linux runners, here); macOS's
  # bsdtar has no --sort/--mtime, and its archive only differs in metadata.
  if tar --version 2>/dev/null | grep -q 'GNU tar'; then
    tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$stage" -cf - trainer-audit | gzip -n -9 >"$archive"
  else
    tar -C "$stage" -cf - trainer-audit | gzip -n -9 >"$archive"
  fi
  rm -rf "$stage"
}

cmd_finish() {
  local dist=$1 base_url=${2%/} v name missing=()
  local homepage=${3:-${base_url%%/releases/download/*}}
  v=$(version)
  [[ -d $dist ]] || die "$dist is not a directory"
  [[ $base_url == http://* || $base_url == https://* ]] || die "the base URL must be http(s)://…, not '$base_url'"
  for platform in "${platforms[@]}"; do
    [[ -f $dist/$(archive_name "$v" "$platform") ]] || missing+=("$(archive_name "$v" "$platform")")
  done
  ((${#missing[@]} == 0)) || die "$dist lacks ${missing[*]}: a release has every platform's archive"
  local manifest
  manifest=$(<"$root/plugin/krew/trainer-audit.yaml")
  manifest=${manifest//"\${VERSION}"/$v}
  manifest=${manifest//"\${BASE_URL}"/$base_url}
  manifest=${manifest//"\${HOMEPAGE}"/$homepage}
  : >"$dist/SHA256SUMS"
  for platform in "${platforms[@]}"; do
    name=$(archive_name "$v" "$platform")
    local sum
    sum=$(sha256_of "$dist/$name")
    echo "$sum  $name" >>"$dist/SHA256SUMS"
    local key
    key=$(echo "$platform" | tr '[:lower:]-' '[:upper:]_')
    manifest=${manifest//"\${SHA256_${key}}"/$sum}
  done
  if grep -v '^ *#' <<<"$manifest" | grep -qF "\${"; then
    die "the krew manifest keeps a placeholder: $(grep -v '^ *#' <<<"$manifest" | grep -o "\${[^}]*}" | head -n 1)"
  fi
  printf '%s\n' "$manifest" >"$dist/trainer-audit.yaml"
  echo "SHA256SUMS and trainer-audit.yaml (krew) for v$v in $dist"
}

case ${1:-} in
  build)
    (($# == 3)) || die "usage: release/build.sh build TARGET DIST"
    cmd_build "$2" "$3"
    ;;
  package)
    (($# == 4)) || die "usage: release/build.sh package TARGET BINARY DIST"
    cmd_package "$2" "$3" "$4"
    ;;
  finish)
    (($# == 3 || $# == 4)) || die "usage: release/build.sh finish DIST BASE_URL [HOMEPAGE]"
    cmd_finish "$2" "$3" "${4:-}"
    ;;
  version)
    version
    ;;
  *) die "usage: release/build.sh build|package|finish|version … (see the head of this file)" ;;
esac
