"""`posenc explain --engine transformers` when transformers itself fails: one line, status 2, never a traceback.

No torch or transformers is needed: the engine's loader is replaced by stand-ins (a config class, a model builder)
that fail the way transformers' own code can, and the command is run in-process (tests/test_explain_hf.py runs the
real engine under `make test-hf`).
"""

from __future__ import annotations

import io
import json
import tomllib
import types
from pathlib import Path

import pytest

from posenc_helpers import explain_cli, explain_hf

CONFIG = {"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
          "num_key_value_heads": 2, "rope_theta": 10000.0, "max_position_embeddings": 256, "torch_dtype": "bfloat16"}


class LlamaConfig:
    """A stand-in config class: from_dict as transformers' classes have it, failing when asked to."""

    fail_with: BaseException | None = None

    def __init__(self, config: dict):
        self.model_type = config["model_type"]
        self.num_hidden_layers = config["num_hidden_layers"]

    @classmethod
    def from_dict(cls, config: dict):
        if cls.fail_with is not None:
            raise cls.fail_with
        return cls(config)

    def get_text_config(self, decoder=False):
        return self


@pytest.fixture
def fake_transformers(monkeypatch):
    """The engine's module globals as load() sets them, with stand-ins; LlamaConfig's failure reset after."""
    monkeypatch.setattr(explain_hf, "load", lambda: None)
    monkeypatch.setattr(explain_hf, "transformers", types.SimpleNamespace(__version__="5.25.0"))
    monkeypatch.setattr(explain_hf, "CONFIG_MAPPING", {"llama": LlamaConfig})
    monkeypatch.setattr(LlamaConfig, "fail_with", None)
    return monkeypatch


def run(tmp_path, *options) -> tuple[int, str, str]:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(CONFIG), encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    status = explain_cli.main([str(path), *options], out=out, err=err)
    return status, out.getvalue(), err.getvalue()


# what transformers' code may raise: not only ValueError
FAILURES = [
    RuntimeError("shape '[1, 7, 4, 16]' is invalid for input of size 448"),
    NotImplementedError("meta tensors have no data"),
    AssertionError("head_dim must divide hidden_size"),
    ZeroDivisionError("integer division or modulo by zero"),
    KeyError("rope_type"),
    ValueError("The set of layer types producing a cache is different\nfrom the layers"),
]


@pytest.mark.parametrize("failure", FAILURES, ids=lambda e: type(e).__name__)
def test_a_failing_model_build_is_one_line_naming_the_config_class_and_status_2(fake_transformers, tmp_path,
                                                                                 failure):
    def build(_hf_cfg):
        raise failure

    fake_transformers.setattr(explain_hf, "build_meta_model", build)
    status, out, err = run(tmp_path, "--engine", "transformers")
    assert status == 2 and out == ""
    lines = err.splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith("posenc explain: error: transformers 5.25.0 cannot build the model of model_type "
                               "'llama' (LlamaConfig) from this config ("), lines[0]
    # transformers' own message, whitespace collapsed onto the line
    assert f"{type(failure).__name__}: {' '.join(str(failure).split())})" in lines[0], lines[0]


@pytest.mark.parametrize("failure", FAILURES, ids=lambda e: type(e).__name__)
def test_a_failing_config_class_is_one_line_naming_it_and_status_2(fake_transformers, tmp_path, failure):
    fake_transformers.setattr(LlamaConfig, "fail_with", failure)
    status, out, err = run(tmp_path, "--engine", "transformers")
    assert status == 2 and out == "" and len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert err.startswith("posenc explain: error: transformers 5.25.0 failed on model_type 'llama' (LlamaConfig): "
                          f"{type(failure).__name__}: "), err


def test_check_reports_the_engines_failure_and_exits_2(fake_transformers, tmp_path):
    def build(_hf_cfg):
        raise NotImplementedError("meta tensors have no data")

    fake_transformers.setattr(explain_hf, "build_meta_model", build)
    status, out, err = run(tmp_path, "--check")
    assert status == 2 and err == "" and "Traceback" not in out
    assert ("transformers engine failed: transformers 5.25.0 cannot build the model of model_type 'llama' "
            "(LlamaConfig) from this config (NotImplementedError: meta tensors have no data)") in out, out


def test_transformers_that_fails_on_import_is_one_line(monkeypatch, tmp_path):
    def broken():
        raise OSError("libcudart.so.12: cannot open shared object file")

    monkeypatch.setattr(explain_hf, "load", broken)
    status, out, err = run(tmp_path, "--engine", "transformers")
    assert status == 2 and out == "" and len(err.splitlines()) == 1, err
    assert "cannot load torch and transformers (OSError: libcudart.so.12" in err, err


def test_the_install_line_installs_the_hf_extra_with_torchs_cpu_build():
    pyproject = tomllib.loads((Path(__file__).resolve().parent.parent / "pyproject.toml").read_text(encoding="utf-8"))
    for requirement in pyproject["project"]["optional-dependencies"]["hf"]:
        assert f'pip install "{requirement}"' in explain_cli.INSTALL_HF, requirement
    assert '"torch>=2.6" --index-url https://download.pytorch.org/whl/cpu' in explain_cli.INSTALL_HF
