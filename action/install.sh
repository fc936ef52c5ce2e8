#!/usr/bin/env bash
# Installs rab for the GitHub Action and puts it on the job's PATH (GITHUB_PATH).
#
# INPUT_VERSION:
#   latest (the default)  the newest release's binary
#   vX.Y.Z                that release's binary
#   source                a cargo build of the action's own checkout (ACTION_PATH)
#
# A release binary is the archive dist publishes for this platform, rab-<target>.tar.xz
# (Linux builds are static musl ones), checked against the release's rab-<target>.tar.xz.sha256
# before it is unpacked: a mismatch is refused. When there is no release binary for this
# platform (no release published yet, an OS or CPU without one, a release without this
# platform's archive), rab is built from source instead, and this says so. A tag that
# names no release is an error.
#
# RAB_RELEASE_BASE_URL  where the releases are (default https://github.com/rab-agent/rab/releases):
#                       <base>/latest redirects to <base>/tag/<tag>, and a release's files are
#                       <base>/download/<tag>/<file>. The tests point it at a local server.
# RAB_SOURCE_BUILD=defer  (action.yml sets it) do not build here: write source-build=true,
#                       the cargo cache key and the target dir to GITHUB_OUTPUT, so that the
#                       action restores its cache and then runs this with INPUT_VERSION=source.
set -euo pipefail

base="${RAB_RELEASE_BASE_URL:-https://github.com/rab-agent/rab/releases}"
base="${base%/}"
version="${INPUT_VERSION:-latest}"
dest="${RUNNER_TEMP:-/tmp}/rab-bin"

say() { echo "rab install: $*" >&2; }
die() { say "$*"; exit 1; }

# The release target for this machine, or nothing when releases have no binary for it.
host_target() {
  local os arch
  os="$(uname -s)"
  arch="$(uname -m)"
  # An x86_64 shell under Rosetta on Apple silicon: the arm64 binary is the native one.
  if [ "$os-$arch" = Darwin-x86_64 ] && [ "$(sysctl -n sysctl.proc_translated 2>/dev/null || true)" = 1 ]; then
    arch=arm64
  fi
  case "$os-$arch" in
    Linux-x86_64) echo x86_64-unknown-linux-musl ;;
    Linux-aarch64 | Linux-arm64) echo aarch64-unknown-linux-musl ;;
    Darwin-arm64 | Darwin-aarch64) echo aarch64-apple-darwin ;;
    Darwin-x86_64) echo x86_64-apple-darwin ;;
  esac
}

sha256_of() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum -b "$1" | awk '{print $1}'
  elif command -v shasum >/dev/null 2>&1; then
    shasum -a 256 -b "$1" | awk '{print $1}'
  else
    die "neither sha256sum nor shasum is installed, so $1 cannot be verified; not installing it"
  fi
}

# Downloads $1 to $2 and prints the HTTP status; fails only when there is no answer.
fetch() {
  curl --silent --show-error --location --retry 3 --output "$2" --write-out '%{http_code}' "$1" ||
    die "could not download $1"
}

put_on_path() {
  chmod +x "$dest/rab"
  if [ -n "${GITHUB_PATH:-}" ]; then
    echo "$dest" >>"$GITHUB_PATH"
  fi
  "$dest/rab" --version
}

build_from_source() {
  local root="${ACTION_PATH:?ACTION_PATH is the action checkout}"
  if [ "${RAB_SOURCE_BUILD:-}" = defer ] && [ -n "${GITHUB_OUTPUT:-}" ]; then
    local lock prefix
    lock="$(sha256_of "$root/Cargo.lock")"
    # The key changes with Cargo.lock and with the toolchain (whose builds cannot be reused).
    prefix="rab-source-$(uname -s)-$(uname -m)-rust$({ rustc --version 2>/dev/null || true; } | awk '{print $2}')-"
    {
      echo "source-build=true"
      echo "cache-key=$prefix${lock:0:16}"
      echo "cache-key-prefix=$prefix"
      echo "target-dir=${CARGO_TARGET_DIR:-$root/target}"
    } >>"$GITHUB_OUTPUT"
    say "the next step builds rab from source (with the cargo cache)"
    exit 0
  fi
  command -v cargo >/dev/null 2>&1 ||
    die "building rab from source needs cargo: add a Rust toolchain step (dtolnay/rust-toolchain@stable) before this action, or use a version with a release binary"
  say "building rab from $root with cargo (cargo build --release --locked)"
  cargo build --release --locked --manifest-path "$root/Cargo.toml" -p rab --bins
  mkdir -p "$dest"
  # rab and its plugin helper, which rab runs from beside itself.
  cp "${CARGO_TARGET_DIR:-$root/target}/release/rab" "$dest/rab"
  cp "${CARGO_TARGET_DIR:-$root/target}/release/rab-plugins" "$dest/rab-plugins"
  put_on_path
  exit 0
}

case "$version" in
  source) build_from_source ;;
  latest)
    # GitHub answers <base>/latest with a redirect to the newest release's tag page, or
    # to the release list when nothing is published yet.
    answer="$(curl --silent --show-error --location --retry 3 --head --output /dev/null \
      --write-out '%{http_code} %{url_effective}' "$base/latest")" || die "could not reach $base/latest"
    landed="${answer#* }"
    [ "${answer%% *}" = 200 ] || die "could not find the latest release: $base/latest led to $landed (HTTP ${answer%% *})"
    case "$landed" in
      */tag/?*) tag="${landed##*/tag/}" ;;
      *)
        say "no rab release is published yet ($base/latest led to $landed); building from source"
        build_from_source
        ;;
    esac
    say "the latest release is $tag"
    ;;
  [0-9]*) tag="v$version" ;;
  "") die "version is empty: use latest, source or a release tag such as v0.2.0" ;;
  *) tag="$version" ;;
esac

target="$(host_target)"
if [ -z "$target" ]; then
  say "releases have no binary for $(uname -s) $(uname -m); building from source"
  build_from_source
fi

archive="rab-$target.tar.xz"
url="$base/download/$tag/$archive"
work="$(mktemp -d "${RUNNER_TEMP:-/tmp}/rab-download.XXXXXX")"
trap 'rm -rf "$work"' EXIT

say "downloading $url"
status="$(fetch "$url" "$work/$archive")"
case "$status" in
  200) ;;
  404)
    # Every release has sha256.sum (dist's checksums of all its files): with it there, the
    # release exists and only this platform's binary is missing.
    status="$(fetch "$base/download/$tag/sha256.sum" "$work/sha256.sum")"
    if [ "$status" = 200 ]; then
      say "release $tag has no $archive; building from source"
      build_from_source
    fi
    die "there is no rab release $tag ($url: HTTP 404); the releases are listed at https://github.com/rab-agent/rab/releases"
    ;;
  *) die "downloading $url failed: HTTP $status" ;;
esac

status="$(fetch "$url.sha256" "$work/$archive.sha256")"
[ "$status" = 200 ] || die "downloading $url.sha256 failed (HTTP $status); not installing an unverified binary"
expected="$(awk 'NR == 1 { print tolower($1) }' "$work/$archive.sha256")"
[[ "$expected" =~ ^[0-9a-f]{64}$ ]] || die "$url.sha256 holds no sha256 checksum; not installing $archive"
actual="$(sha256_of "$work/$archive")"
if [ "$actual" != "$expected" ]; then
  die "checksum mismatch for $archive from $url:
  expected sha256 $expected (from $archive.sha256)
  got      sha256 $actual
refusing to install it"
fi
say "checksum verified: $archive sha256 $actual"

tar -xJf "$work/$archive" -C "$work" "rab-$target" ||
  die "could not unpack rab-$target from $archive (tar needs xz for .tar.xz)"
[ -f "$work/rab-$target/rab" ] || die "$archive holds no rab-$target/rab"
mkdir -p "$dest"
mv -f "$work/rab-$target/rab" "$dest/rab"
# The plugin helper rab runs from beside itself (releases before it had none).
if [ -f "$work/rab-$target/rab-plugins" ]; then
  mv -f "$work/rab-$target/rab-plugins" "$dest/rab-plugins"
  chmod +x "$dest/rab-plugins"
fi
put_on_path
