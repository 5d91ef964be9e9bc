#!/usr/bin/env bash
# Writes a gzipped man page from a program's real --help and --version (help2man), with each
# subcommand's own --help as a section, so the page cannot drift from the binary:
#   make_man_page.sh PROGRAM "one-line description" OUT.1.gz [SUBCOMMAND...]
set -euo pipefail
program=$1
description=$2
out=$3
shift 3
command -v help2man >/dev/null || { echo "make_man_page: help2man is required (apt install help2man)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
include=$work/include.h2m
: >"$include"
if [ $# -gt 0 ]; then
  echo "[COMMANDS]" >>"$include"
  for sub in "$@"; do
    echo ".SS $sub" >>"$include"
    echo ".nf" >>"$include"
    # troff: backslashes escaped, and a line must not start with a control character.
    "$program" "$sub" --help | sed -e 's/\\/\\e/g' -e "s/^\([.']\)/\\\\\&\1/" >>"$include"
    echo ".fi" >>"$include"
  done
  cat >>"$include" <<'H2M'
[EXIT STATUS]
0 on success; 2 when a model or a file it names is bad (one line on standard error names
the file and the cause); 64 for a malformed command line.
H2M
fi
cat >>"$include" <<'H2M'
[SEE ALSO]
fusescope(1), fusescope-cli(1). The README and docs/ in Fusescope's sources describe the
compiler passes, the run store schema and the benchmarks.
H2M

help2man --no-info --no-discard-stderr --name="$description" --include="$include" \
  --output="$work/page.1" "$program"
gzip -9n -c "$work/page.1" >"$out"
