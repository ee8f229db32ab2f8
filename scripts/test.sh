#!/usr/bin/env bash
# `make test`'s checks after setup: the import contracts, then three things at once:
#   - the suite minus the tests marked `waits`, on the xdist workers (the PYTEST command given);
#   - the tests marked `waits`, in one more pytest process (-n 0): they spend most of their wall time
#     waiting on a server's Retry-After, a run's per-call latency or a subprocess to kill, so run
#     beside the workers they take that time off the wall clock instead of holding a worker idle
#     (on an xdist worker, ~55 s of waiting out of ~90 s for these tests, 2026-12-06);
#   - the type checker (basedpyright, one single-threaded process, ~32 s of CPU over masbench/).
# Their outputs are printed in that order, each after the suite's; the exit status is non-zero if
# any of them failed (pytest's 5, "no tests collected", included).
#   scripts/test.sh PYTEST-COMMAND...
# LINT_IMPORTS and TYPECHECK name the other two commands (default: the .venv's; tests/test_make_test.py
# puts stand-ins there).
set -uo pipefail
cd "$(dirname "$0")/.."
LINT_IMPORTS=${LINT_IMPORTS:-.venv/bin/lint-imports --no-cache}
TYPECHECK=${TYPECHECK:-.venv/bin/basedpyright}
$LINT_IMPORTS || exit $?
waits_log=$(mktemp)
types_log=$(mktemp)
trap 'rm -f "$waits_log" "$types_log"' EXIT
$TYPECHECK > "$types_log" 2>&1 &
types_pid=$!
"$@" -n 0 -m waits > "$waits_log" 2>&1 &
waits_pid=$!
"$@" -m "not waits"
tests_rc=$?
wait "$waits_pid"
waits_rc=$?
echo "pytest -m waits (run beside the workers, one process)"
cat "$waits_log"
wait "$types_pid"
types_rc=$?
echo "$TYPECHECK (run beside the tests)"
cat "$types_log"
for rc in "$tests_rc" "$waits_rc" "$types_rc"; do
  if [ "$rc" -ne 0 ]; then
    exit "$rc"
  fi
done
