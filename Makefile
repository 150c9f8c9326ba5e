# Two commands are all a newcomer needs (see README.md):
#   make lab    install everything into .venv, then open JupyterLab on notebooks/
#   make test   install everything into .venv, then run every test
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
NB     ?= notebooks/01-clock-hands.ipynb
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root,)

.PHONY: install lab test notebooks nav figures bench bench-browser lab-results present clean

$(STAMP): requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	touch $(STAMP)

install: $(STAMP)

# Rooted at the repo (so the notebooks' ../figures/ images load), opening in notebooks/.
lab: $(STAMP)
	$(VENV)/bin/jupyter lab $(ROOT_FLAG) --ServerApp.root_dir=. --FileContentsManager.preferred_dir=notebooks

test: $(STAMP)
	$(PY) -m pytest

# Re-execute every notebook in place (after any helper change), then rewrite navigation.
notebooks: $(STAMP)
	$(PY) -m posenc_helpers.run_notebooks
	$(PY) -m posenc_helpers.nav

nav: $(STAMP)
	$(PY) -m posenc_helpers.nav

figures: $(STAMP)
	$(PY) -m posenc_helpers.figures

bench: $(STAMP)
	$(PY) benchmarks/bench_core.py
	$(PY) benchmarks/bench_sliders.py
	$(PY) benchmarks/bench_lab.py

# Regenerate posenc_helpers/lab/results.json, the three-seed sweep that notebook 13's slider demo reads (about 10 minutes).
lab-results: $(STAMP)
	$(PY) -m posenc_helpers.lab.results

# Key press to new figure in a real Chromium, per demo (about 5 minutes).
bench-browser: $(STAMP)
	$(PY) benchmarks/bench_browser.py

# Presentation mode: the notebook served by Voila with its code hidden (PORT=8866 by default).
present: $(STAMP)
	$(PY) -m posenc_helpers.present $(NB) $(if $(PORT),--port=$(PORT),)

clean:
	rm -rf $(VENV) build *.egg-info
