#!/usr/bin/env bash
# Fusescope's device kit: verifies the GPU side on a machine with an NVIDIA GPU in stages,
# and writes summary.json and summary.txt into --out DIR (default: beside this script).
#   run.sh STAGE|all [--out DIR]
# Stages:
#   1  the device and the libraries: driver, GPU, the CUDA libraries found (the toolkit, or
#      PyTorch's nvidia/*/lib folders), what fusescope-cli sees.
# Exit status: 0 when every stage run passed, 1 when one failed, 3 when there is no usable
# CUDA device (no driver, no GPU): the summary says why. 64 for a bad command line.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
stage="" out=$here
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=${2:?--out needs DIR}; shift 2 ;;
    1|all) stage=$1; shift ;;
    *) echo "usage: run.sh 1|all [--out DIR]" >&2; exit 64 ;;
  esac
done
[ -n "$stage" ] || { echo "usage: run.sh 1|all [--out DIR]" >&2; exit 64; }
mkdir -p "$out"
cli=$here/fusescope-cli

json_string() {  # a JSON string literal of $1
  local s=${1//\\/\\\\}
  s=${s//\"/\\\"}
  s=${s//$'\t'/ }
  printf '"%s"' "${s//$'\n'/\\n}"
}

# CUDA's libraries: the toolkit's, else PyTorch's wheels' (nvidia/<lib>/lib).
cuda_libs="none found"
for dir in "${CUDA_HOME:-/usr/local/cuda}/lib64" /usr/local/cuda/lib64; do
  if [ -e "$dir/libcudart.so" ] || ls "$dir"/libcublas.so* >/dev/null 2>&1; then
    export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    cuda_libs="toolkit: $dir"
    break
  fi
done
if [ "$cuda_libs" = "none found" ] && command -v python3 >/dev/null; then
  nvidia=$(python3 -c 'import nvidia, os; print(os.pathsep.join(nvidia.__path__))' 2>/dev/null || true)
  if [ -n "$nvidia" ]; then
    dirs=$(ls -d "${nvidia%%:*}"/*/lib 2>/dev/null | tr '\n' ':')
    if [ -n "$dirs" ]; then
      export LD_LIBRARY_PATH="${dirs%:}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
      cuda_libs="PyTorch's wheels: ${nvidia%%:*}/*/lib"
    fi
  fi
fi

stage1() {
  local version devices gpu torch status reason=""
  version=$("$cli" --version 2>&1)
  devices=$("$cli" devices 2>&1)
  gpu="nvidia-smi: not installed"
  command -v nvidia-smi >/dev/null && gpu=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1)
  torch=$(python3 -c 'import torch; print(torch.__version__, "CUDA", torch.version.cuda)' 2>/dev/null || echo "not installed")
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
    printf ' "nvidia_smi": %s,\n "cuda_libraries": %s,\n "pytorch": %s}\n' \
      "$(json_string "$gpu")" "$(json_string "$cuda_libs")" "$(json_string "$torch")"
  } >"$out/stage1.json"
  {
    echo "stage 1, device and libraries: $status${reason:+ ($reason)}"
    echo "  fusescope:      $(echo "$version" | head -1)"
    echo "$devices" | sed 's/^/  devices:        /' 
    echo "  nvidia-smi:     $gpu"
    echo "  CUDA libraries: $cuda_libs"
    echo "  PyTorch:        $torch"
  } >"$out/stage1.txt"
  case "$status" in passed) return 0 ;; no_device) return 3 ;; *) return 1 ;; esac
}

rc=0
stage1 || rc=$?
# Later stages (kernels against their CPU twins, CUPTI, the benchmark) join here as the CUDA
# backend is built; without a device nothing after stage 1 can run.
{ echo "{\"kit\": $(json_string "$(cat "$here/VERSION" 2>/dev/null)"), \"exit\": $rc, \"stages\": ["; cat "$out/stage1.json"; echo "]}"; } >"$out/summary.json"
cat "$out/stage1.txt" >"$out/summary.txt"
cat "$out/summary.txt"
exit "$rc"
