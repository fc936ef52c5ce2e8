#!/usr/bin/env bash
# Installs rab for the GitHub Action: a release binary (INPUT_VERSION=vX.Y.Z) from the
# project's releases, or a build of the action's own checkout (INPUT_VERSION=source).
# Puts it on the job's PATH.
set -euo pipefail
version="${INPUT_VERSION:-source}"
dest="${RUNNER_TEMP:-/tmp}/rab-bin"
mkdir -p "$dest"
if [ "$version" = "source" ]; then
  root="${ACTION_PATH:?ACTION_PATH is the action's checkout}"
  cargo build --release --locked --manifest-path "$root/Cargo.toml" -p rab
  cp "$root/target/release/rab" "$dest/rab"
else
  case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) target=x86_64-unknown-linux-gnu ;;
    Linux-aarch64) target=aarch64-unknown-linux-gnu ;;
    Darwin-arm64) target=aarch64-apple-darwin ;;
    Darwin-x86_64) target=x86_64-apple-darwin ;;
    *) echo "rab: no release binary for $(uname -s) $(uname -m); use version: source" >&2; exit 1 ;;
  esac
  url="https://github.com/rab-agent/rab/releases/download/$version/rab-$target.tar.gz"
  curl --fail --silent --show-error --location "$url" | tar -xz -C "$dest" rab
fi
chmod +x "$dest/rab"
if [ -n "${GITHUB_PATH:-}" ]; then
  echo "$dest" >> "$GITHUB_PATH"
fi
"$dest/rab" --version
