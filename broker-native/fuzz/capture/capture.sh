#!/usr/bin/env bash
# Captures request frames from real clients into fuzz/corpus/decode:
# a standalone broker, the recording proxy in front of it, then kcat,
# confluent-kafka (Python) and kafkajs against the proxy. Then writes the
# derived batch and recovery seeds (make-seeds) from the frames and from the
# broker's own segment files. Needs the release broker binary
# (cargo build --release -p kbench-broker), kcat, confluent-kafka, and
# kafkajs (npm ci at the repo root, or NODE_PATH pointing at it).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
native="$(cd "$here/../.." && pwd)"
fuzz="$native/fuzz"
work="$(mktemp -d /tmp/kbench-capture.XXXXXX)"
frames="$work/frames"
mkdir -p "$frames"
broker_port="${BROKER_PORT:-19792}"
proxy_port="${PROXY_PORT:-19793}"
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; }
trap cleanup EXIT

"$native/target/release/kbench-broker" --port "$broker_port" --data-dir "$work/data" \
  --auto-create-topics >"$work/broker.out" 2>&1 &
broker_pid=$!
pids+=("$broker_pid")
python3 "$here/proxy.py" --listen "$proxy_port" --broker "$broker_port" --out "$frames" &
pids+=($!)
sleep 1
bootstrap="127.0.0.1:$proxy_port"

echo "== kcat"
echo kcat >"$frames/.label"
kcat -b "$bootstrap" -L >/dev/null
seq 1 30 | sed 's/^/message /' | kcat -b "$bootstrap" -P -t kcat-t -K: -k key
for codec in gzip snappy lz4 zstd; do
  seq 1 10 | kcat -b "$bootstrap" -P -t kcat-t -z "$codec"
done
kcat -b "$bootstrap" -C -t kcat-t -o beginning -e -q >/dev/null
kcat -b "$bootstrap" -C -t kcat-t -o s@1 -e -q -c 1 >/dev/null || true
timeout 15 kcat -b "$bootstrap" -G kcat-group -o beginning -e -q -X enable.auto.commit=true \
  -X auto.commit.interval.ms=200 kcat-t >/dev/null || true
kcat -b "$bootstrap" -Q -t kcat-t:0:1 >/dev/null || true

echo "== confluent-kafka (Python)"
echo confluent >"$frames/.label"
python3 "$here/clients.py" "$bootstrap"

echo "== kafkajs"
echo kafkajs >"$frames/.label"
node "$here/clients.cjs" "$bootstrap"

# A clean shutdown, so that segments come with their index files.
kill -TERM "$broker_pid"
wait "$broker_pid" || true

mkdir -p "$fuzz/corpus/decode"
for f in "$frames"/[0-9]*; do cp "$f" "$fuzz/corpus/decode/$(basename "$f")"; done
echo "captured $(ls "$frames" | wc -l) distinct request frames"
(cd "$fuzz" && cargo run --release --quiet --bin make-seeds -- "$fuzz/corpus" "$work/data")
rm -rf "$work"
