#!/usr/bin/env bash
# Regenerates the README's overview picture (docs/images/overview.png): resnet50, exported
# from Debian's torchvision with random weights (nothing is downloaded), after O2, timed on
# the CPU, with the heat overlay, drawn on a real X server (Xvfb) at the window's default size.
#   readme-screenshots.sh [BUILD_DIR]   (default: build, the dev preset's folder)
# Needs the build and the test packages (bash scripts/install-deps.sh --test).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
gui=$build/app/gui/fusescope
[ -x "$gui" ] || { echo "readme-screenshots: $gui is not built (cmake --build --preset dev)" >&2; exit 1; }
cache=$build/model-cache
[ -f "$cache/resnet50.onnx" ] || python3 tests/models/export_models.py "$cache"
home=$(mktemp -d)  # fresh settings: no remembered palette or layout
trap 'rm -rf "$home"' EXIT
HOME="$home" XDG_CONFIG_HOME="$home/.config" xvfb-run -a -s "-screen 0 1600x1000x24" "$gui" "$cache/resnet50.onnx" --screenshot docs/images/overview.png \
  --run --expand-depth 2
echo "wrote docs/images/overview.png"
