"""Issue 17 (and issue 19's /game setup check) through the real command tree: the new
options of /away, /share, /game start, /game setup, /game options, /buy and /cast."""

from __future__ import annotations

from core.game.roles import Role
from core.game.state import PhaseKind
from core.sight.narrate import phase_words
from core.text.i18n import t as tr
from tests.bot.helpers import checkin_all, open_table, start
from tests.harness import Harness

LOPSIDED = "clan A: mafioso x2; clan B: mafioso x2; investigator"


async def test_setup_is_refused_when_written_with_the_starts_words(h: Harness) -> None:
    t = await open_table(h, 8)
    res = await t.do(t.master, "game setup", roles="investigator; citizen x3")
    assert res.ephemeral and res.text == tr("error.setup_no_mafia", "en")
    res = await t.do(t.master, "game setup", roles="mafioso x20; mafioso x11")
    assert res.ephemeral
    assert tr("error.setup_too_many_roles", "en", roles=31, players=30) in res.text
    assert (await t.state()).roles_text is None  # nothing changed
    # the start would say the same about the same text
    res = await t.do(t.master, "game setup", roles="mafioso x8")
    assert res.ephemeral and res.text == tr("error.setup_already_won", "en")


async def test_setup_warns_and_start_asks_to_confirm_a_lopsided_game(h: Harness) -> None:
    t = await open_table(h, 8)
    res = await t.do(t.master, "game setup", roles=LOPSIDED)
    assert res.ephemeral
    assert tr("lobby.setup_lopsided", "en", negatives=4, players=8) in res.text
    res = await t.do(t.master, "game start")
    assert res.ephemeral
    assert res.text == tr("error.setup_lopsided", "en", negatives=4, players=8)
    assert (await t.state()).phase is PhaseKind.SIGNUP
    res = await t.do(t.master, "game start", confirm=True)
    assert res.ephemeral, res.text
    assert (await t.state()).phase is PhaseKind.DAY


async def test_setup_waiting_for_players_says_so(h: Harness) -> None:
    t = await open_table(h, 3)
    res = await t.do(t.master, "game setup", roles="mafioso x2; investigator; sergeant; "
                     "bouncer; killer; citizen x2")
    assert res.ephemeral
    assert tr("lobby.setup_waits_players", "en", signed_up=3, size=8) in res.text


async def test_away_until_a_day_reaches_the_master_with_its_reason(h: Harness) -> None:
    t = await open_table(h, 8)
    await start(t)
    p = t.players[0]
    res = await t.do(p, "away", until=3, reason="trip")
    assert res.ephemeral and res.text == tr("event.away_ack", "en", until=3)
    state = await t.state()
    me = state.player(p.id)
    assert me is not None and me.away_until == 3 and me.away_reason == "trip"
    # the master's notice is a master-audience event (the desk routes it)
    events = [e for _, _, evs in await t.bot.service.log(t.game_id) for e in evs]
    noted = [e for e in events if e.kind == "away_noted"]
    assert [(e.audience.kind, e.data["reason"], e.data["until"]) for e in noted] == [
        ("master", "trip", 3)]
    res = await t.do(p, "away")
    assert res.ephemeral and res.text == tr("event.away_ack", "en", until=1)


async def test_share_reaches_the_sergeant_without_the_investigators_name(h: Harness) -> None:
    t = await open_table(h, 8, roles="mafioso; investigator; sergeant; bouncer")
    await start(t)
    inv = (await t.holders(Role.INVESTIGATOR))[0]
    sgt = (await t.holders(Role.SERGEANT))[0]
    # the sergeant's card names nobody; the investigator's names the sergeant
    card = await t.do(sgt, "role")
    assert card.ephemeral and inv.mention not in card.text
    card = await t.do(inv, "role")
    assert card.ephemeral and sgt.mention in card.text
    res = await t.do(inv, "share", note="trust nobody")
    assert res.ephemeral, res.text
    card = await t.do(sgt, "role")
    assert tr("notice.police_note", "en", text="trust nobody", night=0) in card.text
    assert inv.mention not in card.text and inv.name not in card.text
    # the police channel is the investigator's alone (no operative here)
    police = h.channel_named(tr("channel.police", "ru"))
    assert {p.id for p in [*t.players, t.master]
            if h.visible_channels(p).can_view(police.id)} == {inv.id}


async def test_master_option_puts_the_sergeant_in_the_police_channel(h: Harness) -> None:
    t = await open_table(h, 8, roles="mafioso; investigator; sergeant; bouncer")
    res = await t.do(t.master, "game options", sergeant_in_police=True)
    assert res.ephemeral, res.text
    await start(t)
    inv = (await t.holders(Role.INVESTIGATOR))[0]
    sgt = (await t.holders(Role.SERGEANT))[0]
    police = h.channel_named(tr("channel.police", "ru"))
    assert {p.id for p in [*t.players, t.master]
            if h.visible_channels(p).can_view(police.id)} == {inv.id, sgt.id}


async def test_day_spell_bought_at_night_and_conditional_orders(h: Harness) -> None:
    t = await open_table(h, 8, currency=True, shop=True)
    await start(t)
    await checkin_all(t)
    await t.advance()  # night 0: the evening of day 0
    a, b = t.players[0], t.players[1]
    res = await t.do(a, "cast", spell="sleep", target=str(b.id))
    assert res.ephemeral
    assert res.text == tr("shop.cast_evening", "en", item=tr("spell.sleep.name", "en"),
                              **phase_words(1, "en"))
    state = await t.state()
    assert [(s.spell, s.number) for s in state.spells] == [("sleep", 1)]
    await t.advance()  # day 1
    res = await t.do(a, "buy", item="alarm_clock", unless_hanged=str(b.id))
    assert res.ephemeral, res.text
    res = await t.do(a, "cast", spell="silence", target=str(b.id), if_nobody_hanged=True)
    assert res.ephemeral, res.text
    state = await t.state()
    assert [(o.what, o.unless_hanged, o.if_nobody_hanged) for o in state.pending] == [
        ("alarm_clock", b.id, False), ("silence", None, True)]
    res = await t.do(a, "buy", item="alarm_clock", if_hanged=str(b.id),
                     if_nobody_hanged=True)
    assert res.ephemeral and res.text == tr("error.one_condition", "en")
