#!/usr/bin/env bash
# Fuzzes the broker with AFL++ (cargo-afl, stable Rust): the request decoder,
# the Produce path's record-batch validation, segment recovery and the
# journal's replay. See fuzz/README.md.
#
#   scripts/fuzz.sh [--seconds N | --execs N] [--target decode|batch|recovery|journal|all]
#                   [--timeout-ms MS] [--out DIR]
#
# --seconds: fuzzing time per target (default 20: about a minute and a half
# for all four); --execs: inputs per target instead (the long run: 10000000).
# Exits 1 when any target crashed or hung (printing each input and the
# command that replays it), 2 on a usage or setup error.
set -euo pipefail

native="$(cd "$(dirname "$0")/.." && pwd)"
fuzz="$native/fuzz"
seconds=20
execs=""
targets=(decode batch recovery journal)
timeout_ms=1000
out=""

usage() {
  sed -n '5,12p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="${2:?}"; execs=""; shift 2 ;;
    --execs) execs="${2:?}"; shift 2 ;;
    --target)
      case "${2:-}" in
        all) targets=(decode batch recovery journal) ;;
        decode | batch | recovery | journal) targets=("$2") ;;
        *) usage ;;
      esac
      shift 2 ;;
    --timeout-ms) timeout_ms="${2:?}"; shift 2 ;;
    --out) out="${2:?}"; shift 2 ;;
    -h | --help) usage ;;
    *) usage ;;
  esac
done

if ! cargo afl --version >/dev/null 2>&1; then
  echo "fuzz: installing cargo-afl (AFL++ is built from the crate's bundled source)"
  cargo install --locked cargo-afl
fi
# cargo-afl 0.18 builds AFL++ when installed; this builds it where that did
# not happen (it refuses, harmlessly, when AFL++ is already built).
cargo afl config --build >/dev/null 2>&1 || true

# Findings outlive the run; the fuzzers' queues and scratch files go to a
# tmpfs when there is one (the recovery target writes files for each input).
out="${out:-${TMPDIR:-/tmp}/kbench-fuzz/$(date +%Y%m%d-%H%M%S)}"
mkdir -p "$out"
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
  work="$(mktemp -d /dev/shm/kbench-fuzz.XXXXXX)"
else
  work="$(mktemp -d)"
fi
trap 'rm -rf "$work"' EXIT

# A short run (--seconds) spends most of its time building, so it builds
# unoptimised: about a third of the build time (63 s against 190 s here),
# for fewer inputs a second. A long run (--execs) builds at opt-level 3.
# Naming the host target keeps build scripts and proc macros (syn, serde)
# out of the instrumented, single-codegen-unit build; they only run at
# build time.
if [ -n "$execs" ]; then opt="${AFL_OPT_LEVEL:-3}"; else opt="${AFL_OPT_LEVEL:-0}"; fi
host="$(rustc -vV | sed -n 's/^host: //p')"
echo "fuzz: building the instrumented targets (opt-level $opt)"
build_start=$(date +%s)
(cd "$fuzz" && AFL_OPT_LEVEL="$opt" cargo afl build --release --features afl --target "$host" \
  --target-dir "target/afl-o$opt" --quiet)
echo "fuzz: built in $(($(date +%s) - build_start)) s"
bin="$fuzz/target/afl-o$opt/$host/release"

# Known-harmless warnings on a shared or virtual machine; no UI in logs; no
# core pinning (CI may have every core busy).
export AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_UI=1 \
  AFL_NO_AFFINITY=1 AFL_FAST_CAL=1 AFL_NO_CRASH_README=1

failed=0
summary=()
for target in "${targets[@]}"; do
  findings="$work/$target"
  export KBENCH_FUZZ_TMPDIR="$work/scratch-$target"
  mkdir -p "$KBENCH_FUZZ_TMPDIR"
  if [ -n "$execs" ]; then limit=(-E "$execs"); else limit=(-V "$seconds"); fi
  echo "fuzz: $target (${execs:-$seconds s}${execs:+ inputs})"
  status=0
  cargo afl fuzz -i "$fuzz/corpus/$target" -o "$findings" -t "$timeout_ms" "${limit[@]}" \
    "$bin/fuzz-$target" >"$out/$target.log" 2>&1 || status=$?
  stats="$findings/default/fuzzer_stats"
  if [ "$status" -ne 0 ] || [ ! -f "$stats" ]; then
    echo "fuzz: afl-fuzz failed on $target (exit $status); last lines of $out/$target.log:"
    tail -n 15 "$out/$target.log" | sed 's/\x1b\[[0-9;]*[a-zA-Z]//g'
    failed=1
    continue
  fi
  stat_of() { sed -n "s/^$1 *: //p" "$stats"; }
  found=()
  for crash in "$findings"/default/crashes/id:*; do
    [ -e "$crash" ] || continue
    mkdir -p "$out/$target/crashes"
    cp "$crash" "$out/$target/crashes/"
    found+=("crash $out/$target/crashes/$(basename "$crash")")
  done
  # A hang counts only if it hangs again (a busy machine can stall one run).
  for hang in "$findings"/default/hangs/id:*; do
    [ -e "$hang" ] || continue
    mkdir -p "$out/$target/hangs"
    cp "$hang" "$out/$target/hangs/"
    if KBENCH_FUZZ_TMPDIR="$work/replay" timeout 10 "$bin/fuzz-$target" <"$hang" >/dev/null 2>&1; then
      echo "fuzz: $target: a hang did not hang again, ignored: $out/$target/hangs/$(basename "$hang")"
    else
      found+=("hang $out/$target/hangs/$(basename "$hang")")
    fi
  done
  line="$target: $(stat_of execs_done) inputs, $(stat_of execs_per_sec)/s, coverage $(stat_of bitmap_cvg), corpus $(stat_of corpus_count), ${#found[@]} finding(s)"
  summary+=("$line")
  echo "fuzz: $line"
  if [ ${#found[@]} -gt 0 ]; then
    failed=1
    for f in "${found[@]}"; do echo "  $f"; done
    echo "  replay one (panic message and backtrace): cargo run --release --manifest-path $fuzz/Cargo.toml --bin replay -- $target FILE"
  fi
  cp "$stats" "$out/$target.stats"
done

echo "fuzz: summary (logs and findings in $out)"
for line in "${summary[@]}"; do echo "  $line"; done
exit "$failed"
