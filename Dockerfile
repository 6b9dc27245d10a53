# trainer-audit as one static binary on a distroless, non-root base.
#
#   docker build -t trainer-audit .
#
# tests/container.rs lints this file with hadolint and runs the build line below outside any
# container daemon (same command, same target), then runs the result as UID 65532 on a read-only
# root with only /tmp writable. Change the build line and that test follows it.

# Builder: the official Rust image, pinned by its multi-platform index digest as listed for
# rust:1.98.1-slim-bookworm in docker-library/repo-info (repos/rust/remote/1.98.1-slim-bookworm.md,
# commit ebcb438d63982e858c28eb209e0cf5e1b6de0999).
FROM rust:1.98.1-slim-bookworm@sha256:ebd900bae66fd508b466cef82d64a83a5fb34682e4c8b2797a42908bddc95a57 AS build

# ring (TLS) and psm (deep-recursion guard) compile C and assembly for the target, so the musl
# target needs musl-gcc. Pinned to the version in Debian bookworm, the base above.
RUN apt-get update \
 && apt-get install -y --no-install-recommends musl-tools=1.2.3-1 \
 && rm -rf /var/lib/apt/lists/* \
 && rustup target add x86_64-unknown-linux-musl

WORKDIR /src
COPY . .
RUN cargo build --locked --release --target x86_64-unknown-linux-musl --bin trainer-audit --config profile.release.strip=true

# Runtime: distroless static (CA certificates, /etc/passwd with nonroot 65532, /tmp, no shell),
# amd64 image of the nonroot tag, pinned by the digest cert-manager records for it
# (cert-manager/cert-manager make/base_images.mk, STATIC_BASE_IMAGE_amd64, commit
# c027fee0d52d49c86a369e1719b7c6b378f0abd5, written by hack/latest-base-images.sh).
FROM gcr.io/distroless/static-debian13@sha256:23795be0fe67b7d47d1ee62b19c7db750152db627d5bbfa31307e892a7575bec

ARG SOURCE_URL=""
LABEL org.opencontainers.image.title="trainer-audit" \
      org.opencontainers.image.description="Pre-upgrade readiness audits for Kubeflow Trainer Helm installs" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="0.1.0" \
      org.opencontainers.image.source="${SOURCE_URL}"

COPY --from=build /src/target/x86_64-unknown-linux-musl/release/trainer-audit /usr/local/bin/trainer-audit

# The chart cache is the only thing the binary writes on its own (pull, check, plan, diff). Under
# /tmp, one emptyDir (Kubernetes) or --tmpfs /tmp (docker run --read-only) makes it writable; on a
# read-only root without it, pulls still work and only warn that the cache could not be written.
ENV TRAINER_AUDIT_CACHE_DIR=/tmp/trainer-audit

# Numeric, so Kubernetes can verify runAsNonRoot without reading /etc/passwd.
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/trainer-audit"]
CMD ["--help"]
