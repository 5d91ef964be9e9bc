#!/usr/bin/env bash
# Portable fusescope-cli: the binary plus every shared library it needs that is neither
# glibc nor CUDA, with RPATH $ORIGIN/lib, so it runs on a headless GPU server without Qt,
# libonnx or protobuf installed. CUDA comes from the server's driver and toolkit.
#
#   make_cli_bundle.sh FUSESCOPE_CLI OUT_DIR [SAMPLE_MODEL]
# Writes OUT_DIR/fusescope-cli/ and OUT_DIR/fusescope-cli-linux-<arch>.tar.gz.
set -euo pipefail
cli=$1
out=$2
sample=${3:-}
command -v patchelf >/dev/null || { echo "make_cli_bundle: patchelf is required (apt install patchelf)" >&2; exit 1; }

root="$out/fusescope-cli"
rm -rf "$root"
mkdir -p "$root/lib"
cp "$cli" "$root/fusescope-cli"

# glibc and the dynamic loader must come from the host; so must the CUDA driver stack.
is_host_lib() {
  case "$1" in
    linux-vdso.so*|ld-linux*|libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|libresolv.so*) return 0 ;;
    libcuda.so*|libcudart.so*|libcublas*|libcudnn*|libnvrtc*|libnccl*|libcupti*|libnvToolsExt*|libnvJitLink*) return 0 ;;
  esac
  return 1
}

# Walk the dependency closure: ldd already resolves transitive libraries.
ldd "$cli" | while read -r name arrow path _; do
  [ "$arrow" = "=>" ] || continue
  if [ "$path" = "not" ]; then echo "make_cli_bundle: $name not found" >&2; exit 1; fi
  is_host_lib "$name" && continue
  cp -L "$path" "$root/lib/$name"
done

# The CUDA device plugin, when this build has one: it opens the GPU through the host's
# driver and cuBLASLt (lib/ is where fusescope-cli looks for it).
plugin="$(dirname "$cli")/libfsc_cuda_device.so"
if [ -f "$plugin" ]; then
  cp "$plugin" "$root/lib/libfsc_cuda_device.so"
fi

patchelf --set-rpath '$ORIGIN/lib' "$root/fusescope-cli"
for lib in "$root"/lib/*; do
  patchelf --set-rpath '$ORIGIN' "$lib"
done
if [ -n "$sample" ]; then
  mkdir -p "$root/models"
  cp "$sample" "$root/models/sample.onnx"
fi
cat > "$root/README.txt" <<'TXT'
fusescope-cli, portable bundle. Needs only glibc (and, for GPU runs, the NVIDIA driver).
  ./fusescope-cli inspect models/sample.onnx
  ./fusescope-cli devices
TXT
tarball="$out/fusescope-cli-linux-$(uname -m).tar.gz"
tar -C "$out" -czf "$tarball" fusescope-cli
echo "$tarball"
