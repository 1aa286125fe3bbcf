#!/bin/bash
# Issue 36's bar on the real study: "a kill during the GP study and the same command again: the search
# continues without repeating or losing a trial". Runs GP-tuner run 0 of the LSTM (step 2 of
# conf/study/ptb_melis_reduced.yaml), SIGKILLs the run's whole process group (driver, local Ray, trials)
# once AHEAD (default 4) more trials are recorded than at its start, and at least 8 (past the 5 random
# startup suggestions, so the kill lands while the GP suggests), counts what of the group is left alive, runs the same
# command again to the end, and checks the records: each trial index 0..19 exactly once. Every step is
# stamped in run.log. Run from the repository root with SYW_DATA_DIR set. The kill happens once: run
# again after it (the resumed search stopped too, say at a session's end), the script runs the same
# command on to the end and the check (after it passed: the then empty rest of the search). STUDY,
# FAMILY, TRIALS, RESULTS and EXTRA (more overrides) let the same steps run on a cheap study first.
set -u
STUDY=${STUDY:-ptb_melis_reduced}
FAMILY=${FAMILY:-lstm}
TRIALS=${TRIALS:-20}
DIR=${RESULTS:-results}/$STUDY
REC=$DIR/gp/$FAMILY.tuner_seed0.jsonl
LOG=$DIR/run.log
PY=${PY:-.venv/bin/python}
# shellcheck disable=SC2206  # EXTRA is a list of overrides, split on spaces
ARGS=(run study=$STUDY family=$FAMILY strategy=gp tuner.seed=0 ${EXTRA:-})
AHEAD=${AHEAD:-4}

# shellcheck source=stamps.sh
. "$(dirname "$0")/stamps.sh"
count() { if [ -f "$REC" ]; then grep -c . "$REC"; else echo 0; fi; }

killed() { grep -q "^=== kill test .*SIGKILL.* in $REC " "$LOG" 2>/dev/null; }

before=$(count)
target=$((before + AHEAD)); [ "$target" -lt 8 ] && target=8
if ! killed && [ "$target" -lt "$TRIALS" ]; then
  started "${ARGS[@]}"
  setsid "$PY" -m syw "${ARGS[@]}" >> "$LOG" 2>&1 &
  pid=$!
  while kill -0 "$pid" 2>/dev/null && [ "$(count)" -lt "$target" ]; do sleep 5; done
  if kill -0 "$pid" 2>/dev/null; then
    kill -KILL -- "-$pid"  # Ray's local processes are in the group: none of them starts a session
    wait "$pid" 2>/dev/null
    sleep 2
    left=$(pgrep -g "$pid" | wc -l)
    stopped 137
    echo "=== kill test $(stamp) UTC: SIGKILL to the run's process group with $(count) records in $REC (the run started with $before); $left of its processes left alive; the same command follows" >> "$LOG"
  else
    wait "$pid"; rc=$?
    stopped "$rc"
    [ "$rc" -ne 0 ] && exit "$rc"
  fi
fi
step "${ARGS[@]}" || exit $?
"$PY" - "$REC" "$TRIALS" >> "$LOG" <<'EOF'
import sys
from collections import Counter
from pathlib import Path

from syw.core.records import iter_records

indices = Counter(r["trial"] for r in iter_records(Path(sys.argv[1])))
twice = sorted(i for i, n in indices.items() if n > 1)
lost = sorted(set(range(int(sys.argv[2]))) - set(indices))
verdict = "passed" if not twice and not lost else "FAILED"
print(f"=== kill test {verdict}: {len(indices)} trial indices recorded, repeated: {twice or 'none'}, missing: {lost or 'none'}")
sys.exit(0 if verdict == "passed" else 1)
EOF
