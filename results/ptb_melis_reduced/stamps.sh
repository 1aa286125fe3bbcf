# The run.log stamps of the study's commands, sourced by run_study.sh and kill_test.sh (which set LOG and
# PY): `syw readme`'s wall and clock facts read each command's start and end from these lines.
stamp() { date -u '+%F %T'; }
started() { echo "=== started $(stamp) UTC: syw $*   (commit $(git rev-parse --short HEAD))" >> "$LOG"; }
stopped() { echo "=== stopped $(stamp) UTC (exit $1)" >> "$LOG"; }
# One syw command, its output appended to run.log between its stamps; returns its exit status.
step() {
  started "$@"
  "$PY" -m syw "$@" >> "$LOG" 2>&1
  local rc=$?
  stopped "$rc"
  return "$rc"
}
