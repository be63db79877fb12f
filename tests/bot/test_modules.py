"""The optional modules through the Discord harness: extra roles, currency, shop, crypto."""

from __future__ import annotations

import discord
import pytest

from core.game.roles import Role
from core.game.state import PhaseKind
from core.storage import wallets
from core.storage.models import UserStats
from core.text.i18n import t as tr
from tests.bot.helpers import checkin_all, confirmed, open_table, start
from tests.harness import Harness

VIEW = discord.Permissions(view_channel=True).value




async def test_extra_roles_cards_and_channels(h: Harness) -> None:
    t = await open_table(h, 10, roles="mafioso; advocate; investigator; sergeant; operative;"
                         " occultist", extra_roles=True)
    await start(t)
    state = await t.state()
    adv = (await t.holders(Role.ADVOCATE))[0]
    don = (await t.holders(Role.MAFIOSO))[0]
    inv = (await t.holders(Role.INVESTIGATOR))[0]
    op = (await t.holders(Role.OPERATIVE))[0]
    sgt = (await t.holders(Role.SERGEANT))[0]
    # the advocate's card names his clan mate
    res = await t.do(adv, "role")
    assert res.ephemeral and don.mention in res.text
    clan = h.channel_named(tr("channel.clan", "ru", number=1))
    # "Следователь знает сержанта" is one way: the police channel holds the investigator
    # and the operative; the sergeant's card names nobody, the investigator's names him.
    opcop = h.channel_named(tr("channel.police", "ru"))
    assert h.visible_channels(adv).can_view(clan.id)
    assert {p.id for p in [*t.players, t.master] if h.visible_channels(p).can_view(opcop.id)} \
        == {inv.id, op.id}
    res = await t.do(sgt, "role")
    assert res.ephemeral and inv.mention not in res.text and op.mention not in res.text
    res = await t.do(inv, "role")
    assert res.ephemeral and sgt.mention in res.text and op.mention in res.text
    # the investigator is hanged on day 1: the sergeant takes over and meets the operative
    await checkin_all(t)
    await t.advance()
    await t.advance()  # night 0 (misses are fine for one turn)
    for p in await t.living():
        if p.id != inv.id:
            await t.do(p, "vote", player=str(inv.id))
    await t.do(inv, "vote", player=str(don.id))
    await t.advance()
    state = await t.state()
    assert state.player(sgt.id).role is Role.INVESTIGATOR  # type: ignore[union-attr]
    assert h.visible_channels(sgt).can_view(opcop.id)
    assert h.visible_channels(inv).can_view(opcop.id)  # the dead keep reading...
    assert not h.permissions_in(inv.id, opcop.id).send_messages  # ...but cannot write


async def test_votes_show_half_votes_and_fractional_tie_break(h: Harness) -> None:
    t = await open_table(h, 10, roles="mafioso; investigator; occultist; bouncer",
                         extra_roles=True)
    await start(t)
    await checkin_all(t)
    await t.advance()
    state = await t.state()
    don = (await t.holders(Role.MAFIOSO))[0]
    citizens = await t.holders(Role.CITIZEN)
    victim, a, b, c = citizens[0], citizens[1], citizens[2], citizens[3]
    await t.do(don, "night", target=str(victim.id))
    await t.advance()
    assert not (await t.state()).player(victim.id).alive  # type: ignore[union-attr]
    res = await t.do(victim, "vote", player=str(a.id))  # a ghost: half a vote, first
    assert confirmed(res)
    await t.do(b, "vote", player=str(c.id))  # c: 1
    await t.do(don, "vote", player=str(a.id))  # a: 1.5
    await t.do(c, "vote", player=str(a.id))  # a: 2.5 — reached first
    await t.do(a, "vote", player=str(c.id))  # c: 2
    res = await t.do(b, "votes")
    assert res.ephemeral
    assert "2,5 голоса" in res.text or "2.5 votes" in res.text
    state = await t.state()
    assert state.phase is PhaseKind.DAY
    await t.advance()
    state = await t.state()
    assert not state.player(a.id).alive  # type: ignore[union-attr]


async def test_currency_wallets_payouts_thanks_and_profile(h: Harness) -> None:
    t = await open_table(h, 8, roles="mafioso; investigator; bouncer", currency=True)
    guild = h.default_guild.id
    res = await t.do(t.players[0], "wallet")
    assert res.ephemeral and "60" in res.text
    await start(t)
    secret_for = t.players[1]
    res = await t.do(t.master, "master bonus", player=str(secret_for.id), amount=4,
                     reason="noble move", secret=True)
    assert res.ephemeral and res.text == tr("master.bonus_secret", "en")
    await t.settle()
    assert "noble move" not in str([m.payload for m in h.messages_in(t.channel)])
    # the master ends the game by removing the mafioso
    for role in (Role.MAFIOSO, Role.BOUNCER):
        res = await t.do(t.master, "master kick", player=str((await t.holders(role))[0].id))
        assert res.ephemeral
    await t.settle()
    state = await t.state()
    assert state.over and state.payouts
    posted = " ".join(e.get("description", "") for m in h.messages_in(t.channel)
                      for e in m.embeds)
    assert tr("payouts.head", "ru") in posted and "noble move" in posted
    # balances equal the ledger, and include the payouts exactly once
    for p in t.players:
        bal = (await wallets.balances(None, guild, [p.id]))[p.id]
        assert bal == await wallets.ledger_sum(guild, p.id)
        earned = sum(x.amount for x in state.payouts if x.uid == p.id)
        assert bal == 60 + earned
    master_before = (await wallets.balances(None, guild, [t.master.id]))[t.master.id]
    res = await t.do(t.players[0], "thank", amount=5)
    assert res.ephemeral, res.text
    res = await t.do(t.players[0], "thank")
    assert res.ephemeral and tr("error.already_thanked", "en") == res.text
    master_after = (await wallets.balances(None, guild, [t.master.id]))[t.master.id]
    assert master_after == master_before + 6
    res = await t.do(t.players[0], "profile")
    assert res.ephemeral
    # a winner's profile counts the win under his side's name (not a raw catalogue key)
    seat = next(p for p in state.players if p.team is not None and p.team in state.winners)
    res = await t.do(next(u for u in t.players if u.id == seat.uid), "profile")
    assert res.ephemeral and f"{tr(f'side.{seat.side}.name', 'en')}: 1" in res.text, res.text
    # every side is named, the mafia's too (its key is not a team's)
    await UserStats.filter(guild_id=guild, user_id=seat.uid).update(
        wins_by_side='{"negative": 2, "neutral": 1, "positive": 1}')
    res = await t.do(next(u for u in t.players if u.id == seat.uid), "profile")
    for side, n in (("negative", 2), ("neutral", 1), ("positive", 1)):
        assert f"{tr(f'side.{side}.name', 'en')}: {n}" in res.text, res.text


async def test_shop_buy_cast_and_refusals_change_nothing(h: Harness) -> None:
    t = await open_table(h, 8, roles="mafioso; investigator; bouncer", currency=True,
                         shop=True)
    await start(t)
    await checkin_all(t)
    await t.advance()  # night 0: the evening shop is open
    buyer = (await t.holders(Role.CITIZEN))[0]
    res = await t.do(buyer, "shop")
    assert res.ephemeral and "60" in res.text
    res = await t.do(buyer, "buy", item="protection", target="mafia:1")
    assert res.ephemeral, res.text
    guild = h.default_guild.id
    assert (await wallets.balances(None, guild, [buyer.id]))[buyer.id] == 50
    before = (await t.state()).model_dump_json()
    res = await t.do(buyer, "buy", item="cheque_book")  # 30 ok
    res = await t.do(buyer, "buy", item="cheque_book")  # 30 > 20 left
    assert res.ephemeral and "20" in res.text
    assert (await wallets.balances(None, guild, [buyer.id]))[buyer.id] == 20
    assert (await t.state()).model_dump_json() != before  # the first cheque book was bought
    res = await t.do(buyer, "role")
    assert tr("item.cheque_book.name", "en") in res.text


async def test_crypto_anon_whisper_reveal(h: Harness) -> None:
    t = await open_table(h, 8, roles="mafioso x2; investigator; bouncer", crypto=True)
    await start(t)
    sender = (await t.holders(Role.CITIZEN))[0]
    res = await t.do(sender, "anon", text="The baker did it", signature="investigator")
    assert res.ephemeral
    await t.settle()
    post = h.messages_in(t.channel)[-1]
    dump = str(post.payload)
    assert "The baker did it" in dump and str(sender.id) not in dump
    assert post.author_id == h.bot.user.id  # type: ignore[union-attr]
    assert post.payload.get("interaction") is None and post.payload.get(
        "interaction_metadata") is None
    res = await t.do(sender, "whisper", role="mafioso", text="I know")
    too_soon = tr("error.post_too_soon", "en", seconds=0).split(":")[0]
    assert res.ephemeral and res.text.startswith(too_soon)  # the rate limit
    other = (await t.holders(Role.CITIZEN))[1]
    res = await t.do(other, "whisper", role="mafioso", text="I know")
    assert res.ephemeral and res.text == tr("anon.whispered", "en")
    for p in t.players:
        card = await t.do(p, "role")
        mine = (await t.state()).player(p.id)
        assert ("I know" in card.text) == (mine is not None and mine.role is Role.MAFIOSO)
    inv = (await t.holders(Role.INVESTIGATOR))[0]
    res = await t.do(inv, "reveal")
    assert res.ephemeral and res.text == tr("error.public_moves_off", "en")


@pytest.mark.parametrize("locale", ["en-US", "ru"])
async def test_a_protection_that_stopped_an_attack_stays_on_the_card(
        h: Harness, locale: str) -> None:
    """Issue 42 point 6: a citizen's bought protection stops the clan's kill; the push
    to his place tells him, and so does his /role card afterwards (ephemeral, his
    alone), as the bouncer's card keeps "your protection was needed"."""
    lang = "ru" if locale == "ru" else "en"
    t = await open_table(h, 8, roles="mafioso; investigator; bouncer", currency=True,
                         shop=True, locale=locale)
    await start(t)
    await checkin_all(t)
    await t.advance()  # night 0: the evening shop is open
    buyer, other = (await t.holders(Role.CITIZEN))[:2]
    assert (await t.do(buyer, "buy", item="protection", target="mafia:1")).ephemeral
    mover = (await t.state()).clans[0].acting
    assert mover is not None
    assert (await t.do(t.member(mover), "night", target=str(buyer.id))).ephemeral
    await t.advance()  # day 1: the attack was stopped
    assert buyer.id in {p.id for p in await t.living()}
    line = tr("notice.armour_saved", lang, night=0)
    card = await t.do(buyer, "role")
    assert card.ephemeral and card.message is not None
    assert card.message.ephemeral_for == buyer.id
    assert line in card.text, card.text
    assert line not in (await t.do(other, "role")).text
