"""/master pings through the real command tree: the desk lines the master chose ping him
(and only him), the others arrive quietly; the default is /away notices and "all orders
are in"; a player cannot change it; the choice survives a restart."""

from __future__ import annotations

from typing import Any

import discord

from core.sight.deskpings import DEFAULT_PINGS
from core.sight.narrate import phase_words
from core.text.i18n import t as tr
from tests.bot.helpers import Lives, Table, checkin_all, open_table, rebind, start
from tests.bot.test_desk import night_zero_orders
from tests.harness import Harness

POST = "POST /channels/{channel_id}/messages"
ROLES = "mafioso; investigator; bouncer"


def desk_id(h: Harness) -> int:
    return int(h.channel_named(tr("desk.channel.name", "ru")).id)


def desk_posts(h: Harness) -> list[dict[str, Any]]:
    return [r.json for r in h.requests_to(POST, channel_id=desk_id(h))]


def line(h: Harness, words: str) -> dict[str, Any]:
    """The one desk post whose text holds `words`."""
    [body] = [b for b in desk_posts(h)
              if any(words in e.get("description", "") for e in b.get("embeds", []))]
    return body


def pinged(body: dict[str, Any], master: int) -> bool:
    """Whether a desk post pings the master; either way it may ping nobody else."""
    mentions = body["allowed_mentions"]
    assert mentions["parse"] == [] and not mentions.get("roles")
    users = [int(u) for u in mentions.get("users", [])]
    assert users in ([], [master]), body
    if users:
        assert body["content"] == f"<@{master}>"
    return bool(users)


async def away(t: Table, who: Any, reason: str) -> None:
    res = await t.do(who, "away", reason=reason)
    assert res.ephemeral, res.text
    await t.settle()


async def test_the_chosen_desk_lines_ping_the_master_alone(lives: Lives) -> None:
    h = lives.h
    t = await open_table(h, 8, roles=ROLES, locale="ru")
    await start(t)
    master = t.master.id
    assert await t.bot.service.readers.desk_pings(t.game_id, master) == DEFAULT_PINGS

    await away(t, t.players[0], "командировка")
    assert pinged(line(h, "командировка"), master)  # on by default
    outsider = h.add_member("Запасной", locale="ru")
    res = await h.slash(outsider, "game standby", channel=t.channel)
    assert res.ephemeral, res.text
    await t.settle()
    standby_on = tr("desk.standby.on", "ru", uid=f"<@{outsider.id}>", count=1)
    assert not pinged(line(h, standby_on), master)  # off by default

    # a player may not choose for the master: refused, nothing changes
    res = await t.do(t.players[1], "master pings", away=False)
    assert res.ephemeral and res.text == tr("error.not_master", "ru")
    assert await t.bot.service.readers.desk_pings(t.game_id, master) == DEFAULT_PINGS

    res = await t.do(t.master, "master pings", away=False,
                     standby=True)
    assert res.ephemeral
    assert res.text == tr("desk.pings.now", "ru", title="Palermo", kinds="; ".join(
        tr(f"desk.pings.kind.{k}", "ru") for k in ("orders", "standby")))

    # the choice survives a restart
    h = await lives.restart()
    t = rebind(t, h)
    await away(t, t.players[2], "свадьба друга")
    assert not pinged(line(h, "свадьба друга"), master)
    res = await h.slash(outsider, "game standby", channel=t.channel)
    assert res.ephemeral, res.text
    await t.settle()
    assert pinged(line(h, tr("desk.standby.off", "ru", uid=f"<@{outsider.id}>", count=0)),
                  master)

    # without options: the choice as it is, unchanged
    before = desk_posts(h)
    res = await t.do(t.master, "master pings")
    assert res.text == tr("desk.pings.now", "ru", title="Palermo", kinds="; ".join(
        tr(f"desk.pings.kind.{k}", "ru") for k in ("orders", "standby")))
    res = await t.do(t.master, "master pings", orders=False, standby=False)
    assert res.text == tr("desk.pings.none", "ru", title="Palermo")
    await t.settle()
    assert desk_posts(h) == before  # choosing posts nothing on the desk


async def test_all_orders_in_pings_the_master_by_default(h: Harness) -> None:
    t = await open_table(h, 8, roles=ROLES, locale="ru")
    await start(t)
    await checkin_all(t)
    await t.advance()  # night 0
    await night_zero_orders(t, "")
    await t.settle()
    all_in = tr("event.all_orders_in", "ru", **phase_words(0, "ru"))
    assert pinged(line(h, all_in), t.master.id)
    # the night's orders themselves arrive quietly
    quiet = [b for b in desk_posts(h) if all_in not in str(b.get("embeds"))]
    assert quiet and not any(pinged(b, t.master.id) for b in quiet)


async def test_a_sight_warning_reaches_the_desk_and_pings_when_chosen(h: Harness) -> None:
    """A right given during the game: the table is told publicly, the desk gets its own
    warning, quiet by default, pinging the master once he chose sight warnings."""
    t = await open_table(h, 8, roles=ROLES, locale="ru")
    await start(t)
    admins = h.add_role("Admins", permissions=discord.Permissions(administrator=True))
    first, second = t.players[4], t.players[5]
    h.give_role(first, admins)
    assert (await t.do(first, "checkin")).ephemeral
    await t.settle()
    warning = tr("desk.event.desk_sight", "ru", uid=first.mention,
                 what=tr("desk.sight.all", "ru"))
    assert not pinged(line(h, warning), t.master.id)
    assert warning not in "\n".join(m.text for m in h.messages_in(t.channel))
    res = await t.do(t.master, "master pings", sight=True)
    assert res.ephemeral and tr("desk.pings.kind.sight", "ru") in res.text, res.text
    h.give_role(second, admins)
    assert (await t.do(second, "checkin")).ephemeral
    await t.settle()
    assert pinged(line(h, tr("desk.event.desk_sight", "ru", uid=second.mention,
                             what=tr("desk.sight.all", "ru"))), t.master.id)
