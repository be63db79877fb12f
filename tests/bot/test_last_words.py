"""Issue 46.7, last words through the real command tree, in both languages: the player
killed at night is told in his own place, /lastwords posts his message once in the game
channel, escaped and pinging nobody; anyone else, or a second time, is refused privately
and nothing changes."""

from __future__ import annotations

import pytest

from core.game.roles import Role
from core.game.state import PhaseKind
from core.text.i18n import t as tr
from tests.bot.helpers import ROLES, checkin_all, open_table, posted, start
from tests.bot.test_places import assert_private, place, posts_to, pushes
from tests.harness import Harness

HOSTILE = "@everyone **it was** <@1> the don"


@pytest.mark.parametrize("locale,lang", [("ru", "ru"), ("en-US", "en")])
async def test_last_words_once_escaped_never_pinging(h: Harness, locale: str, lang: str) -> None:
    t = await open_table(h, 8, roles=ROLES, locale=locale)
    res = await t.do(t.master, "game options", language=lang, last_words_minutes=60)
    assert res.ephemeral, res.text
    await start(t)
    await checkin_all(t)
    await t.advance()  # night 0
    state = await t.state()
    victim = (await t.holders(Role.CITIZEN))[0]
    other = (await t.holders(Role.CITIZEN))[1]
    res = await t.do(t.member(state.clans[0].acting), "night",  # type: ignore[arg-type]
                     target=str(victim.id))
    assert res.ephemeral, res.text
    await t.advance()
    assert await t.phase() == (PhaseKind.DAY, 1)
    thread = await assert_private(h, t, victim.id)
    opened = tr("event.last_words_open", lang, deadline="\x00").split("\x00")[0]
    assert [m for m in pushes(h, thread) if opened in m.text]
    assert not [m for m in pushes(h, await place(t, other.id)) if opened in m.text]

    before = len(posted(h, t.channel))
    res = await t.do(other, "lastwords", text="me too")
    assert res.ephemeral and res.text == tr("error.no_last_words", lang)
    res = await t.do(victim, "lastwords", text=HOSTILE)
    assert res.ephemeral and res.text == tr("lastwords.sent", lang), res.text
    await t.settle()
    new = posted(h, t.channel)[before:]
    head = tr("event.last_words", lang, uid=victim.mention, text="")
    words = [m for m in new if any(head.strip() in (e.get("description") or "")
                                   for e in m.embeds)]
    assert len(words) == 1
    description = words[0].embeds[0]["description"]
    assert "\\*\\*it was\\*\\*" in description and "**it was**" not in description
    sent = [b for b in posts_to(h, t.channel) if "it was" in str(b)]
    assert sent and all(b["allowed_mentions"]["parse"] == [] and not b["allowed_mentions"].get(
        "users") for b in sent)
    count = len(posted(h, t.channel))
    res = await t.do(victim, "lastwords", text="again")
    assert res.ephemeral and res.text == tr("error.no_last_words", lang)
    await t.settle()
    assert len(posted(h, t.channel)) == count
