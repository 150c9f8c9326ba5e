"""The lab's model cache: a model read back is bit for bit the model trained, and nothing stale or broken is trusted.

Every test trains tiny models (one layer, width 8, a few steps) into its own
temporary cache folder (``$POSENC_MODEL_CACHE``).
"""

from __future__ import annotations

import importlib
import zipfile

import jax
import numpy as np
import pytest

from posenc_helpers import lab
from posenc_helpers.lab import cache
from posenc_helpers.lab import text as T

train_module = importlib.import_module("posenc_helpers.lab.train")  # the module (lab.train is the function)

TINY = {"steps": 3, "train_len": 8, "d_model": 8, "heads": 2, "layers": 1, "progress": False}


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv(cache.ENV, str(tmp_path / "models"))
    return tmp_path / "models"


def leaves(tree):
    return [np.asarray(x) for x in jax.tree_util.tree_leaves(tree)]


def same_model(a, b) -> bool:
    """Bit for bit: every parameter, and the loss history."""
    pa, pb = leaves(a.params), leaves(b.params)
    return (
        len(pa) == len(pb)
        and all(x.dtype == y.dtype and x.shape == y.shape and np.array_equal(x, y) for x, y in zip(pa, pb, strict=True))
        and np.array_equal(a.losses, b.losses)
    )


class NoTraining:
    """Stands in for the compiled training step: a model read from the cache must not call it."""

    def __init__(self):
        self.calls = 0

    def __call__(self, *args, **kwargs):
        self.calls += 1
        raise AssertionError("trained, though the cache holds this model")


def test_a_cached_model_is_bit_for_bit_the_one_a_fresh_run_trains(folder, monkeypatch):
    first = lab.train("alibi", "prev", **TINY)
    assert len(list(folder.glob("*.npz"))) == 1
    fresh = lab.train("alibi", "prev", cache=False, **TINY)  # retrained, the cache untouched
    monkeypatch.setattr(train_module, "_train_chunk", NoTraining())
    again = lab.train("alibi", "prev", **TINY)  # read back, never trained
    assert same_model(first, fresh) and same_model(again, fresh)
    assert again.initial_params is not None and all(
        np.array_equal(x, y) for x, y in zip(leaves(again.initial_params), leaves(fresh.initial_params), strict=True)
    )


def test_a_fine_tune_and_its_checkpoints_come_back_exactly(folder, monkeypatch):
    run = lab.train("rope", "prev", **TINY)
    tuned = lab.finetune(run, length=16, method="pi", steps=4, checkpoints=(2,), progress=False)
    monkeypatch.setattr(train_module, "_train_chunk", NoTraining())
    again = lab.finetune(run, length=16, method="pi", steps=4, checkpoints=(2,), progress=False)
    assert sorted(tuned) == sorted(again) == [2, 4]
    assert all(same_model(tuned[n], again[n]) for n in (2, 4))


def test_a_text_model_is_cached_too(folder, monkeypatch):
    first = T.train("alibi", steps=2, train_len=8, d_model=8, heads=2, layers=1, progress=False)
    monkeypatch.setattr(train_module, "_train_chunk", NoTraining())
    again = T.train("alibi", steps=2, train_len=8, d_model=8, heads=2, layers=1, progress=False)
    assert same_model(first, again)


def test_reading_back_says_so_when_progress_is_on(folder, capsys):
    lab.train("none", "prev", **TINY)
    lab.train("none", "prev", **{**TINY, "progress": True})
    assert "read from the model cache" in capsys.readouterr().out


#: Settings that each decide the parameters: changing any one must give another model, never the cached one.
CHANGES = {
    "seed": {"seed": 1},
    "steps": {"steps": 4},
    "lr": {"lr": 2e-3},
    "batch": {"batch": 16},
    "width": {"d_model": 16},
    "train_len": {"train_len": 12},
    "a scheme option": {"t5_buckets": 6},
}


def models_served_stale(train_fn) -> list[str]:
    """The settings of CHANGES for which ``train_fn`` returned the cached base model instead of a new one."""
    base = train_fn(**TINY)
    stale = []
    for name, change in CHANGES.items():
        other = train_fn(**{**TINY, **change})
        if same_model(other, base):
            stale.append(name)
    return stale


def train_t5(**kw):
    return lab.train("t5", "prev", **{"t5_buckets": 8, **kw})  # 8 buckets: the tiny L = 8 reaches them


@pytest.mark.full  # trains a model per setting: make test-all (run it after any change to posenc_helpers/lab)
def test_every_setting_that_decides_the_model_is_in_the_key(folder):
    assert models_served_stale(train_t5) == []


@pytest.mark.full  # trains: make test-all
def test_the_check_catches_a_key_that_forgets_the_learning_rate(folder, monkeypatch):
    # the planted defect: a key without the learning rate serves the base model for another rate
    # (the seed cannot be forgotten this way: the key also holds the starting parameters, drawn from the seed)
    real = cache.key_of

    def forgetful(material):
        return real({k: v for k, v in material.items() if k != "lr"})

    monkeypatch.setattr(cache, "key_of", forgetful)
    assert models_served_stale(train_t5) == ["lr"]


def test_the_code_and_the_machine_are_in_the_key(monkeypatch):
    material = {"seed": 0}
    key = cache.key_of(material)
    monkeypatch.setattr(cache, "code_version", lambda: "another version of the lab")
    assert cache.key_of(material) != key
    monkeypatch.undo()
    monkeypatch.setenv("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false --another-flag")
    assert cache.key_of(material) != key
    machine = cache.environment()
    assert {"platform", "machine", "cores", "cpu", "xla_flags"} <= machine.keys()
    assert {"jax", "jaxlib", "optax", "numpy"} <= machine["versions"].keys()
    monkeypatch.setattr(cache, "cpu", lambda: {"model": "another processor", "flags_sha256": "0" * 16})
    assert cache.key_of(material) != key


def _imports(path):
    """``(level, module, names)`` of every import of a module's source: level 1 is the lab, 2 the package."""
    import ast

    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            out.append((node.level, node.module or "", tuple(a.name for a in node.names)))
    return out


def test_the_modules_that_decide_parameters_import_nothing_the_key_leaves_out():
    # every lab module a module of IN_KEY imports is hashed too, except the pool (its XLA flags are in the key's
    # machine part) and evaluate's rope_scaling (the frequencies and scale it returns are in the key itself);
    # every package module is hashed whole (HELPERS_IN_KEY), decides no number (_validate), or gives only the
    # functions whose source is hashed (FUNCTIONS_IN_KEY)
    lab_ok = {name.removesuffix(".py") for name in cache.IN_KEY} | {"pool", "evaluate"}
    whole = {name.removesuffix(".py") for name in cache.HELPERS_IN_KEY} | {"_validate"}
    functions = {}
    for module, name in cache.FUNCTIONS_IN_KEY:
        functions.setdefault(module.rpartition(".")[2], set()).add(name)
    for path in cache.code_files()[: len(cache.IN_KEY)]:
        for level, module, names in _imports(path):
            if level == 1:
                target = module or names[0]
                assert target in lab_ok, f"{path.name} imports lab module {target!r}, which the key leaves out"
            elif module in functions:
                assert set(names) <= functions[module], f"{path.name} imports {names} from {module}: not in the key"
            else:
                assert (module or names[0]) in whole, f"{path.name} imports {module or names[0]!r}: not in the key"


def test_a_helper_function_of_the_model_is_in_the_key(monkeypatch):
    # the code of t5_bucket is hashed: a change to it is another key (the module relative.py is not hashed whole);
    # a comment is not code, so adding one keeps the key
    import inspect

    real = inspect.getsource
    key = cache.code_version()
    monkeypatch.setattr(inspect, "getsource", lambda f: real(f) + ("# a comment\n" if f.__name__ == "t5_bucket" else ""))
    cache.code_version.cache_clear()
    assert cache.code_version() == key
    monkeypatch.setattr(inspect, "getsource", lambda f: real(f) + ("x = 1\n" if f.__name__ == "t5_bucket" else ""))
    cache.code_version.cache_clear()
    try:
        assert cache.code_version() != key
    finally:
        monkeypatch.undo()
        cache.code_version.cache_clear()


def only_entry(folder):
    (path,) = folder.glob("*.npz")
    return path


def test_a_truncated_entry_is_trained_again_not_trusted(folder):
    first = lab.train("alibi", "prev", **TINY)
    path = only_entry(folder)
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    with pytest.warns(UserWarning, match="cannot be trusted"):
        again = lab.train("alibi", "prev", **TINY)
    assert same_model(first, again)
    assert cache.load(path.stem) is not None  # the retrained model replaced the broken entry


def test_an_entry_whose_arrays_changed_is_trained_again(folder):
    first = lab.train("alibi", "prev", **TINY)
    path = only_entry(folder)
    with np.load(path) as data:
        arrays = {name: data[name] for name in data.files}
    name = next(n for n in arrays if n.startswith("params:"))
    arrays[name] = arrays[name] + 1.0  # a readable file whose numbers are not the stored ones
    with zipfile.ZipFile(path, "w") as z:  # rewrite as np.savez does, keeping the stored checksum
        for n, a in arrays.items():
            with z.open(f"{n}.npy", "w") as f:
                np.lib.format.write_array(f, a)
    with pytest.warns(UserWarning, match="key or checksum"):
        again = lab.train("alibi", "prev", **TINY)
    assert same_model(first, again)


def test_off_stores_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv(cache.ENV, "off")
    assert cache.directory() is None
    lab.train("alibi", "prev", **TINY)
    assert cache.store("k", {"x": np.zeros(1)}) is None and cache.load("k") is None


def test_the_default_folder_is_the_users_cache_outside_the_repository(monkeypatch, tmp_path):
    monkeypatch.delenv(cache.ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache.directory() == tmp_path / "posenc_helpers" / "models"
    monkeypatch.delenv("XDG_CACHE_HOME")
    root = cache._PACKAGE.parent
    assert root not in cache.directory().parents


def test_clear_empties_the_cache(folder):
    lab.train("alibi", "prev", **TINY)
    lab.train("none", "prev", **TINY)
    assert cache.clear() == 2 and not list(folder.glob("*.npz"))


def test_cache_must_be_a_boolean(folder):
    with pytest.raises(TypeError, match="cache must be True or False, got 'yes'"):
        lab.train("alibi", "prev", cache="yes", **TINY)


def test_flatten_and_unflatten_are_inverse():
    tree = {"embed": np.arange(3.0), "blocks": [{"ln": {"gain": np.ones(2)}}, {"ln": {"gain": np.zeros(2)}}]}
    back = cache.unflatten(cache.flatten(tree))
    assert back.keys() == tree.keys() and isinstance(back["blocks"], list) and len(back["blocks"]) == 2
    assert np.array_equal(back["blocks"][1]["ln"]["gain"], np.zeros(2))
    with pytest.raises(ValueError, match="may not contain '/'"):
        cache.flatten({"a/b": np.zeros(1)})


def train_and_tell(folder):
    """One of two processes asking for the same model at once: did it read the model back? (a pool job)"""
    import contextlib
    import io
    import os

    os.environ[cache.ENV] = folder
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        lab.train("alibi", "prev", **{**TINY, "steps": 60, "progress": True})
    return "read from the model cache" in out.getvalue()


@pytest.mark.full  # trains: make test-all
def test_two_processes_asking_for_one_model_train_it_once(folder):
    from posenc_helpers.lab.results import pool_map

    told = pool_map(train_and_tell, [(str(folder),), (str(folder),)], workers=2)
    assert sorted(told) == [False, True], "one trains, the other waits for its lock and reads the model back"
