"""The files an announcement carries (a day's vote picture, the archive), and what is
done when they are slow to draw.

Drawing a day's picture takes 0.1 to 0.4 s of CPU, one at a time (archive/build.py).
When 250 days end in the same second, the last announcement waited a minute for its
picture, and the announcements of the games behind it in the lane for their slots:
issue 30 wants announcements first, never waiting for anything of the kind. So an
announcement waits for its files `wait` seconds at most (not at all behind `AHEAD` other
drawings: it would only hold its lane's slot). Files not drawn by then follow
it as a message of their own, right under it (one request more, only when late), and
the entry stays pending until they are posted: the lane is held (`Hold`, no slot kept)
and offered again as soon as the drawing is done. In memory only: after a restart the
entry is tried again and its announcement is found (Discord returns it for its nonce,
or a recheck finds it): the files then go as their own message under it (`again`),
as they would have before the restart; Discord would drop them from the repeated post.
"""

from __future__ import annotations

import asyncio
import io
import logging
from typing import TYPE_CHECKING

import discord

from archive.build import Made, attachments
from core.storage.observer import GameInfo, NotFinished
from core.storage.outbox import Hold, OutboxEntry
from core.text.i18n import t

from .posting import entry_key, post

if TYPE_CHECKING:
    from cogs.utils.bot import MafiaBot

log = logging.getLogger(__name__)

#: seconds an announcement waits for its files before it goes without them
WAIT = 1.0
#: drawings queued before this one past which it is not waited for at all (one takes
#: 0.1 to 0.4 s: a second holds about three)
AHEAD = 3
#: the longest a lane is held for late files (it is offered again when they are drawn)
HOLD = 30.0
#: the files' own message is named after its entry as piece PIECE (its nonce): no
#: announcement has that many pieces
PIECE = 1000

Key = tuple[int, int]  # (game, ordinal) of an outbox entry


class Files:
    """Files being drawn, and the entries whose announcement went without them."""

    def __init__(self, bot: MafiaBot, wait: float | None = WAIT) -> None:
        self.bot = bot
        #: None: an announcement waits for its files however long they take (tests)
        self.wait = wait
        self._drawing: dict[Key, asyncio.Task[list[Made]]] = {}
        self._owed: dict[Key, OutboxEntry] = {}  # entry -> the head whose files it awaits
        self.late = 0  # files posted after their announcement

    def owes(self, entry: OutboxEntry) -> bool:
        """Whether `entry`'s announcement went out and its files are still owed."""
        return entry.key in self._owed

    async def now(self, info: GameInfo, entries: list[OutboxEntry]) -> list[discord.File]:
        """The files of the entries whose first piece one message carries: drawn within
        `wait` seconds, else none (they are owed, and `follow` posts them)."""
        specs = [spec for entry in entries for spec in entry.files()]
        if not specs:
            return []
        head = entries[0].key
        task = self._drawing.get(head)
        if task is None:
            task = self._drawing[head] = asyncio.create_task(self._draw(info, specs))
        if self.wait is not None:
            # behind others, it would not be drawn in time: waiting would only hold the
            # lane's slot, which other games' announcements need
            ahead = sum(1 for other in self._drawing.values() if not other.done()) - 1
            done = set() if ahead >= AHEAD else (
                await asyncio.wait({task}, timeout=self.wait))[0]
            if not done:
                self._owed.update((entry.key, entries[0]) for entry in entries)
                task.add_done_callback(lambda _: self.bot.outbox.offer(info.id))
                return []
        made = await task
        del self._drawing[head]
        for entry in entries:  # owed by an earlier try whose post failed: on this one now
            self._owed.pop(entry.key, None)
        return _files(made)

    async def follow(self, info: GameInfo, channel: discord.abc.Messageable,
                     entries: list[OutboxEntry]) -> None:
        """Post the files owed to these entries' announcements, as soon as they are
        drawn; until then raise Hold."""
        heads = {self._owed[e.key].key: self._owed[e.key] for e in entries if self.owes(e)}
        for head, entry in heads.items():
            task = self._drawing[head]
            if not task.done():
                raise Hold(HOLD)
            files = _files(task.result())
            if files:
                names = ", ".join(f.filename for f in files)
                await post(channel, entry_key(entry), first=PIECE, files=files,
                           content=t("files.follow", info.language, names=names))
                self.late += 1
            self._owed = {k: v for k, v in self._owed.items() if v.key != head}
            del self._drawing[head]

    async def again(self, info: GameInfo, channel: discord.abc.Messageable,
                    head: OutboxEntry, files: list[discord.File]) -> None:
        """The files of `head`'s message, found posted before without them (after a
        restart: the earlier process posted the announcement and died owing them), as
        their own message under it, named as `follow` names it: once, whichever
        process posts it."""
        for file in files:  # read by the send that returned the earlier message
            file.reset()
        names = ", ".join(f.filename for f in files)
        await post(channel, entry_key(head), first=PIECE, files=files,
                   content=t("files.follow", info.language, names=names))
        self.late += 1

    async def _draw(self, info: GameInfo, specs: list[dict[str, object]]) -> list[Made]:
        """The files, or none if they cannot be built: a picture never holds back the
        game (the archive of a game not finished yet: none either)."""
        try:
            return await attachments(self.bot.service, info.id, specs, info.language)
        except NotFinished:
            return []
        except Exception:
            log.exception("game %s: could not build the files %s", info.id, specs)
            return []


def _files(made: list[Made]) -> list[discord.File]:
    return [discord.File(io.BytesIO(f.data), filename=f.name, description=f.description)
            for f in made]
