"""Generated files must match their generators: navigation, README contents, figures (to anti-aliasing noise)."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pytest

from posenc_helpers.style import style
from tools import figures, nav, split_checks

ROOT = Path(__file__).resolve().parent.parent


def test_navigation_and_contents_are_current():
    changes = nav.planned_changes(ROOT)
    assert not changes, "out of date (run: make nav): " + ", ".join(str(p.relative_to(ROOT)) for p in changes)


def test_no_lesson_cell_ends_in_a_long_run_of_checks():
    assert split_checks.main(["--check"]) == 0, "run: python -m tools.split_checks"


def test_split_checks_moves_the_checks_and_renumbers_what_follows(tmp_path):
    import nbformat

    nb = nbformat.v4.new_notebook()
    lesson = "x = 2\nprint(x)\n" + "".join(f"assert x > {i}\n" for i in range(-2, 2))
    nb.cells = [nbformat.v4.new_code_cell(lesson, execution_count=1),
                nbformat.v4.new_code_cell("fig", execution_count=2),
                nbformat.v4.new_code_cell("y = 1\nfig\n" + "assert y\n" * 4, execution_count=3)]
    nb.cells[1].outputs = [nbformat.v4.new_output("execute_result", {"text/plain": "F"}, execution_count=2)]
    path = tmp_path / "n.ipynb"
    nbformat.write(nb, path)
    assert split_checks.main(["--check", str(path)]) == 1
    assert split_checks.main([str(path)]) == 0 and split_checks.main(["--check", str(path)]) == 0
    cells = nbformat.read(path, as_version=4).cells
    assert [c.source.split("\n")[0] for c in cells] == ["x = 2", split_checks.HEADER, "fig", "y = 1"]
    assert cells[1].source.count("assert ") == 4 and "assert" not in cells[0].source
    assert [c.execution_count for c in cells] == [1, 2, 3, 4] and cells[2].outputs[0].execution_count == 3
    assert cells[3].source.count("assert ") == 4, "a cell left ending on `fig` would show a value: not split"


def test_every_numbered_notebook_is_in_the_readme():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for entry in nav.entries(ROOT):
        assert f"(notebooks/{entry.path.name})" in readme


def test_nav_check_mode_detects_drift(tmp_path):
    # A copy of the repo's notebooks and README, with one navigation cell edited by hand.
    (tmp_path / "notebooks").mkdir()
    for path in nav.entries(ROOT)[:2]:
        (tmp_path / "notebooks" / path.path.name).write_text(path.path.read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "README.md").write_text((ROOT / "README.md").read_text(encoding="utf-8"), encoding="utf-8")
    nav.main(["--root", str(tmp_path)])
    assert nav.main(["--check", "--root", str(tmp_path)]) == 0
    first = sorted((tmp_path / "notebooks").glob("*.ipynb"))[0]
    first.write_text(first.read_text(encoding="utf-8").replace("[Contents]", "[Home]"), encoding="utf-8")
    assert nav.main(["--check", "--root", str(tmp_path)]) == 1


# A committed figure is compared with a fresh render pixel by pixel, not byte for byte: the same lock renders a
# few anti-aliased edge pixels differently on another machine. float64 results of pow, exp and log10 differ in the last
# bit between numpy's AVX-512 and AVX2 code paths, and a vertex that sits on a boundary of Agg's 1/256-pixel grid
# moves by one step. Measured for 11-model-wavelengths (log axes) on a machine without AVX-512: 44 of its 460,800
# pixels (0.01 %) differ, by at most 3 of 255 levels (issue 25; NPY_DISABLE_CPU_FEATURES="X86_V4 AVX512_ICL
# AVX512_SPR" on an AVX-512 machine moves the same 44 pixels, by 1 level). A real change
# is far outside both limits below: a line drawn in another colour changes its pixels by tens of levels, a changed
# label's glyphs by up to 255, and a line moved by half a pixel changes its edge pixels by about 100
# (test_the_pixel_comparison_reports_a_real_change plants each of these).
#: The most any channel of any pixel may differ, in levels of 255: a few times the measured 3.
NOISE_LEVELS = 8
#: The largest share of pixels that may differ at all: ten times the measured 0.01 %.
NOISE_SHARE = 1e-3


def png_differences(new: Path, old: Path) -> list[str]:
    """Why two PNG renders of one figure differ by more than anti-aliasing noise; [] when they do not."""
    from matplotlib.image import imread

    # imread gives float32 in [0, 1], exactly level / 255 for an 8-bit PNG
    a, b = (np.rint(imread(path) * 255).astype(np.int16) for path in (new, old))
    if a.shape != b.shape:
        return [f"size {a.shape} instead of {b.shape}"]
    levels = np.abs(a - b).max(axis=-1)  # per pixel, the largest change over its channels
    problems = []
    if levels.max() > NOISE_LEVELS:
        problems.append(f"a pixel differs by {levels.max()} of 255 levels (noise: at most {NOISE_LEVELS})")
    if (levels > 0).mean() > NOISE_SHARE:
        problems.append(f"{(levels > 0).mean():.2%} of the pixels differ (noise: at most {NOISE_SHARE:.1%})")
    return problems


@pytest.mark.slow  # renders every figure of the course anew: 10-20 s
def test_regenerated_figures_match_the_committed_ones_up_to_antialiasing_noise(tmp_path):
    written = figures.write_all(tmp_path)
    committed = sorted((ROOT / "figures").glob("*.png"))
    assert sorted(p.name for p in written) == [p.name for p in committed], "run: make figures"
    stale = {p.name: png_differences(p, ROOT / "figures" / p.name) for p in written}
    stale = {name: problems for name, problems in stale.items() if problems}
    assert not stale, f"out of date (run: make figures): {stale}"


def _render(make, path: Path, change=None) -> Path:
    with style():
        fig = make()
        if change is not None:
            change(fig.axes[0])
        fig.savefig(path, format="png", dpi=fig.dpi, metadata={"Software": None})
    plt.close(fig)
    return path


def test_the_pixel_comparison_reports_a_real_change(tmp_path):
    make = figures.registry()["11-model-wavelengths"]
    fresh = _render(make, tmp_path / "fresh.png")
    again = _render(make, tmp_path / "again.png")
    assert again.read_bytes() == fresh.read_bytes(), "two renders on one machine are byte-identical"
    assert png_differences(again, fresh) == []

    def recolour(ax):  # the first model's line in the next colour of the palette
        ax.lines[0].set_color(ax.lines[1].get_color())

    def relabel(ax):  # one word of the x label
        ax.set_xlabel(ax.get_xlabel().replace("fast", "slow", 1))

    def move(ax):  # the first model's line up by 2 %: about half a pixel on this log axis
        ax.lines[0].set_ydata(ax.lines[0].get_ydata() * 1.02)

    for change in (recolour, relabel, move):
        changed = _render(make, tmp_path / f"{change.__name__}.png", change)
        assert png_differences(changed, fresh), f"{change.__name__}: not reported"
    other = _render(figures.registry()["11-mrope-ids"], tmp_path / "other.png")
    assert png_differences(other, fresh), "another figure: not reported"


def test_every_figure_is_shown_by_a_notebook():
    texts = "".join(p.read_text(encoding="utf-8") for p in (ROOT / "notebooks").rglob("*.ipynb"))
    for path in (ROOT / "figures").glob("*.png"):
        assert f"figures/{path.name}" in texts, f"no notebook shows figures/{path.name}"
