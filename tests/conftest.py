"""Fixtures shared by the unit tests and the browser tests."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def built_book(tmp_path_factory):
    """The static book, built once per session with every Sphinx warning an error; its HTML folder."""
    from tools import book

    return book.build(tmp_path_factory.mktemp("book"), strict=True)
