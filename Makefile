# Two commands are all a newcomer needs (see README.md):
#   make lab    install every lesson's packages into .venv, then open JupyterLab on notebooks/
#   make test   install everything into .venv, then lint, check the lock and run every test
# Install only (nothing starts): make install-lessons (00-11, 14 and 16, no JAX), make install-lab (every
# lesson, JAX included), make install-book (the book builder), make install (everything).
# Every install takes its versions from requirements.txt, the complete lock (`make lock` writes it).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
NB     ?= notebooks/01-clock-hands.ipynb
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root,)

# The installer: uv (pinned by the lock) when it installs, else plain pip. POSENC_PIP=1 forces pip.
# uv goes into its own folder, so the learner's environment holds only the learner's set.
UV_VERSION := $(shell sed -n 's/^uv==\([0-9.]*\).*/\1/p' requirements.txt)
UV_DIR     := $(VENV)/uv-tool
CONSTRAINTS := $(VENV)/constraints.txt

# JupyterLab for a projector: no "get notified about Jupyter news?" toast, no update check.
# The toast is a front-end setting, so the install also copies config/jupyterlab-overrides.json
# to the environment's settings folder (share/jupyter/lab/settings/overrides.json).
LAB_FLAGS := $(ROOT_FLAG) --LabApp.news_url=None --LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate
LAB_OVERRIDES := $(VENV)/share/jupyter/lab/settings/overrides.json
PORT_FLAG := $(if $(PORT),--ServerApp.port=$(PORT),)

.PHONY: install install-lessons install-lab install-book lessons lab test test-fast test-all lint lock lock-check binder book \
        notebooks nav figures bench bench-browser lab-results lab-results-extra lab-text lab-text-rows lab-text-heldout lab-text-context lab-inference lab-serving lab-length lab-heldout present citation \
        hf-reference test-hf clean

$(PY):
	$(PYTHON) -m venv $(VENV)

# What each install set asks for (named here: a comma inside $(call ...) would split its argument).
LESSONS_SET := -e .[lab]
LAB_SET     := -e .[jax,lab]
BOOK_SET    := -e .[book]
PRESENT_SET := -e .[jax,lab,present]

# $(call install,PIP-ARGUMENTS)
define install
	@if [ "$(POSENC_PIP)" != 1 ] && [ -n "$(UV_VERSION)" ] && \
	   { [ -x $(UV_DIR)/bin/uv ] || $(PY) -m pip install --quiet --disable-pip-version-check \
	         --target $(UV_DIR) "uv==$(UV_VERSION)" >/dev/null 2>&1; }; then \
	  echo "installing with uv $(UV_VERSION): $(1)"; \
	  $(UV_DIR)/bin/uv pip install --quiet --python $(PY) $(1); \
	else \
	  echo "installing with pip: $(1)"; \
	  $(PY) -m pip install --quiet --disable-pip-version-check $(1); \
	fi
	@mkdir -p $(dir $(LAB_OVERRIDES)) && cp config/jupyterlab-overrides.json $(LAB_OVERRIDES)
endef

# The lock without its editable line, as pip's constraints (-c) for a partial install.
$(CONSTRAINTS): requirements.txt | $(PY)
	grep -v '^-e ' requirements.txt > $@

# Lessons 00-11, 14 and 16 only: the package without its `jax` extra, JupyterLab and the kernel.
$(VENV)/.installed-lessons: requirements.txt pyproject.toml $(CONSTRAINTS)
	$(call install,-c $(CONSTRAINTS) $(LESSONS_SET))
	touch $@

# The learner's set: every lesson (the lab's JAX, optax and tqdm included), JupyterLab and the kernel.
$(VENV)/.installed-lab: requirements.txt pyproject.toml $(CONSTRAINTS)
	$(call install,-c $(CONSTRAINTS) $(LAB_SET))
	touch $@ $(VENV)/.installed-lessons

# The book builder (Jupyter Book 1, offline MathJax) and the package's light dependencies, no JAX.
$(VENV)/.installed-book: requirements.txt pyproject.toml $(CONSTRAINTS)
	$(call install,-c $(CONSTRAINTS) $(BOOK_SET))
	touch $@

# Everything in the lock: the learner's set, Voila, the book, the test, lint and lock tools.
$(VENV)/.installed: requirements.txt pyproject.toml | $(PY)
	$(call install,-r requirements.txt)
	touch $@ $(VENV)/.installed-lessons $(VENV)/.installed-lab $(VENV)/.installed-book $(VENV)/.installed-present

# Presentation mode: the learner's set plus Voila.
$(VENV)/.installed-present: requirements.txt pyproject.toml $(CONSTRAINTS)
	$(call install,-c $(CONSTRAINTS) $(PRESENT_SET))
	touch $@

install: $(VENV)/.installed

install-lessons: $(VENV)/.installed-lessons

install-lab: $(VENV)/.installed-lab

install-book: $(VENV)/.installed-book

# Rooted at the repo (so the notebooks' ../figures/ images load), opening in notebooks/.
# PORT=8890 picks the port (JupyterLab's default, 8888, or the next free one, otherwise).
lab: $(VENV)/.installed-lab
	$(VENV)/bin/jupyter lab $(LAB_FLAGS) $(PORT_FLAG) --ServerApp.root_dir=. --FileContentsManager.preferred_dir=notebooks

# The same JupyterLab with install-lessons' packages: lessons 00-11, 14 and 16 run, 12, 13, 15 and 17 say what to install.
lessons: $(VENV)/.installed-lessons
	$(VENV)/bin/jupyter lab $(LAB_FLAGS) $(PORT_FLAG) --ServerApp.root_dir=. --FileContentsManager.preferred_dir=notebooks

# The test targets run pytest in two worker processes (pytest-xdist), each test file whole in one of
# them (a notebook's cells share one kernel), the longest files first (conftest.py); XDIST= runs
# everything in this process.
XDIST ?= -n 2 --dist loadfile --no-loadscope-reorder

# Lint first, then the lock check, then every test but those marked `full`: unit, property and doctests,
# the lessons under nbval (without JAX), notebook 18 (shipped lab models), the book, the browser, the claims on the
# stored rows; not the lab's notebooks that train (12, 13, 15, 17) nor any retraining (docs/PERFORMANCE.md gives
# its measured time).
test: $(VENV)/.installed
	@$(MAKE) --no-print-directory lint
	@$(MAKE) --no-print-directory lock-check
	$(PY) -m pytest $(XDIST) -m "not full"

# The contributor's loop: lint, unit, property and doctests, lessons 00-11, 14 and 16 under nbval; no lab
# training, no browser, none of make test-all's retraining (`full`); docs/PERFORMANCE.md gives its measured time.
test-fast: $(VENV)/.installed
	@$(MAKE) --no-print-directory lint
	$(PY) -m pytest $(XDIST) -m "not slow and not browser and not full"

# Everything make test runs, and the tests marked `full`: the lab's notebooks 12, 13, 15 and 17 under nbval, the browser's
# Run All of every slider notebook, the held-out seeds and the text lab's held-out seed retrained and compared
# with the stored rows (before a release, after any change to posenc_helpers/lab; docs/PERFORMANCE.md gives its
# measured time).
test-all: $(VENV)/.installed
	@$(MAKE) --no-print-directory lint
	@$(MAKE) --no-print-directory lock-check
	$(PY) -m pytest $(XDIST)

# ruff over the Python files, then over the notebooks, then ruff format over the notebooks (each reported
# separately).
lint: $(VENV)/.installed
	@echo "== ruff: posenc_helpers, tests, benchmarks, tools"; \
	$(PY) -m ruff check --extend-exclude '*.ipynb' .; code=$$?; \
	echo "== ruff: notebooks"; \
	$(PY) -m ruff check notebooks || code=1; \
	echo "== ruff format: notebooks"; \
	$(PY) -m ruff format --check notebooks || code=1; \
	exit $$code

# Rewrite requirements.txt from pyproject.toml (existing pins kept; UPGRADE=1 takes the newest).
lock: $(VENV)/.installed
	$(PY) -m tools.lockcheck --write $(if $(UPGRADE),--upgrade,)
	@$(MAKE) --no-print-directory binder

# Binder's requirements (binder/requirements.txt): the learner's set (make lab's), pinned as in the lock.
binder: $(VENV)/.installed $(CONSTRAINTS)
	echo "$(LAB_SET)" | $(PY) -m uv pip compile - --universal --python-version 3.11 -c $(CONSTRAINTS) \
	    --no-emit-package posenc-helpers --no-annotate --custom-compile-command "make lock" \
	    --output-file binder/requirements.txt --quiet

# Fail when pyproject.toml and requirements.txt disagree (not when upstream merely has newer versions).
lock-check: $(VENV)/.installed
	$(PY) -m tools.lockcheck

# The static book in build/book/_build/html (stored outputs, no re-execution, math offline).
book: $(VENV)/.installed-book
	$(PY) -m tools.book

# Validate CITATION.cff with cffconvert, in an isolated environment (its pins clash with Jupyter's).
citation: $(VENV)/.installed
	$(PY) -m uv tool run --from cffconvert==2.0.0 cffconvert --validate -i CITATION.cff

# Reference logits from transformers itself for the numpy decoder block (posenc_helpers/decoder.py):
# tools/hf_reference.py builds tiny random-weight Qwen3 and Gemma 3 models in transformers 5 on CPU and writes
# tests/data/hf_reference_*.npz and .json, which tests/test_decoder_hf.py reads. It runs in a throwaway environment
# of its own, build/hfref-venv, with plain pip (like cffconvert, torch and transformers never enter the lock or
# .venv): transformers and torch at the script's pins, numpy at the lock's. PyPI's Linux torch wheel brings CUDA
# libraries: HF_TORCH=PATH-TO-A-CPU-WHEEL installs another build of the same torch version instead.
HF_VENV         := build/hfref-venv
HF_TRANSFORMERS := $(shell sed -n 's/^TRANSFORMERS_VERSION = "\(.*\)"/\1/p' tools/hf_reference.py)
HF_TORCH        ?= torch==$(shell sed -n 's/^TORCH_VERSION = "\(.*\)"/\1/p' tools/hf_reference.py)
NUMPY_VERSION   := $(shell sed -n 's/^numpy==\([0-9.]*\).*/\1/p' requirements.txt)

hf-reference:
	$(PYTHON) -m venv $(HF_VENV)
	$(HF_VENV)/bin/python -m pip install --quiet --disable-pip-version-check $(HF_TORCH) \
	    "transformers==$(HF_TRANSFORMERS)" "numpy==$(NUMPY_VERSION)"
	$(HF_VENV)/bin/python -m tools.hf_reference

# posenc explain's two engines held against each other (issue 45, docs/EXPLAIN.md): tests/test_explain_hf.py runs
# `posenc explain --check` (the course's reader against transformers itself, on the meta device) on every bundled
# config, on the hand-built shapes of every family the reader transcribes and on the newest families transformers
# ships, and plants a misreading in the reader that the check must catch. It reuses hf-reference's throwaway
# environment, build/hfref-venv (plain pip; torch and transformers never enter the lock or .venv), with transformers
# at posenc_helpers/explain_hf.py's pin (hf-reference reinstalls its own pin when it runs), torch as hf-reference's,
# numpy at the lock's, and this package installed there without its dependencies (the command imports only numpy).
HF_EXPLAIN_TRANSFORMERS := $(shell sed -n 's/^TRANSFORMERS_VERSION = "\(.*\)"/\1/p' posenc_helpers/explain_hf.py)

test-hf: $(VENV)/.installed
	$(PYTHON) -m venv $(HF_VENV)
	$(HF_VENV)/bin/python -m pip install --quiet --disable-pip-version-check $(HF_TORCH) \
	    "transformers==$(HF_EXPLAIN_TRANSFORMERS)" "numpy==$(NUMPY_VERSION)"
	$(HF_VENV)/bin/python -m pip install --quiet --disable-pip-version-check --no-deps -e .
	POSENC_HF_VENV=$(HF_VENV) $(PY) -m pytest tests/test_explain_hf.py -p no:randomly -n 0 -q

# Re-execute every notebook in place (after any helper change), then rewrite navigation.
notebooks: $(VENV)/.installed
	$(PY) -m tools.run_notebooks
	$(PY) -m tools.nav

nav: $(VENV)/.installed
	$(PY) -m tools.nav

figures: $(VENV)/.installed
	$(PY) -m tools.figures

bench: $(VENV)/.installed
	$(PY) benchmarks/bench_core.py
	$(PY) benchmarks/bench_sliders.py
	$(PY) benchmarks/bench_lab.py

# Regenerate posenc_helpers/lab/results.json, the extrapolation lab's sweep that notebooks 12 and
# 13 read: 8 schemes x 2 tasks x 20 seeds, RoPE also rescaled and fine-tuned (docs/PERFORMANCE.md
# gives the measured times of every target; `python -m posenc_helpers.lab.results --grow SEED ...` adds seeds).
lab-results: $(VENV)/.installed
	$(PY) -m posenc_helpers.lab.results

# Regenerate posenc_helpers/lab/results_extra.json, the extra tasks (back3, recall) that notebook 12
# reads: 8 schemes x 2 tasks x 8 seeds, recall's RoPE models also rescaled and fine-tuned.
lab-results-extra: $(VENV)/.installed
	$(PY) -m posenc_helpers.lab.results --extra

# Regenerate posenc_helpers/lab/text_results.json, the lab on real text: character-level models of
# 6 schemes x 8 seeds on posenc_helpers/lab/data/tragedies.txt, each RoPE model also fine-tuned for
# 100 steps at 4L per rescaling. `python -m posenc_helpers.lab.text --rope-only` recomputes only the
# RoPE rows.
lab-text: $(VENV)/.installed
	$(PY) -m posenc_helpers.lab.text

# The text lab's rows kept block by block (issue 43; posenc_helpers.lab.text_rows): every bits-per-character
# curve over 96 blocks of 1,024 validation characters, RoPE fine-tuned with s = 4, 8 and 16 and every RoPE
# curve past the fine-tune length, and each model's context table, for all 8 text seeds; then the loss by position
# in bands (--bands); then posenc_helpers/lab/text_blocks.json, what notebook 15's claims read (--save). Rows are
# kept in runs/partials/text-<stamp>.jsonl and text-bands-<stamp>.jsonl as they finish; a stopped run resumes there.
lab-text-rows: $(VENV)/.installed
	$(PY) -m posenc_helpers.lab.text_rows
	$(PY) -m posenc_helpers.lab.text_rows --bands
	$(PY) -m posenc_helpers.lab.text_rows --save

# The text claims' held-out check (issue 43): 3 seeds drawn from the hash of the committed
# posenc_helpers/lab/text_claims.py, every scheme's row trained (kept in runs/partials/text-heldout-<stamp>.jsonl,
# so a stopped run resumes), written to text_blocks_heldout.json, and the outcome appended to the ledger. It prints
# the seeds and which rows are done, never their numbers. Hours of CPU: every scheme's model trains, RoPE's ten fine-tunes too.
lab-text-heldout: $(VENV)/.installed
	$(PY) -m posenc_helpers.lab.text_rows --held-out 2

# Regenerate posenc_helpers/lab/text_context.json (notebook 15: does a model use context past L, and
# sliding windows) for the text sweep's first three seeds (lab.text_context.SEEDS), then
# text_context_heldout.json for its held-out seed;
# the models come from the model cache (make lab-text and make lab-heldout train them), else are retrained.
lab-text-context: $(VENV)/.installed
	$(PY) -m posenc_helpers.lab.text_context
	$(PY) -m posenc_helpers.lab.text_context --held-out

# Notebook 16's stored data (tools/inference_lab.py): the text sweep's 8 RoPE models (read from the model
# cache, else trained) written as float16 to posenc_helpers/data/text_rope/ with settings.json, streamed
# through a rolling cache by posenc_helpers.streaming, and fine-tuned with ABF, into
# posenc_helpers/data/inference_results.json; then the held-out seed's row (not shipped, no numbers
# printed) into inference_results_heldout.json, which only the tests read.
lab-inference: $(VENV)/.installed
	$(PY) -m tools.inference_lab
	$(PY) -m tools.inference_lab --held-out

# Notebook 18's stored models (tools/serving_lab.py): the three RoPE models of the passkey task (seeds 0-2)
# and the learned table of the previous-token task (seed 0) at the lab's defaults, trained in the lab's pool
# (read from the model cache where it has them), written as float16 to posenc_helpers/data/serving_lab/.
lab-serving: $(VENV)/.installed
	$(PY) -m tools.serving_lab

# Notebook 17's stored sweep (posenc_helpers/lab/length_results.json): the five schemes built for length
# generalisation on prev and first, and every scheme on passkey (RoPE also with PI, NTK and YaRN at test
# time), 20 seeds, scored by sequence and by haystack. It refuses while a randomized scheme has no recipe
# (length_results.RANDOMIZED_RECIPE; the randomized pilot decides; `python -m posenc_helpers.lab.length_results
# --settled` trains the other rows meanwhile). A stopped run resumes from runs/partials/length-<stamp>.jsonl. The held-out rows wait
# for length_claims to read the re-scored rows: their seeds will come from its hash (issue 43).
lab-length: $(VENV)/.installed
	$(PY) -m posenc_helpers.lab.length_results
	@echo "the held-out rows wait for length_claims to read the re-scored sweep (issue 43): their seeds come from its hash"

# The held-out seeds' rows, which only the seed tests read. First the ledger's check of the headline claims
# (results.ledger_check): 5 seeds drawn from the hash of posenc_helpers/lab/claims.py (results.ledger_seeds), their
# headline and extra-task rows trained as the sweeps train them, each kept in
# runs/partials/results-heldout-<stamp>.jsonl as it finishes (a stopped run resumes there), written to
# posenc_helpers/lab/results_heldout.json, every claim checked on them and the outcome appended to
# posenc_helpers/lab/ledger.jsonl; no number printed, and refused for claims already checked at their hash. Then
# posenc_helpers/lab/text_results_heldout.json (the text lab's HELD_OUT_SEED).
lab-heldout: $(VENV)/.installed
	$(PY) -m posenc_helpers.lab.results --held-out
	$(PY) -m posenc_helpers.lab.text --held-out

# Key press to new figure in a real Chromium, per demo.
bench-browser: $(VENV)/.installed
	$(PY) benchmarks/bench_browser.py

# Presentation mode: the notebook served by Voila with its code hidden (PORT=8866 by default).
present: $(VENV)/.installed-present
	$(PY) -m tools.present $(NB) $(if $(PORT),--port=$(PORT),)

# The lab's model cache (posenc_helpers/lab/cache.py): $POSENC_MODEL_CACHE, else the user's cache folder.
MODEL_CACHE := $(or $(POSENC_MODEL_CACHE),$(or $(XDG_CACHE_HOME),$(HOME)/.cache)/posenc_helpers/models)

# Remove the environment, the builds, JAX's compilation cache and every model in the model cache.
clean:
	rm -rf $(VENV) build *.egg-info .jax-cache
	@case "$(MODEL_CACHE)" in off|OFF|Off) ;; *) rm -f "$(MODEL_CACHE)"/*.npz "$(MODEL_CACHE)"/.tmp-*; \
	  echo "emptied the model cache $(MODEL_CACHE)";; esac
