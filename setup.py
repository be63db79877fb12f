"""Packaging that pyproject.toml cannot say (everything else is there).

The message catalogues live in data/locales/ of the checkout (where translators and the
other engineers edit them) and ship inside the `core` package of the wheel, as
core/locales/, so an installed bot finds them through importlib.resources
(core/text/i18n.py, docs/layout.md). pyproject's [tool.setuptools] cannot combine `find`
with an extra mapped package, hence this file. bench/ and tests/ are not shipped.
"""

from setuptools import find_packages, setup

setup(
    packages=[*find_packages(include=["core", "core.*", "cogs", "cogs.*",
                                      "archive", "archive.*"]),
              "core.locales"],
    package_dir={"core.locales": "data/locales"},
    # the catalogues, and the archive's Jinja2 templates (loaded from the package); one
    # table here, since a [tool.setuptools.package-data] in pyproject would replace it
    package_data={"core.locales": ["*.toml", "*/*.toml"], "archive": ["templates/*"]},
    py_modules=["cli", "bot"],
    include_package_data=False,
)
