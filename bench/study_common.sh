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

# The three checks every study prints once its traces are in train/ and held/:
#   study_checks HELD_TRACE [LINES]   (HELD_TRACE e.g. held/lmp.64; LINES of each validate, 12)
# leave-largest-out (`validate train`), held-out (`validate --against HELD_TRACE train`) and
# `predict --target 1024 train`; a refusal prints its error instead. STUDY_FLAGS (e.g.
# STUDY_FLAGS=--allow-remainder) are given to all three.
study_checks() {
  local held="$1" lines="${2:-12}"
  local -a flags
  read -r -a flags <<<"${STUDY_FLAGS:-}"
  quiet() { grep -v "more ranks than cores" | cut -c1-400; }
  local shown="${flags[*]:+${flags[*]} }"
  echo "== leave-largest-out: pas2p validate ${shown}train"
  "$pas2p" validate "${flags[@]}" train 2>&1 | quiet | sed -n "1,${lines}p"
  echo "== held-out: pas2p validate ${shown}--against $held train"
  "$pas2p" validate "${flags[@]}" --against "$held" train 2>&1 | quiet | sed -n "1,${lines}p"
  echo "== pas2p predict ${shown}--target 1024 train"
  "$pas2p" predict "${flags[@]}" --target 1024 train 2>&1 | quiet | grep -v "^pas2p: warning" |
    sed -n 1,8p
}

# One C rewrite of a code's communication, bench/SRC_DIR/NAME_pattern.c, traced at the
# training counts (train/) and at a held-out count (held/), then study_checks; traces already
# in the current directory's NAME/ are reused. Run after study_setup, from its directory.
#   study_pattern LABEL SRC_DIR NAME TRAINING_COUNTS HELD_COUNT LINES ARGS...
# ONLY="a b" runs only the names listed.
study_pattern() {
  local label="$1" src="$2" name="$3" counts="$4" held="$5" lines="$6"
  shift 6
  if [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" $name "* ]]; then return; fi
  echo "######## $label$name: traced at $counts, held out at $held"
  local top
  top="$(pwd)"
  mkdir -p "$top/$name" && cd "$top/$name" || exit 1
  local exe="${name}_pattern"
  [ -x "$exe" ] || mpicc -O2 -o "$exe" "$here/bench/$src/$exe.c" -lm || exit 1
  local largest="${counts##*,}"
  if { [ -d "train/$exe.$largest" ] || "$pas2p" trace -n "$counts" -o train -- "./$exe" "$@" \
    >trace.log 2>&1; } && { [ -d "held/$exe.$held" ] ||
    "$pas2p" trace -n "$held" -o held -- "./$exe" "$@" >>trace.log 2>&1; }; then
    study_checks "held/$exe.$held" "$lines"
  else
    tail -5 trace.log >&2
  fi
  cd "$top" || exit 1
}
