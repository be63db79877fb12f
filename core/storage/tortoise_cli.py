"""Config for Tortoise's own CLI, used only to write new migrations:

    PYTHONPATH=. .venv/bin/tortoise -c core.storage.tortoise_cli.TORTOISE_ORM \\
        makemigrations -n what_changed

It points at an in-memory SQLite database; the bot itself applies migrations in `init_db`.
"""

from __future__ import annotations

from typing import Any

from core.settings import database_config

TORTOISE_ORM: dict[str, Any] = database_config("sqlite://:memory:", create_dirs=False)
