"""Each reader's own choices in a game: his language and the master's desk pings.

A game has one language for its public posts; every private push is written in the
language its reader last used with the bot (his Discord client's, read from the
interaction: no request). That is a presentation preference, not a rule, so it is
kept in its own table beside the game (models.Reader) rather than in the state: the
replayed log stays the same whatever clients the players use, and the master's log
carries no noise. A row is written only when the value changes (the values are cached
per game), in a transaction of its own, once a command went through (a refused one
writes nothing), so it survives a restart; it is read when a push is rendered, so a
later switch applies to later pushes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from tortoise.backends.base.client import BaseDBAsyncClient

from core.sight.deskpings import pings, stored
from core.storage.db import reader
from core.storage.models import Reader

Write = Callable[[Callable[[BaseDBAsyncClient], Awaitable[Any]]], Awaitable[Any]]


class Readers:
    """The readers' choices of every game this process touched, cached by game."""

    def __init__(self, write: Write) -> None:
        self._write = write
        # game -> uid -> [language, desk pings] as stored (None: never chosen)
        self._games: dict[int, dict[int, list[str | None]]] = {}

    async def _of(self, game_id: int) -> dict[int, list[str | None]]:
        known = self._games.get(game_id)
        if known is None:
            rows = await Reader.filter(game_id=game_id).using_db(reader()) \
                .values_list("user_id", "language", "desk_pings")
            known = {int(uid): [lang, chosen] for uid, lang, chosen in rows}
            known = self._games.setdefault(game_id, known)
        return known

    async def language(self, game_id: int, uid: int, fallback: str) -> str:
        """The language of `uid`'s private pushes: his last one, else `fallback` (the
        game's)."""
        row = (await self._of(game_id)).get(uid)
        return row[0] or fallback if row is not None else fallback

    async def note_language(self, game_id: int, uid: int, lang: str) -> bool:
        """Remember the language `uid` used just now; True if it changed (and was
        written)."""
        row = (await self._of(game_id)).get(uid)
        if row is not None and row[0] == lang:
            return False
        await self._store(game_id, uid, language=lang)
        return True

    async def desk_pings(self, game_id: int, uid: int) -> frozenset[str]:
        """The kinds of desk line that ping `uid` (the default if never chosen)."""
        row = (await self._of(game_id)).get(uid)
        return pings(row[1] if row is not None else None)

    async def set_desk_pings(self, game_id: int, uid: int, kinds: Iterable[str]) -> None:
        await self._store(game_id, uid, desk_pings=stored(kinds))

    async def _store(self, game_id: int, uid: int, **values: str) -> None:
        async def work(conn: BaseDBAsyncClient) -> None:
            done = await Reader.filter(game_id=game_id, user_id=uid).using_db(conn) \
                .update(**values)
            if not done:
                await Reader.create(game_id=game_id, user_id=uid, using_db=conn, **values)

        await self._write(work)
        row = (await self._of(game_id)).setdefault(uid, [None, None])
        if "language" in values:
            row[0] = values["language"]
        if "desk_pings" in values:
            row[1] = values["desk_pings"]

    def forget(self, game_id: int | None = None) -> None:
        """Drop cached choices (all, or one game's): the next read goes to the database."""
        if game_id is None:
            self._games.clear()
        else:
            self._games.pop(game_id, None)
