#!/usr/bin/env bash
# The GUI's screenshots for docs/images, on real (Xvfb) screens of a laptop's and a
# desktop's size, at scale 1 and 2, in the light and the dark palette:
#   heat     the canvas with a run's heat overlay (and the Run dock)
#   compare  the step before attention/conv fusion beside the one after
#   timeline the run's timeline dock
#   fused    the properties of a fused node
# Each picture is the whole window as it opens on that screen, fresh settings each time.
# usage: scripts/screenshots.sh BUILD_DIR [OUT_DIR] [MODEL]
#   OUT_DIR defaults to docs/images/layout, MODEL to the bundled sample.
# Needs xvfb-run (scripts/install-deps.sh installs it).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:?usage: scripts/screenshots.sh BUILD_DIR [OUT_DIR] [MODEL]}" && pwd)
out=${2:-$root/docs/images/layout}
model=${3:-}
gui="$build/app/gui/fusescope"
mkdir -p "$out"
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT

# name, screen (the X screen's pixels), scale
screens=("1366x768 1366x768 1" "1920x1080 1920x1080 1" "scale2 2732x1536 2")
views=("heat --run --dock run" "compare --compare --pass attention-fusion" "timeline --run --dock timeline"
       "fused --select /conv_block/conv/Conv")
for screen in "${screens[@]}"; do
  read -r name pixels scale <<<"$screen"
  for palette in light dark; do
    for view in "${views[@]}"; do
      read -r what args <<<"$view"
      file="$out/${name}_${palette}_${what}.png"
      rm -rf "$home"/.config
      # shellcheck disable=SC2086  # args are words
      HOME="$home" QT_QPA_PLATFORM=xcb QT_SCALE_FACTOR="$scale" \
        xvfb-run -a -s "-screen 0 ${pixels}x24" "$gui" --screenshot "$file" --palette "$palette" $args ${model:+"$model"} \
        >/dev/null
      echo "$file"
    done
  done
done
