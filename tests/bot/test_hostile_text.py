"""D14: every text a person typed is republished as literal words, everywhere.

One game is played with a hostile title, plot, nicknames, night stories, a whisper,
an anonymous post, a bonus reason and a /game standby, through every surface that
shows them (replies, the signup board, announcements, the private places' first
messages, the team channels' and the desk's welcomes, /help, /game status, /master
log, /profile). Then every message the bot wrote anywhere (its edits included) is
swept: no masked link Discord would render, no @everyone or @here, no raw mention
typed by a person, no Markdown mark of theirs left live.

Embed footers, channel, thread and role names are plain text on Discord (no Markdown,
no mentions): they are not swept.
"""

from __future__ import annotations

import re
from typing import Any

from core.game.roles import Role
from core.game.state import PhaseKind
from tests.bot.helpers import Table, checkin_all, start
from tests.harness import Harness

ROLES = "mafioso x2; investigator; sergeant; bouncer"
BAIT = "[free nitro](https://evil.example/gift) @everyone @here <@4242> **loud** __u__ ||s||"
TITLE = "[Palermo](https://evil.example/t) @everyone"  # /game create takes 100 characters
FAKE_MENTION = "<@4242>"


def live_marks(text: str) -> list[str]:
    """What Discord would render of the bait: masked links, mass pings, the typed mention,
    bold, underline, spoilers (a mark not preceded by a backslash)."""
    found = re.findall(r"(?<!\\)\[[^\]\n]*(?<!\\)\]\(\s*<?https?://", text)
    found += re.findall(r"@(?:everyone|here)", text)
    found += re.findall(r"(?<!\\)<@4242>", text)
    found += re.findall(r"(?<!\\)\*\*loud", text)
    found += re.findall(r"(?<![\\_])__u", text)
    found += re.findall(r"(?<!\\)\|\|s", text)
    return found


def rendered(payload: dict[str, Any]) -> list[str]:
    """Every part of a message Discord renders as Markdown."""
    parts = [str(payload.get("content") or "")]
    for e in payload.get("embeds") or []:
        parts += [str(e.get("title") or ""), str(e.get("description") or "")]
        for f in e.get("fields") or []:
            parts += [str(f.get("name") or ""), str(f.get("value") or "")]
    return parts


async def test_every_renderer_escapes_hostile_text(h: Harness) -> None:
    master = h.add_member("[Master](https://evil.example/m)", locale="en-US")
    t = Table(h, master, channel=h.default_guild.general_id)
    assert (await t.do(master, "game create", title=TITLE, plot=BAIT, crypto=True,
                       currency=True)).ephemeral
    t.game_id = (await t.bot.service.game_in_channel(t.channel)).id  # type: ignore[union-attr]
    await t.settle()
    t.players = [h.add_member(f"[P{i}](https://evil.example/{i}) @everyone <@4242>",
                              locale="en-US") for i in range(8)]
    for p in t.players:
        assert (await t.do(p, "game join")).ephemeral
    assert (await t.do(t.master, "game setup", roles=ROLES)).ephemeral
    await t.settle()
    await start(t)
    for p in t.players[:2]:
        for command in ("help", "game status", "role", "profile"):
            assert (await t.do(p, command)).ephemeral
    outsider = h.add_member("[Sub](https://evil.example/s) @here", locale="en-US")
    assert (await t.do(outsider, "game standby")).ephemeral
    await checkin_all(t)
    await t.advance()  # night 0
    state = await t.state()
    victim = (await t.holders(Role.CITIZEN))[0]
    acting = t.member(state.clans[0].acting)  # type: ignore[arg-type]
    assert (await t.do(acting, "night", target=str(victim.id), story=BAIT)).ephemeral
    assert (await t.do(t.master, "master bonus", player=str(victim.id), amount=1,
                       reason=BAIT)).ephemeral
    await t.advance()  # day 1: the story is published with the death
    assert await t.phase() == (PhaseKind.DAY, 1)
    living = await t.living()
    assert (await t.do(living[0], "anon", text=BAIT)).ephemeral
    assert (await t.do(living[1], "whisper", role="mafioso", text=BAIT)).ephemeral
    assert (await t.do(t.master, "master log")).ephemeral
    await t.settle()
    swept = 0
    for stored in h.world.messages.values():
        if int(stored.payload["author"]["id"]) != h.world.bot_id \
                and "interaction_metadata" not in stored.payload:
            continue
        for part in rendered(stored.payload):
            swept += 1
            assert not live_marks(part), (part, stored.payload.get("channel_id"))
    assert swept > 100
    # the bait did reach the table, as literal words
    everything = "\n".join(p for m in h.world.messages.values() for p in rendered(m.payload))
    assert "free nitro" in everything and "loud" in everything
