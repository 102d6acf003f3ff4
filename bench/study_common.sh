# Shared set-up of the bench/*_study.sh scripts (sourced, with `here` set to the project):
#   study_setup NAME [BUILD_DIR] [OUT_DIR]
# sets `pas2p` (BUILD_DIR/bin/pas2p; default build) and changes into OUT_DIR, made if missing
# (default: a temporary directory removed at exit; with OUT_DIR, traces there are reused).
study_setup() {
  local name="$1"
  build="$(cd "${2:-$here/build}" && pwd)" || exit 1
  pas2p="$build/bin/pas2p"
  [ -x "$pas2p" ] || { echo "$name: $pas2p is not built" >&2; exit 1; }
  out="${3:-}"
  if [ -z "$out" ]; then
    out="$(mktemp -d)"
    trap 'rm -rf "$out"' EXIT
  fi
  mkdir -p "$out"
  cd "$out" || exit 1
}
