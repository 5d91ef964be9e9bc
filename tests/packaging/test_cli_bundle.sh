#!/usr/bin/env bash
# Builds the portable CLI bundle, unpacks it into an empty folder and runs it with a
# cleared environment: every non-glibc library must resolve from inside the bundle.
set -euo pipefail
make_bundle=$1 cli=$2 sample=$3 work=$4
rm -rf "$work" && mkdir -p "$work/build" "$work/empty"
tarball=$(bash "$make_bundle" "$cli" "$work/build" "$sample" | tail -1)
tar -C "$work/empty" -xzf "$tarball"
bin="$work/empty/fusescope-cli/fusescope-cli"

deps=$(env -i LD_LIBRARY_PATH= ldd "$bin")
echo "$deps"
if echo "$deps" | grep "not found" >/dev/null; then echo "FAIL: unresolved libraries" >&2; exit 1; fi
for lib in libonnx libprotobuf libstdc++; do
  line=$(echo "$deps" | awk -v lib="$lib" 'index($0, lib) && !seen { print; seen = 1 }')
  case "$line" in
    *"$work/empty/fusescope-cli/lib/"*) ;;
    *) echo "FAIL: $lib does not come from the bundle: $line" >&2; exit 1 ;;
  esac
done
if echo "$deps" | grep -i "libQt" >/dev/null; then echo "FAIL: Qt in the CLI bundle" >&2; exit 1; fi

out=$(cd "$work/empty/fusescope-cli" && env -i PATH=/usr/bin:/bin ./fusescope-cli inspect models/sample.onnx)
echo "$out"
echo "$out" | grep "nodes         42 top level" >/dev/null || { echo "FAIL: unexpected inspect output" >&2; exit 1; }
set +e
(cd "$work/empty/fusescope-cli" && env -i ./fusescope-cli inspect README.txt 2>/dev/null)
rc=$?
set -e
[ "$rc" = 2 ] || { echo "FAIL: a bad model gave exit $rc, not 2" >&2; exit 1; }
echo "bundle OK"
