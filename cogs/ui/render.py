"""Events and views rendered as embeds; the words come from core.sight.narrate."""

from __future__ import annotations

from typing import Any

import discord

from core.game.events import Event, EventKind
from core.sight.narrate import (
    describe,
    item_name,
    payouts_text,
    phase_words,
    role_name,
    team_name,
    votes,
)
from core.sight.views import ShopRow, ShopView
from core.sight.visibility import Card, PublicView, RecordCount
from core.sight.vocabulary import PhaseKind, Team
from core.text.i18n import format_number, t

from .limits import FIELD_VALUE, clamp_embed, clip
from .markup import user_data, user_text
from .text import mention, when

RED = discord.Colour.red()
DAY = discord.Colour.gold()
NIGHT = discord.Colour.dark_blue()
GREY = discord.Colour.light_grey()
GREEN = discord.Colour.green()
PURPLE = discord.Colour.purple()

_COLOURS = {
    EventKind.VOTE_CAST: RED, EventKind.VOTE_WITHDRAWN: GREY, EventKind.PLAYER_DIED: RED,
    EventKind.DAY_RESULT: RED, EventKind.MORNING: NIGHT, EventKind.GAME_OVER: GREEN,
    EventKind.PAYOUTS: GREEN, EventKind.ANON_POST: PURPLE, EventKind.PUBLIC_MOVE: PURPLE,
    EventKind.CANCELLED: GREY,
}


def text_of(event: Event, lang: str) -> str:
    """The event in words; what people typed in it (stories, texts, reasons) escaped."""
    safe = event.model_copy(update={"data": user_data(event.data)})
    return describe(safe, mention, lang, when)


def event_embed(event: Event, lang: str, count: RecordCount | None = None) -> discord.Embed:
    """An event as one embed. It may exceed Discord's limits (a morning with three long
    stories): the outbox splits it (cogs/ui/limits.py); replies use `reply_embed`.
    `count`: a vote's record carries the day's count after it (its own line)."""
    colour = _COLOURS.get(event.kind)
    if event.kind is EventKind.PHASE_STARTED:
        colour = DAY if event.data["phase"] == "day" else NIGHT
    text = text_of(event, lang)
    if count is not None:
        text += "\n" + count_line(count, lang)
    embed = discord.Embed(description=text, colour=colour or GREY)
    if event.kind is EventKind.VOTE_CAST:  # the public vote: unambiguous, in red; a Shout says so
        embed.title = t("vote.embed_title_shout" if event.data.get("shout")
                        else "vote.embed_title", lang)
    if event.kind is EventKind.ANON_POST:
        sig = event.data.get("signature")
        embed.description = user_text(event.data["text"])
        embed.set_footer(text=t("anon.signed", lang, role=role_name(sig, lang)) if sig
                         else t("anon.unsigned", lang))
    if event.kind is EventKind.LAST_WORDS:  # the dead's own words: escaped, never a ping
        embed.description = t("event.last_words", lang, uid=mention(event.data["uid"]),
                              text=user_text(event.data["text"]))
    if event.kind is EventKind.PAYOUTS:
        embed.description = payout_table(event, lang)
    return embed


def count_line(count: RecordCount, lang: str) -> str:
    """The day's count in one line, leaders first: "Count: @B 3 · @C 2 · and 2 others".
    At most RECORD_ROWS names (the view cut the rest), so it is short by construction;
    mentions in an embed never ping."""
    if not count.rows:
        return t("tally.record.none", lang)
    rows = [t("tally.record.row", lang, name=mention(uid), count=format_number(
        halves / 2 if halves % 2 else halves // 2, lang)) for uid, halves in count.rows]
    line = " · ".join(rows)
    if count.more:
        line += " " + t("tally.record.more", lang, count=count.more)
    return t("tally.record.line", lang, rows=line)


def reply_embed(event: Event, lang: str) -> discord.Embed:
    """An event as the one embed of an interaction reply (shortened to the limits)."""
    return clamp_embed(event_embed(event, lang))


def payout_table(event: Event, lang: str) -> str:
    return payouts_text(event.data, mention, lang, user_text)


def status_embed(view: PublicView, lang: str) -> discord.Embed:
    phase = t(f"status.phase.{view.phase}", lang, number=view.number)
    embed = discord.Embed(title=user_text(view.title), description=user_text(view.plot) or None,
                          colour=DAY if view.phase is PhaseKind.DAY else NIGHT)
    embed.add_field(name=t("status.phase_label", lang), value=phase, inline=True)
    embed.add_field(name=t("status.master", lang), value=mention(view.master), inline=True)
    if view.cohost is not None:
        embed.add_field(name=t("status.cohost", lang), value=mention(view.cohost), inline=True)
    if view.deadline is not None:
        embed.add_field(name=t("status.deadline", lang), value=when(view.deadline), inline=False)
    living = " ".join(mention(u) for u in view.living) or "—"
    # In signup nobody is "alive" yet: the list is of the players who signed up.
    head = "words.status.signed_up" if view.phase is PhaseKind.SIGNUP else "status.living"
    embed.add_field(name=t(head, lang, count=len(view.living)), value=living,
                    inline=False)
    if view.dead:
        dead = "\n".join(
            t("status.dead_row", lang, name=mention(d.uid), role=role_name(
                str(d.role) if d.role else None, lang), cause=t(f"cause.{d.cause}", lang))
            for d in view.dead)
        embed.add_field(name=t("status.dead", lang), value=dead, inline=False)
    if view.phase is PhaseKind.DAY and view.number == 0:
        embed.add_field(name=t("status.checked_in", lang),
                        value=f"{len(view.checked_in)}/{len(view.living)}", inline=True)
    if view.tally:
        embed.add_field(name=t("status.tally", lang), value=tally_text(view, lang),
                        inline=False)
    if view.winners or view.draw:
        embed.add_field(name=t("status.result", lang), value=t("event.game_over.draw", lang)
                        if view.draw else ", ".join(team_name(w, lang) for w in view.winners))
    return clamp_embed(embed)


def tally_text(view: PublicView, lang: str) -> str:
    lines = []
    for i, row in enumerate(view.tally, 1):
        voters = ", ".join(
            (t("votes.ghost_voter", lang, name=mention(v)) if ghost else mention(v))
            + (f" ×{votes(w, lang)}" if w not in (2,) else "")
            for v, w, ghost in row.voters)
        lines.append(t("votes.row", lang, place=i, name=mention(row.target),
                       votes=votes(row.halves, lang), voters=voters or "—"))
    return "\n".join(lines) or t("votes.none", lang)


def tally_embed(view: PublicView, lang: str) -> discord.Embed:
    """/votes: the day's count as the public view holds it (empty outside voting days)."""
    embed = discord.Embed(title=t("votes.title", lang, **phase_words(view.number, lang)),
                          description=tally_text(view, lang), colour=RED)
    if view.ghosts:
        embed.set_footer(text=t("votes.ghost_note", lang))
    return clamp_embed(embed)


def card_embed(card: Card, lang: str) -> discord.Embed:
    """The secret role card; only ever sent as an ephemeral reply."""
    if card.role is None:
        return discord.Embed(description=t("card.no_role_yet", lang), colour=GREY)
    embed = discord.Embed(title=t("card.title", lang, role=role_name(str(card.role), lang)),
                          description=t(f"role.{card.role}.power", lang), colour=PURPLE)
    side = t(f"side.{card.side}.name", lang)
    if card.clan is not None:
        side += " · " + team_name(Team.clan(card.clan), lang)
        if card.rank is not None:
            side += " · " + t("card.rank", lang, rank=card.rank)
    embed.add_field(name=t("card.side", lang), value=side, inline=True)
    if card.over:  # the end, not "vote every day": the outcome for his side
        outcome = "draw" if card.draw else "won" if card.won else "lost"
        embed.add_field(name=t("card.state", lang), value=t(f"card.over.{outcome}", lang),
                        inline=False)
    elif card.alive:  # what the player does and when, the honest citizen included
        embed.add_field(name=t("help.card.duty", lang), value=t(f"help.role.{card.role}.duty",
                                                                 lang), inline=False)
    if not card.over:
        embed.add_field(name=t("card.state", lang),
                        value=t("term.alive" if card.alive else "term.dead", lang),
                        inline=True)
    if card.mates:
        mates = "\n".join(
            t("card.mate", lang, name=mention(m.uid), role=role_name(str(m.role), lang),
              state=t("term.alive" if m.alive else "term.dead", lang)) for m in card.mates)
        embed.add_field(name=t("card.mates", lang), value=mates, inline=False)
    if card.clan is not None and card.acting_mafioso is not None and card.alive \
            and not card.over:
        embed.add_field(name=t("card.acting", lang), value=mention(card.acting_mafioso),
                        inline=False)
    if card.night_move is not None:
        orders = "; ".join(
            t("card.order", lang, action=t(f"action.{o.action}", lang), target=mention(o.target),
              fallback=mention(o.fallback) if o.fallback else "—") for o in card.orders
        ) or t("card.no_order", lang)
        embed.add_field(name=t("card.night", lang, number=card.number,
                               moves=card.moves), value=orders[:1024], inline=False)
    elif card.alive and card.acts and card.number < card.first_night:
        embed.add_field(name=t("card.night", lang, number=card.number, moves=0),
                        value=t("card.from_night", lang,
                                **phase_words(card.first_night, lang)), inline=False)
    results = [notice_text(n.kind, n.data, n.night, lang) for n in card.notices]
    results = [r for r in results if r]
    if results:
        embed.add_field(name=t("card.results", lang), value=latest(results[-15:], FIELD_VALUE),
                        inline=False)
    if card.shop:
        inv = ", ".join(item_name(i.kind, i.against, lang) for i in card.inventory) or "—"
        embed.add_field(name=t("card.inventory", lang), value=inv[:1024], inline=False)
    if card.currency:
        embed.add_field(name=t("card.spent", lang),
                        value=t("card.spent_value", lang, spent=card.spent, cap=card.cap),
                        inline=True)
    return clamp_embed(embed)


def latest(lines: list[str], limit: int) -> str:
    """The most recent lines that fit in `limit` characters (the newest one, shortened,
    if even it alone is too long)."""
    shown: list[str] = []
    size = 0
    for line in reversed(lines):
        if shown and size + len(line) + 1 > limit:
            break
        shown.insert(0, line)
        size += len(line) + 1
    return clip("\n".join(shown), limit)


def notice_text(kind: str, data: dict[str, Any], night: int, lang: str) -> str:
    key = f"notice.{kind}"
    params = user_data(data)
    for k in ("target", "uid"):
        if isinstance(params.get(k), int):
            params[k] = mention(params[k])
    if "role" in params:
        params["role"] = role_name(params["role"], lang)
    if "action" in params:
        params["action"] = t(f"action.{params['action']}", lang)
    if isinstance(params.get("spell"), str):
        params["spell"] = t(f"spell.{params['spell']}.name", lang)
    if isinstance(data.get("item"), str):  # an evening order's item or spell, by its name
        against = data.get("against")
        params["item"] = item_name(str(data["item"]),
                                   against if isinstance(against, str) else None, lang)
    if kind == "whisper":
        sig = data.get("signature")
        params["signature"] = role_name(sig, lang) if sig else t("anon.unsigned", lang)
    return t(key, lang, night=night, **params)


def shop_embed(shop: ShopView, lang: str, balance: int) -> discord.Embed:
    embed = discord.Embed(title=t("shop.title", lang),
                          description=t("shop.balance", lang,
                                        balance=t("currency.lira", lang, count=balance)),
                          colour=GREEN)

    def listed(rows: list[ShopRow]) -> str:  # items and spells alike: named by the catalogue
        return "\n".join(t("shop.row", lang, name=item_name(r.what, r.against, lang),
                            price=t("currency.lira", lang, count=r.price)) for r in rows)[:1024]

    embed.add_field(name=t("shop.items", lang), value=listed(shop.items) or "—", inline=False)
    embed.add_field(name=t("shop.spells", lang), value=listed(shop.spells), inline=False)
    return clamp_embed(embed)
