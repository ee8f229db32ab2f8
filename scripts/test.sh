#!/usr/bin/env bash
# `make test`'s checks after setup: the import contracts, then the type checker BESIDE the test
# suite rather than before it. basedpyright is one single-threaded process (~32 s of CPU over
# masbench/), and the suite's xdist workers leave cores idle while tests wait on servers,
# subprocesses and sleeps, so running it concurrently takes its time off the wall clock. Its
# output is printed after pytest's; the exit status is non-zero if either failed.
#   scripts/test.sh PYTEST-COMMAND...
set -uo pipefail
cd "$(dirname "$0")/.."
.venv/bin/lint-imports --no-cache || exit $?
types_log=$(mktemp)
trap 'rm -f "$types_log"' EXIT
.venv/bin/basedpyright > "$types_log" 2>&1 &
types_pid=$!
"$@"
tests_rc=$?
wait "$types_pid"
types_rc=$?
echo ".venv/bin/basedpyright (run beside the tests)"
cat "$types_log"
if [ "$tests_rc" -ne 0 ]; then
  exit "$tests_rc"
fi
exit "$types_rc"
