"""/help and /rules as embeds; cogs.ui.limits.pack makes them fit Discord's limits
(a long description or field continues in further embeds and messages)."""

from __future__ import annotations

import discord

from core.sight.guide import (
    OPTIONS,
    Guide,
    master_only,
    price_of,
    role_facts,
    spell_time,
    topic_ids,
)
from core.sight.narrate import NIGHT_FORMS, phase_words, role_name
from core.sight.vocabulary import Role
from core.text.i18n import has_key, t

from .markup import user_text

COLOUR = discord.Colour.blurple()


# --- commands -------------------------------------------------------------------------
#: The member context menus /help lists (cogs/menus.py), by path: their names' keys.
MENUS = {"menu vote": "ctx.vote_against.name", "menu night": "ctx.night_order_on.name"}


def command_label(path: str, lang: str) -> str:
    """A command as the reader types it: "/game join" or, in Russian, "/игра записаться";
    a context menu as he finds it (right click on a player)."""
    if path in MENUS:
        return t("help.menu_label", lang, name=t(MENUS[path], lang))
    words, key = [], "cmd"
    for part in path.split():
        key = f"{key}.{part}"
        words.append(t(f"{key}.name", lang) if has_key(f"{key}.name", "en") else part)
    return "/" + " ".join(words)


def command_description(path: str, lang: str) -> str:
    if path in MENUS:
        return t("help.menu." + path.split()[1], lang)
    key = "cmd." + ".".join(path.split()) + ".description"
    return t(key, lang) if has_key(key, "en") else ""


# --- /help ----------------------------------------------------------------------------
def option_text(option: str, on: bool, lang: str) -> str:
    """A master option in plain words (the signup's wording, else the help's own)."""
    state = "on" if on else "off"
    key = f"signup.option.{option}.{state}"
    return t(key if has_key(key, "en") else f"help.option.{option}.{state}", lang)


def help_embeds(g: Guide, mine: list[str], existing: list[str], lang: str
                ) -> list[discord.Embed]:
    """The reader's help: what he can do now first, then the game in plain words and
    his commands; the master options last, and only for the master (a player reads
    them on the signup board: 11 lines before "what to do now" buried it, issue 42)."""
    now = [t(f"help.duty.{d}", lang) for d in g.duties]
    if g.role is not None:
        now.insert(0, t("help.role_line", lang, role=role_name(str(g.role), lang)))
    if g.has_game:
        # the description, not a field: Discord shows it above every field
        first = [f"**{t('help.field.now', lang)}**", *now, ""] if now else []
        head = discord.Embed(title=t("help.game", lang, title=user_text(g.title)), colour=COLOUR,
                             description="\n".join([*first, t("help.intro", lang)]))
        assert g.phase is not None
        head.add_field(name=t("help.field.phase", lang),
                       value=t(f"status.phase.{g.phase}", lang, number=g.number), inline=True)
        modules = [t(f"signup.module.{m}", lang) for m in g.modules]
        head.add_field(name=t("help.field.modules", lang),
                       value=", ".join(modules) or t("signup.base_only", lang), inline=True)
    else:
        head = discord.Embed(title=t("help.title", lang), colour=COLOUR,
                             description=t("help.no_game", lang) + "\n\n" + t("help.intro", lang))
        if now:
            head.add_field(name=t("help.field.now", lang), value="\n".join(now), inline=False)
    # In a game: the reader's own commands now, each with what it does (not all of
    # them); without one: every command but the master's tools.
    listed = mine if g.has_game else [c for c in existing if not master_only(c)]
    rows = [t("help.command_row", lang, command=command_label(c, lang),
              description=command_description(c, lang)) for c in listed]
    commands = discord.Embed(
        title=t("help.field.yours" if g.has_game else "help.field.all", lang),
        description="\n".join(rows) or "—", colour=COLOUR)
    commands.set_footer(text=t("help.more", lang))
    if not (g.has_game and g.master):
        return [head, commands]
    options = discord.Embed(title=t("help.field.options", lang), colour=COLOUR,
                            description="\n".join(option_text(o, bool(g.options.get(o)), lang)
                                                  for o in OPTIONS))
    return [head, commands, options]


# --- /rules ---------------------------------------------------------------------------
def topic_title(tid: str, lang: str) -> str:
    kind, name = tid.split(":", 1)
    if kind == "role":
        return role_name(name, lang)
    if kind == "item":
        return t("help.rules.protection", lang) if name == "protection" \
            else t(f"item.{name}.name", lang)
    if kind == "spell":
        return t(f"spell.{name}.name", lang)
    return t(f"help.topic.{name}.title", lang)


def topic_text(tid: str, lang: str) -> str:
    """The rules of one topic as implemented, from the catalogue."""
    kind, name = tid.split(":", 1)
    if kind == "role":
        facts = role_facts(Role(name))
        lines = [t(f"role.{name}.power", lang), t(f"help.role.{name}.duty", lang),
                 t("help.rules.side", lang, side=t(f"side.{facts.side}.name", lang),
                   goal=t(f"side.{facts.side}.goal", lang))]
        if facts.action is not None:
            lines.append(t("help.rules.first_night", lang, action=t(f"action.{facts.action}",
                                                                     lang),
                           **phase_words(facts.first_night, lang, NIGHT_FORMS)))
        else:
            lines.append(t("help.rules.no_move", lang))
        if facts.in_clan:
            lines.append(t("help.rules.in_clan", lang))
        if facts.extra:
            lines.append(t("help.rules.module", lang))
        return "\n\n".join(lines)
    if kind in ("item", "spell"):
        price = price_of(name) or 0
        lira = t("currency.lira", lang, count=price)
        when = "item" if kind == "item" else spell_time(name)
        lines = [t(f"{kind}.{name}.effect", lang),
                 t("help.rules.price_protection" if name == "protection" else "help.rules.price",
                   lang, price=lira),
                 t(f"help.rules.when.{when}", lang), t("help.rules.needs_shop", lang)]
        return "\n\n".join(lines)
    return t(f"help.topic.{name}.text", lang)


def rules_embeds(tid: str | None, lang: str) -> list[discord.Embed]:
    """One topic's page, or (no topic) the index of every topic."""
    if tid is not None:
        return [discord.Embed(title=t("help.rules.title", lang, topic=topic_title(tid, lang)),
                              description=topic_text(tid, lang), colour=COLOUR)]
    embed = discord.Embed(title=t("help.rules.index_title", lang), colour=COLOUR,
                          description=t("help.rules.index_hint", lang))
    groups: dict[str, list[str]] = {}
    for topic in topic_ids():
        groups.setdefault(topic.split(":", 1)[0], []).append(topic_title(topic, lang))
    for kind, titles in groups.items():
        embed.add_field(name=t(f"help.rules.group.{kind}s", lang), value=", ".join(titles),
                        inline=False)
    return [embed]
