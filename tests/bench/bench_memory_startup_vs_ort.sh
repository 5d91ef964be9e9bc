#!/usr/bin/env bash
# Peak resident memory and startup against ONNX Runtime, one process per measurement.
# For each model (default: the six of bench_vs_ort.sh), at 2 threads:
#   peak RSS of `fusescope-cli run MODEL --iterations 1` and of a node process that creates an
#   ORT session and runs once (GNU time's maximum resident set size), and each with its
#   empty baseline taken off (our CLI on the bundled sample model, node after loading
#   onnxruntime-node), so the columns compare what the model costs in each runtime;
#   startup: our whole `run --iterations 1` process (import, compile, plan, first inference,
#   exit) against ORT's session creation plus first run, timed inside node.
# With CPU_AS=avx2 or avx2-vnni, both run as such a CPU would (cpu_as.sh): the kernels, and
# so what they keep (transformed or reordered weights), follow the instruction set.
# usage: [CPU_AS=MODE] tests/bench/bench_memory_startup_vs_ort.sh BUILD_DIR [MODEL...]
# Needs what bench_vs_ort.sh needs (it installs onnxruntime-node on first use).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$1" && pwd)
shift
models=${*:-resnet50 mobilenet_v2 efficientnet_b0 vit_b_16 swin_t bert_base}
cli="$build/app/fusescope-cli"
cache="$build/model-cache"
ort="$build/ort-node"
[ -d "$ort/node_modules/onnxruntime-node" ] || bash "$here/bench_vs_ort.sh" "$build" 1 none >/dev/null 2>&1 || true
sample=$(cd "$here/../.." && pwd)/resources/models/sample.onnx
as_cpu=()
[ -z "${CPU_AS:-}" ] || as_cpu=(bash "$here/cpu_as.sh" "$build" "$CPU_AS")

peak_kb() { /usr/bin/time -f "%M" "${as_cpu[@]}" "$@" 2>&1 >/dev/null | tail -1; }
ours_base=$(peak_kb "$cli" run "$sample" --iterations 1)
ort_base=$(NODE_PATH="$ort/node_modules" peak_kb node -e "require('onnxruntime-node')")
printf "baselines: fusescope-cli %d MB, node with onnxruntime-node %d MB\n" $((ours_base / 1024)) $((ort_base / 1024))
printf "%-16s %10s %10s %8s %12s %12s %8s\n" model "ours MB" "ORT MB" ratio "ours start" "ORT start" ratio
for model in $models; do
  path="$cache/$model.onnx"
  ours_kb=$(peak_kb "$cli" run "$path" --threads 2 --iterations 1)
  theirs_kb=$(NODE_PATH="$ort/node_modules" peak_kb node "$here/ort_latency.js" "$path" 2 1 0)
  start=$(date +%s.%N)
  "${as_cpu[@]}" "$cli" run "$path" --threads 2 --iterations 1 >/dev/null
  ours_s=$(echo "$(date +%s.%N) - $start" | bc)
  theirs_ms=$(NODE_PATH="$ort/node_modules" "${as_cpu[@]}" node "$here/ort_latency.js" "$path" 2 1 0 |
              /usr/bin/python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["session_ms"] + j["first_run_ms"])')
  /usr/bin/python3 -c "
ours, theirs = ($ours_kb - $ours_base) / 1024, ($theirs_kb - $ort_base) / 1024
start, ort_start = $ours_s * 1000, $theirs_ms
print('%-16s %10.0f %10.0f %7.2fx %10.0f ms %9.0f ms %7.2fx' % ('$model', ours, theirs, ours / theirs, start, ort_start, start / ort_start))"
done
