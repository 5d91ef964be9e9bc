#!/usr/bin/env bash
# What the .deb installs for desktops and shells, checked in the build tree on every run (the
# fresh-root check installs the real package): the generated man pages name every command and
# option, bash completion completes commands and options, the desktop entry and MIME types are
# valid, and every icon size was rendered.
#   test_desktop_integration.sh SOURCE_DIR GENERATED_DIR FUSESCOPE_CLI
set -euo pipefail
src=$1 gen=$2 cli=$3
# grep -q stops reading at the first match, and with pipefail the writer's SIGPIPE then fails
# the pipeline: read everything instead.
contains() { grep "$@" >/dev/null; }
fail() { echo "FAIL: $*" >&2; exit 1; }

page=$(zcat "$gen/fusescope-cli.1.gz" | sed 's/\\-/-/g')  # troff writes - as \-
for command in inspect dump export compile run profile devices; do
  echo "$page" | contains "^\.SS $command$" || fail "fusescope-cli(1) has no section for $command"
done
for option in --pipeline --quantize --iterations --trace --external-data; do
  echo "$page" | contains -- "$option" || fail "fusescope-cli(1) does not mention $option"
done
echo "$page" | contains "^\.SH \"EXIT STATUS\"" || fail "fusescope-cli(1) has no EXIT STATUS"
if [ -f "$gen/fusescope.1.gz" ]; then
  zcat "$gen/fusescope.1.gz" | contains "screenshot" || fail "fusescope(1) lacks --screenshot"
fi

complete_words() {  # what the completion offers for the last of WORDS
  bash -c 'source "$0"; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _fusescope_cli; echo "${COMPREPLY[*]}"' \
    "$gen/fusescope-cli.bash" "$@"
}
[ "$(complete_words fusescope-cli pro)" = profile ] || fail "'pro' completes to '$(complete_words fusescope-cli pro)'"
[ "$(complete_words fusescope-cli run --iter)" = --iterations ] || fail "'run --iter' completes wrongly"
[ "$(complete_words fusescope-cli compile --pipeline O)" = "O0 O1 O2 O3" ] || fail "--pipeline values"
# Every option the CLI's help names for compile is offered.
for option in $("$cli" compile --help | grep -oE '(^|[ [,])--[a-z][a-z0-9-]*' | sed -E 's/^[ [,]//' | sort -u); do
  complete_words fusescope-cli compile "$option" | contains -w -- "$option" || fail "compile $option is not completed"
done

if [ -d "$gen/icons" ]; then
  for size in 16 22 24 32 48 64 128 256; do
    png="$gen/icons/${size}x${size}/apps/fusescope.png"
    [ -s "$png" ] || fail "no ${size}px icon"
    # PNG header: width and height, big-endian, at bytes 16..23.
    dims=$(od -An -tu1 -j16 -N8 "$png" | awk '{print $3*256+$4 "x" $7*256+$8}')
    [ "$dims" = "${size}x${size}" ] || fail "the ${size}px icon is $dims"
  done
fi
desktop-file-validate "$src/packaging/desktop/fusescope.desktop"
python3 - "$src/packaging/desktop/fusescope-mime.xml" "$src/packaging/desktop/fusescope.desktop" <<'PY'
import sys, xml.etree.ElementTree as ET
ns = {"m": "http://www.freedesktop.org/standards/shared-mime-info"}
types = {t.get("type"): [g.get("pattern") for g in t.findall("m:glob", ns)] for t in ET.parse(sys.argv[1]).findall("m:mime-type", ns)}
assert types == {"application/x-onnx": ["*.onnx"], "application/x-fusescope-run-store": ["*.fsdb"]}, types
entry = open(sys.argv[2]).read()
listed = [l.split("=", 1)[1] for l in entry.splitlines() if l.startswith("MimeType=")][0].strip(";").split(";")
assert sorted(listed) == sorted(types), (listed, types)
PY
echo "man pages, completion, icons, desktop entry and MIME types are in order"
