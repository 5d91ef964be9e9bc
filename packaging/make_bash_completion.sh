#!/usr/bin/env bash
# Writes bash completion for fusescope-cli from its own --help, so the completion offers
# exactly the commands and options the binary has:
#   make_bash_completion.sh FUSESCOPE_CLI OUT
set -euo pipefail
cli=$1
out=$2

# Commands: the indented words under "commands:" in the top-level help.
commands=$("$cli" --help | awk '/^commands:/ {on=1; next} on && /^  [a-z]/ {print $1}')
[ -n "$commands" ] || { echo "make_bash_completion: no commands in '$cli --help'" >&2; exit 1; }

{
  echo "# bash completion for fusescope-cli; generated from its --help by packaging/make_bash_completion.sh"
  echo "_fusescope_cli_options() {"
  echo "  case \$1 in"
  for c in $commands; do
    options=$("$cli" "$c" --help | grep -oE '(^|[ [,])--?[a-z][a-z0-9-]*' | sed -E 's/^[ [,]//' | sort -u | tr '\n' ' ' || true)
    echo "    $c) echo '--help ${options% }' ;;"
  done
  echo "  esac"
  echo "}"
  cat <<'BODY'
_fusescope_cli() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
  if [ "$COMP_CWORD" -eq 1 ]; then
BODY
  echo "    COMPREPLY=(\$(compgen -W '$(echo $commands) --help --version' -- \"\$cur\"))"
  cat <<'BODY'
    return
  fi
  case $prev in
    --dump-dir|--calibration|--csv) COMPREPLY=($(compgen -d -- "$cur")); return ;;
    -o|--output|--trace|--report|--capabilities|--input-dir) COMPREPLY=($(compgen -f -- "$cur")); return ;;
    --pipeline) COMPREPLY=($(compgen -W 'O0 O1 O2 O3' -- "$cur")); return ;;
  esac
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$(_fusescope_cli_options "${COMP_WORDS[1]}")" -- "$cur"))
  else
    # Models and run stores first; any file when none match.
    COMPREPLY=($(compgen -f -X '!*.onnx' -- "$cur") $(compgen -f -X '!*.fsdb' -- "$cur") $(compgen -d -- "$cur"))
    [ ${#COMPREPLY[@]} -gt 0 ] || COMPREPLY=($(compgen -f -- "$cur"))
  fi
}
complete -o filenames -F _fusescope_cli fusescope-cli
BODY
} >"$out"
