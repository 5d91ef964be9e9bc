#!/usr/bin/env bash
# Builds the device kit: everything needed to verify Fusescope's GPU side on a lent GPU
# machine in one command, as one self-contained tarball (at most 48 MiB).
#   scripts/device-kit.sh OUTDIR [BUILD_DIR]     (BUILD_DIR: a built dev preset, default build)
# writes OUTDIR/fusescope-device-kit.tar.gz holding fusescope-device-kit/:
#   fusescope-cli, lib/ (every library it and the tests need but glibc's and CUDA's, and the
#   CUDA device plugin), tests/ (the CUDA backend's test binary), models/ (the sample and the
#   good fixture models), run.sh (the entry script: `run.sh STAGE|all [--out DIR]`) and
#   gpu_stages.py (stages 3 and 4, which need the machine's PyTorch).
# CUDA's libraries come from the GPU machine (its toolkit, or PyTorch's nvidia/*/lib).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: device-kit.sh OUTDIR [BUILD_DIR]}
build=${2:-$src/build}
cli=$build/app/fusescope-cli
[ -x "$cli" ] || { echo "device-kit: $cli is not built (cmake --build --preset dev)" >&2; exit 1; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The CLI with its libraries, as the portable bundle carries them.
bash "$src/packaging/make_cli_bundle.sh" "$cli" "$work" "$src/resources/models/sample.onnx" >/dev/null
kit=$work/fusescope-device-kit
mv "$work/fusescope-cli" "$kit"
rm -f "$kit/README.txt"
# The CUDA backend's tests, run there with FUSESCOPE_TEST_DEVICE=gpu, with the libraries
# they need beyond the CLI's (Qt's core and test libraries).
test_bin=$build/tests/tst_cuda_backend
[ -x "$test_bin" ] || { echo "device-kit: $test_bin is not built (cmake --build --preset dev)" >&2; exit 1; }
mkdir -p "$kit/tests"
cp "$test_bin" "$kit/tests/"
ldd "$test_bin" | while read -r name arrow path _; do
  [ "$arrow" = "=>" ] || continue
  case "$name" in
    linux-vdso.so*|ld-linux*|libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|libresolv.so*) continue ;;
    libcuda.so*|libcudart.so*|libcublas*|libcudnn*|libnvrtc*|libnccl*|libcupti*) continue ;;
  esac
  [ -e "$kit/lib/$name" ] || cp -L "$path" "$kit/lib/$name"
done
patchelf --set-rpath '$ORIGIN/../lib' "$kit/tests/tst_cuda_backend"
for lib in "$kit"/lib/*; do patchelf --set-rpath '$ORIGIN' "$lib"; done
# Debug information would take the kit past its size: the kit is for running, not debugging.
strip --strip-unneeded "$kit/fusescope-cli" "$kit"/lib/* "$kit/tests/tst_cuda_backend"
if [ -d "$build/tests/fixtures/good" ]; then
  mkdir -p "$kit/models/fixtures"
  cp -r --sparse=always "$build/tests/fixtures/good" "$kit/models/fixtures/good"
fi
cp "$src/packaging/device_kit/run.sh" "$src/packaging/device_kit/gpu_stages.py" "$kit/"
chmod +x "$kit/run.sh"
"$cli" --version | head -1 >"$kit/VERSION"

tarball=$out/fusescope-device-kit.tar.gz
# --sparse: the huge fixture's 2.4 GB of external data is one hole; stored dense it would
# fill the disk of whoever unpacks the kit.
tar --sparse -C "$work" -czf "$tarball" fusescope-device-kit
size=$(stat -c %s "$tarball")
limit=$((48 * 1024 * 1024))
[ "$size" -le "$limit" ] || { echo "device-kit: $tarball is $size bytes, over the 48 MiB limit" >&2; exit 1; }
echo "$tarball ($((size / 1024)) KiB)"
