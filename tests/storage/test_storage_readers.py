"""Each reader's choices beside the game (core/storage/readers.py): a language is
written only when it changes, the master's desk pings keep their default until chosen,
and both are read back from the database by a new process (a restart)."""

from __future__ import annotations

from core.sight.deskpings import DEFAULT_PINGS
from core.storage.models import Reader
from core.storage.readers import Readers
from core.storage.service import GameService


async def test_choices_are_written_when_they_change_and_survive_a_restart(
        game_service: GameService) -> None:
    svc = game_service
    gid = await svc.create(1, 10, 1, "Langs", seed=1)
    other = await svc.create(1, 11, 1, "Other", seed=2)
    writes = 0
    write = svc.write

    async def counting(work):  # type: ignore[no-untyped-def]
        nonlocal writes
        writes += 1
        return await write(work)

    readers = Readers(counting)
    assert await readers.language(gid, 100, "ru") == "ru"  # nothing known: the game's
    assert await readers.note_language(gid, 100, "en")
    assert not await readers.note_language(gid, 100, "en")  # the same: no write
    assert writes == 1
    assert await readers.language(gid, 100, "ru") == "en"
    assert await readers.language(other, 100, "ru") == "ru"  # per game
    assert await readers.note_language(gid, 100, "")  # a client we have no words for
    assert await readers.language(gid, 100, "ru") == "ru"
    assert await readers.note_language(gid, 100, "en")
    assert await readers.desk_pings(gid, 1) == DEFAULT_PINGS
    await readers.set_desk_pings(gid, 1, {"sight", "away", "nonsense"})
    assert writes == 4
    assert await Reader.filter(game_id=gid).count() == 2

    again = Readers(svc.write)  # a new process: only the database knows
    assert await again.language(gid, 100, "ru") == "en"
    assert await again.desk_pings(gid, 1) == {"away", "sight"}
    await again.set_desk_pings(gid, 1, [])
    assert await Readers(svc.write).desk_pings(gid, 1) == frozenset()  # none, not default
