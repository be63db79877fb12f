"""The signup message: title, plot, modules and options, players, composition.

It is owed to Discord like any public record: `/game create` writes a SIGNUP_POST outbox
entry in the game's own transaction, and the outbox posts the board in the game channel
(with a nonce) and stores its id (cogs/delivery/deliverer.py `post_signup`); joins, leaves, the
roles and the options then edit that message."""

from __future__ import annotations

import discord

from core.sight.narrate import duration, role_name, team_name
from core.sight.views import LobbyView
from core.sight.vocabulary import PhaseKind, Team
from core.storage.kinds import SIGNUP_POST as SIGNUP_POST  # the entry posting the board
from core.text.i18n import t

from .limits import clamp_embed
from .markup import user_text
from .text import mention

MODULES = ("extra_roles", "currency", "shop", "crypto")
SHOWN_OPTIONS = ("reveal_roles", "votes_final", "bouncer_self", "dead_write", "dead_public",
                 "public_moves",
                 "master_sees_anon", "master_reads_teams", "archive_channels", "graveyard",
                 "open_team_channels", "early_night", "spectators_see_teams", "removed_prize",
                 "hammer", "hammer_confirm")


def signup_embed(view: LobbyView, lang: str) -> discord.Embed:
    embed = discord.Embed(title=t("signup.title", lang, title=user_text(view.title)),
                          description=user_text(view.plot) or None,
                          colour=discord.Colour.gold())
    o = view.options
    embed.add_field(name=t("status.master", lang), value=mention(view.master), inline=True)
    embed.add_field(name=t("signup.phases", lang), value=t(
        "signup.phase_lengths", lang, day=duration(o.day_minutes, lang),
        night=duration(o.night_minutes, lang)), inline=True)
    modules = [t(f"signup.module.{m}", lang) for m in MODULES if getattr(o, m)]
    embed.add_field(name=t("signup.modules", lang),
                    value=", ".join(modules) or t("signup.base_only", lang), inline=False)
    options = [t(f"signup.option.{k}.{'on' if getattr(o, k) else 'off'}", lang)
               for k in SHOWN_OPTIONS]
    options.append(t("signup.option.reminder", lang, count=o.reminder_minutes)
                   if o.reminder_minutes else t("signup.option.reminder_off", lang))
    options.append(t("signup.option.last_words_minutes.on", lang, minutes=o.last_words_minutes)
                   if o.last_words_minutes else t("signup.option.last_words_minutes.off", lang))
    embed.add_field(name=t("signup.options", lang), value="\n".join(options), inline=False)
    players = "\n".join(f"{i}. {mention(uid)}" for i, uid in enumerate(view.players, 1))
    embed.add_field(name=t("signup.players", lang, count=len(view.players)),
                    value=players or t("signup.nobody", lang), inline=False)
    embed.add_field(name=t("signup.roles", lang), value=composition_text(view, lang),
                    inline=False)
    if view.phase is not PhaseKind.SIGNUP:
        embed.set_footer(text=t(f"signup.closed.{view.phase}", lang))
    else:
        embed.set_footer(text=t("signup.how", lang))
    return clamp_embed(embed)


def composition_text(view: LobbyView, lang: str) -> str:
    if view.composition is None:
        return user_text(view.roles_text) if view.roles_text else t("signup.preset", lang)
    rows = []
    for role, count, clan in view.composition:
        label = role_name(role, lang) + (f" ×{count}" if count > 1 else "")
        if clan:
            label += f" ({team_name(Team.clan(clan), lang)})"
        rows.append(label)
    head = t("signup.preset", lang) if view.roles_text is None else t("signup.custom", lang)
    return head + "\n" + ", ".join(rows)
