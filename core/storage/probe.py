"""What an operator's probes read from the database (cogs/metrics.py: /healthz and
/metrics): the count of parked outbox entries, which also proves the database answers."""

from __future__ import annotations

from .db import reader
from .models import PARKED, Outbox


async def parked() -> int:
    """Outbox entries parked for the master (all guilds: the database's count)."""
    query = Outbox.filter(status=PARKED)
    connection = reader()
    if connection is not None:  # SQLite: not behind a write in flight
        query = query.using_db(connection)
    return await query.count()
