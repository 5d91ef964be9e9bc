#!/usr/bin/env bash
# Fusescope's device kit: verifies the GPU side on a machine with an NVIDIA GPU in stages,
# and writes summary.json and summary.txt into --out DIR (default: beside this script).
#   run.sh STAGE|all [--out DIR]
# Stages:
#   1  the device and the libraries: driver, GPU, the CUDA libraries found (the toolkit, or
#      PyTorch's nvidia/*/lib folders), what fusescope-cli sees.
#   2  correctness: every CUDA kernel against the CPU backend on random, odd, broadcast and
#      empty shapes, every fixture model CUDA against CPU (tests/tst_cuda_backend on the GPU),
#      the kernels, the NVRTC kernels and a CUDA Graph replay again under compute-sanitizer
#      memcheck (its absence is a failure), and the sample and resnet50 at batch 1 (exported
#      here by PyTorch; also under memcheck) through fusescope-cli run --backend cuda
#      against the CPU, every output value compared; then ablate --backend cuda, compare
#      (cpu/fp32 beside cuda/fp32 and cuda/fp16, each within its error limit) and bisect
#      --candidate cuda/fp32 (no first jump: the GPU's kernels follow the CPU's) on both.
#   3  CUPTI: resnet50 exported by PyTorch, profiled at batch 1 and 32 (stored, HTML report,
#      Perfetto trace, every kernel tied to a plan node), profiler overhead against its goals.
#   4  the benchmark: resnet50, vit_b_16, a BERT-base encoder, batch 1 and 32, float32 and
#      float16, fusescope-cli run --backend cuda against PyTorch eager and torch.compile in
#      the same run, the same input through both and the outputs compared whole
#      (gpu_stages.py says how); --cases a,b limits it to those models; --max-autotune adds
#      torch.compile's max-autotune mode (minutes of search per model).
# Several stages may be named (run.sh 2 3). --deadline SECONDS bounds the whole kit, for a
# lease whose call has a limit: a step that would start too late is not run and says so (a
# correctness check not run fails its stage; a benchmark case not run misses its goals), and
# stages 3 and 4 keep every case they finished when they are stopped.
# Exit status: 0 when every stage run passed, 1 when one failed (an error, a wrong output, a
# case that did not run), 3 when there is no usable CUDA device (no driver, no GPU): the
# summary says why. 64 for a bad command line. Goals (speed, memory, profiler overhead) do
# not change it: summary.txt's first line says `GOALS k/n met` and lists each missed goal.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
stages=() out=$here cases="" deadline="" autotune=""
usage="usage: run.sh 1|2|3|4|all ... [--out DIR] [--cases MODEL,...] [--deadline SECONDS] [--max-autotune]"
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=${2:?--out needs DIR}; shift 2 ;;
    --cases) cases=${2:?--cases needs MODEL,...}; shift 2 ;;
    --deadline) deadline=${2:?--deadline needs SECONDS}; shift 2
                [[ "$deadline" =~ ^[0-9]+$ ]] || { echo "$usage" >&2; exit 64; } ;;
    --max-autotune) autotune=1; shift ;;
    1|2|3|4) stages+=("$1"); shift ;;
    all) stages+=(1 2 3 4); shift ;;
    *) echo "$usage" >&2; exit 64 ;;
  esac
done
[ ${#stages[@]} -gt 0 ] || { echo "$usage" >&2; exit 64; }
wanted() { [[ " ${stages[*]} " == *" $1 "* ]]; }
started_at=$SECONDS
# Seconds left before --deadline (a day when there is none).
remaining() { if [ -n "$deadline" ]; then echo $((deadline - (SECONDS - started_at))); else echo 86400; fi; }
# Whether a step needing about $1 seconds can still start.
time_for() { [ "$(remaining)" -ge "$1" ]; }
mkdir -p "$out"
cli=$here/fusescope-cli

json_string() {  # a JSON string literal of $1
  local s=${1//\\/\\\\}
  s=${s//\"/\\\"}
  s=${s//$'\t'/ }
  printf '"%s"' "${s//$'\n'/\\n}"
}

# CUDA's libraries: the toolkit's first, then PyTorch's wheels' (nvidia/<lib>/lib), which also
# supply what a toolkit lacks (cuDNN is not part of it). Convolutions need libcudnn.so.9;
# without it they run on the CPU and stage 1 says so.
cuda_libs="none found"
lib_dirs=""
for dir in "${CUDA_HOME:-/usr/local/cuda}/lib64" /usr/local/cuda/lib64; do
  if [ -e "$dir/libcudart.so" ] || ls "$dir"/libcublas.so* >/dev/null 2>&1; then
    lib_dirs=$dir
    cuda_libs="toolkit: $dir"
    break
  fi
done
if command -v python3 >/dev/null; then
  nvidia=$(python3 -c 'import nvidia, os; print(os.pathsep.join(nvidia.__path__))' 2>/dev/null || true)
  if [ -n "$nvidia" ]; then
    dirs=$(ls -d "${nvidia%%:*}"/*/lib 2>/dev/null | tr '\n' ':')
    if [ -n "$dirs" ]; then
      lib_dirs="${lib_dirs:+$lib_dirs:}${dirs%:}"
      if [ "$cuda_libs" = "none found" ]; then cuda_libs="PyTorch's wheels: ${nvidia%%:*}/*/lib"
      else cuda_libs="$cuda_libs, then PyTorch's wheels: ${nvidia%%:*}/*/lib"; fi
    fi
  fi
fi
[ -n "$lib_dirs" ] && export LD_LIBRARY_PATH="$lib_dirs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
cudnn="not found (convolutions run on the CPU)"
IFS=: read -ra search <<<"${LD_LIBRARY_PATH:-}"
for dir in "${search[@]}"; do
  if [ -e "$dir/libcudnn.so.9" ]; then cudnn="$dir/libcudnn.so.9"; break; fi
done

stage1() {
  local version devices gpu torch status reason=""
  version=$("$cli" --version 2>&1)
  devices=$("$cli" devices 2>&1)
  gpu="nvidia-smi: not installed"
  command -v nvidia-smi >/dev/null && gpu=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1)
  torch=$(python3 -c 'import torch; print(torch.__version__, "CUDA", torch.version.cuda, "cuDNN", torch.backends.cudnn.version())' 2>/dev/null || echo "not installed")
  if echo "$devices" | grep -q '^cuda:'; then
    status=passed
  else
    status=no_device
    reason=$(echo "$devices" | sed -n 's/^no CUDA device: //p')
    [ -n "$reason" ] || reason=$devices
  fi
  {
    printf '{"stage": 1, "name": "device and libraries", "status": "%s", "reason": %s,\n' "$status" "$(json_string "$reason")"
    printf ' "fusescope": %s,\n "devices": %s,\n' "$(json_string "$version")" "$(json_string "$devices")"
    printf ' "nvidia_smi": %s,\n "cuda_libraries": %s,\n "cudnn": %s,\n "pytorch": %s}\n' \
      "$(json_string "$gpu")" "$(json_string "$cuda_libs")" "$(json_string "$cudnn")" "$(json_string "$torch")"
  } >"$out/stage1.json"
  {
    echo "stage 1, device and libraries: $status${reason:+ ($reason)}"
    echo "  fusescope:      $(echo "$version" | head -1)"
    echo "$devices" | sed 's/^/  devices:        /' 
    echo "  nvidia-smi:     $gpu"
    echo "  CUDA libraries: $cuda_libs"
    echo "  cuDNN:          $cudnn"
    echo "  PyTorch:        $torch"
  } >"$out/stage1.txt"
  case "$status" in passed) return 0 ;; no_device) return 3 ;; *) return 1 ;; esac
}

# One model through `run --backend cuda` and on the CPU with the same seeded inputs, every
# output value compared: one line, and a failing status when anything differs or errs.
end_to_end() {
  local model=$1 name
  name=$(basename "$model" .onnx)
  rm -rf "$out/stage2-$name-cuda" "$out/stage2-$name-cpu"
  local compared summary
  # FUSESCOPE_CUDNN_LOG: each convolution shape's route (operation graph or legacy call, and why).
  if ! FUSESCOPE_CUDNN_LOG=1 "$cli" run "$model" --backend cuda --iterations 20 --warmup 3 --json --output-dir "$out/stage2-$name-cuda" \
         >"$out/stage2-$name-cuda.json" 2>"$out/stage2-$name.err" ||
     ! "$cli" run "$model" --output-dir "$out/stage2-$name-cpu" >/dev/null 2>>"$out/stage2-$name.err"; then
    echo "$name: $(tail -1 "$out/stage2-$name.err" | head -c 300)"
    return 1
  fi
  compared=$(python3 "$here/gpu_stages.py" compare-outputs "$out/stage2-$name-cuda" "$out/stage2-$name-cpu")
  local rc=$?
  summary=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); dev = d.get("device", {})
print("%s steps on %s, graph replayed: %s, median %.3f ms" % (dev.get("steps_on_device"), dev.get("name"),
      dev.get("cuda_graph_replayed"), d["latency_ms"]["median"]))' "$out/stage2-$name-cuda.json")
  local graphs legacy dropped
  graphs=$(grep -c '^cuDNN .*: operation graph' "$out/stage2-$name.err")
  legacy=$(grep -c '^cuDNN .*: legacy call' "$out/stage2-$name.err")
  dropped=$(grep -c 'dropped for disagreeing\|agreed with the legacy call' "$out/stage2-$name.err")
  echo "$name: $compared; $summary; cuDNN shapes: $graphs as operation graphs, $legacy legacy, $dropped with an engine dropped for a wrong output (stage2-$name.err says why)"
  return $rc
}

# A step of stage 2 that the deadline leaves no time for: the stage fails, saying which.
not_run() {
  status=failed
  reason="${reason:+$reason; }$1 not run: the kit's --deadline came first"
}

stage2() {
  local tests=$here/tests/tst_cuda_backend status=passed reason="" totals sanitizer="not run" cli_check
  local began=$SECONDS
  export FUSESCOPE_FIXTURE_DIR=$here/models/fixtures FUSESCOPE_SAMPLE_MODEL=$here/models/sample.onnx
  local limit; limit=$(remaining); [ "$limit" -le 420 ] || limit=420; [ "$limit" -ge 1 ] || limit=1
  FUSESCOPE_TEST_DEVICE=gpu timeout "$limit" "$tests" -o "$out/stage2-tests.txt,txt" -o "$out/stage2-tests.xml,junitxml" >/dev/null 2>&1
  local test_rc=$?
  totals=$(grep '^Totals:' "$out/stage2-tests.txt" 2>/dev/null || echo "no totals (exit $test_rc)")
  if [ "$test_rc" -ne 0 ]; then
    status=failed
    reason="tst_cuda_backend: $totals; first failures: $(grep -m3 '^FAIL!' "$out/stage2-tests.txt" | tr '\n' ' ')"
  fi
  # resnet50 at batch 1, exported here by PyTorch: end to end and under memcheck below.
  local resnet=$out/models/resnet50-b1.onnx have_resnet=1
  python3 "$here/gpu_stages.py" export resnet50 1 "$resnet" >"$out/stage2-export.txt" 2>&1 || {
    have_resnet=0
    status=failed
    reason="${reason:+$reason; }resnet50 could not be exported: $(tail -1 "$out/stage2-export.txt")"
  }
  # The kernels once more under memcheck: out-of-bounds and misaligned accesses, leaks of
  # device memory, errors the launches returned. Every kernel kind (singleOps), the NVRTC
  # kernels, CUDA Graph capture and replay, then resnet50 through the CLI (a graph replayed).
  local cs
  cs=$(command -v compute-sanitizer || ls "${CUDA_HOME:-/usr/local/cuda}"/bin/compute-sanitizer 2>/dev/null || true)
  if [ -n "$cs" ] && ! time_for 150; then
    not_run "compute-sanitizer memcheck"
  elif [ -n "$cs" ]; then
    FUSESCOPE_TEST_DEVICE=gpu timeout 300 "$cs" --tool memcheck --leak-check full --error-exitcode 9 \
      "$tests" singleOps fallbackCopiesAreExplicit fusedElementwiseRunsTheGeneratedKernel \
      cudaGraphCapturedAndReplayed >"$out/stage2-memcheck.txt" 2>&1
    local cs_rc=$?
    sanitizer=$(grep -m1 'ERROR SUMMARY' "$out/stage2-memcheck.txt" || echo "exit $cs_rc")
    if [ "$cs_rc" -ne 0 ]; then status=failed; reason="${reason:+$reason; }compute-sanitizer: $sanitizer"; fi
    if [ "$have_resnet" = 1 ] && ! time_for 120; then
      not_run "compute-sanitizer memcheck of resnet50"
    elif [ "$have_resnet" = 1 ]; then
      timeout 300 "$cs" --tool memcheck --error-exitcode 9 "$cli" run "$resnet" --backend cuda --iterations 2 \
        --warmup 1 >"$out/stage2-memcheck-resnet50.txt" 2>&1
      cs_rc=$?
      local resnet_sanitizer
      resnet_sanitizer=$(grep -m1 'ERROR SUMMARY' "$out/stage2-memcheck-resnet50.txt" || echo "exit $cs_rc")
      sanitizer="$sanitizer; resnet50 b1: $resnet_sanitizer"
      if [ "$cs_rc" -ne 0 ]; then status=failed; reason="${reason:+$reason; }compute-sanitizer on resnet50: $resnet_sanitizer"; fi
    fi
  else  # an unchecked kernel is not a pass
    sanitizer="compute-sanitizer not found"
    status=failed
    reason="${reason:+$reason; }compute-sanitizer not found (PATH, \$CUDA_HOME/bin, /usr/local/cuda/bin)"
  fi
  # The CLI end to end: the plugin found beside it, the whole outputs as the CPU's for the
  # same seeded inputs, for the sample and resnet50.
  cli_check=""
  local models=("$here/models/sample.onnx") model line
  [ "$have_resnet" = 1 ] && models+=("$resnet")
  for model in "${models[@]}"; do
    time_for 30 || { not_run "fusescope-cli run --backend cuda of $(basename "$model")"; continue; }
    line=$(end_to_end "$model") || { status=failed; reason="${reason:+$reason; }fusescope-cli run --backend cuda: $line"; }
    cli_check="${cli_check:+$cli_check | }$line"
  done
  # Ablation and bisection on the GPU (issue 59): ablate times its variants on the device;
  # bisect of cuda/fp32 against cpu/fp32 must find no jump (the kernels match the CPU's).
  analysis=""
  for model in "${models[@]}"; do
    local name; name=$(basename "$model" .onnx)
    time_for 90 || { not_run "ablate, bisect and compare of $name"; continue; }
    if "$cli" ablate "$model" --backend cuda --rounds 3 --json >"$out/stage2-ablate-$name.json" 2>"$out/stage2-ablate-$name.err"; then
      line="ablate $name: $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(sum(e["kind"]=="measured" for e in d["without"]), "variants timed in", round(d["seconds"], 1), "s")' "$out/stage2-ablate-$name.json")"
    else
      status=failed; line="ablate $name: $(tail -1 "$out/stage2-ablate-$name.err" | head -c 200)"; reason="${reason:+$reason; }$line"
    fi
    analysis="${analysis:+$analysis | }$line"
    if "$cli" bisect "$model" --candidate cuda/fp32 --json >"$out/stage2-bisect-$name.json" 2>"$out/stage2-bisect-$name.err"; then
      line="bisect $name: $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(len(d["first_jumps"]), "first jumps,", d["compared"], "values compared, output error %.2e" % d["output_error"])' "$out/stage2-bisect-$name.json")"
      case "$line" in *": 0 first jumps"*) ;; *) status=failed; reason="${reason:+$reason; }$line" ;; esac
    else
      status=failed; line="bisect $name: $(tail -1 "$out/stage2-bisect-$name.err" | head -c 200)"; reason="${reason:+$reason; }$line"
    fi
    analysis="${analysis:+$analysis | }$line"
    # N-way compare: the GPU in float32 and float16 beside the CPU, node by node.
    if "$cli" compare "$model" --variants cpu/fp32,cuda/fp32,cuda/fp16 --rounds 3 --json \
        >"$out/stage2-compare-$name.json" 2>"$out/stage2-compare-$name.err"; then
      line="compare $name: $(python3 "$here/gpu_stages.py" compare-check "$out/stage2-compare-$name.json")" ||
        { status=failed; reason="${reason:+$reason; }$line"; }
    else
      status=failed; line="compare $name: $(tail -1 "$out/stage2-compare-$name.err" | head -c 200)"; reason="${reason:+$reason; }$line"
    fi
    analysis="${analysis:+$analysis | }$line"
  done
  {
    printf '{"stage": 2, "name": "kernels and models against the CPU", "status": "%s", "reason": %s,\n' "$status" "$(json_string "$reason")"
    printf ' "tests": %s,\n "memcheck": %s,\n "cli": %s,\n "analysis": %s,\n "seconds": %d}\n' "$(json_string "$totals")" "$(json_string "$sanitizer")" "$(json_string "$cli_check")" "$(json_string "$analysis")" $((SECONDS - began))
  } >"$out/stage2.json"
  {
    echo "stage 2, kernels and models against the CPU: $status${reason:+ ($reason)}"
    echo "  tst_cuda_backend on the GPU: $totals"
    echo "  compute-sanitizer memcheck:  $sanitizer"
    echo "  fusescope-cli:               $cli_check"
    echo "  ablate, bisect and compare:  $analysis"
    echo "  ($((SECONDS - began)) s)"
  } >"$out/stage2.txt"
  [ "$status" = passed ]
}

# Stages 3 and 4 need PyTorch on the GPU machine: gpu_stages.py writes their summaries.
python_stage() {
  local n=$1 status limit budget
  # Under --deadline: stopped 10 s before it (what it finished stays), cases started until
  # a minute before it (the first H200 run's cases took 13-73 s).
  limit=$(remaining); [ "$limit" -le 480 ] || limit=480; limit=$((limit - 10))
  budget=$((limit - 60)); [ "$budget" -ge 0 ] || budget=0; [ "$budget" -le 420 ] || budget=420
  if [ "$limit" -lt 20 ]; then
    printf '{"stage": %d, "name": "stage %d", "status": "failed", "reason": "not run: the kit\x27s --deadline came first"}\n' "$n" "$n" >"$out/stage$n.json"
    echo "stage $n: failed (not run: the kit's --deadline came first)" >"$out/stage$n.txt"
    return 1
  fi
  timeout "$limit" python3 "$here/gpu_stages.py" "$n" --cli "$cli" --out "$out" ${cases:+--cases "$cases"} \
    --budget "$budget" ${autotune:+--max-autotune} >"$out/stage$n-log.txt" 2>&1
  status=$?
  if [ "$status" = 124 ] && [ -s "$out/stage$n.json" ]; then
    # Stopped mid-case: the cases it finished stand, the stage fails for what it did not finish.
    python3 - "$out/stage$n.json" "$out/stage$n.txt" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
s["status"], s["reason"] = "failed", "stopped by the kit's --deadline; cases without figures were not finished"
json.dump(s, open(sys.argv[1], "w"), indent=1)
lines = open(sys.argv[2]).read().splitlines()
lines[1:2] = ["stage %d, %s: failed (%s)" % (s["stage"], s["name"], s["reason"])]
open(sys.argv[2], "w").write("\n".join(lines) + "\n")
PY
    return 1
  fi
  if [ ! -s "$out/stage$n.json" ] || [ "$status" = 124 ]; then
    printf '{"stage": %d, "name": "stage %d", "status": "failed", "reason": %s}\n' "$n" "$n" \
      "$(json_string "gpu_stages.py exited $status: $(tail -c 400 "$out/stage$n-log.txt")")" >"$out/stage$n.json"
    echo "stage $n: failed (gpu_stages.py exited $status; see stage$n-log.txt)" >"$out/stage$n.txt"
    return 1
  fi
  [ "$status" = 0 ]
}

rc=0
ran=()
if wanted 1; then
  stage1 || rc=$?
  ran+=(1)
fi
# Later stages need a device: without one they are not attempted.
for n in 2 3 4; do
  wanted "$n" && [ "$rc" -ne 3 ] || continue
  if ! "$cli" devices 2>/dev/null | grep -q '^cuda:'; then
    rc=3
    [ -f "$out/stage1.txt" ] || stage1 >/dev/null 2>&1
    wanted 1 || ran+=(1)
  elif [ "$n" = 2 ]; then
    stage2 || rc=1
    ran+=(2)
  else
    rm -f "$out/stage$n.json"
    python_stage "$n" || rc=1
    ran+=("$n")
  fi
done
{
  echo "{\"kit\": $(json_string "$(cat "$here/VERSION" 2>/dev/null)"), \"exit\": $rc, \"stages\": ["
  first=1
  for n in "${ran[@]}"; do
    [ $first = 1 ] || echo ","
    first=0
    cat "$out/stage$n.json"
  done
  echo "]}"
} >"$out/summary.json"
# The first line: every goal of the stages that ran (3 and 4 have them), met or missed with
# its figure; the stages' own lines follow. Goals never change the exit status.
goals=$(python3 "$here/gpu_stages.py" goals-line "$out/summary.json" 2>/dev/null ||
        echo "GOALS ? (python3 could not read summary.json)")
{ echo "$goals"; for n in "${ran[@]}"; do grep -v '^GOALS ' "$out/stage$n.txt"; done; } >"$out/summary.txt"
cat "$out/summary.txt"
# A run on a GPU is the raw record of every figure it gives: a copy named for
# docs/gpu-runs/DATE-DEVICE-COMMIT.json, to be committed beside the figures quoted from it.
if [ "$rc" != 3 ]; then
  gpu_name=$("$cli" devices 2>/dev/null | grep -m1 '^cuda:' | awk -F'  ' '{print $2}')
  record=$(python3 -c 'import re, sys, time
commit = re.search(r"commit ([0-9a-f]+)", sys.argv[1])
device = re.sub(r"[^a-z0-9]+", "-", sys.argv[2].lower()).strip("-") or "gpu"
print("%s-%s-%s.json" % (time.strftime("%Y-%m-%d"), device, commit.group(1) if commit else "unknown"))' \
    "$(cat "$here/VERSION" 2>/dev/null)" "$gpu_name" 2>/dev/null)
  if [ -n "$record" ]; then
    mkdir -p "$out/gpu-runs" && cp "$out/summary.json" "$out/gpu-runs/$record"
    echo "raw record: $out/gpu-runs/$record (commit it as docs/gpu-runs/$record)"
  fi
fi
exit "$rc"
