#!/usr/bin/env bash
# README command 1: install, build, and run the main job on the bundled sample model:
# the GUI when a display exists, otherwise the CLI's model summary.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
  exec build-release/app/gui/fusescope
fi
exec build-release/app/fusescope-cli inspect resources/models/sample.onnx
