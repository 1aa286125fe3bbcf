#!/bin/bash
# The three steps of conf/study/ptb_melis_reduced.yaml in order, each command stamped in run.log and each
# resuming where a stopped run ended: 1. random search of the three cells; 2. the LSTM's three GP-tuner
# runs, run 0 with the bar's kill in it (kill_test.sh); 3. the seed reruns. Stops at the first command
# that does not end cleanly (a SIGINT included); run it again to go on. From the repository root with
# SYW_DATA_DIR set: make study5-reduced. STUDY, FAMILY, TRIALS, RESULTS and EXTRA (more overrides, for
# every command) as in kill_test.sh let the same steps run on a cheap study first.
set -u
HERE=$(dirname "$0")
STUDY=${STUDY:-ptb_melis_reduced}
FAMILY=${FAMILY:-lstm}
LOG=${RESULTS:-results}/$STUDY/run.log
PY=${PY:-.venv/bin/python}
# shellcheck disable=SC2206  # EXTRA is a list of overrides, split on spaces
OVERRIDES=(${EXTRA:-})  # EXTRA itself stays a string: kill_test.sh reads it
# shellcheck source=stamps.sh
. "$HERE/stamps.sh"

mkdir -p "$(dirname "$LOG")"
step run study="$STUDY" "${OVERRIDES[@]}" || exit $?
bash "$HERE/kill_test.sh" || exit $?
for k in 1 2; do
  step run study="$STUDY" family="$FAMILY" strategy=gp tuner.seed=$k "${OVERRIDES[@]}" || exit $?
done
step reseed study="$STUDY" "${OVERRIDES[@]}"
