#!/usr/bin/env bash
# Builds every fuzz target once, then runs each for SECONDS (default 3) over its seed
# corpus, and fails naming the target and its crash artifact when one crashes, times
# out or runs out of memory. Long runs by hand: fuzz/run.sh 600. Needs nightly and
# cargo-fuzz (cargo install --locked cargo-fuzz). See docs/fuzzing.md.
#   --quick       build with the fuzz crate's dev profile (opt-level 1) instead of
#                 release: a shorter build, fewer runs a second; for a quick look.
#   --build-only  build and stop.
set -euo pipefail
profile_flag=()
profile_dir=release
build_only=false
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) profile_flag=(--dev); profile_dir=debug; shift ;;
    --build-only) build_only=true; shift ;;
    *) break ;;
  esac
done
seconds="${1:-3}"
case "$seconds" in
  '' | *[!0-9]*) echo "usage: fuzz/run.sh [--quick] [--build-only] [SECONDS_PER_TARGET]" >&2; exit 2 ;;
esac
cd "$(dirname "$0")"

# cargo-fuzz's defaults (debug assertions and overflow checks on) without a sanitizer;
# optimised, or with --quick the dev profile of fuzz/Cargo.toml. The parsers
# are safe Rust: panics, stack overflows, leaks of time and memory are what is sought.
build_flags=(--sanitizer none "${profile_flag[@]}")
cargo +nightly fuzz build "${build_flags[@]}"
if $build_only; then
  exit 0
fi
triple="$(rustc +nightly -vV | sed -n 's/^host: //p')"
bin_dir="target/$triple/$profile_dir"
# The session, settings, models and frontmatter targets write a few small files per
# input: on tmpfs that takes microseconds, on a disk milliseconds (a hundredth of the
# runs).
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
  TMPDIR="$(mktemp -d /dev/shm/rab-fuzz.XXXXXX)"
  export TMPDIR
  trap 'rm -rf "$TMPDIR"' EXIT
fi

failed=()
for target in $(cargo +nightly fuzz list); do
  # Generated inputs go to the first (writable) corpus, under target/; the committed
  # seeds are read only.
  scratch="target/corpus/$target"
  artifacts="artifacts/$target"
  log="target/logs/$target.log"
  mkdir -p "$scratch" "$artifacts" "target/logs"
  printf '%-26s ' "$target"
  if "$bin_dir/$target" "$scratch" "corpus/$target" \
    -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
    -artifact_prefix="$artifacts/" >"$log" 2>&1; then
    sed -n 's/^Done \([0-9]*\) runs in \([0-9]*\) second.*/\1 runs in \2 s/p' "$log" | tail -n 1
  else
    artifact="$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)"
    echo "FAILED: ${artifact:+fuzz/}${artifact:-no artifact}; log: fuzz/$log"
    grep -m 5 -E "panicked at|ERROR: libFuzzer|SUMMARY" "$log" | sed 's/^/    /' || true
    failed+=("$target")
  fi
done
if ((${#failed[@]})); then
  echo "fuzz targets that failed: ${failed[*]} (artifacts under fuzz/artifacts/; docs/fuzzing.md)" >&2
  exit 1
fi
echo "fuzz: all targets ran ${seconds}s without a crash"
