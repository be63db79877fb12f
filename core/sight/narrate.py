"""Plain-text rendering of events through the message catalogue.

Shared by the simulator's log and the Discord layer (which wraps the text in
embeds), so an event reads the same everywhere and every word is localized.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, assert_never

from core.game.events import Event
from core.game.events import EventKind as K
from core.game.payloads import (
    BuyDone,
    CheckLog,
    ClanKillFailed,
    ClanOrder,
    ClanTurn,
    Composition,
    DayResult,
    GameOver,
    GameResult,
    Morning,
    PayoutLine,
    Payouts,
    PhaseStarted,
    PlayerDied,
    Reminder,
    TeamChanged,
    Thanked,
    TurnMissed,
    YouDied,
)
from core.game.rules.items import is_item
from core.game.team import Team
from core.text.i18n import t

Names = Callable[[int], str]
When = Callable[[str], str]  # ISO timestamp -> how this medium shows a moment


def _iso_minutes(value: str) -> str:
    """A moment as plain text: to the minute, with the seconds when it has any (a
    deadline at its game's own second of the minute)."""
    seconds = value[16:19]
    return value[:16].replace("T", " ") + (seconds if seconds not in ("", ":00") else "") \
        + " UTC"

_PLAYER_KEYS = ("uid", "voter", "target", "actor", "fallback", "previous", "old", "new", "by",
                "acting", "hanged", "master", "if_hanged", "unless_hanged", "passed")


def role_name(role: str | None, lang: str) -> str:
    return t(f"role.{role}.name", lang) if role else t("term.hidden_role", lang)


def team_name(team: str, lang: str) -> str:
    parsed = Team.parse(team)  # a Team, or its stored string
    if parsed is not None and parsed.number is not None:
        return t("team.clan", lang, number=parsed.number)
    return t(f"team.{team}", lang)


def attacker_name(kind: str, lang: str) -> str:
    """Who a protection is against, in the genitive: "Защита от клана 1 / от убийцы"."""
    if kind.startswith("mafia:"):
        return t("attacker.clan", lang, number=kind.split(":")[1])
    return t(f"role.{kind}.genitive", lang)


def item_name(kind: str, against: str | None, lang: str) -> str:
    """An item or spell by its full name: "Protection from the killer", not "Protection from…"."""
    if kind == "protection" and against:
        return t("item.protection.name_against", lang, attacker=attacker_name(against, lang))
    if is_item(kind):
        return t(f"item.{kind}.name", lang)
    return t(f"spell.{kind}.name", lang)


def duration(minutes: int, lang: str) -> str:
    """A phase length as people say it: "24 ч", "1 ч 30 мин", "45 мин" (not 1440 minutes)."""
    hours, rest = divmod(int(minutes), 60)
    if hours and rest:
        return t("words.duration.hours_minutes", lang, hours=hours, minutes=rest)
    if hours:
        return t("words.duration.hours", lang, hours=hours)
    return t("words.duration.minutes", lang, minutes=rest)


#: The phrases of a phase in prose (catalogue `words.nth.<form>.<n>`): "первый день",
#: "первого дня", "первая ночь", "первой ночи", "первую ночь"; English "Day 1" / "day 1".
PHASE_FORMS = ("day_nom", "day_gen", "night_nom", "night_gen", "night_acc")
NIGHT_FORMS = ("night_nom", "night_gen", "night_acc")
_NAMED = 10  # ordinals written as words up to this; beyond, "11-й день"


def phase_words(number: int, lang: str, forms: tuple[str, ...] = PHASE_FORMS
                ) -> dict[str, str]:
    """An ordinal day or night in prose, in every case a sentence needs."""
    key = str(number) if 0 <= number <= _NAMED else "n"
    return {form: t(f"words.nth.{form}.{key}", lang, number=number) for form in forms}


def upper_first(text: str) -> str:
    """A heading that opens with a phrase written in lower case mid-sentence ("нулевая
    ночь по шагам" -> "Нулевая ночь по шагам")."""
    return text[:1].upper() + text[1:]


def votes(halves: int, lang: str) -> str:
    return t("vote.count", lang, count=halves / 2 if halves % 2 else halves // 2)


def params(event: Event, names: Names, lang: str, when: When = _iso_minutes) -> dict[str, Any]:
    """Event data made readable: ids become names, roles and causes become words."""
    return readable(event.data, names, lang, when)


def readable(data: dict[str, Any], names: Names, lang: str,
             when: When = _iso_minutes) -> dict[str, Any]:
    """Parameters made readable (an event's, a refusal's, a desk step's)."""
    data = dict(data)
    out: dict[str, Any] = {k: "—" if v is None else v for k, v in data.items()}
    if isinstance(data.get("deadline"), str):
        out["deadline"] = when(data["deadline"])
    for key in _PLAYER_KEYS:
        value = data.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            out[key] = names(value)
    for key in ("role", "needed"):
        if key in data:
            out[key] = role_name(data[key], lang)
    if "cause" in data:
        out["cause"] = t(f"cause.{data['cause']}", lang)
    if "action" in data:
        out["action"] = t(f"action.{data['action']}", lang)
    if "team" in data and isinstance(data["team"], str):
        out["team"] = team_name(data["team"], lang)
    if "winners" in data:
        out["winners"] = ", ".join(team_name(w, lang) for w in data["winners"]) or "—"
    if "total" in data and isinstance(data["total"], int):
        out["total"] = votes(data["total"], lang)
    if isinstance(data.get("module"), str):
        out["module"] = t(f"signup.module.{data['module']}", lang)
    against = data.get("against")
    for key in ("item", "spell"):  # an evening purchase may be an item or a night spell
        value = data.get(key)
        if isinstance(value, str):
            out[key] = item_name(value, against if isinstance(against, str) else None, lang)
            # with its generic noun: "заклинание «Немота»", "предмет «Защита от убийцы»"
            out[f"{key}_called"] = t("words.item_called" if is_item(value)
                                     else "words.spell_called", lang, name=out[key])
    if isinstance(data.get("minutes"), int):
        out["minutes"] = duration(data["minutes"], lang)
    number, night = data.get("number"), data.get("night")
    if isinstance(number, int) and not isinstance(number, bool):
        out |= phase_words(number, lang)
    if isinstance(night, int) and not isinstance(night, bool):
        out |= phase_words(night, lang, NIGHT_FORMS)
    for key in ("cost", "amount", "premium"):  # money in words: "за 20 лир", "бонус — 5 лир"
        value = data.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            out[f"{key}_lira"] = t("currency.lira", lang, count=value)
            out[f"{key}_lira_acc"] = t("currency.lira_acc", lang, count=value)
    return out


def describe(event: Event, names: Names, lang: str, when: When = _iso_minutes) -> str:
    """One event as a line (or a few) of text in `lang`: a match over every kind, so a
    new kind fails strict mypy here until it is given its words."""
    p = params(event, names, lang, when)
    kind = event.kind
    match kind:
        case K.PHASE_STARTED:
            return _phase_started(event, lang, p, when)
        case K.REMINDER | K.REMINDER_PUBLIC | K.REMINDED:
            return _reminder(event, names, lang, p)
        case K.MORNING:
            return _morning(event.read(Morning), names, lang, p)
        case K.DAY_RESULT:
            return _day_result(event, names, lang, p)
        case K.GAME_OVER:
            return _game_over(event, names, lang, p)
        case K.YOU_DIED:
            return _you_died(event.read(YouDied), lang)
        case K.GAME_STARTED | K.ROLES_SET:
            rows = ", ".join(_composition_row(r, lang) for r in event.read(Composition).composition)
            return t(f"event.{kind}", lang, **(p | {"composition": rows}))
        case K.LOG_SHARED | K.LOG_INHERITED:
            return _check_log(event, names, lang, p)
        case K.TEAM_CHANGED:
            members = ", ".join(names(u) for u in event.read(TeamChanged).members)
            return t("event.team_changed", lang, **(p | {"members": members}))
        case K.CANCELLED:
            return t("event.cancelled", lang)
        case K.MATE_DIED:  # the public line's own shape ("Убит игрок @X"): no gender needed
            death = t(f"event.died_hidden.{event.data['cause']}", lang, uid=p["uid"])
            return t("event.mate_died", lang, **(p | {"death": death}))
        case K.PAYOUTS:
            return payouts_text(event.data, names, lang)
        case K.CLAN_ORDER:  # without a story the line ends at the target
            return t(variant_key(event), lang, **p).rstrip()
        case (K.VOTE_CAST | K.CLAN_KILL_FAILED | K.THANKED | K.GAME_RESULT | K.TURN_WARNING
              | K.TURN_MISSED | K.CLAN_TURN | K.BUY_DONE | K.PLAYER_DIED
              | K.MASTER_HANDED_OVER):
            return t(variant_key(event), lang, **p)
        case (K.ACTION_FAILED | K.ALARM_CLOCK_USED | K.ALL_ORDERS_IN | K.ANON_POST
              | K.ANON_SENDER | K.ARMOUR_SAVED | K.AWAY_ACK | K.AWAY_NOTED | K.BONUS_GRANTED
              | K.BUY_FAILED | K.BUY_ORDERED | K.BUY_SKIPPED | K.CHECK_RESULT | K.CHECKED_IN
              | K.CHEQUE_BOOK_SAVED | K.CLUB_USED | K.COHOST_NAMED | K.COHOST_REMOVED
              | K.DAY_EXPLAINED | K.DESK_BUY_FAILED
              | K.DESK_BUY_ORDERED | K.DESK_BUY_SKIPPED | K.DESK_DAY_KICK | K.DESK_HAMMER
              | K.DESK_OPENED
              | K.DESK_ORDER | K.DESK_PURCHASE | K.DESK_REPLACED | K.DESK_SPELL
              | K.DESK_SPELL_BLOCKED | K.DESK_STANDBY | K.DESK_SIGHT | K.EXTENDED
              | K.GHOST_EXCLUDED | K.HAMMER | K.JOINED
              | K.KILL_DONE | K.LAST_WORDS | K.LAST_WORDS_OPEN | K.LEFT | K.NIGHT_EXPLAINED
              | K.OPERATIVE_BENCHED
              | K.OPTIONS_SET | K.ORDER_ACCEPTED | K.ORDERS_ALL_IN | K.PROMOTED
              | K.PROTECTION_USED | K.PUBLIC_MOVE | K.PURCHASE | K.REPLACED | K.ROLE_DEALT
              | K.SEAT_TAKEN | K.SHOT_DONE | K.SIGHT_ALL | K.SIGHT_THREADS | K.SPELL_BLOCKED
              | K.SPELL_CAST | K.SPELL_ON_YOU | K.STANDBY_JOINED | K.STANDBY_LEFT
              | K.TARGET_GONE | K.VOTE_MOVED | K.VOTE_RELEASED | K.VOTE_WITHDRAWN
              | K.WHISPER | K.WHISPER_SENT):
            return t(f"event.{kind}", lang, **p)
        case _:
            assert_never(kind)


def variant_key(event: Event) -> str:
    """The catalogue key of a kind whose words depend on one fact of its payload."""
    match event.kind:
        case K.VOTE_CAST:
            return vote_key(event.data)
        case K.CLAN_KILL_FAILED if event.read(ClanKillFailed).gone:
            return "event.clan_kill_failed_gone"
        case K.THANKED if not event.read(Thanked).premium:
            return "event.thanked_plain"
        case K.GAME_RESULT:
            result = event.read(GameResult)
            return "event.game_result." + (
                "draw" if result.draw else "won" if result.won else "lost")
        case K.TURN_WARNING if event.read(TurnMissed).excused:
            return "event.turn_warning_excused"
        case K.TURN_MISSED if event.read(TurnMissed).removed:
            return "event.turn_missed_removed"
        case K.CLAN_ORDER if event.read(ClanOrder).replaced:  # a re-sent /night
            return "event.clan_order_replaced"
        case K.MASTER_HANDED_OVER if event.data.get("left"):  # the master left the server
            return "event.master_handed_over_left"
        case K.CLAN_TURN if event.read(ClanTurn).passed is not None:
            return "event.clan_turn_passed"
        case K.BUY_DONE:
            done = event.read(BuyDone)
            return "words.buy_done_if" if done.if_hanged else \
                "words.buy_done_unless" if done.unless_hanged else "words.buy_done_nobody"
        case K.PLAYER_DIED:  # "По итогам дня повешен игрок @X": the cause makes the verb
            died = event.read(PlayerDied)
            return f"event.died{'_hidden' if died.role is None else ''}.{died.cause}"
    return f"event.{event.kind}"


def _phase_started(event: Event, lang: str, p: dict[str, Any], when: When) -> str:
    day = event.read(PhaseStarted).day
    key = "event.phase_started.day" if day else "event.phase_started.night"
    return t(key, lang, **p) + "\n" + call_to_action(event, lang, when)


def _reminder(event: Event, names: Names, lang: str, p: dict[str, Any]) -> str:
    reminder = event.read(Reminder)
    names_of = ", ".join(names(u) for u in reminder.owing) or "—"
    if event.kind is K.REMINDED:
        key = "event.reminded" if reminder.owing else "event.reminded_none"
        text = t(key, lang, **(p | {"owing": names_of, "count": len(reminder.owing)})) \
            if reminder.owing or not reminder.away else ""
        if reminder.away:
            text = " ".join(x for x in (text, t(
                "event.reminded_away", lang, count=len(reminder.away),
                names=", ".join(names(u) for u in reminder.away))) if x)
        return text
    else:
        key = f"event.{event.kind}.{reminder.what}"
    return t(key, lang, **(p | {"owing": names_of, "count": len(reminder.owing)}))


def _morning(morning: Morning, names: Names, lang: str, p: dict[str, Any]) -> str:
    victims, removed = morning.victims, morning.removed
    if not victims and not removed:  # "everybody is alive" is false if someone left
        key = "event.morning.removed_only" if morning.left else "event.morning.quiet"
        return t(key, lang, **p)
    if len(victims) == 1 and not removed and not morning.stories:
        v = victims[0]  # one death: one sentence, not a list
        return t("event.morning.single", lang, **(p | {"name": names(v.uid),
                                                    "role": role_name(v.role, lang)}))
    # one victim beside removals or a story: "Жертва этой ночи", not "Жертвы"
    head = "event.morning.head_one" if len(victims) == 1 else "event.morning.head"
    lines = [t(head if victims else "event.morning.removed_only", lang, **p)]
    for v in victims:
        lines.append(t("event.morning.victim", lang, name=names(v.uid),
                       role=role_name(v.role, lang)))
    if removed:  # removals for missed turns: with the morning, never alone at night
        lines.append(t("event.morning.removed", lang))
        for v in removed:
            lines.append(t("event.morning.victim", lang, name=names(v.uid),
                           role=role_name(v.role, lang)))
    for story in morning.stories:
        lines.append(t("event.morning.story", lang, story=story))
    return "\n".join(lines)


def _you_died(died: YouDied, lang: str) -> str:
    lines = [t(f"event.you_died.{died.cause}", lang),
             t("event.you_died.where_graveyard" if died.graveyard
               else "event.you_died.where", lang)]
    if died.ghost:
        lines.append(t("event.you_died.ghost", lang))
    return "\n".join(lines)


def _check_log(event: Event, names: Names, lang: str, p: dict[str, Any]) -> str:
    """One check a line: the heading names the investigator, never next to a player."""
    log = event.read(CheckLog)
    checks = "\n".join(f"• {names(c.target)}: {role_name(c.role, lang)}"
                        for c in log.checks) or "—"
    text = t(f"event.{event.kind}", lang, **(p | {"checks": checks}))
    if log.note:
        text += "\n" + t("event.log_note", lang, note=log.note)
    return text


def vote_key(data: dict[str, Any]) -> str:
    """The vote post's words: a Shout is said in the post itself ("Крик – применяется в
    явном виде в посте по ходу голосования"); one added to the standing vote is a Shout,
    not a new vote. Old logs without the fields read as plain votes."""
    key = "event.vote_cast"
    if data.get("shout"):
        key = "event.vote_shout_again" if data.get("again") else "event.vote_cast_shout"
    return key + ("_ghost" if data.get("ghost") else "")


def call_to_action(event: Event, lang: str, when: When = _iso_minutes) -> str:
    """What a phase asks of the players and by when; the same words for everybody (by
    night it names no role: whoever has a night move knows it)."""
    phase = event.read(PhaseStarted)
    what = ("checkin" if phase.number == 0 else "vote") if phase.day else "night"
    return t(f"tally.cta.{what}", lang, deadline=when(phase.deadline))


def _composition_row(row: tuple[str, int, int | None], lang: str) -> str:
    role, count, clan = row
    text = role_name(role, lang) + (f" ×{count}" if count > 1 else "")
    return text + (f" ({team_name(Team.clan(clan), lang)})" if clan else "")


def _day_result(event: Event, names: Names, lang: str, p: dict[str, Any]) -> str:
    result = event.read(DayResult)
    tally = sorted(result.tally.items(), key=lambda kv: -kv[1])
    lines = [t("event.day_result.head", lang, **phase_words(result.number, lang))]
    for target, halves in tally:
        lines.append(t("event.day_result.row", lang, name=names(target),
                       votes=votes(halves, lang)))
    if result.hanged is None:
        lines.append(t("event.day_result.nobody", lang))
    elif result.tied:  # the hanging itself is announced once, by the player_died after
        lines.append(t("event.day_result.tie", lang, name=names(result.hanged)))
    return "\n".join(lines)


def _game_over(event: Event, names: Names, lang: str, p: dict[str, Any]) -> str:
    over = event.read(GameOver)
    head = t("event.game_over.draw", lang) if over.draw else \
        t("event.game_over.head", lang, winners=p["winners"])
    lines = [head]
    for row in over.roles:
        key = "event.game_over.winner" if row.winner else "event.game_over.row"
        state = t("term.alive" if row.alive else "term.dead", lang)
        lines.append(t(key, lang, name=names(row.uid), role=role_name(row.role, lang),
                       state=state))
    return "\n".join(lines)


def describe_error(code: str, data: dict[str, Any], names: Names, lang: str) -> str:
    """A refusal in the user's language; ids in its parameters become names."""
    p = readable(data, names, lang)
    if p.get("acting") is None:
        p["acting"] = "—"
    return t(f"error.{code}", lang, **p)


def payouts_text(data: dict[str, Any], names: Names, lang: str,
                 user: Callable[[str], str] = str) -> str:
    """The payout table with its figures: one line per player, then the secret bonuses
    (their reasons are the master's words: `user` escapes them for the medium)."""
    payouts = Payouts.model_validate(data)
    lines = [t("payouts.head", lang)]
    by_uid: dict[int, list[PayoutLine]] = {}
    for line in payouts.lines:
        by_uid.setdefault(line.uid, []).append(line)
    for uid, rows in by_uid.items():
        parts = ", ".join(
            t(f"payouts.reason.{r.reason}", lang, count=r.count, amount=r.amount)
            for r in rows)
        total = sum(r.amount for r in rows)
        lines.append(t("payouts.row", lang, name=names(uid),
                       total=t("currency.lira", lang, count=total), parts=parts))
    for bonus in payouts.bonuses:
        if bonus.secret:
            lines.append(t("payouts.secret_bonus", lang, name=names(bonus.uid),
                           amount=t("currency.lira", lang, count=bonus.amount),
                           reason=user(bonus.reason)))
    return "\n".join(lines)


_BOLD = re.compile(r"\*\*(.+?)\*\*|__(.+?)__")
_QUOTE = re.compile(r"^> ?", re.M)
_ESCAPE = re.compile(r"\\([\\*_`~|>\[\]()#-])")


def plain(text: str) -> str:
    """Discord Markdown removed, for a console: bold, quotes and escapes become plain."""
    text = _BOLD.sub(lambda m: m.group(1) or m.group(2), text)
    text = _QUOTE.sub("  ", text)
    return _ESCAPE.sub(r"\1", text)
