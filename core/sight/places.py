"""Private places and the game's ping role: who is told what, as pure functions.

The Discord layer gives every seat a private place (a private thread of the game
channel) and the seated players a guild role that phase announcements ping. What
goes to which place, and who holds the role after a command, is decided here from
the engine's events and the states before and after the command, so the cogs never
read raw state for it. The results become outbox entries written in the command's
own transaction (`outbox_rows`): a crash can delay a push, never lose it.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from core.game.commands import Command
from core.game.events import Event, EventKind
from core.game.rules.owing import duty, owing
from core.game.state import GameState

PLACE_KIND = "place"  # Outbox.kind: one seat's news of one command, as one message
CLOSE_KIND = "close"  # Outbox.kind: the game's private channels, places and role close
PING_KIND = "ping_role"  # Outbox.kind: create the game's role / change who holds it
SILENCE_KIND = "silence"  # Outbox.kind: who may no longer (or again) post in the game channel

# Events the sender's own interaction reply already shows (an ephemeral answer): his
# place is not pinged again for what he just did himself.
SHOWN_IN_REPLY = frozenset({
    EventKind.ORDER_ACCEPTED, EventKind.WHISPER_SENT, EventKind.AWAY_ACK, EventKind.BUY_ORDERED,
    EventKind.PURCHASE, EventKind.SPELL_CAST,
})
# Events addressed to a team channel that also change one member's own card: pushed to
# that member's place too (the team's channel gets them as well).
CARD_CHANGES = frozenset({EventKind.PROMOTED})

Row = tuple[str, dict[str, Any]]


class Push(BaseModel):
    """One seat's news from one command: one message in the seat's place."""

    seat: int  # index in GameState.players: stays with the seat across replacements
    uid: int  # who held the seat after the command
    events: list[Event] = Field(default_factory=list)
    add: list[int] = Field(default_factory=list)  # to let into the place (a substitute)
    remove: list[int] = Field(default_factory=list)  # to shut out (the replaced member)


class PingChange(BaseModel):
    """Who gains and who loses the game's ping role with one command."""

    create: bool = False
    add: list[int] = Field(default_factory=list)
    remove: list[int] = Field(default_factory=list)


def seat_of(state: GameState, uid: int) -> int | None:
    for i, p in enumerate(state.players):
        if p.uid == uid:
            return i
    return None


def seat_holder(state: GameState, seat: int) -> int | None:
    """Who sits in a seat now (a substitute after a replacement)."""
    return state.players[seat].uid if 0 <= seat < len(state.players) else None


def seats(state: GameState) -> list[int]:
    """Every seat's current holder, in seat order."""
    return [p.uid for p in state.players]


def _recipients(event: Event) -> list[int]:
    if event.audience.kind == "players":
        return list(event.audience.players)
    if event.audience.kind == "team" and event.kind in CARD_CHANGES:
        uid = event.data.get("uid")
        return [uid] if isinstance(uid, int) else []
    return []


def pushes(by: int, state: GameState, events: list[Event]) -> list[Push]:
    """What each seat's place receives from a command's events, one Push per seat.

    `state` is the state after the command (seats are looked up there); `by` is the
    sender, whose reply already shows the acknowledgements in SHOWN_IN_REPLY."""
    out: dict[int, Push] = {}

    def push(uid: int) -> Push | None:
        seat = seat_of(state, uid)
        if seat is None:
            return None
        if seat not in out:
            out[seat] = Push(seat=seat, uid=uid)
        return out[seat]

    for event in events:
        if event.kind is EventKind.REPLACED:
            old, new = event.data.get("old"), event.data.get("new")
            if isinstance(old, int) and isinstance(new, int) and (p := push(new)) is not None:
                p.remove.append(old)
                p.add.append(new)
                p.events.append(event)
            continue
        for uid in dict.fromkeys(_recipients(event)):
            if uid == by and event.kind in SHOWN_IN_REPLY:
                continue
            p = push(uid)
            if p is not None and event not in p.events:
                p.events.append(event)
    return [out[s] for s in sorted(out)]


#: deaths that take a player out of the game's loop (and so the ping role): a removal
#: by the master or for inactivity, not a death in play
REMOVALS = frozenset({"kicked", "inactive"})


def stale(state: GameState, event: Event, uid: int) -> bool:
    """A reminder (scheduled or a prod) whose reason is gone when it is delivered: the
    player has done what it asked meanwhile (voted, ordered, checked in), the phase it
    was about is over, or he no longer owes anything. It is dropped, not sent late."""
    if event.kind is not EventKind.REMINDER:
        return False
    data = event.data
    return not (duty(state) == data.get("what") and state.number == data.get("number")
                and uid in owing(state))


def ping_members(state: GameState) -> set[int]:
    """Who holds the game's ping role: every seat's holder of a running game, the dead
    too: they stay in the loop until the end (a ghost voter under a living occultist
    still needs the phase pings), and a death costs no member-role request (Discord
    allows 10 per 10 s per guild). A removed player (REMOVALS) loses it, and a replaced
    member with his seat (the substitute takes it)."""
    if not state.started or state.over:
        return set()
    return {p.uid for p in state.players if p.death is None or p.death.cause not in REMOVALS}


def ping_change(old: GameState, new: GameState) -> PingChange | None:
    """The role changes a command makes (None: none). At the end nobody is removed:
    the role is deleted with the game's channels."""
    if new.over:
        return None
    create = new.started and not old.started
    before, after = ping_members(old), ping_members(new)
    change = PingChange(create=create, add=sorted(after - before),
                        remove=sorted(before - after))
    if not (change.create or change.add or change.remove):
        return None
    return change


def silenced(state: GameState) -> set[int]:
    """Who may not post in the game channel (nor in its threads): the dead of a running
    game, unless the master lets them (`dead_public`), and every spectator until the end
    (he may have read the dead's talk or the teams': RULES.md §14). The forum convention:
    the dead are silent; a ghost's vote is a command (/vote), which needs no Send
    Messages."""
    if state.over:
        return set()
    quiet = {s.uid for s in state.spectators}
    if state.started and not state.options.dead_public:
        quiet |= {p.uid for p in state.players if not p.alive}
    return quiet


def silence_change(old: GameState, new: GameState) -> dict[str, list[int]] | None:
    """Whom a command silences in the game channel and whom it lets speak again (the end
    of the game lets every silenced member speak again)."""
    before, after = silenced(old), silenced(new)
    if before == after:
        return None
    return {"mute": sorted(after - before), "unmute": sorted(before - after)}


def outbox_rows(command: Command, old: GameState, new: GameState, events: list[Event]
                ) -> tuple[list[Row], list[Row]]:
    """The service's bundler: (entries before the command's events, entries after).

    The role change goes first, so a phase announcement pings exactly the players left
    after the command (a player killed tonight is not pinged by the morning); the
    pushes go after the public announcements, except at the end of the game, whose
    announcement archives (or deletes) the places."""
    before: list[Row] = []
    change = ping_change(old, new)
    if change is not None:
        before.append((PING_KIND, {"seq": new.seq, **change.model_dump()}))
    silence = silence_change(old, new)
    if silence is not None:
        before.append((SILENCE_KIND, {"seq": new.seq, **silence}))
    # the end closes the private channels, the places and the role: a row of its own,
    # last, so it waits for their last posts without holding back the game channel's
    closing: list[Row] = [(CLOSE_KIND, {"seq": new.seq})] if new.over and not old.over \
        else []
    if not new.started:
        return before, closing  # places open with the deal: a signup replacement has none
    places: list[Row] = [(PLACE_KIND, {"seq": new.seq, **p.model_dump(mode="json")})
                         for p in pushes(command.by, new, events)]
    if new.over:  # the last news goes in before the announcement that ends the game
        return before + places, closing
    return before, places


def private_reader(state: GameState, uid: int) -> bool:
    """Whether the game writes to `uid` privately (his place, his desk, his DMs): a seated
    player, one on the standby list (he may take a seat), or the master. Only their
    language is worth keeping (cogs/utils/bot.py)."""
    return uid in (state.master, state.cohost) or state.player(uid) is not None \
        or any(s.uid == uid for s in state.standby)
