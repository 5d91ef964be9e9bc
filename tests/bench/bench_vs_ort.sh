#!/usr/bin/env bash
# CPU speed against ONNX Runtime: the same models, the same thread count, back to back.
# Prints fusescope's median and p90 latency over ORT's for resnet50, mobilenet_v2,
# efficientnet_b0, vit_b_16, swin_t and a BERT-base encoder (or the MODELs named) at
# batch 1, at 1 and 2 threads.
# usage: tests/bench/bench_vs_ort.sh BUILD_DIR [ITERATIONS [MODEL...]]
# Needs: the exported models (ctest -L models), node + npm (onnxruntime-node is installed
# with --ignore-scripts into BUILD_DIR/ort-node: its CPU library ships in the package).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$1" && pwd)
iterations=${2:-20}
shift $(( $# < 2 ? $# : 2 ))
models=${*:-resnet50 mobilenet_v2 efficientnet_b0 vit_b_16 swin_t bert_base}
cli="$build/app/fusescope-cli"
cache="$build/model-cache"
ort="$build/ort-node"
if [ ! -d "$ort/node_modules/onnxruntime-node" ]; then
  mkdir -p "$ort"
  (cd "$ort" && npm init -y >/dev/null && npm install --ignore-scripts --no-audit --no-fund onnxruntime-node >/dev/null)
fi
[ -f "$cache/bert_base.onnx" ] || /usr/bin/python3 "$here/export_bert_base.py" "$cache/bert_base.onnx" 2>/dev/null
printf "%-16s %7s %12s %12s %8s %9s\n" model threads "fusescope ms" "ort ms" ratio "p90 ratio"
for model in $models; do
  for threads in 1 2; do
    ours=$("$cli" run "$cache/$model.onnx" --threads "$threads" --iterations "$iterations" --warmup 3 --json |
           /usr/bin/python3 -c 'import json,sys; l=json.load(sys.stdin)["latency_ms"]; print(l["median"], l["p90"])')
    theirs=$(NODE_PATH="$ort/node_modules" node "$here/ort_latency.js" "$cache/$model.onnx" "$threads" "$iterations" 3 |
             /usr/bin/python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["median"], j["p90"])')
    set -- $ours $theirs
    /usr/bin/python3 -c "print('%-16s %7s %12.2f %12.2f %7.2fx %8.2fx' % ('$model', $threads, $1, $3, $1 / $3, $2 / $4))"
  done
done
