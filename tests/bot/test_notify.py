"""Told when a game opens (issue 46, item 1): `/game notify on|off` through the real
command tree in both languages puts a member on the server's opt-in role (one
member-role request per opt-in, the role made once), and the signup post pings that
role and nothing else."""

from __future__ import annotations

import discord
import pytest

from core.text.i18n import t
from tests.bot.helpers import EVERYTHING, posted
from tests.harness import Harness, InteractionResult

pytestmark = pytest.mark.usefixtures("strict_i18n")

ROLE_PUT = "PUT /guilds/{guild_id}/members/{user_id}/roles/{role_id}"
ROLE_DELETE = "DELETE /guilds/{guild_id}/members/{user_id}/roles/{role_id}"
ROLE_CREATE = "POST /guilds/{guild_id}/roles"


def alone(res: InteractionResult) -> str:
    assert res.messages and all(m.flags & 64 for m in res.messages), res.text
    return res.text


def opt_in_roles(h: Harness) -> list[int]:
    names = {t("notify.role_name", "ru"), t("notify.role_name", "en")}
    g = h.world.guild(h.default_guild.id)
    return [rid for rid, r in g.roles.items() if r["name"] in names]


async def test_opting_in_costs_one_request_and_the_signup_pings_the_role(h: Harness) -> None:
    ru = h.add_member("Дина", locale="ru")
    en = h.add_member("Dean", locale="en-US")
    res = await h.slash(ru, "game notify", switch="on")
    assert alone(res) == t("notify.on", "ru")
    assert len(res.requests_to(ROLE_CREATE)) == 1 and len(res.requests_to(ROLE_PUT)) == 1
    (role,) = opt_in_roles(h)
    assert h.world.guild(h.default_guild.id).roles[role]["name"] == \
        t("notify.role_name", "ru")  # the server's language (the guild is Russian)
    res = await h.slash(en, "game notify", switch="on")
    assert alone(res) == t("notify.on", "en")
    assert not res.requests_to(ROLE_CREATE) and len(res.requests_to(ROLE_PUT)) == 1
    res = await h.slash(en, "game notify", switch="on")  # again: nothing to do
    assert alone(res) == t("notify.already_on", "en") and not res.rest_requests
    assert {ru.id, en.id} <= {uid for uid in h.world.guild(h.default_guild.id).members
                              if role in h.world.member_role_ids(h.default_guild.id, uid)}
    master = h.add_member("Master", locale="en-US")
    creates = len(h.requests_to(ROLE_PUT))
    assert (await h.slash(master, "game create", title="Palermo")).ephemeral
    await h.bot.outbox.idle(within=20)  # type: ignore[attr-defined]
    board = posted(h, h.default_guild.general_id)[-1]
    assert board.content == f"<@&{role}>"
    assert board.payload.get("mention_roles") == [str(role)]
    sent = [r for r in h.requests_to("POST /channels/{channel_id}/messages")
            if (r.json or {}).get("content") == f"<@&{role}>"]
    allowed = sent[-1].json["allowed_mentions"]  # that role only: no member, no @everyone
    assert allowed["parse"] == [] and [int(r) for r in allowed["roles"]] == [role]
    assert not allowed.get("users") and not allowed.get("replied_user")
    assert len(h.requests_to(ROLE_PUT)) == creates  # no member-role request per game
    res = await h.slash(ru, "game notify", switch="off")
    assert alone(res) == t("notify.off", "ru") and len(res.requests_to(ROLE_DELETE)) == 1
    assert role not in h.world.member_role_ids(h.default_guild.id, ru.id)
    res = await h.slash(ru, "game notify", switch="off")
    assert alone(res) == t("notify.already_off", "ru") and not res.rest_requests


async def test_without_manage_roles_it_is_refused_and_nothing_changes(h: Harness) -> None:
    h.set_bot_permissions(discord.Permissions(EVERYTHING.value & ~discord.Permissions(
        manage_roles=True).value))
    for locale, lang in (("ru", "ru"), ("en-US", "en")):
        member = h.add_member(f"M{lang}", locale=locale)
        res = await h.slash(member, "game notify", switch="on")
        assert alone(res) == t("error.bot_missing_permissions", lang,
                               permissions=t("permission.manage_roles", lang))
        assert not res.rest_requests
    assert opt_in_roles(h) == []


async def test_a_signup_without_an_opt_in_role_pings_nobody(h: Harness) -> None:
    master = h.add_member("Master", locale="en-US")
    assert (await h.slash(master, "game create", title="Palermo")).ephemeral
    await h.bot.outbox.idle(within=20)  # type: ignore[attr-defined]
    board = posted(h, h.default_guild.general_id)[-1]
    assert board.content == "" and board.payload.get("mention_roles") == []
