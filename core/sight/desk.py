"""The master's desk: what the master may read, as text, from events and the game log.

The master sees everything, so his view is the whole event log (every audience), in
order, tagged with the phase each event happened in. The Discord layer renders the
live feed and `/master log` from here and never reads raw state for it; names are
supplied by the caller (mentions in Discord, plain names in a file).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Literal

from pydantic import BaseModel

from core.game.commands import Command
from core.game.events import Event, EventKind
from core.game.payloads import PhaseStarted
from core.game.state import GameState, PhaseKind
from core.sight.narrate import (
    NIGHT_FORMS,
    Names,
    describe,
    describe_error,
    params,
    phase_words,
    readable,
    role_name,
    team_name,
    upper_first,
    votes,
)
from core.text.i18n import has_key, t

History = Sequence[tuple[int, Command, list[Event]]]
PhaseFilter = Literal["day", "night"] | None

# A player's copy of something the master's desk already has in its own words (reminders:
# the master has the "reminded" list).
_DUPLICATES = frozenset({EventKind.ORDER_ACCEPTED, EventKind.PURCHASE, EventKind.BUY_ORDERED,
                         EventKind.SPELL_CAST, EventKind.AWAY_ACK, EventKind.STANDBY_JOINED,
                         EventKind.STANDBY_LEFT, EventKind.SEAT_TAKEN, EventKind.REMINDER})
# A whisper's acknowledgement to its sender: addressed to him, it would name him under
# `/master log player:` although the master option hiding anonymous senders is off
# (issue 33, K11); with the option on, the desk's "anon_sender" already names him.
_SENDER_ONLY = frozenset({EventKind.WHISPER_SENT})
# Events only the master's desk shows: its own account of what players did and why.
DESK_ONLY = frozenset({EventKind.DESK_OPENED, EventKind.DESK_ORDER, EventKind.DESK_PURCHASE,
                       EventKind.DESK_BUY_ORDERED, EventKind.DESK_BUY_SKIPPED,
                       EventKind.DESK_BUY_FAILED, EventKind.DESK_SPELL,
                       EventKind.DESK_SPELL_BLOCKED, EventKind.DESK_REPLACED,
                       EventKind.DESK_STANDBY, EventKind.ALL_ORDERS_IN, EventKind.NIGHT_EXPLAINED,
                       EventKind.DAY_EXPLAINED, EventKind.DESK_DAY_KICK,
                       EventKind.DESK_SIGHT, EventKind.DESK_HAMMER})
PAGE_BUDGET = 3800  # characters of one page (an embed description holds 4096)


class LogEntry(BaseModel):
    """One event of the game, with the log number and the phase it belongs to."""

    seq: int
    phase: PhaseKind
    number: int
    event: Event


def master_log(history: History, *, phase: PhaseFilter = None, number: int | None = None,
               player: int | None = None) -> list[LogEntry]:
    """The whole history for the master, filtered by phase (day/night, optionally its
    number) and by a player (events naming him or addressed to him)."""
    out: list[LogEntry] = []
    current, current_no = PhaseKind.SIGNUP, 0
    for seq, _, events in history:
        for event in events:
            if event.kind in _DUPLICATES and event.audience.kind == "players":
                continue
            if event.kind is EventKind.TURN_MISSED and event.audience.kind == "players":
                continue
            if event.kind in _SENDER_ONLY:
                continue
            if event.kind is EventKind.PHASE_STARTED:
                started = event.read(PhaseStarted)
                current, current_no = PhaseKind(started.phase), started.number
            entry = LogEntry(seq=seq, phase=current, number=current_no, event=event)
            if event.kind in (EventKind.GAME_OVER, EventKind.CANCELLED):
                current = PhaseKind.ENDED if event.kind is EventKind.GAME_OVER \
                    else PhaseKind.CANCELLED
            if phase is not None and entry.phase != phase:
                continue
            if number is not None and entry.number != number:
                continue
            if player is not None and not involves(event, player):
                continue
            out.append(entry)
    return out


def involves(event: Event, uid: int) -> bool:
    """Whether an event names a player anywhere in its data, or is addressed to him."""
    return uid in event.audience.players or uid in set(_ints(event.data))


def _ints(value: Any) -> Iterable[int]:
    if isinstance(value, bool):
        return
    if isinstance(value, int):
        yield value
    elif isinstance(value, str) and value.isdigit():
        yield int(value)
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _ints(k)
            yield from _ints(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _ints(v)


def known_names(history: History, state: GameState) -> dict[int, str]:
    """Every name the game has known, substitutes and replaced players included."""
    names: dict[int, str] = {}
    for _, command, _ in history:
        name = getattr(command, "name", None)
        if command.kind in ("join", "standby") and isinstance(name, str):
            names[command.by] = name
        new = getattr(command, "new", None)
        if command.kind == "replace" and isinstance(name, str) and isinstance(new, int):
            names[new] = name
    names.update({p.uid: p.name for p in state.players})
    names.update({s.uid: s.name for s in state.standby})
    return names


def standby_list(state: GameState) -> list[tuple[int, str]]:
    """Who waits to substitute, in order: what /master replace may offer."""
    return [(s.uid, s.name) for s in state.standby]


# --- words -----------------------------------------------------------------------------
def desk_text(event: Event, names: Names, lang: str) -> str:
    """One event as the master reads it: the desk's own words where it has them."""
    kind = event.kind
    if kind is EventKind.NIGHT_EXPLAINED:
        return _night(event, names, lang)
    if kind is EventKind.DAY_EXPLAINED:
        return _day(event, names, lang)
    if kind is EventKind.DESK_OPENED:
        rows = "; ".join(t("desk.opened.row", lang, name=names(uid),
                           role=role_name(role, lang)) for uid, role, _ in event.data["roles"])
        return t("desk.opened.head", lang, roles=rows or "—")
    if kind is EventKind.DESK_DAY_KICK:
        return _day_kick(event, names, lang)
    if kind is EventKind.DESK_ORDER:
        p = params(event, names, lang)
        lines = [t("desk.order.line", lang, **p)]
        if event.data.get("fallback") is not None:
            lines.append(t("desk.order.fallback", lang, **p))
        if event.data.get("story"):
            lines.append(t("desk.order.story", lang, **p))
        if event.data.get("replaced"):
            lines.append(t("desk.order.replaced", lang))
        return "\n".join(lines)
    if kind is EventKind.DESK_BUY_FAILED:
        reason = describe_error(event.data["code"], dict(event.data.get("params") or {}),
                                names, lang)
        return t("event.desk_buy_failed", lang, **(params(event, names, lang) | {
            "reason": reason}))
    if kind is EventKind.DESK_SIGHT:
        return t("desk.event.desk_sight", lang, uid=names(event.data["uid"]),
                 what=t(f"desk.sight.{event.data['sight']}", lang))
    if kind is EventKind.DESK_STANDBY:
        key = "desk.standby.on" if event.data.get("on") else "desk.standby.off"
        return t(key, lang, uid=names(event.data["uid"]), count=event.data["count"])
    if has_key(f"desk.event.{kind}", lang) and event.audience.kind == "master":
        return t(f"desk.event.{kind}", lang, **params(event, names, lang))
    if kind in (EventKind.DESK_BUY_ORDERED, EventKind.DESK_BUY_SKIPPED):
        p = params(event, names, lang)
        p["condition"] = _condition(event.data, p, lang)
        p["what"] = t("desk.buy.on" if isinstance(event.data.get("target"), int)  # a spell's
                      else "desk.buy.what", lang, **p)
        return t(f"event.{kind}", lang, **p)
    return describe(event, names, lang)


def _night(event: Event, names: Names, lang: str) -> str:
    lines = [upper_first(t("desk.night.head", lang,
                           **phase_words(event.data["night"], lang, NIGHT_FORMS)))]
    for step in event.data["steps"]:
        kind = step["step"]
        if kind == "sequence":
            order = ", ".join(names(u) for u in step["actors"]) or "—"
            lines.append(t("desk.night.sequence", lang, actors=order))
            continue
        p = readable({k: v for k, v in step.items() if k not in ("step", "result", "again")},
                     names, lang)
        if "result" in step:
            p["result"] = role_name(step["result"], lang)
        if step.get("bouncer") is not None:
            p["bouncer"] = names(step["bouncer"])
        key = "desk.night.kill_again" if kind == "kill" and step.get("again") else \
            f"desk.night.{kind}"
        lines.append(t(key, lang, **p))
    deaths = event.data.get("deaths") or {}
    if not deaths:
        lines.append(t("desk.night.nobody", lang))
    for victim, by in deaths.items():
        lines.append(t("desk.night.death", lang, name=names(int(victim)),
                       by=", ".join(names(u) for u in by)))
    return "\n".join(lines)


def _day(event: Event, names: Names, lang: str) -> str:
    data = event.data
    lines = [upper_first(t("desk.day.head", lang, **phase_words(data["number"], lang)))]
    for voter, target, weight, *why in data["votes"]:
        # a vote that counts 0 says why in a word (rows stored before it carry none)
        reason = why[0] if why and why[0] and not weight else ""
        lines.append(t("desk.day.vote_zero" if reason else "desk.day.vote", lang,
                       voter=names(voter), target=names(target), votes=votes(weight, lang),
                       why=t(f"desk.day.why.{reason}", lang) if reason else ""))
    for target, halves in data["tally"]:
        lines.append(t("desk.day.row", lang, name=names(target), votes=votes(halves, lang)))
    hanged = data.get("hanged")
    if hanged is None:
        lines.append(t("desk.day.nobody", lang))
    elif data.get("tied"):
        lines.append(t("desk.day.tie", lang, tied=", ".join(names(u) for u in data["tied"]),
                       name=names(hanged), decider=names(data["decider"])
                       if data.get("decider") is not None else "—"))
    else:
        lines.append(t("desk.day.hanged", lang, name=names(hanged)))
    return "\n".join(lines)


def _condition(data: dict[str, Any], p: dict[str, Any], lang: str) -> str:
    """An evening order's condition in words, whichever of the three it is (or none)."""
    for key in ("if_hanged", "unless_hanged"):
        if isinstance(data.get(key), int):
            return t(f"desk.buy.{key}", lang, **p)
    return t("desk.buy.if_nobody_hanged" if data.get("if_nobody_hanged") else "desk.buy.always",
             lang)


def _day_kick(event: Event, names: Names, lang: str) -> str:
    """A player removed mid-day: his votes and the votes for him drop out, the day is
    decided among the others, and a tie hangs the first to reach the count, even a count
    of one vote. Said to the master when it happens, with the count as it now stands."""
    data = event.data
    lines = [t("event.desk_day_kick", lang, uid=names(data["uid"]),
               **phase_words(data["number"], lang))]
    rows = data.get("tally") or []
    if not rows:
        lines.append(t("desk.kick_day.none", lang))
    else:
        lines.append(t("desk.kick_day.standing", lang, tally=", ".join(
            f"{names(u)}: {votes(h, lang)}" for u, h in rows)))
        leader = data["leader"]
        if data.get("tied"):
            lines.append(t("desk.kick_day.tie", lang, tied=", ".join(
                names(u) for u in data["tied"]), votes=votes(rows[0][1], lang),
                name=names(leader)))
        else:
            lines.append(t("desk.kick_day.leader", lang, name=names(leader),
                           votes=votes(rows[0][1], lang)))
    lines.append(t("desk.kick_day.rule", lang))
    return "\n".join(lines)


def phase_label(entry: LogEntry, lang: str) -> str:
    return t(f"status.phase.{entry.phase}", lang, number=entry.number)


def log_lines(entries: Sequence[LogEntry], names: Names, lang: str) -> list[str]:
    """Each entry as '[phase] text': the master log's lines, nothing cut."""
    return [t("desk.log.line", lang, phase=phase_label(e, lang),
              text=addressed(e.event, desk_text(e.event, names, lang), names, lang))
            for e in entries]


def addressed(event: Event, text: str, names: Names, lang: str) -> str:
    """A line addressed to some players or to a team's channel names whom it concerns
    ("to @P1: Your role: mafioso."): the master reads every seat's news in one log. Each
    line of a push of several lines names them ("You still read the game channel..."
    alone would not say to whom it went)."""
    if event.audience.kind == "players" and event.audience.players:
        who = ", ".join(names(u) for u in event.audience.players)
        return "\n".join(t("desk.log.to", lang, names=who, text=line)
                         for line in text.split("\n") if line.strip())
    if event.audience.kind == "team" and event.audience.team is not None:
        team = team_name(event.audience.team, lang)
        return "\n".join(t("desk.log.to_team", lang, team=team, text=line)
                         for line in text.split("\n") if line.strip())
    return text


def paginate(lines: Sequence[str], budget: int = PAGE_BUDGET) -> list[str]:
    """Pack lines into pages of at most `budget` characters; a longer line is carried
    over to the next pages, never cut off. Always at least one page."""
    pages: list[str] = []
    page = ""
    for line in lines:
        while len(line) > budget:  # a very long entry (a story): split across pages
            if page:
                pages.append(page)
                page = ""
            cut = _cut(line, budget)
            pages.append(line[:cut])
            line = line[cut:]
        if page and len(page) + 1 + len(line) > budget:
            pages.append(page)
            page = ""
        page = f"{page}\n{line}" if page else line
    if page or not pages:
        pages.append(page)
    return pages


def _cut(text: str, budget: int) -> int:
    """Where to split an over-long line: after the last space within the budget (so a
    mention or a word is not broken), else at the budget."""
    space = text.rfind(" ", budget // 2, budget)
    return space + 1 if space >= 0 else budget
