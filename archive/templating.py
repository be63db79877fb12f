"""The archive's one Jinja2 environment: every page and chart is a template, escaped by default.

Autoescape is on for every template whatever its name, so a value reaches the page as
text, and nothing in this package marks a value as markup or turns escaping off
(tests/archive/test_record.py holds that). A forgotten filter therefore shows
`<script>` as text instead of running it.
StrictUndefined turns a misspelt name in a template into an error, not an empty cell.
The templates ship inside the package (pyproject's package-data) and are loaded from
it, so an installed wheel renders without the source tree.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined


@cache
def environment() -> Environment:
    return Environment(
        loader=PackageLoader("archive", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
        auto_reload=False,
    )


def render_template(name: str, **context: Any) -> str:
    return environment().get_template(name).render(**context)
