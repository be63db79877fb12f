"""The archive through the real command tree: a picture per voting day, the archive
and the opened team channels at the end, and nothing of them before."""

from __future__ import annotations

import io

import discord
from PIL import Image

from core.game.roles import Role
from core.game.state import PhaseKind
from core.sight.narrate import phase_words
from core.text.i18n import t as tr
from tests.bot.helpers import Table, open_table
from tests.bot.test_full_game import ROLES, night_moves
from tests.harness import Harness


def files_in(h: Harness, channel: int) -> list[tuple[str, bytes]]:
    return [f for m in h.messages_in(channel) for f in m.files]


def assert_real_png(data: bytes) -> None:
    image = Image.open(io.BytesIO(data))
    image.load()
    assert image.format == "PNG" and image.size == (960, 540)
    colours = image.convert("RGB").getcolors(maxcolors=1 << 20)
    assert colours is not None and len(colours) > 20  # not a blank picture


async def play(t: Table, h: Harness) -> list[str]:
    """Play to the end; before the end no archive file exists and no team channel is
    readable by a non-member. Returns the names of the day pictures seen."""
    clan = h.channel_named(tr("channel.clan", "ru", number=1))
    seen: list[str] = []
    for _ in range(40):
        state = await t.state()
        if state.over:
            return seen
        if state.phase is PhaseKind.DAY and state.number == 0:
            for p in await t.living():
                await t.do(p, "checkin")
        elif state.phase is PhaseKind.DAY:
            mafia = await t.holders(Role.MAFIOSO)
            target = mafia[0] if mafia else (await t.living())[0]
            for p in await t.living():
                if p.id != target.id:
                    await t.do(p, "vote", player=str(target.id))
        else:
            await night_moves(t)
        await t.advance()
        files = files_in(h, t.channel)
        seen = [name for name, _ in files if name.endswith(".png")]
        if not (await t.state()).over:
            assert not [n for n, _ in files if n.endswith(".html")]
            members = {p.uid for p in (await t.state()).players if p.role is Role.MAFIOSO}
            for p in t.players:
                assert h.visible_channels(p).can_view(clan.id) == (p.id in members)
    raise AssertionError("the game did not end")


async def test_pictures_archive_and_opened_channels(h: Harness) -> None:
    t = await open_table(h, roles=ROLES)
    await t.do(t.master, "game start")
    await t.settle()
    seen = await play(t, h)
    await t.settle()
    state = await t.state()
    assert state.phase is PhaseKind.ENDED
    voting_days = [d.number for d in state.days if d.tally]
    assert seen == [f"day-{n}-votes.png" for n in voting_days] and seen
    files = dict(files_in(h, t.channel))
    for name in seen:
        assert_real_png(files[name])
    # each picture sits on the message announcing that day's result
    for m in h.messages_in(t.channel):
        for name, _ in m.files:
            if name.endswith(".png"):
                number = int(name.split("-")[1])
                text = " ".join(e.get("description", "") for e in m.embeds)
                assert tr("event.day_result.head", "ru", **phase_words(number, "ru")) in text
    [html_name] = [n for n in files if n.endswith(".html")]
    over = next(m for m in h.messages_in(t.channel) if any(n == html_name for n, _ in m.files))
    assert any(tr("event.game_over.head", "ru", winners="")[:12] in e.get("description", "")
               for e in over.embeds)
    html = files[html_name].decode()
    assert html.startswith("<!doctype html>") and len(html) < 1_000_000
    for p in state.players:
        assert p.name in html
    # the team channels: readable by every player of the game, writable by nobody
    clan = h.channel_named(tr("channel.clan", "ru", number=1))
    police = h.channel_named(tr("channel.police", "ru"))
    for channel in (clan, police):
        for p in t.players:
            assert h.visible_channels(p).can_view(channel.id), (channel.name, p.name)
            assert not h.permissions_in(p.id, channel.id).send_messages


async def test_option_off_keeps_team_channels_with_their_members(h: Harness) -> None:
    t = await open_table(h, roles=ROLES)
    res = await t.do(t.master, "game options", open_team_channels=False)
    assert res.ephemeral, res.text
    await t.do(t.master, "game start")
    await t.settle()
    await play(t, h)
    await t.settle()
    state = await t.state()
    mafia = {p.uid for p in state.players if p.role is Role.MAFIOSO}
    clan = h.channel_named(tr("channel.clan", "ru", number=1))
    for p in t.players:
        assert h.visible_channels(p).can_view(clan.id) == (p.id in mafia)


async def test_without_attach_files_the_announcements_still_go_out(h: Harness) -> None:
    """A guild that denies the bot "Attach Files": results and the end are announced all
    the same, without the files (nothing is parked, nothing retried for minutes)."""
    t = await open_table(h, roles=ROLES)
    h.set_overwrite(t.channel, h.bot.user.id,  # type: ignore[union-attr]
                    discord.PermissionOverwrite(attach_files=False))
    await t.do(t.master, "game start")
    await t.settle()
    await play(t, h)
    await t.settle()
    assert (await t.state()).phase is PhaseKind.ENDED
    assert files_in(h, t.channel) == []
    texts = " ".join(e.get("description", "") for m in h.messages_in(t.channel)
                     for e in m.embeds)
    assert tr("event.day_result.head", "ru", **phase_words(1, "ru")) in texts
    assert tr("event.game_over.head", "ru", winners="")[:12] in texts
    assert t.bot.outbox.parked == 0
