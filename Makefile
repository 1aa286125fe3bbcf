# Two entry points for a fresh machine: `make fig1` (the main job) and `make test`.
# Both create or refresh the local virtual environment first (fast when nothing changed).
PYTHON ?= python3
VENV ?= .venv
# The CPU build of torch is pinned here; a CUDA user can run e.g. `make test TORCH_SPEC=torch`
# (pip arguments, so an index URL may follow the requirement). Changing it reinstalls torch.
TORCH_SPEC ?= torch==2.13.0
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
TORCH_FILE := $(VENV)/.torch-spec
export RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER ?= 0
export PYTHONUNBUFFERED := 1

# Where the data sets live (see README "Data"). Unset: tests that need real data are skipped and
# studies read ./.data (the variable is passed on only when set: an empty one would mean ./).
ifdef SYW_DATA_DIR
export SYW_DATA_DIR
endif
PYTEST_ARGS ?=
# Test processes (pytest-xdist): two for the 2-core CI machine; the tests marked ray share one of them,
# one at a time (tests/conftest.py). PYTEST_WORKERS=0 runs everything in one process.
PYTEST_WORKERS ?= 2
# fig1 reads records from results/<study>/; VARIANT=as_run uses the study sst5_as_run.
VARIANT ?=
SOURCE ?= ours

.PHONY: env test fig1 fig2 fig3 fig4 fig5 budgets report clean-env FORCE

env: $(STAMP)

# Rewritten only when TORCH_SPEC differs from the last install's, so a new spec redoes the install.
$(TORCH_FILE): FORCE
	@mkdir -p $(VENV)
	@echo '$(TORCH_SPEC)' | cmp -s - $@ || echo '$(TORCH_SPEC)' > $@

$(STAMP): pyproject.toml Makefile $(TORCH_FILE)
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@echo "[env] installing into $(VENV) ($(TORCH_SPEC) + pyproject.toml dependencies)"
	$(PY) -m pip install -q --disable-pip-version-check --upgrade pip
	$(PY) -m pip install -q --disable-pip-version-check $(TORCH_SPEC)
	$(PY) -m pip install -q --disable-pip-version-check -e ".[suite,test]"
	@touch $@

# ruff first (pyproject.toml's rule set): style is one style, then the tests.
test: env
	$(PY) -m ruff check .
	$(PY) -m pytest -n $(PYTEST_WORKERS) --dist loadgroup --durations=20 $(PYTEST_ARGS)

# Figures from trial records: ours by default (fig1 runs the study first when its records are missing),
# the authors' published trials with SOURCE=paper; VARIANT=as_run draws the as-run search space.
FIG_ARGS = --source $(SOURCE) $(if $(VARIANT),--variant $(VARIANT))

fig1: env
	$(PY) -m syw fig 1 $(FIG_ARGS) --run-missing

fig2 fig3 fig4 fig5: env
	$(PY) -m syw fig $(subst fig,,$@) $(FIG_ARGS)

budgets: env
	$(PY) -m syw budgets $(FIG_ARGS)

# The reporting checklist of a study: STUDY=sst5 (default), SOURCE=ours|paper.
STUDY ?= sst5
report: env
	$(PY) -m syw report --study $(STUDY) --source $(SOURCE)

# docs/verdicts.md: what the records (ours and the authors' trials) say about each claim of sections 4.1-4.4
.PHONY: verdicts
verdicts: env
	$(PY) -m syw verdicts

# The numbers and tables of README.md and every results/<study>/README.md, rewritten from the records
# where markers stand (syw/pages/study_readme.py); `syw readme --check` compares only.
.PHONY: readmes
readmes: env
	$(PY) -m syw readme

# The light tool's sdist and wheel in dist/ (README "Use it on your own trials"), their metadata checked by twine
.PHONY: dist
dist: env
	rm -rf dist
	$(PY) -m build --outdir dist .
	$(PY) -m twine check --strict dist/*

clean-env:
	rm -rf $(VENV)

.PHONY: bench-runner bench-ray-start bench-core-rate bench-curve bench-inference bench-plan bench-sequential bench-sequential-replay
# Validity and power of the comparisons (issue 62), on synthetic pools and, with SYW_OPDA_DATA (opda's data/
# files), public searches resampled; BENCH_ARGS=--write puts the table into docs/syw.md
bench-inference: env
	$(PY) -m benchmarks.inference $(BENCH_ARGS)

# The trial planner's promise against the power it delivers (issue 73): pilots of public searches (SYW_OPDA_DATA,
# SYW_DATA_DIR's authors_trials/); BENCH_ARGS=--write puts the table into docs/syw.md, --pilots 10 is quick
bench-plan: env
	$(PY) -m benchmarks.plan $(BENCH_ARGS)

# The group-sequential comparison (issue 74): error under optional stopping, power and trials used against the
# fixed-N test and testing every look at 95%; synthetic pools, opda's (SYW_OPDA_DATA) and the authors' searches
# ($SYW_DATA_DIR/authors_trials) resampled in order; BENCH_ARGS=--write puts the table into docs/syw.md.
# bench-sequential-replay: results/sst5_as_run_200 replayed at looks every 10 and 20 trials
bench-sequential: env
	$(PY) -m benchmarks.sequential $(BENCH_ARGS)

bench-sequential-replay: env
	$(PY) -m benchmarks.sequential_replay $(BENCH_ARGS)

# syw curve's wall time against N trials per group (issue 61): 2 x 10,000 within twice 2 x 50
bench-curve: env
	$(PY) -m benchmarks.curve $(BENCH_ARGS)

bench-runner: env
	$(PY) -m benchmarks.runner_overhead

# One thread's matrix-product rate with 1 and 2 processes at once: do side-by-side trials slow each other?
bench-core-rate: env
	$(PY) -m benchmarks.core_rate $(BENCH_ARGS)

bench-ray-start: env
	$(PY) -m benchmarks.ray_start

.PHONY: bench-lr bench-cnn bench-cnn-batching bench-scitail bench-bidaf bench-bcn bench-bilm bench-elmo bench-denormals
bench-lr: env
	$(PY) -m benchmarks.lr_study

bench-cnn: env
	$(PY) -m benchmarks.cnn_timing

bench-cnn-batching: env
	$(PY) -m benchmarks.cnn_batching

# SciTail seconds per epoch and per trial on the full train split (study scitail_cpu); BENCH_ARGS e.g.
# --study scitail_reduced, --family esim dgem, --trials 6, --batches 8
BENCH_ARGS ?=
bench-scitail: env
	$(PY) -m benchmarks.scitail_timing $(BENCH_ARGS)

bench-bidaf: env
	$(PY) -m benchmarks.bidaf_timing

bench-bcn: env
	$(PY) -m benchmarks.bcn_timing

bench-bilm: env
	$(PY) -m benchmarks.bilm_timing

bench-elmo: env
	$(PY) -m benchmarks.elmo_speed

bench-denormals: env
	$(PY) -m benchmarks.denormals

# Case study 5 on a CPU, the steps conf/study/ptb_melis_reduced.yaml lists: random search of the three
# cells, three GP-tuner runs of the LSTM, the seed reruns of each cell's best assignment. Each step
# resumes where a stopped run ended; needs the PTB files under SYW_DATA_DIR.
.PHONY: study5-reduced
study5-reduced: env
	PY=$(PY) bash results/ptb_melis_reduced/run_study.sh

# Seconds per epoch, tokens/s and FLOP efficiency of the Melis et al. language models at the reduced
# study's sizes (ptb_melis_reduced; needs the PTB files under SYW_DATA_DIR); on a GPU with a CUDA torch:
# BENCH_ARGS='--study ptb_melis --device cuda --test-windows 100'
.PHONY: bench-lm
bench-lm: env
	$(PY) -m benchmarks.lm_timing $(BENCH_ARGS)

# Every family file trained a few steps on CUDA (the CPU without a GPU), timed against the CPU (issue 38);
# with a CUDA torch: make gpu-check TORCH_SPEC=torch. GPU_CHECK_ARGS: e.g. --out FILE, --families STEM ...
.PHONY: gpu-check
GPU_CHECK_ARGS ?=
gpu-check: env
	$(PY) -m syw.experiments.gpu_check $(GPU_CHECK_ARGS)

# Issue 62's Figure-1 study (conf/study/sst5_as_run_200.yaml: 200 LR + 200 as-run CNN trials, about 4 h here),
# stamped in its run.log like case study 5's steps; resumes where a stopped run ended. Needs SYW_DATA_DIR.
.PHONY: study-fig1-200
study-fig1-200: env
	@mkdir -p results/sst5_as_run_200
	LOG=results/sst5_as_run_200/run.log PY=$(PY) bash -c '. results/ptb_melis_reduced/stamps.sh && step run study=sst5_as_run_200'
