"""The table talks: the live vote count of each day, and private reminders.

The live count is one public message per voting day in the game channel, posted with the
day's first vote. Which commands
change it is decided from the engine's public view (`core.sight.visibility.live_tally`;
`core.sight.tallies.tally_outbox` derives the entries): every commit that changes the view
writes a "tally" outbox entry in its own transaction, carrying the whole count as it
stands, so whichever entry goes out last shows the latest count. The OutboxWorker drops
an entry a later one of the same message supersedes (`coalesce`), and this deliverer
edits one message at most once per `interval` seconds (TALLY_INTERVAL, default 60): a
burst of votes costs one or two edits, never one each. Each vote's and withdrawal's
public record carries the count after it (core.sight.tallies.record_fields), so the
channel reads the latest count with the latest vote while the message waits. The
message id is stored with the game (`live_messages`), so edits after a restart address
the same message.

Day 0's check-ins are listed the same way: one message, edited as players check in,
instead of a post per check-in (LISTED_EVENTS are not posted on their own).

Reminders (`core.game.rules.owing`) are engine events to single players: core.sight.places
pushes them, with a ping, into each player's private place (cogs/delivery/places.py).
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Awaitable, Callable
from typing import Any

import discord

from core.sight.narrate import phase_words, votes
from core.sight.tallies import LISTED_EVENTS as LISTED_EVENTS
from core.sight.tallies import TALLY_KIND as TALLY_KIND
from core.sight.tallies import message_key, tally_outbox
from core.sight.visibility import LiveTally
from core.storage.kinds import TallyPayload
from core.storage.observer import DiscordPatch, GameInfo
from core.storage.outbox import Hold, OutboxEntry, RetryAfter
from core.text.i18n import t

from ..ui.render import RED
from ..ui.text import mention, when
from ..utils.bot import MafiaBot
from .catalogue import LANE_ANNOUNCE

log = logging.getLogger(__name__)

DESCRIPTION_LIMIT = 4000  # Discord: 4096 per embed description
FIELD_LIMIT = 1024


# --- rendering --------------------------------------------------------------------------
def _joined(parts: list[str], limit: int, sep: str = ", ") -> str:
    """Whole parts only, within `limit` characters (a cut mention would show as text)."""
    kept: list[str] = []
    size = 0
    for part in parts:
        add = len(part) + (len(sep) if kept else 0)
        if size + add > limit - len(sep) - 1:
            kept.append("…")
            break
        kept.append(part)
        size += add
    return sep.join(kept)


def _voter(v: Any, lang: str) -> str:
    name = t("votes.ghost_voter", lang, name=mention(v.uid)) if v.ghost else mention(v.uid)
    if v.halves == 0:
        return t("tally.live.not_counted", lang, name=name)
    return name + (f" ×{votes(v.halves, lang)}" if v.halves != 2 else "")


def checkin_embed(tally: LiveTally, lang: str) -> discord.Embed:
    """Day 0's check-in list: who has checked in, who has not yet, the deadline;
    closed, the final list. Seat order, unnumbered, and says so: a number would read as
    the order of the check-ins, which the board does not keep (RULES.md §6)."""
    done = [mention(uid) for uid in tally.checked_in]
    total = len(tally.checked_in) + len(tally.not_voted)
    head = t("tally.checkin.count", lang, count=len(tally.checked_in), total=total)
    title = "tally.checkin.final_title" if tally.closed else "tally.checkin.title"
    embed = discord.Embed(title=t(title, lang, **phase_words(tally.number, lang)),
                          description=_joined([head, *done] if done else
                                              [t("tally.checkin.none", lang)],
                                              DESCRIPTION_LIMIT, "\n"), colour=RED)
    if not tally.closed:
        _still_open(embed, tally, lang, "tally.checkin.not_yet", "tally.checkin.closes")
    if done:
        embed.set_footer(text=t("tally.checkin.order", lang))
    return embed


def _still_open(embed: discord.Embed, tally: LiveTally, lang: str, waiting: str,
                closes: str) -> None:
    """An open list's fields: who has still to act, and when it closes."""
    if tally.not_voted:
        embed.add_field(name=t(waiting, lang), value=_joined(
            [mention(u) for u in tally.not_voted], FIELD_LIMIT), inline=False)
    if tally.deadline is not None:
        embed.add_field(name=t(closes, lang), value=when(tally.deadline), inline=False)


def tally_message_embed(tally: LiveTally, lang: str) -> discord.Embed:
    """The live count: the rows /votes shows, who has not voted, the deadline; closed,
    the day's result. Day 0: its check-in list."""
    if tally.checkin:
        return checkin_embed(tally, lang)
    lines = [t("votes.row", lang, place=i, name=mention(row.target),
               votes=votes(row.halves, lang),
               voters=", ".join(_voter(v, lang) for v in row.voters) or "—")
             for i, row in enumerate(tally.rows, 1)]
    title = "tally.live.final_title" if tally.closed else "tally.live.title"
    embed = discord.Embed(title=t(title, lang, **phase_words(tally.number, lang)),
                          description=_joined(lines, DESCRIPTION_LIMIT, "\n")
                          or t("votes.none", lang), colour=RED)
    if tally.closed:
        if tally.hanged is None:
            result = t("event.day_result.nobody", lang)
        else:
            result = t("tally.live.hanged", lang, name=mention(tally.hanged))
            if tally.tied:
                result = t("event.day_result.tie", lang, name=mention(tally.hanged)) \
                    + "\n" + result
        embed.add_field(name=t("tally.live.result", lang), value=result[:FIELD_LIMIT],
                        inline=False)
    else:
        _still_open(embed, tally, lang, "tally.live.not_voted", "tally.live.closes")
    if tally.ghosts:
        embed.set_footer(text=t("votes.ghost_note", lang))
    return embed


# --- delivery -------------------------------------------------------------------------
def _now() -> float:
    """The event loop's clock (monotonic in production, virtual in tests)."""
    return asyncio.get_running_loop().time()


class LiveTallies:
    """Posts and edits the live counts; called by cogs.delivery for "tally" entries."""

    def __init__(self, bot: MafiaBot) -> None:
        self.bot = bot
        # seconds between two edits of one message (TALLY_INTERVAL, default 60): each
        # vote's record already shows the count after it, so the message is a summary,
        # and a day of votes costs an edit a minute at most, not one each (issue 30)
        self.interval = bot.settings.tally_interval
        self.clock: Callable[[], float] = _now  # monotonic seconds (tests: a virtual one)
        self._last: dict[int, float] = {}  # message id -> monotonic time of its last write
        self.edits = 0
        self.posts = 0

    async def deliver(self, entry: OutboxEntry, channel: Any,
                      send: Callable[[discord.Embed], Awaitable[discord.Message]]) -> None:
        """Edit the day's message, or post it (through `send`: the outbox's one post
        path, with its nonce) when it does not exist yet or was deleted."""
        service = self.bot.service
        info: GameInfo = await service.info(entry.game_id)
        payload = TallyPayload.model_validate(entry.payload)
        tally = payload.tally
        key = message_key(tally.number)
        embed = tally_message_embed(tally, info.language)
        message_id = info.live_messages.get(key)
        if message_id is None and not tally.rows and not tally.checkin:
            # Nothing to show yet: the day's announcement says when it closes, and the
            # first vote posts the count (a phase change costs one message less, issue
            # 30); a day nobody voted in has its result in the next announcement. Day
            # 0's check-in list opens at once: it names who has still to check in.
            return
        if message_id is None and await self._announcing(entry):
            # A new message follows the public posts committed before it: the start's
            # announcement (the players whose rights show them every place, RULES.md
            # §8) comes before the day-0 board, though it waits for the ping role.
            raise RetryAfter(0.5)
        if message_id is not None:
            wait = self._last.get(message_id, -math.inf) + self.interval - self.clock()
            if wait > 0 and payload.op == "edit":
                # Later counts pile up meanwhile and coalesce. The final count is never
                # held back: the next phase's announcement waits behind it. A hold, not
                # a retry: the worker stores nothing and looks again when the interval
                # ends or a newer count is committed, instead of re-reading the lane
                # every COALESCE_RECHECK for up to a minute (100 games: 500 reads/s).
                raise Hold(wait)
            try:
                await channel.get_partial_message(message_id).edit(
                    embed=embed, allowed_mentions=discord.AllowedMentions.none())
            except discord.NotFound:
                log.warning("game %s: live count %s was deleted; posting it again",
                            info.id, key)
            else:
                self._last[message_id] = self.clock()
                self.edits += 1
                return
        message = await send(embed)
        kept = {k: v for k, v in info.live_messages.items() if not k.startswith("tally:")}
        await service.set_discord(info.id, DiscordPatch(live_messages=kept | {key: message.id}))
        self._last[message.id] = self.clock()
        self.posts += 1


    async def refresh(self, info: GameInfo, channel: Any) -> None:
        """Bring the day's board up to date at once, before a public list or result is
        posted beside it (the master's prod, the deadline's reminder: issue 42), whatever
        the interval: a board that says "nobody yet" under a post naming the one player
        left reads as a contradiction. It shows the game as it stands now, so a count
        committed earlier and still held goes out the same (or is superseded)."""
        tally = await self.bot.observe.live_count(info.id)
        message_id = None if tally is None else info.live_messages.get(
            message_key(tally.number))
        if tally is None or message_id is None:
            return  # no board yet (a day before its first vote): nothing to contradict
        try:
            await channel.get_partial_message(message_id).edit(
                embed=tally_message_embed(tally, info.language),
                allowed_mentions=discord.AllowedMentions.none())
        except discord.NotFound:
            return  # deleted: the next count posts it again
        self._last[message_id] = self.clock()
        self.edits += 1

    async def _announcing(self, entry: OutboxEntry) -> bool:
        """Whether an earlier public announcement of the game is still to be posted."""
        outbox = getattr(self.bot, "outbox", None)
        return outbox is not None and await outbox.pending_elsewhere(
            entry, lanes=(LANE_ANNOUNCE,), replies=False)  # a vote's reply is its record


async def setup(bot: MafiaBot) -> None:
    """A module without commands: the live count's deriver is listed in the outbox's
    catalogue (core/storage/kinds.py), its lane and deliverer in cogs/delivery/catalogue.py."""

__all__ = ["LISTED_EVENTS", "TALLY_KIND", "LiveTallies", "tally_message_embed",
           "tally_outbox"]
