#!/usr/bin/env bash
# Runs inside a clean Debian 12 root (tests/fresh_root/check_fresh_root.sh copies it in with
# the .debs in /debs): installs Fusescope as a user would, uses it from the installed paths,
# removes it, and checks nothing of it is left.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
# grep -q stops reading at the first match, and with pipefail the writer's SIGPIPE then fails
# the pipeline: read everything instead.
contains() { grep "$@" >/dev/null; }
fail() { echo "FAIL: $*" >&2; exit 1; }
sample=/usr/share/fusescope/models/sample.onnx

apt-get update -qq
# apt resolves the dependencies the packages declare (dpkg-shlibdeps's list) and nothing more.
apt-get install -y -qq --no-install-recommends /debs/*.deb >/dev/null
files=$(dpkg -L fusescope fusescope-cli | sort -u)

echo "-- the programs, with only the declared dependencies installed"
for bin in /usr/bin/fusescope-cli /usr/bin/fusescope; do
  [ -x "$bin" ] || fail "$bin is not installed"
  if ldd "$bin" | contains "not found"; then ldd "$bin" | grep "not found"; fail "$bin misses a library"; fi
done
fusescope-cli --version
fusescope-cli --version | sed -n 1p | contains -E '^fusescope-cli [0-9]+\.[0-9]+\.[0-9]+ \(commit [0-9a-f]{7,}' ||
  fail "fusescope-cli --version lacks the version or the commit"
fusescope --version | sed -n 1p | contains -E '^fusescope [0-9.]+ \(commit ' || fail "fusescope --version (no display) failed"
fusescope-cli inspect "$sample" | contains "top level" || fail "inspect"
fusescope-cli compile "$sample" --pipeline O2 | tee /tmp/compile.txt | tail -3
grep -q "attention-fusion" /tmp/compile.txt || fail "compile did not list its passes"
fusescope-cli run "$sample" --iterations 3 | tail -3
set +e
fusescope-cli inspect /etc/hostname 2>/tmp/err.txt
rc=$?
set -e
[ "$rc" = 2 ] && [ "$(wc -l </tmp/err.txt)" = 1 ] || fail "a bad model gave exit $rc and: $(cat /tmp/err.txt)"
set +e
fusescope 2>/tmp/err.txt
rc=$?
set -e
[ "$rc" = 2 ] && grep -q "no display" /tmp/err.txt || fail "fusescope without a display gave exit $rc: $(cat /tmp/err.txt)"

echo "-- man pages and completion"
zcat /usr/share/man/man1/fusescope-cli.1.gz | contains "profile" || fail "fusescope-cli(1) lacks the profile command"
zcat /usr/share/man/man1/fusescope.1.gz | contains "screenshot" || fail "fusescope(1) lacks --screenshot"
complete_words() {  # complete_words WORD... : what bash completion offers for the last word
  bash -c 'source /usr/share/bash-completion/completions/fusescope-cli
           COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _fusescope_cli; echo "${COMPREPLY[*]}"' _ "$@"
}
[ "$(complete_words fusescope-cli compi)" = compile ] || fail "completion of 'compi': $(complete_words fusescope-cli compi)"
complete_words fusescope-cli compile --pipe | contains -- "--pipeline" || fail "completion of 'compile --pipe'"

echo "-- a desktop: the window under Xvfb, the desktop entry, the file types"
# What a desktop has: the MIME and desktop databases (their triggers index our files) and gio,
# which file managers use to find a file's type and the application that opens it.
apt-get install -y -qq --no-install-recommends xvfb xauth desktop-file-utils shared-mime-info libglib2.0-bin >/dev/null
desktop-file-validate /usr/share/applications/fusescope.desktop
for size in 16 32 48 256; do [ -s "/usr/share/icons/hicolor/${size}x${size}/apps/fusescope.png" ] || fail "no ${size}px icon"; done
cd /tmp
cp "$sample" model.onnx
fusescope-cli profile model.onnx --iterations 2 -o runs.fsdb >/dev/null
for file in model.onnx:application/x-onnx runs.fsdb:application/x-fusescope-run-store; do
  type=$(gio info -a standard::content-type "${file%%:*}" | sed -n 's/.*standard::content-type: //p')
  [ "$type" = "${file#*:}" ] || fail "${file%%:*} is '$type', not ${file#*:}"
  gio mime "$type" | contains "Default application.*fusescope.desktop" || fail "$type does not open in Fusescope: $(gio mime "$type")"
done
xvfb-run -a -s "-screen 0 1600x1000x24" fusescope "$sample" --screenshot /installed-screenshot.png | tee /tmp/shot.json
[ "$(stat -c %s /installed-screenshot.png)" -gt 20000 ] || fail "the screenshot is empty"

echo "-- removal"
dpkg -r fusescope fusescope-cli >/dev/null
left=""
while read -r f; do
  [ -z "$f" ] || [ -d "$f" ] || [ ! -e "$f" ] || left+="$f "
done <<<"$files"
[ -z "$left" ] || fail "dpkg -r left: $left"
dpkg-query -W -f='${Status}\n' fusescope fusescope-cli 2>/dev/null | contains "install ok" && fail "still installed"
[ ! -e /usr/share/mime/application/x-onnx.xml ] || fail "the MIME database still knows .onnx after removal"
echo "installed, used and removed cleanly"
