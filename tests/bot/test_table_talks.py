"""The table talks (issue 32), through the real command tree: who is pinged, what each
reader sees, in which language.

The guild of `first_life` is Russian, so the game's public posts are in Russian; the
members' clients are English (en-US), so their ephemeral replies are in English.
"""

from __future__ import annotations

from typing import Any

from cogs.delivery.places import ROLE_KEY, place_key
from core.game.roles import Role
from core.game.state import PhaseKind
from core.sight.narrate import phase_words, role_name, team_name, votes
from core.text.i18n import t as tr
from tests.bot.helpers import Table, checkin_all, confirmed, day_one, open_table, start
from tests.harness import Harness, InteractionResult

POST = "POST /channels/{channel_id}/messages"


def posts_to(h: Harness, channel: int) -> list[dict[str, Any]]:
    return [c.json for c in h.requests_to(POST, channel_id=channel)]


def shown_in(h: Harness, channel: int) -> list[dict[str, Any]]:
    """What everyone sees in the channel from the bot: its posts and the public replies
    (a vote typed in the game channel is recorded by its own reply)."""
    return [m.payload for m in h.messages_in(channel)]


def descriptions(body: dict[str, Any]) -> str:
    return "\n".join(e.get("description", "") for e in body.get("embeds") or [])


async def place(t: Table, uid: int) -> int:
    state = await t.state()
    seat = next(i for i, p in enumerate(state.players) if p.uid == uid)
    return (await t.bot.service.info(t.game_id)).private_channels[place_key(seat)]


def refusal(res: InteractionResult, key: str, lang: str = "en") -> None:
    assert res.ephemeral and res.text == tr(key, lang), res.text


async def hang_the_clan(h: Harness) -> tuple[Table, int, InteractionResult]:
    """Day 1: the master removes a mafioso and the bouncer, everybody votes the other
    mafioso, and the master's advance ends the day, and with it the game."""
    t = await day_one(h)
    rid = (await t.bot.service.info(t.game_id)).private_channels[ROLE_KEY]
    maf = await t.holders(Role.MAFIOSO)
    for out in (maf[0], *await t.holders(Role.BOUNCER)):
        assert (await t.do(t.master, "master kick", player=str(out.id))).ephemeral
    for p in await t.living():
        if p.id != maf[1].id:
            assert confirmed(await t.do(p, "vote", player=str(maf[1].id)))
    await t.settle()
    res = await t.do(t.master, "master advance")
    await t.settle()
    assert (await t.state()).over
    return t, rid, res


async def test_the_end_is_heard_by_everybody(h: Harness) -> None:
    t, rid, res = await hang_the_clan(h)
    state = await t.state()
    winners = ", ".join(team_name(w, "en") for w in state.winners)
    # the master's last advance says what happened, in his language
    assert res.ephemeral and res.text == tr("master.advanced_over", "en", winners=winners)
    # the game-over post is its own message and pings the game's role, and only it
    bodies = posts_to(h, t.channel)
    [end] = [b for b in bodies if tr("event.game_over.head", "ru", winners="")[:10]
             in descriptions(b)]
    assert end["content"] == f"<@&{rid}>"
    mentions = end["allowed_mentions"]
    assert mentions["parse"] == [] and [str(r) for r in mentions["roles"]] == [str(rid)]
    assert not mentions.get("users")
    head = tr("event.day_result.head", "ru", **phase_words(1, "ru"))
    assert head not in descriptions(end)
    assert any(head in descriptions(b) for b in bodies)
    # every seat, the dead included, hears in its own place whether its side won, in
    # the language of its reader (English clients in a Russian game)
    for p in state.players:
        thread = await place(t, p.uid)
        last = posts_to(h, thread)[-1]
        assert last["content"].startswith(f"<@{p.uid}>")
        assert [str(u) for u in last["allowed_mentions"]["users"]] == [str(p.uid)]
        won = p.team in state.winners
        key = "event.game_result.won" if won else "event.game_result.lost"
        assert tr(key, "en", winners=", ".join(team_name(w, "en") for w in state.winners)) \
            in descriptions(last)


async def test_after_the_end_every_command_says_the_game_is_over(h: Harness) -> None:
    t, _, _ = await hang_the_clan(h)
    state = await t.state()
    alive = next(p for p in state.players if p.alive)
    member = t.member(alive.uid)
    # the card says the game is over and how it went for his side, not "vote every day"
    card = await t.do(member, "role")
    assert card.ephemeral
    text = card.text
    assert tr("card.over.won" if alive.team in state.winners else "card.over.lost", "en") \
        in text
    assert tr(f"help.role.{alive.role}.duty", "en") not in text
    # every game command answers as /votes does
    for command, options in (("vote", {"player": str(alive.uid)}), ("unvote", {}),
                             ("votes", {}), ("checkin", {}),
                             ("night", {"target": str(alive.uid)})):
        refusal(await t.do(member, command, **options), "error.game_over")
    refusal(await t.do(t.master, "master advance"), "error.game_over")
    assert (await t.state()).phase is PhaseKind.ENDED


# --- 2. the dead stay in the loop ------------------------------------------------------------
async def test_the_dead_hear_where_to_read_and_their_ghost_vote(h: Harness) -> None:
    t = await open_table(h, 8, roles="mafioso x2; investigator; sergeant; bouncer; occultist",
                         extra_roles=True)
    assert (await t.do(t.master, "game options", graveyard=True)).ephemeral
    await start(t)
    await checkin_all(t)
    await t.advance()  # night 0
    await t.advance()  # day 1
    hanged, kicked = (await t.holders(Role.CITIZEN))[:2]
    for p in await t.living():
        await t.do(p, "vote", player=str(hanged.id))
    await t.advance()  # the day's vote hangs him; the occultist lives: he votes as a ghost
    last = posts_to(h, await place(t, hanged.id))[-1]
    assert last["content"].startswith(f"<@{hanged.id}>")
    text = descriptions(last)
    for key in ("event.you_died.hanged", "event.you_died.where_graveyard",
                "event.you_died.ghost"):
        assert tr(key, "en") in text, key  # his client's language, not the game's
    assert (await t.do(t.master, "master kick", player=str(kicked.id))).ephemeral
    await t.settle()
    text = descriptions(posts_to(h, await place(t, kicked.id))[-1])
    assert tr("event.you_died.kicked", "en") in text
    assert tr("event.you_died.ghost", "en") not in text  # the removed have no ghost vote
    # each of the dead is welcomed in the graveyard, with a ping of just him, in the
    # game's language (Russian): a shared channel, whatever his own client (English)
    grave = (await t.bot.service.info(t.game_id)).private_channels["graveyard"]
    welcomes = [b for b in posts_to(h, grave) if b.get("allowed_mentions", {}).get("users")]
    assert [b["content"] for b in welcomes] == [
        tr("channel.graveyard_welcome", "ru", names=f"<@{uid}>") for uid in (hanged.id,
                                                                              kicked.id)]
    assert h.world.channels[grave]["permission_overwrites"]  # a private channel, shared
    for body, uid in zip(welcomes, (hanged.id, kicked.id), strict=True):
        assert [str(u) for u in body["allowed_mentions"]["users"]] == [str(uid)]


# --- 3. the clan is told -----------------------------------------------------------------------
async def test_the_clan_hears_its_mover_and_both_outcomes(h: Harness) -> None:
    t = await open_table(h, 8, roles="mafioso x2; investigator; sergeant; bouncer")
    await start(t)
    await checkin_all(t)
    await t.advance()  # night 0
    state = await t.state()
    clan = (await t.bot.service.info(t.game_id)).private_channels["clan:1"]
    acting = state.clans[0].acting
    assert acting is not None
    # the mover is named in the clan channel with a ping of just him
    [turn] = [b for b in posts_to(h, clan)
              if tr("event.clan_turn", "ru", actor=f"<@{acting}>", **phase_words(0, "ru"))
              in descriptions(b)]
    assert turn["content"] == f"<@{acting}>"
    assert [str(u) for u in turn["allowed_mentions"]["users"]] == [str(acting)]
    assert not turn["allowed_mentions"].get("roles")
    # the bouncer covers the target: the clan hears that the kill failed
    victim = (await t.holders(Role.CITIZEN))[0]
    assert (await t.do(t.member(acting), "night", target=str(victim.id))).ephemeral
    bouncer = (await t.holders(Role.BOUNCER))[0]
    assert (await t.do(bouncer, "night", target=str(victim.id))).ephemeral
    await t.advance()  # day 1
    assert victim.id in {p.id for p in await t.living()}
    failed = tr("event.clan_kill_failed", "ru", target=f"<@{victim.id}>",
                actor=f"<@{acting}>")
    assert any(failed in descriptions(b) for b in posts_to(h, clan))
    # the other mafioso saw it in the clan channel, the bouncer did not
    mate = next(p for p in await t.holders(Role.MAFIOSO) if p.id != acting)
    assert h.visible_channels(mate).can_view(clan)
    assert not h.visible_channels(bouncer).can_view(clan)
    # and a kill that succeeds is heard too
    for p in await t.living():
        await t.do(p, "vote", player=str(bouncer.id))
    await t.advance()  # night 1: the bouncer is hanged
    state = await t.state()
    mover = state.clans[0].acting
    assert mover is not None
    assert (await t.do(t.member(mover), "night", target=str(victim.id))).ephemeral
    await t.advance()
    done = tr("event.kill_done", "ru", target=f"<@{victim.id}>")
    assert any(done in descriptions(b) for b in posts_to(h, clan))


# --- 4. a spell shows at the day's result ----------------------------------------------------
async def test_sleep_shows_at_the_result_not_at_the_vote(h: Harness) -> None:
    t = await open_table(h, 8, currency=True, shop=True)
    await start(t)
    await checkin_all(t)
    await t.advance()  # night 0
    await t.advance()  # day 1
    a, b, c = t.players[0], t.players[1], t.players[2]
    assert (await t.do(a, "cast", spell="sleep", target=str(b.id))).ephemeral
    assert confirmed(await t.do(b, "vote", player=str(c.id)))
    await t.settle()
    # the town sees a vote like any other: one vote against c, never "0 votes"
    cast = tr("event.vote_cast", "ru", voter=f"<@{b.id}>", target=f"<@{c.id}>",
              total=votes(2, "ru"))
    bodies = [b_ for b_ in shown_in(h, t.channel) if cast in descriptions(b_)]
    assert len(bodies) == 1
    assert votes(0, "ru") not in descriptions(bodies[0])
    hidden = tr("tally.live.not_counted", "en", name=f"<@{b.id}>")
    shown = await t.do(c, "votes")
    assert shown.ephemeral and f"<@{b.id}>" in shown.text and hidden not in shown.text
    live = [m for m in h.messages_in(t.channel) for e in m.embeds
            if e.get("title") == tr("tally.live.title", "ru", **phase_words(1, "ru"))]
    assert live and tr("tally.live.not_counted", "ru", name=f"<@{b.id}>") not in live[-1].text
    # at the day's result the count is the real one: the slept vote does not count
    await t.advance()
    final = [m for m in h.messages_in(t.channel) for e in m.embeds
             if e.get("title") == tr("tally.live.final_title", "ru", **phase_words(1, "ru"))]
    assert final and tr("event.day_result.nobody", "ru") in final[-1].text
    assert c.id in {p.id for p in await t.living()}  # nobody counted against him


# --- 5. /help fits the reader ------------------------------------------------------------------
async def test_help_fits_the_reader(h: Harness) -> None:
    t = await open_table(h, 8, roles="mafioso x2; investigator; sergeant; bouncer")
    await start(t)
    await checkin_all(t)
    await t.advance()  # night 0
    state = await t.state()
    acting = state.clans[0].acting
    other = next(p for p in await t.holders(Role.MAFIOSO) if p.id != acting)
    yours = tr("help.field.yours", "en")
    mover = (await t.do(t.member(acting), "help")).text.split(yours)[1]  # type: ignore[arg-type]
    assert "/night" in mover and "/master" not in mover
    idle = await t.do(other, "help")
    assert idle.ephemeral and "/night" not in idle.text.split(yours)[1]
    assert "/master" not in idle.text and tr("help.field.all", "en") not in idle.text
    master = await t.do(t.master, "help")
    assert "/master advance" in master.text.split(yours)[1]
    # the refusal he would get agrees: the clan's move is another's tonight
    res = await t.do(other, "night", target=str((await t.holders(Role.CITIZEN))[0].id))
    assert res.ephemeral and res.text == tr("error.not_your_turn", "en",
                                            acting=f"<@{acting}>")


# --- 6. the master's log names whom each line concerns ------------------------------------------
async def test_the_masters_log_names_whom_each_line_concerns(h: Harness) -> None:
    t = await open_table(h, 8, roles="mafioso x2; investigator; sergeant; bouncer")
    await start(t)
    res = await t.do(t.master, "master log")
    assert res.ephemeral
    state = await t.state()
    for p in state.players:  # "[day 0] to @P: Your role: …", never a bare "Your role"
        line = tr("desk.log.to", "en", names=f"<@{p.uid}>", text=tr(
            "event.role_dealt", "ru", role=role_name(str(p.role), "ru")))
        assert line in res.text or line.replace(
            tr("event.role_dealt", "ru", role=role_name(str(p.role), "ru")),
            tr("event.role_dealt", "en", role=role_name(str(p.role), "en"))) in res.text


# --- 7. small things ------------------------------------------------------------------------------
async def test_joining_twice_and_a_conditional_order_read_right(h: Harness) -> None:
    t = await open_table(h, 8, currency=True, shop=True)
    res = await t.do(t.players[0], "game join")
    assert res.ephemeral and res.text == tr("error.already_signed_up", "en")
    await start(t)
    await checkin_all(t)
    await t.advance()  # night 0
    await t.advance()  # day 1
    a, b = t.players[0], t.players[1]
    res = await t.do(a, "buy", item="alarm_clock", unless_hanged=str(b.id))
    assert res.ephemeral and res.text == tr(
        "shop.ordered_unless", "en", item=tr("item.alarm_clock.name", "en"),
        unless_hanged=f"<@{b.id}>")
    res = await t.do(a, "cast", spell="silence", target=str(b.id), if_nobody_hanged=True)
    assert res.ephemeral and res.text == tr(
        "shop.ordered_nobody", "en", item=tr("spell.silence.name", "en"))


async def test_thanks_say_a_premium_in_lira_and_none_without_one(h: Harness) -> None:
    t = await open_table(h, 8, roles="mafioso x2; investigator; sergeant; bouncer",
                         currency=True)
    await start(t)
    await checkin_all(t)
    await t.advance()  # night 0
    await t.advance()  # day 1
    maf = await t.holders(Role.MAFIOSO)
    for out in (maf[0], *await t.holders(Role.BOUNCER)):
        assert (await t.do(t.master, "master kick", player=str(out.id))).ephemeral
    for p in await t.living():
        if p.id != maf[1].id:
            await t.do(p, "vote", player=str(maf[1].id))
    await t.advance()
    assert (await t.state()).over
    thanker = t.players[0]
    res = await t.do(thanker, "thank")
    assert res.ephemeral and res.text == tr("thank.done_plain", "en",
                                            master=f"<@{t.master.id}>")
    await t.settle()
    plain = tr("event.thanked_plain", "ru", uid=f"<@{thanker.id}>", master=f"<@{t.master.id}>")
    assert any(plain in descriptions(b) for b in posts_to(h, t.channel))
    # a premium is said in lira words, to the thanker and in public
    other = t.players[1]
    res = await t.do(other, "thank", amount=5)
    assert res.ephemeral and res.text == (
        f"Thank you! <@{t.master.id}> gets 1 lira and your premium of 5 lira.")
    await t.settle()
    said = tr("event.thanked", "ru", uid=f"<@{other.id}>", master=f"<@{t.master.id}>",
              premium_lira="5 лир")
    assert said.endswith("премия из своего кошелька — 5 лир.")
    assert any(said in descriptions(b) for b in posts_to(h, t.channel))


async def test_cast_offers_a_ghost_for_a_day_spell_and_never_for_a_night_spell(
        h: Harness) -> None:
    """/cast's target menu follows the spell chosen: the engine's own target check (a
    ghost votes while the occultist lives, but has no night move to spell)."""
    from core.game.rules.shop import DAY_SPELLS, NIGHT_SPELLS

    t = await open_table(h, 8, roles="mafioso x2; investigator; sergeant; bouncer; occultist",
                         extra_roles=True, currency=True, shop=True)
    await start(t)
    await checkin_all(t)
    await t.advance()  # night 0
    await t.advance()  # day 1
    hanged = (await t.holders(Role.CITIZEN))[0]
    for p in await t.living():
        await t.do(p, "vote", player=str(hanged.id))
    await t.advance()  # hanged; the occultist lives: a ghost
    caster = next(p for p in await t.living() if p.id != hanged.id)

    async def offered(spell: str) -> set[str]:
        res = await h.autocomplete(caster, "cast", option="target", channel=t.channel,
                                   options={"spell": spell})
        return {str(c.value) for c in res.choices}

    day, night = sorted(DAY_SPELLS)[0], sorted(NIGHT_SPELLS)[0]
    assert str(hanged.id) in await offered(day)
    assert str(hanged.id) not in await offered(night)
    living = {str(p.id) for p in await t.living()}
    assert await offered(night) <= living  # whom the engine's check takes, all alive
    assert await offered(day) - living == {str(hanged.id)}
