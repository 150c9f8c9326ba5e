"""The lab models notebook 18 reads, shipped (posenc_helpers/data/serving_lab): the files, the numpy loader against
the lab's own model, and a retrained model against its file."""

from __future__ import annotations

import fnmatch
import hashlib
import tomllib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc_helpers import serving

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "posenc_helpers" / "data" / "serving_lab"
SHIPPED = (("rope", "passkey", 0), ("rope", "passkey", 1), ("rope", "passkey", 2), ("learned", "prev", 0))


def test_the_files_are_listed_with_their_checksums_float16_and_small():
    files = serving.lab_model_settings()["files"]
    assert sorted(files) == sorted(serving.lab_model_file(*m) for m in SHIPPED)
    assert sorted(p.name for p in DATA.glob("*.npz")) == sorted(files)
    total = 0
    for name, info in files.items():
        data = (DATA / name).read_bytes()
        assert hashlib.sha256(data).hexdigest() == info["sha256"] and len(data) == info["bytes"], name
        assert (info["scheme"], info["task"], info["seed"]) in SHIPPED and name.startswith(info["scheme"])
        assert info["config"]["scheme"] == info["scheme"] and info["config"]["train_len"] == 32
        total += len(data)
        with np.load(DATA / name) as npz:
            assert {a.dtype for a in npz.values()} == {np.dtype(np.float16)}, name
    assert total < 1_000_000


def test_the_settings_say_how_they_were_trained_and_where():
    s = serving.lab_model_settings()
    assert s["dtype"] == "float16" and "make lab-serving" in s["command"] and len(s["code_version"]) == 64
    assert {"cpu", "versions", "xla_flags"} <= set(s["fingerprint"])
    assert all(f["steps"] == s["defaults"]["steps"] for f in s["files"].values())


def _glob_match(name, pattern):
    # setuptools' package-data globs: "*" stays within one folder ("data/*.json" does not reach data/x/y.json)
    parts, want = name.split("/"), pattern.split("/")
    return len(parts) == len(want) and all(fnmatch.fnmatchcase(p, w) for p, w in zip(parts, want, strict=True))


def test_the_glob_match_is_per_folder():
    assert _glob_match("data/serving_lab/settings.json", "data/serving_lab/*.json")
    assert not _glob_match("data/serving_lab/settings.json", "data/*.json")  # fnmatch alone would say yes


def test_the_wheel_ships_them():
    globs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["posenc_helpers"]
    for path in DATA.iterdir():
        name = path.relative_to(ROOT / "posenc_helpers").as_posix()
        assert any(_glob_match(name, g) for g in globs), name


def test_a_model_loads_as_the_labs_layout_in_float32():
    p = serving.load_lab_model("learned", "prev", 0)
    assert p["pos"].shape == (32, 64) and p["embed"].shape == (16, 64) and len(p["blocks"]) == 2
    assert {a.dtype for a in serving.flatten_params(p).values()} == {np.dtype(np.float32)}
    # the file's float16 values, exactly
    with np.load(DATA / "learned_prev_seed_0.npz") as npz:
        assert np.array_equal(npz["blocks.1.qkv"].astype(np.float32), p["blocks"][1]["qkv"])


@pytest.mark.parametrize("args, named", [
    (("rope", "passkey", "0"), "seed must be an integer, got '0'"),
    (("rope", "passkey", 0.0), "seed must be an integer"),
    (("rope", "passkey", 3), "seed 3"),
    (("alibi", "passkey", 0), "'alibi'"),
    (("rope", "prev", 0), "'prev'"),
])
def test_what_is_not_shipped_is_refused_by_name(args, named):
    with pytest.raises(ValueError) as info:
        serving.load_lab_model(*args)
    assert named in str(info.value)
    if "integer" not in named:
        assert "no shipped lab model" in str(info.value) and "shipped: ('learned', 'prev', 0)" in str(info.value)


_leaf = st.integers(-5, 5)
_trees = st.recursive(
    _leaf,
    lambda inner: st.one_of(st.lists(inner, min_size=1, max_size=3),
                            st.dictionaries(st.from_regex(r"[a-z_]{1,4}", fullmatch=True), inner, min_size=1,
                                            max_size=3)),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.from_regex(r"[a-z_]{1,4}", fullmatch=True), _trees, min_size=1, max_size=3))
def test_flatten_then_unflatten_gives_the_tree_back(tree):
    flat = serving.flatten_params(tree)
    assert all(isinstance(k, str) for k in flat) and len(flat) == len(set(flat))
    assert serving.unflatten_params(flat) == tree


@pytest.mark.parametrize("flat, named", [
    ({"blocks.0.w": 1, "blocks.2.w": 2}, r"blocks: list entries \[0, 2\]"),
    ({"blocks.00.w": 1}, "'blocks.00.w' has an empty segment or a list index"),
    ({"a..b": 1}, "'a..b' has an empty segment"),
    ({"x.²": 1}, "'x.²' has an empty segment or a list index"),
    ({"a": 1, "a.b": 2}, "'a.b' runs through 'a', which holds a value"),
    ({"a.b": 2, "a": 1}, "'a' is also the prefix of another path"),
    ({"a.0": 1, "a.b": 2}, "a mixes list indices"),
    ({1: 2}, "paths must be strings"),
])
def test_unflatten_refuses_what_flatten_never_writes(flat, named):
    with pytest.raises(ValueError, match=named):
        serving.unflatten_params(flat)


@pytest.mark.parametrize("tree, named", [
    ({"a.b": 1}, "params: key 'a.b' cannot be flattened"),
    ({"a": {"0": 1}}, "a: key '0' cannot be flattened"),
    ({"a": {}}, "a: an empty dict"),
    ({"a": []}, "a: an empty list"),
    ({1: 2}, "params: key 1 cannot be flattened"),
])
def test_flatten_refuses_what_unflatten_could_not_give_back(tree, named):
    with pytest.raises(ValueError, match=named):
        serving.flatten_params(tree)


# ---- with the lab (JAX) ------------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("scheme, task, seed", SHIPPED)
def test_the_numpy_runner_reads_a_shipped_model_as_the_lab_does(scheme, task, seed):
    lab = pytest.importorskip("posenc_helpers.lab")
    run = lab.shipped_run(scheme, task, seed)
    assert run.config.scheme == scheme and run.task == task and run.seed == seed and run.train_len == 32
    assert run.losses.shape == (run.steps,) and run.losses[-1] < run.losses[0]
    tokens = np.asarray(lab.test_batch("prev", 32)[0])
    theirs = np.asarray(lab.forward(run.params, tokens, run.config))
    ours = serving.forward(serving.load_lab_model(scheme, task, seed), tokens, heads=run.config.heads, scheme=scheme)
    assert np.abs(ours - theirs).max() < 1e-3


def _retrain(scheme, task, seed):
    # one model as tools/serving_lab.py trains it, in a worker of the lab's pool, never from the model cache
    import os

    os.environ["POSENC_MODEL_CACHE"] = "off"
    from tools.serving_lab import train_one

    return train_one(scheme, task, seed)


@pytest.mark.full
def test_a_retrained_model_is_its_shipped_file():
    """Bit for bit after float16 rounding where the files' fingerprint is this machine's; elsewhere the retrained
    model finds the passkey as the shipped seeds do (whole keys at L, each depth, within their spread)."""
    lab = pytest.importorskip("posenc_helpers.lab")
    from lab_rows import say_another_machine, within_spread

    from posenc_helpers.lab import fingerprint
    from posenc_helpers.lab.passkey import DEPTHS, passkey_grid
    from posenc_helpers.lab.pool import pool_map

    ((config, steps, flat, losses),) = pool_map(_retrain, [("rope", "passkey", 0)], workers=2)
    shipped = serving.flatten_params(serving.load_lab_model("rope", "passkey", 0))
    assert config == serving.lab_model_settings()["files"]["rope_passkey_seed_0.npz"]["config"] and steps == 1000
    exact, reason = fingerprint.same(serving.lab_model_settings()["fingerprint"], fingerprint.fingerprint(worker=True))
    if exact:
        for name, a in flat.items():
            assert np.array_equal(np.asarray(a, np.float16).astype(np.float32), shipped[name]), name
        assert losses == serving.lab_model_settings()["files"]["rope_passkey_seed_0.npz"]["losses"]
        return
    say_another_machine("serving_lab", reason)
    run = lab.shipped_run("rope", "passkey", 0)
    retrained = lab.Run("rope", "passkey", 32, serving.unflatten_params(
        {k: np.asarray(a, np.float16).astype(np.float32) for k, a in flat.items()}), np.zeros(0), run.config, 0, steps)
    got = passkey_grid(retrained, [32], DEPTHS)["key"][:, 0]
    seeds = np.array([passkey_grid(lab.shipped_run("rope", "passkey", s), [32], DEPTHS)["key"][:, 0] for s in (0, 1, 2)])
    for d in range(len(DEPTHS)):
        assert within_spread(float(got[d]), seeds[:, d], floor=0.05), (DEPTHS[d], got[d], seeds[:, d])
