#!/usr/bin/env bash
# CPU speed against ONNX Runtime: the same models, the same thread count, on the same machine.
# Prints fusescope's median and p90 latency over ORT's for resnet50, mobilenet_v2,
# efficientnet_b0, vit_b_16, swin_t and a BERT-base encoder (or the MODELs named) at
# batch 1, at 1 and 2 threads. The iterations run in ROUNDS rounds (default 5), each running
# every thread count of both runtimes in turn (each run warms up again), and median and p90
# are taken over every sample of each: a noisy stretch of a shared machine then falls on all
# of them, not on whichever happened to run during it.
# With CPU_AS=avx2 or avx2-vnni, both run as such a CPU would (cpu_as.sh).
# With LOAD=busy (one spinning process per core) or LOAD=pinned (one spinning process pinned to
# the last core), both run under that load, at their default threads ("default": Fusescope's
# automatic count, ONNX Runtime's intra-op default) and at 1 thread; THREADS overrides the list.
# Where the cache holds MODEL.INPUT.npy for each graph input (MODEL.input.npy for a lone one),
# both runtimes are fed those arrays instead of random data.
# usage: [ROUNDS=N] [CPU_AS=MODE] [LOAD=busy|pinned] [THREADS="1 2"] tests/bench/bench_vs_ort.sh BUILD_DIR [ITERATIONS [MODEL...]]
# Needs: the exported models (ctest -L models), node + npm (onnxruntime-node is installed
# with --ignore-scripts into BUILD_DIR/ort-node: its CPU library ships in the package).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$1" && pwd)
iterations=${2:-20}
shift $(( $# < 2 ? $# : 2 ))
models=${*:-resnet50 mobilenet_v2 efficientnet_b0 vit_b_16 swin_t bert_base}
rounds=${ROUNDS:-5}
per_round=$(( (iterations + rounds - 1) / rounds ))
as_cpu=()
[ -z "${CPU_AS:-}" ] || as_cpu=(bash "$here/cpu_as.sh" "$build" "$CPU_AS")
cli="$build/app/fusescope-cli"
cache="$build/model-cache"
ort="$build/ort-node"
if [ ! -d "$ort/node_modules/onnxruntime-node" ]; then
  mkdir -p "$ort"
  (cd "$ort" && npm init -y >/dev/null && npm install --ignore-scripts --no-audit --no-fund onnxruntime-node >/dev/null)
fi
# A bert_base.onnx from before 2026-11-28 shares one layer's weights across all 12: exported again.
[ -f "$cache/bert_base.onnx.distinct" ] ||
  { /usr/bin/python3 "$here/export_bert_base.py" "$cache/bert_base.onnx" 2>/dev/null && touch "$cache/bert_base.onnx.distinct"; }
# Dynamically quantized transformers (quantize_dynamic's MatMulInteger form), BERT-base in
# ONNX Runtime's transformers-optimizer form (and quantized after it, bert_ort_dq), MODEL_q4 (MODEL's MatMuls as 4-bit
# MatMulNBits), MODEL_fp16 (MODEL in float16, as onnxconverter-common writes it) and onnxruntime-genai's int4 decoder (a 128-token prompt, and one token after
# 128), made when named.
for model in $models; do
  [ ! -f "$cache/$model.onnx" ] || continue
  case $model in
    bert_dq) /usr/bin/python3 "$here/../models/quantize_dynamic_matmuls.py" "$cache/bert_base.onnx" "$cache/bert_dq.onnx" ;;
    distilbert_dq) /usr/bin/python3 "$here/../models/export_dynamic_quantized.py" distilbert_dq "$cache/distilbert_dq.onnx" 2>/dev/null ;;
    bert_ort_fused) /usr/bin/python3 "$here/../models/export_ort_transformer.py" bert_ort_fused "$cache/bert_ort_fused.onnx" ;;
    bert_ort_dq)  # bert_ort_fused as quantize_dynamic writes it: QAttention, QEmbedLayerNormalization
      [ -f "$cache/bert_ort_fused.onnx" ] ||
        /usr/bin/python3 "$here/../models/export_ort_transformer.py" bert_ort_fused "$cache/bert_ort_fused.onnx"
      /usr/bin/python3 "$here/../models/quantize_dynamic_matmuls.py" "$cache/bert_ort_fused.onnx" "$cache/bert_ort_dq.onnx" >/dev/null
      for feed in "$cache"/bert_ort_fused.*.npy; do cp "$feed" "$cache/bert_ort_dq.${feed#"$cache"/bert_ort_fused.}"; done ;;
    genai_llm) /usr/bin/python3 "$here/../models/export_genai_llm.py" genai_llm "$cache/genai_llm.onnx" ;;
    genai_llm_step) /usr/bin/python3 "$here/../models/export_genai_llm.py" genai_llm "$cache/genai_llm_step.onnx" --past 128 ;;
    *_q4) /usr/bin/python3 "$here/../models/quantize_matmul_nbits.py" "$cache/${model%_q4}.onnx" "$cache/$model.onnx" >/dev/null
      [ ! -f "$cache/${model%_q4}.input.npy" ] || cp "$cache/${model%_q4}.input.npy" "$cache/$model.input.npy" ;;
    *_fp16) /usr/bin/python3 "$here/../models/convert_float16.py" "$cache/${model%_fp16}.onnx" "$cache/$model.onnx"
      [ ! -f "$cache/${model%_fp16}.input.npy" ] || cp "$cache/${model%_fp16}.input.npy" "$cache/$model.input.npy" ;;
  esac
done
samples=$(mktemp -d)
spinners=()
trap 'rm -rf "$samples"; [ ${#spinners[@]} = 0 ] || kill "${spinners[@]}" 2>/dev/null' EXIT
thread_list=${THREADS:-1 2}
case "${LOAD:-}" in
  "") ;;
  busy)
    for _ in $(seq "$(nproc)"); do sh -c 'while :; do :; done' & spinners+=($!); done
    thread_list=${THREADS:-default 1} ;;
  pinned)
    taskset -c $(( $(nproc) - 1 )) sh -c 'while :; do :; done' & spinners+=($!)
    thread_list=${THREADS:-default 1} ;;
  *) echo "LOAD must be busy or pinned" >&2; exit 64 ;;
esac
[ -z "${LOAD:-}" ] || echo "load: $LOAD (${#spinners[@]} spinning process(es))"
printf "%-16s %7s %12s %12s %8s %9s\n" model threads "fusescope ms" "ort ms" ratio "p90 ratio"
for model in $models; do
  ours_feeds=() ort_feeds=""
  for input in $(/usr/bin/python3 -c 'import onnx, sys
g = onnx.load(sys.argv[1], load_external_data=False).graph
inits = {t.name for t in g.initializer}
print(*[i.name for i in g.input if i.name not in inits])' "$cache/$model.onnx"); do
    file="$cache/$model.$input.npy"
    [ -f "$file" ] || file="$cache/$model.input.npy"
    [ -f "$file" ] || continue
    ours_feeds+=(--input "$input=$file") ort_feeds+="$input=$file,"
  done
  # Each round runs every thread count, ours then ORT's: the counts compared with each other
  # (default against 1 under load) see the same stretch of the machine, as the runtimes do.
  for threads in $thread_list; do : >"$samples/ours.$threads"; : >"$samples/ort.$threads"; done
  for _ in $(seq "$rounds"); do
    for threads in $thread_list; do
      ours_threads=(--threads "$threads") ort_threads=$threads
      [ "$threads" != default ] || { ours_threads=(); ort_threads=0; }
      "${as_cpu[@]}" "$cli" run "$cache/$model.onnx" "${ours_threads[@]}" "${ours_feeds[@]}" --iterations "$per_round" --warmup 3 --json |
        /usr/bin/python3 -c 'import json,sys; print(*json.load(sys.stdin)["latency_ms"]["samples"])' >>"$samples/ours.$threads"
      FEEDS="$ort_feeds" NODE_PATH="$ort/node_modules" "${as_cpu[@]}" node "$here/ort_latency.js" "$cache/$model.onnx" "$ort_threads" "$per_round" 3 |
        /usr/bin/python3 -c 'import json,sys; print(*json.load(sys.stdin)["samples"])' >>"$samples/ort.$threads"
    done
  done
  for threads in $thread_list; do
    /usr/bin/python3 - "$model" "$threads" "$samples/ours.$threads" "$samples/ort.$threads" <<'PY'
import math, sys
def stats(path):
    s = sorted(float(v) for v in open(path).read().split())
    rank = lambda q: s[min(len(s), max(1, math.ceil(q * len(s)))) - 1]  # nearest rank, as the CLI
    return rank(0.5), rank(0.9)
(om, op), (tm, tp) = stats(sys.argv[3]), stats(sys.argv[4])
print('%-16s %7s %12.2f %12.2f %7.2fx %8.2fx' % (sys.argv[1], sys.argv[2], om, tm, om / tm, op / tp))
PY
  done
done
