#!/usr/bin/env bash
# A clean Debian 12 root that shares no installed package with this machine, for checks
# that must see what a new user's machine sees (the README's commands, installing the .deb).
#
#   fresh-root.sh create DIR            debootstrap a minimal bookworm into DIR
#   fresh-root.sh run DIR CMD [ARG...]  run CMD as root inside DIR
#   fresh-root.sh remove DIR            delete DIR (nothing stays mounted: see `run`)
#
# Needs root, debootstrap and the network. Downloaded .debs are kept in
# $FUSESCOPE_FRESH_ROOT_CACHE (default /var/cache/fusescope/fresh-root) so a second check
# does not download them again; every package is still unpacked, resolved and configured from
# scratch in an empty root, so the check proves the fresh case each time.
# FRESH_ROOT_BIND="/usr/local/cuda ..." binds host folders read-only at the same place inside
# (the CUDA toolkit, which these machines carry outside Debian's packages).
set -euo pipefail

cache=${FUSESCOPE_FRESH_ROOT_CACHE:-/var/cache/fusescope/fresh-root}
mirror=${FUSESCOPE_DEBIAN_MIRROR:-http://deb.debian.org/debian}

die() { echo "fresh-root: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root (chroot and mounts)"

create() {
  local dir=$1
  command -v debootstrap >/dev/null || die "debootstrap is missing (apt-get install debootstrap)"
  [ ! -e "$dir" ] || [ -z "$(ls -A "$dir")" ] || die "$dir exists and is not empty"
  mkdir -p "$dir" "$cache"
  debootstrap --variant=minbase --cache-dir="$cache" bookworm "$dir" "$mirror" >"$dir.debootstrap.log" 2>&1 ||
    die "debootstrap failed; see $dir.debootstrap.log"
  rm -f "$dir.debootstrap.log"
  # The suites a Debian 12 installation has: updates and security too.
  cat >"$dir/etc/apt/sources.list" <<EOF
deb $mirror bookworm main
deb $mirror bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main
EOF
  cp /etc/resolv.conf "$dir/etc/resolv.conf"
  # A new user's machine has a user and sudo; the README's commands run as root here.
  echo "fresh-root: $dir holds $(chroot "$dir" dpkg-query -W | wc -l) packages"
}

run() {
  local dir=$1
  shift
  [ -x "$dir/bin/bash" ] || die "$dir is not a root made by 'fresh-root.sh create'"
  mkdir -p "$cache"
  # A private mount namespace: every mount below disappears with the command, even when it
  # is killed, so no bind of the host is left behind inside DIR.
  unshare --mount --propagation private -- bash -euo pipefail -c '
    dir=$1 cache=$2 binds=$3
    shift 3
    mount -t proc proc "$dir/proc"
    mount -t sysfs sys "$dir/sys"
    mount --rbind /dev "$dir/dev"
    mount -t tmpfs tmpfs "$dir/tmp"
    mount --bind "$cache" "$dir/var/cache/apt/archives"
    for b in $binds; do
      [ -d "$b" ] || continue
      mkdir -p "$dir$b"
      mount --bind "$b" "$dir$b"
      mount -o remount,bind,ro "$dir$b"
    done
    exec chroot "$dir" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
      PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"
  ' fresh-root "$dir" "$cache" "${FRESH_ROOT_BIND:-}" "$@"
}

remove() {
  local dir=$1
  [ -e "$dir" ] || return 0
  # Refuse to delete through a mount that is still there (a run still going).
  if grep -q " $(realpath "$dir")/" /proc/self/mounts; then die "$dir still has mounts"; fi
  rm -rf --one-file-system "$dir"
}

[ $# -ge 2 ] || die "usage: fresh-root.sh create|run|remove DIR [CMD...]"
verb=$1
shift
case "$verb" in
  create) create "$1" ;;
  run) run "$@" ;;
  remove) remove "$1" ;;
  *) die "unknown verb '$verb' (create, run, remove)" ;;
esac
