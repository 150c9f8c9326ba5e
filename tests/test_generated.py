"""Generated files must match their generators: navigation, README contents, figures."""

from __future__ import annotations

from pathlib import Path

from tools import figures, nav

ROOT = Path(__file__).resolve().parent.parent


def test_navigation_and_contents_are_current():
    changes = nav.planned_changes(ROOT)
    assert not changes, "out of date (run: make nav): " + ", ".join(str(p.relative_to(ROOT)) for p in changes)


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


def test_figures_regenerate_byte_identically(tmp_path):
    written = figures.write_all(tmp_path)
    committed = sorted((ROOT / "figures").glob("*.png"))
    assert sorted(p.name for p in written) == [p.name for p in committed], "run: make figures"
    for path in written:
        assert path.read_bytes() == (ROOT / "figures" / path.name).read_bytes(), f"{path.name} differs: run make figures"


def test_every_figure_is_shown_by_a_notebook():
    texts = "".join(p.read_text(encoding="utf-8") for p in (ROOT / "notebooks").rglob("*.ipynb"))
    for path in (ROOT / "figures").glob("*.png"):
        assert f"figures/{path.name}" in texts, f"no notebook shows figures/{path.name}"
