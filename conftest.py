"""What every pytest run of the project shares: the markers of the notebooks that train, and one run of the lessons.

Three targets select from the same tests (see CONTRIBUTING.md):

- ``make test-fast``: ``-m "not slow and not browser and not full"``, no lab training;
- ``make test``: ``-m "not full"``, the lessons (every notebook but the lab's 12, 13, 15 and 17), the browser, the book;
- ``make test-all``: everything, with the tests marked ``full`` that retrain
  whole sweeps' rows (the held-out seeds, the text lab's held-out seed) and
  the lab's notebooks 12, 13, 15 and 17 under nbval (:data:`FULL_NOTEBOOKS`).

``make test`` runs in two worker processes (pytest-xdist, ``-n 2 --dist
loadfile``): each file goes whole to one worker, in order, so a notebook's
cells share their kernel and a module's fixtures are made once. When 12 and 13
run at once, 13 waits for each model 12 is training and reads it from the
model cache (:mod:`posenc_helpers.lab.cache` locks a model while it trains).

The nbval items of the notebooks that run the lab (12, 13, 15, 17, and 18, which reads shipped lab models) are
marked ``slow`` here, since nbval's items take no marker of their own. When
``tests/test_no_jax.py`` runs the lessons under nbval with JAX blocked, the
same lessons' nbval items of this run are deselected, so that each lesson is
executed once per run, in the stricter setting.
"""

from __future__ import annotations

from pathlib import Path

import pytest

#: The notebooks that run the lab, so need JAX (their nbval items are slow): 12, 13, 15 and 17 train models live;
#: 18 reads the lab models the package ships (posenc_helpers/data/serving_lab) and trains none.
TRAINING_NOTEBOOKS = ("12-", "13-", "15-", "17-", "18-")

#: Training notebooks whose nbval run goes to `make test-all` (marked `full`): all that train. Their live runs train
#: models (12 eight at once, 13 reads them and trains one more, 15 a text model, 17 ten and its fresh seeds), which
#: the test command's 15 minutes cannot hold beside everything else (docs/PERFORMANCE.md gives the runs). 18 trains
#: nothing since its four models ship with the package, so `make test` executes it. For the others, `make test`
#: still scans their stored outputs (tests/test_stored_outputs.py) and checks their claims on the stored rows
#: (tests/test_lab_claims.py and the other lab tests); `make test-all` executes them.
FULL_NOTEBOOKS = ("12-", "13-", "15-", "17-")

#: Test files of the lab whose tests train small models (measured: about half of make test-fast's time, which put it
#: far over its budget). They are marked `slow`: make test runs them, make test-fast ("trains no model") does not.
LAB_TRAINING_TESTS = tuple(f"tests/{name}.py" for name in (
    "test_lab_cache", "test_lab_compilations", "test_lab_curriculum", "test_lab_evaluate", "test_lab_experiment",
    "test_lab_finetune", "test_lab_length_schemes", "test_lab_model", "test_lab_model_cache", "test_lab_pool",
    "test_lab_schemes", "test_lab_sequence_scores", "test_lab_text", "test_lab_text_context", "test_streaming",
))

#: The test that runs every lesson under nbval with JAX blocked.
NO_JAX_LESSONS = "tests/test_no_jax.py::test_every_lesson_passes_nbval_without_jax"


#: The files that take longest, in the order the two workers should start them (notebook 13 last of the
#: lab's notebooks, so that 12 has trained the models it reads); every other file follows, in its own order.
LONGEST_FIRST = (
    "notebooks/12-extrapolation-lab.ipynb",
    "tests/test_lab_reproduce.py",
    "tests/browser/test_browser_lab.py",  # after 12: 13's demo trains what the model cache lacks (PERFORMANCE.md)
    "notebooks/15-lab-on-real-text.ipynb",
    "notebooks/18-position-when-serving.ipynb",  # about 35 s: its last part reads shipped lab models with JAX
    "notebooks/17-your-own-experiment.ipynb",  # make test-all only (FULL_NOTEBOOKS): its live run trains ten models
    "tests/browser/test_browser_book.py",  # every page at 390 px too: no longer short enough to come last
    "tests/test_no_jax.py",
    "notebooks/13-trained-heads.ipynb",
    "tests/browser/test_browser_stopped_run.py",
    "tests/browser/test_browser_voila.py",
    "tests/test_book.py",
)


def _first(file: str) -> int:
    return LONGEST_FIRST.index(file) if file in LONGEST_FIRST else len(LONGEST_FIRST)


def _notebook(item) -> Path | None:
    path = Path(str(item.fspath))
    return path if path.suffix == ".ipynb" else None


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(session, config, items):
    # before -m selects: nbval's items of the training notebooks become slow
    for item in items:
        path = _notebook(item)
        if path is not None and path.name.startswith(TRAINING_NOTEBOOKS):
            item.add_marker(pytest.mark.slow)
        if path is not None and path.name.startswith(FULL_NOTEBOOKS):
            item.add_marker(pytest.mark.full)
        if item.nodeid.split("::")[0] in LAB_TRAINING_TESTS:
            item.add_marker(pytest.mark.slow)
    result = yield
    if getattr(config.option, "dist", "no") != "no":
        # the longest files first, so that neither worker is left with a long file at the end
        items.sort(key=lambda item: _first(item.nodeid.split("::")[0]))
    # after -m and -k have selected: a lesson that the no-JAX run executes is not executed here too
    runner = next((item for item in items if item.nodeid == NO_JAX_LESSONS), None)
    if runner is not None:
        taken = {p.resolve() for p in runner.module.lessons()}
        twice = [item for item in items if _notebook(item) is not None and _notebook(item).resolve() in taken]
        if twice:
            config.hook.pytest_deselected(items=twice)
            items[:] = [item for item in items if item not in twice]
    return result
