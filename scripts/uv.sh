#!/usr/bin/env bash
# The pinned uv, with this machine's pip settings, for every environment the project makes (the dev venv, the
# robot-machine install, CI):
#
#   scripts/uv.sh ARGS...        e.g. scripts/uv.sh pip install -r requirements.txt --python .venv/bin/python
#   scripts/uv.sh --path         print the uv executable (installing it first if needed)
#
# Why: pip installed requirements.txt in 163 s on a fresh machine and kept no download cache, so the robot install
# downloaded every wheel again; uv installs the same pins in about 30 s and keeps one cache per machine, which every
# venv here shares (hard links, no second download).
#
# uv itself: a uv on PATH at exactly UV_VERSION, else UV_VERSION installed by $PYTHON's pip (pip's own settings:
# proxy, find-links, certificates) into UV_TOOLS/uv-UV_VERSION (UV_TOOLS: default build/ in this checkout). It never
# downloads a Python (UV_PYTHON_DOWNLOADS=never): environments are made from $PYTHON, as `python3 -m venv` would.
#
# uv reads none of pip's settings, so this passes the ones that choose wheels from `pip config list` (pip.conf files
# and PIP_* variables, the later the stronger, as pip reads them): index-url, extra-index-url, find-links (e.g. a
# folder of CPU wheels of torch), constraint, and cert (as SSL_CERT_FILE unless that is set). With more than one
# place to look, uv picks the best version over all of them, as pip does (UV_INDEX_STRATEGY=unsafe-best-match),
# instead of stopping at the first index that knows the name. UV_* variables already set are kept and extended.
# Bytecode is compiled at install time (as pip does): with PYTHONDONTWRITEBYTECODE set, nothing else would.
set -euo pipefail

UV_VERSION=0.13.8
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$here")"
python="${PYTHON:-python3}"
tool_dir="${UV_TOOLS:-$repo/build}/uv-$UV_VERSION"

find_uv() {
  local found
  if found="$(command -v uv 2>/dev/null)" && [ "$("$found" --version 2>/dev/null | cut -d' ' -f2)" = "$UV_VERSION" ]; then
    echo "$found"
  elif [ -x "$tool_dir/bin/uv" ]; then
    echo "$tool_dir/bin/uv"
  else
    return 1
  fi
}

install_uv() {
  command -v "$python" >/dev/null || { echo "uv.sh: no $python to install uv with (apt-get install python3)" >&2; exit 2; }
  "$python" -m pip --version >/dev/null 2>&1 || {
    echo "uv.sh: $python has no pip to install uv $UV_VERSION with: apt-get install python3-pip, or install uv" \
         "$UV_VERSION yourself (https://docs.astral.sh/uv/getting-started/installation/)" >&2; exit 2; }
  local start tmp
  start=$(date +%s)
  mkdir -p "$(dirname "$tool_dir")"
  tmp="$(mktemp -d "$tool_dir.tmp.XXXXXX")"
  # into a temporary folder, then renamed: two builds starting at once never see half a uv
  if ! "$python" -m pip install --quiet --no-input --disable-pip-version-check --target "$tmp" "uv==$UV_VERSION" \
       2> >(grep -v -e "is ignored: it is neither" -e "Running pip as the 'root' user" >&2); then
    rm -rf "$tmp"
    echo "uv.sh: pip could not install uv==$UV_VERSION: no network to PyPI (or the index pip is set to)? See above." >&2
    exit 2
  fi
  mv -T "$tmp" "$tool_dir" 2>/dev/null || rm -rf "$tmp"  # another build won the race: keep its uv
  echo "uv.sh: uv $UV_VERSION installed into $tool_dir in $(( $(date +%s) - start )) s" >&2
}

uv="$(find_uv)" || { install_uv; uv="$(find_uv)"; }
if [ "${1:-}" = --path ]; then echo "$uv"; exit 0; fi

# pip's settings that choose wheels, as `pip config list` prints them (files merged): section.key='value', PIP_*
# as :env:.key
if "$python" -m pip --version >/dev/null 2>&1; then
  declare -A pip_cfg=()
  while IFS= read -r line; do
    key="${line%%=*}"; key="${key#*.}"; value="${line#*=}"; value="${value#\'}"; value="${value%\'}"
    pip_cfg[$key]="$value"
  done < <(list="$("$python" -m pip config list 2>/dev/null || true)"  # weakest first: [global], [install], PIP_*
           for section in 'global' 'install' ':env:'; do
             grep -E "^$section\.(index-url|extra-index-url|find-links|constraint|cert)=" <<<"$list" || true
           done)
  if [ -n "${pip_cfg[index-url]:-}" ] && [ -z "${UV_INDEX_URL:-}${UV_DEFAULT_INDEX:-}" ]; then
    export UV_INDEX_URL="${pip_cfg[index-url]}"
  fi
  if [ -n "${pip_cfg[extra-index-url]:-}" ]; then
    export UV_EXTRA_INDEX_URL="${UV_EXTRA_INDEX_URL:+$UV_EXTRA_INDEX_URL }${pip_cfg[extra-index-url]}"
  fi
  if [ -n "${pip_cfg[find-links]:-}" ]; then  # pip: whitespace-separated; uv: comma-separated
    links="$(echo "${pip_cfg[find-links]}" | xargs | tr ' ' ,)"
    export UV_FIND_LINKS="${UV_FIND_LINKS:+$UV_FIND_LINKS,}$links"
  fi
  if [ -n "${pip_cfg[constraint]:-}" ]; then
    export UV_CONSTRAINT="${UV_CONSTRAINT:+$UV_CONSTRAINT }${pip_cfg[constraint]}"
  fi
  if [ -n "${pip_cfg[cert]:-}" ] && [ -z "${SSL_CERT_FILE:-}" ]; then
    export SSL_CERT_FILE="${pip_cfg[cert]}"
  fi
fi
export UV_INDEX_STRATEGY="${UV_INDEX_STRATEGY:-unsafe-best-match}"
export UV_COMPILE_BYTECODE="${UV_COMPILE_BYTECODE:-1}"
export UV_NO_PROGRESS=1 UV_PYTHON_DOWNLOADS=never
code=0
"$uv" "$@" || code=$?
if [ "$code" != 0 ] && [ "${1:-}" = pip ] && [[ "${2:-}" =~ ^(install|compile|sync)$ ]]; then
  echo "uv.sh: \`uv pip $2\` failed (exit $code). If uv says it could not fetch or connect above, this machine" \
       "reaches no package index (network, proxy, or the index pip is set to: $python -m pip config list)." >&2
fi
exit "$code"
