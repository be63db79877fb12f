"""Every catalogue and translation test runs strict (see tests/conftest.py)."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _strict(strict_i18n: None) -> None:
    """Requesting the fixture is the whole job: strict for the test's duration."""
