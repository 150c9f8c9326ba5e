"""posenc_helpers.viz.precision: figure data against literal loops, the slider demo driven kernel-free."""

from __future__ import annotations

import math

import numpy as np
import pytest

from posenc_helpers import rope_score
from posenc_helpers.viz import new_figure
from posenc_helpers.viz import precision as pv

SIGNIFICANT_BITS = {"float32": 24, "float16": 11, "bfloat16": 8}


def literal_round(x: float, dtype: str) -> float:
    """Round to nearest with ties to even at the format's number of significant bits (normal numbers)."""
    if x == 0.0:
        return 0.0
    p = SIGNIFICANT_BITS[dtype]
    m, e = math.frexp(x)
    return math.ldexp(round(math.ldexp(m, p)), e - p)


def literal_angle(pos, k, dim, dtype, base=10000.0):
    omega = base ** (-2 * k / dim)
    return literal_round(literal_round(pos, dtype) * literal_round(omega, dtype), dtype)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_cos_error_curve_matches_literal(dtype):
    # max_pos = 600, 3 bands, per_bin above any band size: every integer is used, so a literal loop can redo it
    centres, errors = pv.cos_error_curve(dtype, omega=1.0, max_pos=600, n_bins=3, per_bin=1000)
    edges = [600 ** (i / 3) for i in range(4)]
    for j in range(3):
        lo, hi = edges[j], edges[j + 1]
        worst = 0.0
        for pos in range(math.ceil(lo), math.floor(hi) + 1):
            angle = literal_round(literal_round(pos, dtype) * 1.0, dtype)
            worst = max(worst, abs(literal_round(math.cos(angle), dtype) - math.cos(pos)))
        assert math.isclose(centres[j], math.sqrt(lo * hi), rel_tol=1e-12)
        assert errors[j] == worst


def test_cos_error_curve_drops_float16_overflow():
    centres, _ = pv.cos_error_curve("float16", max_pos=1e6, n_bins=12)
    assert centres.max() < 65504
    centres32, errors32 = pv.cos_error_curve("float32", max_pos=1e6, n_bins=12)
    assert centres32.size == 12 and errors32.max() < 2**-23  # float32 is exact for these integers


def test_precision_demo_defaults_and_driving():
    demo = pv.precision_demo()
    h = demo.handles
    # default: pos 257 in bfloat16 is stored as 256
    np.testing.assert_allclose(h["stored"].get_xydata()[1], [math.cos(256), math.sin(256)], atol=1e-12)
    np.testing.assert_allclose(h["exact"].get_xydata()[1], [math.cos(257), math.sin(257)], atol=1e-12)
    assert "256" in demo.readout.value and "bfloat16" in demo.readout.value

    demo.controls["pos"].value = 5001
    want = [abs(literal_angle(5001, k, 128, "bfloat16") - 5001 * 10000.0 ** (-2 * k / 128)) for k in range(64)]
    np.testing.assert_allclose(h["error"].get_ydata(), np.maximum(want, pv.ERROR_FLOOR), rtol=1e-12)
    stored = literal_round(5001, "bfloat16")  # gap 32 above 4096: 5001 → 4992
    assert stored == 4992
    assert f"<td>{stored:g}</td>" in demo.readout.value
    off = sum(w > 0.1 for w in want)
    assert f"{off} of 64" in demo.readout.value

    demo.controls["dtype"].value = "float32"
    np.testing.assert_allclose(h["stored"].get_xydata()[1], [math.cos(5001), math.sin(5001)], atol=1e-12)
    want32 = [abs(literal_angle(5001, k, 128, "float32") - 5001 * 10000.0 ** (-2 * k / 128)) for k in range(64)]
    # atol: the literal exact angle 5001·ω_k and the helper's may differ in the last float64 bit (~1e-12 rad)
    np.testing.assert_allclose(h["error"].get_ydata(), np.maximum(want32, pv.ERROR_FLOOR), rtol=0, atol=1e-11)
    assert "0 of 64" in demo.readout.value

    demo.set_values(pos=257, dtype="bfloat16")
    np.testing.assert_allclose(h["stored"].get_xydata()[1], [math.cos(256), math.sin(256)], atol=1e-12)


def test_precision_demo_static_parts():
    demo = pv.precision_demo()
    clock, err = demo.fig.axes
    assert err.get_yscale() == "log"
    for ax in (clock, err):
        assert ax.get_xlabel() and ax.get_ylabel() and ax.get_title()
        assert "unitless" not in ax.get_xlabel() + ax.get_ylabel()
    assert "(rad)" in err.get_ylabel()
    for name in ("exact", "stored", "error"):
        assert demo.handles[name].get_animated()
    assert pv.DEMOS == {"precision": pv.precision_demo}


def test_update_rejects_bad_dtype():
    demo = pv.precision_demo()
    with pytest.raises(ValueError, match="dtype must be one of"):
        pv.update_precision(demo.handles, 10, "int8")


def test_score_drift_data():
    rng = np.random.default_rng(3)
    q, k = rng.standard_normal(8), rng.standard_normal(8)
    m = np.array([10.0, 300.0, 5000.0])
    data = pv.score_drift(q, k, 4, m)
    assert data["exact"] == pytest.approx(rope_score(q, k, 4, 0))

    def literal_score(mi, ni, dtype):
        total = 0.0
        for p in range(4):
            a_m, a_n = literal_angle(mi, p, 8, dtype), literal_angle(ni, p, 8, dtype)
            cm, sm = literal_round(math.cos(a_m), "bfloat16"), literal_round(math.sin(a_m), "bfloat16")
            cn, sn = literal_round(math.cos(a_n), "bfloat16"), literal_round(math.sin(a_n), "bfloat16")
            qa, qb, ka, kb = q[2 * p], q[2 * p + 1], k[2 * p], k[2 * p + 1]
            total += (qa * cm - qb * sm) * (ka * cn - kb * sn) + (qa * sm + qb * cm) * (ka * sn + kb * cn)
        return total

    for i, mi in enumerate(m):
        assert data["bfloat16 angles"][i] == pytest.approx(literal_score(mi, mi - 4, "bfloat16"), abs=1e-12)
        assert data["float32 angles, bfloat16 tables"][i] == pytest.approx(
            literal_score(mi, mi - 4, "float32"), abs=1e-12
        )


def test_plots_and_figures():
    fig, ax = new_figure()
    h = pv.plot_score_drift(ax, dim=16, max_pos=2000, step=50)
    np.testing.assert_array_equal(h["lines"]["bfloat16 angles"].get_xdata(), np.arange(4, 2000, 50))
    assert h["lines"]["exact"].get_ydata()[0] == pytest.approx(rope_score(h["q"], h["k"], 4, 0))
    assert "unitless" not in ax.get_ylabel() and "score" in ax.get_ylabel() and "(tokens)" in ax.get_xlabel()
    fig, ax = new_figure()
    h = pv.plot_cos_error(ax, dtypes=("bfloat16",), max_pos=1000)
    assert set(h["lines"]) == {"bfloat16"} and ax.get_yscale() == "log" and "cos" in ax.get_ylabel()
    assert "unitless" not in ax.get_ylabel()
    assert set(pv.FIGURES) == {"10-cos-error", "10-score-drift"}


def test_cos_error_figure_has_pairs_0_1_and_63():
    fig, handles = pv.make_cos_error_figure(max_pos=1e4)
    assert list(handles) == [0, 1, 63] and len(fig.axes) == 3
    # ω_k = 10000^(−2k/128), written out
    for pair, h in handles.items():
        assert h["omega"] == pytest.approx(10000.0 ** (-2 * pair / 128), rel=1e-15)
        assert f"pair {pair}" in h["lines"]["float32"].axes.get_title()


def test_cos_error_pair_1_float32_drifts_below_2_24():
    # pair 1's float32 angle at 10^6, literal: ω₁ and the product rounded to 24 bits; 10^6 itself is exact
    omega1 = 10000.0 ** (-1 / 64)
    angle = literal_round(literal_round(1e6, "float32") * literal_round(omega1, "float32"), "float32")
    drift = abs(angle - 1e6 * omega1)
    assert 0.05 < drift < 0.052
    # the figure's curve for pair 1 shows it: the band around 10^6 has a cos error of several hundredths
    centres, errors = pv.cos_error_curve("float32", omega1, max_pos=1e8)
    band = np.argmin(np.abs(np.log(centres) - np.log(1e6)))
    assert 0.01 < errors[band] < 0.07
    # pair 0 (ω = 1 exact) shows nothing there: only the cos rounding, below 2^-24
    _, errors0 = pv.cos_error_curve("float32", 1.0, max_pos=1e8)
    assert errors0[band] < 2**-24


def test_plot_cos_error_rejects_bad_pair():
    fig, ax = new_figure()
    with pytest.raises(ValueError, match="pair must be an integer from 0 to 63"):
        pv.plot_cos_error(ax, pair=64)


def test_readouts_do_not_wrap():
    demo = pv.precision_demo()
    assert "white-space:nowrap" in demo.readout.value
