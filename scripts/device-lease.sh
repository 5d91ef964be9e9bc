#!/usr/bin/env bash
# One call of a lent GPU machine (the device tool's `run`, with .kit carried): unpacks the kit
# that scripts/device-kit.sh built into .kit/, runs it with these arguments, and leaves what
# comes back in $OUT: summary.txt, summary.json, the raw record for docs/gpu-runs/, and
# kit-out.tar.gz (every stage's files but the exported models and the run store).
#   scripts/device-lease.sh all --deadline 500
# A later call on the same warm machine may pass --reuse to run from the kit unpacked before.
set -uo pipefail
work=/tmp/fusescope-kit
if [ "${1:-}" = --reuse ] && [ -x "$work/fusescope-device-kit/run.sh" ]; then
  shift
else
  [ "${1:-}" = --reuse ] && shift
  rm -rf "$work" && mkdir -p "$work"
  tar -C "$work" -xzf .kit/fusescope-device-kit.tar.gz || { echo "device-lease: no kit in .kit/" >&2; exit 1; }
fi
out=$work/out-$(date +%H%M%S)
export PYTHONUNBUFFERED=1
bash "$work/fusescope-device-kit/run.sh" "$@" --out "$out"
rc=$?
cp "$out"/summary.json "$out"/summary.txt "$OUT"/ 2>/dev/null
cp "$out"/gpu-runs/*.json "$OUT"/ 2>/dev/null
# Outputs, traces and reports are large and remade by any rerun; the CSVs and logs explain it.
tar -C "$out" --exclude=./models --exclude='*.fsdb' --exclude='*.onnx' --exclude='*.html' --exclude='*-outputs' \
  --exclude='stage3-*.json' -czf "$OUT/kit-out.tar.gz" .
ls -la "$OUT"
exit $rc
