#!/usr/bin/env bash
# Installs Fusescope's build and test dependencies from Debian 12's packages.
#   install-deps.sh          what building, running and packaging (.deb: help2man for the man
#                            pages, dpkg-dev and file for CPack's dependency computation) need
#   install-deps.sh --test   plus what the test suite needs (python3-onnx, torch, clang,
#                            Xvfb for the GUI screenshot, Chromium for the HTML report)
# The CUDA toolkit is not a Debian package here: it is used when /usr/local/cuda exists.
set -euo pipefail
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
# libdnnl-dev's CMake configuration requires OpenCL, which the package only recommends.
packages=(cmake ninja-build g++ pkg-config libonnx-dev libprotobuf-dev protobuf-compiler
          nlohmann-json3-dev libcli11-dev qt6-base-dev qt6-svg-dev libgraphviz-dev libsqlite3-dev patchelf
          libdnnl-dev ocl-icd-opencl-dev help2man dpkg-dev file lld)
if [ "${1:-}" = "--test" ]; then
  packages+=(python3-onnx python3-numpy python3-torch python3-torchvision libonnx-testdata
             clang-14 libclang-rt-14-dev libomp-14-dev xvfb xauth chromium desktop-file-utils ccache)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep "install ok installed" >/dev/null || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
