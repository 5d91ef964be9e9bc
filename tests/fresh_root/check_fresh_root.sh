#!/usr/bin/env bash
# The fresh-machine check CI runs on every submission. On Debian 12 roots that share no
# installed package with this machine (scripts/fresh-root.sh) it proves:
#  1. README command 1, `bash scripts/run-sample.sh`, exactly as written: it installs what it
#     needs, configures, builds, and (no display there) prints the sample model's summary;
#  2. the .debs, built in that root by `cmake --build --preset release --target package`,
#     so dpkg-shlibdeps sees only what scripts/install-deps.sh installed;
#  3. installing them into a second clean root with apt (which fetches the dependencies they
#     declare and nothing else), the installed programs working from their installed paths,
#     and `dpkg -r` leaving none of their files behind (tests/fresh_root/installed_check.sh).
#
#   check_fresh_root.sh [--command2] [--keep]
#     --command2  run README command 2 (scripts/run-tests.sh) in the first root instead of
#                 command 1 and stop there: the by-hand check of the test set-up (long)
#     --keep      leave the roots in place (their paths are printed)
# Needs root and the network. Figures and the installed app's screenshot go to
# $FUSESCOPE_FRESH_ROOT_OUT (default: build/fresh-root).
# The host's compiler cache ($FUSESCOPE_HOST_CCACHE, default build-ccache, which
# scripts/run-tests.sh fills) is lent to the first root read-only, with ccache installed there:
# the release preset compiles with the dev preset's flags, so an object whose compiler, flags,
# source and headers are the same in the root comes from the cache; any that differ (a header
# or package the root lacks or has in another version) compiles, or fails, in the root.
set -euo pipefail
# grep -q stops reading at the first match, and with pipefail the writer's SIGPIPE then fails
# the pipeline: read everything instead.
contains() { grep "$@" >/dev/null; }
src=$(cd "$(dirname "$0")/../.." && pwd)
command2=0 keep=0
for a in "$@"; do
  case "$a" in
    --command2) command2=1 ;;
    --keep) keep=1 ;;
    *) echo "usage: check_fresh_root.sh [--command2] [--keep]" >&2; exit 64 ;;
  esac
done
fresh_root="bash $src/scripts/fresh-root.sh"
out=${FUSESCOPE_FRESH_ROOT_OUT:-$src/build/fresh-root}
mkdir -p "$out"
out=$(cd "$out" && pwd)

if ! command -v debootstrap >/dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
fi

work=$(mktemp -d /var/tmp/fusescope-fresh.XXXXXX)
cleanup() {
  if [ "$keep" = 1 ]; then echo "fresh-root: kept $work"; return; fi
  $fresh_root remove "$work/build-root" 2>/dev/null || true
  $fresh_root remove "$work/install-root" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

started=$SECONDS
phase_start=$SECONDS
phase() {  # phase NAME: prints and records how long the step before took
  local now=$SECONDS
  printf '%-28s %5d s\n' "$1" $((now - phase_start)) | tee -a "$out/timings.txt"
  phase_start=$now
}
: >"$out/timings.txt"

# The CUDA toolkit is not a Debian package: these machines carry it in /usr/local/cuda, so the
# roots see it (read-only) the way a fresh machine of this kind would.
export FRESH_ROOT_BIND="/usr/local/cuda"
host_ccache=${FUSESCOPE_HOST_CCACHE:-$src/build-ccache}
cache_env=()
if [ -d "$host_ccache" ]; then
  FRESH_ROOT_BIND+=" $host_ccache"
  cache_env=(CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache CCACHE_DIR="$host_ccache"
             CCACHE_READONLY=1 CCACHE_TEMPDIR=/tmp CCACHE_BASEDIR=/src CCACHE_NOHASHDIR=1)
fi

echo "== a clean Debian 12 root"
$fresh_root create "$work/build-root"
tar -C "$work/build-root" -cf "$work/pristine.tar" .  # the second root starts from the same clean state
phase "debootstrap"

echo "== the sources, as a clean clone holds them (tracked and unignored files)"
mkdir -p "$work/build-root/src"
(cd "$src" && git ls-files -z --cached --others --exclude-standard |
  tar --null --ignore-failed-read -T - -cf - 2>/dev/null) | tar -C "$work/build-root/src" -xf -
commit=$(git -C "$src" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)

if [ "$command2" = 1 ]; then
  echo "== README command 2: bash scripts/run-tests.sh"
  $fresh_root run "$work/build-root" env FUSESCOPE_GIT_COMMIT="$commit" CI=true \
    bash -c 'cd /src && bash scripts/run-tests.sh' </dev/null
  phase "README command 2"
  echo "fresh-root: README command 2 passed in a fresh root in $((SECONDS - started)) s"
  exit 0
fi

if [ ${#cache_env[@]} -gt 0 ]; then
  echo "== ccache in the root, reading the host's cache"
  $fresh_root run "$work/build-root" bash -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -qq --no-install-recommends ccache >/dev/null' </dev/null
fi

echo "== README command 1: bash scripts/run-sample.sh"
$fresh_root run "$work/build-root" env FUSESCOPE_GIT_COMMIT="$commit" "${cache_env[@]}" \
  bash -c 'cd /src && bash scripts/run-sample.sh' </dev/null | tee "$out/command1.txt"
grep -q "sample.onnx" "$out/command1.txt" || { echo "FAIL: README command 1 did not print the sample's summary" >&2; exit 1; }
phase "README command 1"

echo "== the .debs: cmake --build --preset release --target package"
$fresh_root run "$work/build-root" env FUSESCOPE_GIT_COMMIT="$commit" "${cache_env[@]}" \
  bash -c 'cd /src && cmake --build --preset release --target package' </dev/null |
  tail -5
debs=("$work"/build-root/src/build-release/*.deb)
[ -e "${debs[0]}" ] || { echo "FAIL: the package target wrote no .deb" >&2; exit 1; }
for d in "${debs[@]}"; do
  echo "$(basename "$d"): $(dpkg-deb -f "$d" Depends)"
  cp "$d" "$out/"
done
cli_deb=$(ls "$work"/build-root/src/build-release/fusescope-cli_*.deb)
if dpkg-deb -f "$cli_deb" Depends | contains -i qt; then echo "FAIL: fusescope-cli depends on Qt" >&2; exit 1; fi
phase "package"
$fresh_root remove "$work/build-root"

echo "== install into a second clean root, use, remove"
mkdir -p "$work/install-root"
tar -C "$work/install-root" -xf "$work/pristine.tar"
rm -f "$work/pristine.tar"
mkdir -p "$work/install-root/debs"
cp "$out"/*.deb "$work/install-root/debs/"
cp "$src/tests/fresh_root/installed_check.sh" "$work/install-root/installed_check.sh"
$fresh_root run "$work/install-root" bash /installed_check.sh </dev/null
cp "$work/install-root/installed-screenshot.png" "$out/" 2>/dev/null || true
phase "install, use, remove"

echo "fresh-root: all checks passed in $((SECONDS - started)) s (timings in $out/timings.txt)"
