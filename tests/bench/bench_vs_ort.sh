#!/usr/bin/env bash
# CPU speed against ONNX Runtime: the same models, the same thread count, back to back.
# Prints fusescope's median latency over ORT's for resnet50, mobilenet_v2 and a
# BERT-base encoder at batch 1, at 1 and 2 threads.
# usage: tests/bench/bench_vs_ort.sh BUILD_DIR [ITERATIONS]
# Needs: the exported models (ctest -L models), node + npm (onnxruntime-node is installed
# with --ignore-scripts into BUILD_DIR/ort-node: its CPU library ships in the package).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$1" && pwd)
iterations=${2:-20}
cli="$build/app/fusescope-cli"
cache="$build/model-cache"
ort="$build/ort-node"
if [ ! -d "$ort/node_modules/onnxruntime-node" ]; then
  mkdir -p "$ort"
  (cd "$ort" && npm init -y >/dev/null && npm install --ignore-scripts --no-audit --no-fund onnxruntime-node >/dev/null)
fi
[ -f "$cache/bert_base.onnx" ] || /usr/bin/python3 "$here/export_bert_base.py" "$cache/bert_base.onnx" 2>/dev/null
printf "%-14s %7s %12s %12s %8s\n" model threads "fusescope ms" "ort ms" ratio
for model in resnet50 mobilenet_v2 bert_base; do
  for threads in 1 2; do
    ours=$("$cli" run "$cache/$model.onnx" --threads "$threads" --iterations "$iterations" --warmup 3 --json |
           /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["latency_ms"]["median"])')
    theirs=$(NODE_PATH="$ort/node_modules" node "$here/ort_latency.js" "$cache/$model.onnx" "$threads" "$iterations" 3 |
             /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["median"])')
    /usr/bin/python3 -c "print(f'%-14s %7s %12.2f %12.2f %7.2fx' % ('$model', $threads, $ours, $theirs, $ours / $theirs))"
  done
done
