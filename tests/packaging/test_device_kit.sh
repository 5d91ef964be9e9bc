#!/usr/bin/env bash
# The device kit as the GPU machine receives it: built from this build tree, unpacked into an
# empty folder, run with a cleared environment. Without a GPU (CI, every development machine
# so far) stage 1 must exit 3 and its summary say why; with one it must pass.
#   test_device_kit.sh SOURCE_DIR BUILD_DIR WORK_DIR
set -euo pipefail
src=$1 build=$2 work=$3
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$work" && mkdir -p "$work/unpacked"
tarball=$(bash "$src/scripts/device-kit.sh" "$work" "$build" | tail -1 | cut -d' ' -f1)
tar -C "$work/unpacked" -xzf "$tarball"
kit=$work/unpacked/fusescope-device-kit
[ -x "$kit/run.sh" ] && [ -x "$kit/fusescope-cli" ] && [ -f "$kit/models/sample.onnx" ] || fail "the kit lacks its parts"
# Unpacked, the kit must fit a small disk: the huge fixture's hole has to stay a hole.
used_kib=$(du -sk "$kit" | cut -f1)
[ "$used_kib" -le $((256 * 1024)) ] || fail "the unpacked kit takes $((used_kib / 1024)) MiB of disk"

set +e
env -i PATH=/usr/bin:/bin HOME="$work" bash "$kit/run.sh" 1 --out "$work/out"
rc=$?
set -e
summary=$work/out/summary.json
python3 - "$summary" "$rc" <<'PY'
import json, sys
summary, rc = json.load(open(sys.argv[1])), int(sys.argv[2])
stage = summary["stages"][0]
assert summary["exit"] == rc, (summary["exit"], rc)
assert stage["stage"] == 1 and stage["fusescope"].startswith("fusescope-cli "), stage
if stage["status"] == "no_device":
    assert rc == 3, f"no device but exit {rc}"
    assert stage["reason"], "no reason given"
else:
    assert stage["status"] == "passed" and rc == 0, (stage["status"], rc)
print("device kit stage 1:", stage["status"], "-", stage["reason"] or stage["devices"])
PY
grep -q "stage 1, device and libraries: " "$work/out/summary.txt" || fail "summary.txt"
head -1 "$work/out/summary.txt" | grep -qE '^GOALS [0-9]+/[0-9]+ met' || fail "summary.txt's first line is not the goals"
set +e
bash "$kit/run.sh" 9 >/dev/null 2>&1
[ $? = 64 ] || fail "an unknown stage is not a usage error"

# Every stage without a device: stage 1 says why, the later stages are not attempted.
set +e
env -i PATH=/usr/bin:/bin HOME="$work" bash "$kit/run.sh" all --out "$work/all" >/dev/null 2>&1
rc=$?
set -e
# 3 (no device) and 0 (every stage passed on a GPU) are the only answers; anything else,
# a crash or a failed stage included, fails here.
case "$rc" in
  0|3) ;;
  *) tail -20 "$work/all/summary.txt" 2>/dev/null; fail "run.sh all exited $rc (only 0 or 3 are expected)" ;;
esac
python3 - "$work/all/summary.json" "$rc" <<'PY'
import json, sys
s, rc = json.load(open(sys.argv[1])), int(sys.argv[2])
assert s["exit"] == rc, (s["exit"], rc)
if rc == 3:
    assert [st["stage"] for st in s["stages"]] == [1], s
else:
    assert s["stages"] and all(st["status"] == "passed" for st in s["stages"]), s["stages"]
PY

# The kit's CUDA backend tests run from the unpacked kit with its own libraries, here on
# the simulated device (on a GPU machine run.sh 2 runs them with FUSESCOPE_TEST_DEVICE=gpu).
[ -f "$kit/lib/libfsc_cuda_device.so" ] || [ ! -f "$build/app/libfsc_cuda_device.so" ] || fail "the kit lacks the CUDA device plugin"
env -i PATH=/usr/bin:/bin HOME="$work" FUSESCOPE_FIXTURE_DIR="$kit/models/fixtures" \
  FUSESCOPE_SAMPLE_MODEL="$kit/models/sample.onnx" "$kit/tests/tst_cuda_backend" >"$work/kit-tests.txt" 2>&1 ||
  { tail -20 "$work/kit-tests.txt"; fail "tst_cuda_backend from the kit failed on the simulated device"; }
contains() { grep "$@" >/dev/null; }
contains -E '^Totals: [0-9]+ passed, 0 failed' "$work/kit-tests.txt" || fail "no totals from the kit's tests"
echo "device kit: $(grep '^Totals' "$work/kit-tests.txt")"

# Stage 2's end-to-end check compares whole outputs: the simulated device's against the CPU's
# pass, and one value changed fails.
FUSESCOPE_DEVICE=simulated "$kit/fusescope-cli" run "$kit/models/sample.onnx" --backend cuda --output-dir "$work/e2e-cuda" >/dev/null
"$kit/fusescope-cli" run "$kit/models/sample.onnx" --output-dir "$work/e2e-cpu" >/dev/null
python3 "$kit/gpu_stages.py" compare-outputs "$work/e2e-cuda" "$work/e2e-cpu" >/dev/null || fail "compare-outputs: the simulated device's sample outputs differ"
python3 - "$work/e2e-cuda/output_0.pb" <<'PY'
import struct, sys
data = bytearray(open(sys.argv[1], "rb").read())
at = len(data) - 4  # the last float32 of raw_data, the file's last field
value = struct.unpack_from("<f", data, at)[0]
struct.pack_into("<f", data, at, value + 1.0)
open(sys.argv[1], "wb").write(bytes(data))
PY
set +e
python3 "$kit/gpu_stages.py" compare-outputs "$work/e2e-cuda" "$work/e2e-cpu" >/dev/null
[ $? = 1 ] || fail "compare-outputs accepts a changed output value"
set -e

# Stage 2's N-way compare, as the kit runs it, on the simulated device: every variant within
# its error limit; an error planted over the limit fails the check.
FUSESCOPE_DEVICE=simulated "$kit/fusescope-cli" compare "$kit/models/sample.onnx" --variants cpu/fp32,cuda/fp32,cuda/fp16 \
  --rounds 1 --iterations 2 --json >"$work/compare.json" 2>"$work/compare.err" || { tail -3 "$work/compare.err"; fail "compare on the simulated device"; }
python3 "$kit/gpu_stages.py" compare-check "$work/compare.json" >"$work/compare-check.txt" ||
  fail "compare-check: $(cat "$work/compare-check.txt")"
grep -q "^3 variants, " "$work/compare-check.txt" || fail "compare-check's line: $(cat "$work/compare-check.txt")"
python3 - "$work/compare.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["variants"][1]["output_error"] = 0.5
json.dump(d, open(sys.argv[1], "w"))
PY
set +e
python3 "$kit/gpu_stages.py" compare-check "$work/compare.json" >/dev/null
[ $? = 1 ] || fail "compare-check accepts cuda/fp32 at an output error of 0.5"
set -e

# Stage 3 without a device is not attempted: exit 3, stage 1's reason.
if [ "$rc" = 3 ]; then
  set +e
  env -i PATH=/usr/bin:/bin HOME="$work" bash "$kit/run.sh" 3 --out "$work/three" >/dev/null 2>&1
  [ $? = 3 ] || fail "run.sh 3 without a device does not exit 3"
  set -e
fi
# Stages 3 and 4's plumbing (export, fusescope-cli profile/run, PyTorch timing, summaries)
# from the unpacked kit on a tiny model, the CPU and the simulated device.
for n in 3 4; do
  set +e
  env -i PATH=/usr/bin:/bin HOME="$work" python3 "$kit/gpu_stages.py" "$n" --self-test --cli "$kit/fusescope-cli" \
    --out "$work/self-test" >"$work/self-test-$n.log" 2>&1
  status=$?
  set -e
  python3 - "$work/self-test/stage$n.json" "$status" <<'PY'
import json, sys
s, status = json.load(open(sys.argv[1])), int(sys.argv[2])
if s["status"] == "skipped":  # no PyTorch here
    assert status == 3 and "PyTorch" in s["reason"], s
else:
    assert s["status"] == "passed" and status == 0, s
    assert len(s["cases"]) == 2 and all("error" not in c for c in s["cases"]), s["cases"]
    # Goals are counted apart from correctness, each with its figure and target.
    assert s["goals"] == sum(len(c["goals"]) for c in s["cases"]) > 0, s
    assert all({"goal", "figure", "target", "met"} <= set(g) for c in s["cases"] for g in c["goals"]), s["cases"]
    for c in s["cases"]:
        if s["stage"] == 3:
            assert c["kernels"] > 0 and c["unattributed_kernels"] == 0 and c["report_bytes"] > 1000, c
        else:
            assert c["fusescope"]["median_ms"] > 0 and c["eager"]["median_ms"] > 0 and c["fusescope"]["steps_on_device"] > 0, c
            # Each case records which route cuDNN gave its convolutions and attention.
            assert {"conv_graph", "conv_legacy", "attention_fused", "attention_gemms"} <= set(c["fusescope"]["cudnn_routes"]), c
            # The same input through PyTorch and Fusescope, the whole outputs compared.
            assert c["output"]["ok"] and c["output"]["max_rel_error"] <= c["output"]["limit"], c["output"]
            assert c["fusescope_host"]["median_ms"] > 0 and c["eager_host"]["median_ms"] > 0, c
print("device kit stage %d self-test: %s, %d/%d goals met" % (s["stage"], s["status"], s["goals_met"], s["goals"]))
PY
  head -1 "$work/self-test/stage$n.txt" | grep -qE '^GOALS [0-9]+/[0-9]+ met' || fail "stage $n's summary does not open with its goals"
done
