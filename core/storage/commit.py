"""The commit path: what one accepted command writes, in one transaction.

The game row (state, seq guard), its EventLog row, its Outbox rows (events the
route keeps, what the derivers and bundlers add, the caller's extras), the seating
and statistics mirrors, and the commit hooks (the currency ledger). The transaction
may be shared with other games' commands (core/storage/groupcommit.py), so
everything here only writes through the connection it is given.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from pydantic import BaseModel, ConfigDict
from tortoise.backends.base.client import BaseDBAsyncClient
from tortoise.expressions import F

from core.game import engine
from core.game.commands import COMMAND_ADAPTER, Command
from core.game.events import EVENTS_ADAPTER, Event
from core.game.rules.owing import REMINDER, reminder_at
from core.game.state import GameState, PhaseKind
from core.sight.destinations import Where
from core.sight.destinations import of as destination_of
from core.sight.record import files_for
from core.sight.tallies import record_fields
from core.storage import statements
from core.storage.hooks import Commit, CommitHook, quiet
from core.storage.kinds import EVENT_KIND as EVENT_KIND
from core.storage.kinds import Bundler, OutboxDeriver
from core.storage.models import GamePlayer, UserStats
from core.storage.ratings import rate_game
from core.storage.retry import Stale

# An entry the caller answers itself (an interaction response): not due before its hold
# ends, then delivered by the worker only if the caller did not mark it delivered. Its
# payload starts with this (no user text can), so the deliverer knows to look first.
ANSWERED = '{"answered":true'
ANSWER_HOLD = timedelta(seconds=5)  # Discord wants an interaction's response within 3 s
# A day's stream of small commands: each writes its log row, and the whole state only
# every SNAPSHOT_EVERY-th (a load replays the few logged since: GameService._loaded).
LIGHT = frozenset({"vote", "unvote", "night"})
SNAPSHOT_EVERY = 16


def stores_state(command: Command, old: GameState, new: GameState, stored_seq: int) -> bool:
    """Whether this commit writes the whole state to the game row. Serializing it is the
    largest cost of a vote's commit; the log row written with it holds the command, so
    a vote or a night order leaves it to the SNAPSHOT_EVERY-th, unless it changed the
    phase or ended the game. Every other command stores it."""
    return (command.kind not in LIGHT or new.phase is not old.phase or new.over
            or new.seq - stored_seq >= SNAPSHOT_EVERY)


#: destinations that are channel posts (core/sight/destinations.py)
CHANNEL_POSTS = frozenset({Where.GAME, Where.SIGNUP, Where.TEAM, Where.TEAM_SETUP})


def default_route(event: Event) -> bool:
    """Events that must reach Discord even across a crash: channel posts (public, team),
    and reminders (no interaction is there to answer them: the scheduler sends them).

    Other private notes ('players', 'master') are answered by the Discord layer from
    the returned events; it can make any of them durable with `extra_outbox`.
    """
    return destination_of(event).where in CHANNEL_POSTS or event.kind is REMINDER


class OutboxItem(BaseModel):
    """An outbox payload the caller adds to a command's transaction (e.g. 'edit signup')."""

    model_config = ConfigDict(frozen=True)
    kind: str
    payload: dict[str, Any]


# What a command's rows are made of beyond its events (the route, the derivers, the
# bundlers) is listed in core/storage/kinds.py; storage writes the rows and knows
# nothing of what they say.
OutboxRows = list[tuple[str, dict[str, Any]]]


@dataclass(frozen=True)
class Applied:
    """A committed command: the new state (read-only!), its events and its log number."""

    state: GameState
    events: list[Event]
    game_id: int
    seq: int
    #: ordinals of the outbox entries held for the caller to answer (`answer`)
    answered: tuple[int, ...] = ()


@dataclass(frozen=True)
class Pending:
    """One command ready to commit: where the game stood, what the engine made of it."""

    game_id: int
    guild_id: int
    outbox_seq: int  # the game's last outbox ordinal, as read
    old: GameState
    out: engine.Outcome
    command: Command


def outbox_rows(p: Pending, extra: list[tuple[str, str]], route: Callable[[Event], bool],
                derivers: list[OutboxDeriver], bundlers: list[Bundler],
                answer: Callable[[Event], bool] | None = None, reply: str | None = None
                ) -> list[tuple[str, str]]:
    """The command's outbox rows in delivery order, payloads as JSON; the events
    `answer` takes are held for the caller's own response (`ANSWERED`), with `reply`,
    that response's own identity (an interaction's id): a later look for the entry's
    message finds that response by it, never another message that reads the same."""
    new, events = p.out.state, p.out.events
    held: dict[str, Any] = {"answered": True} | ({"reply": reply} if reply else {})
    rows = [(EVENT_KIND, dumps((held if answer is not None and answer(e)
                                else {}) | event_payload(new, e)))
            for e in events if route(e)]
    for derive in derivers:
        rows += [(kind, dumps(payload)) for kind, payload in derive(p.old, new, events)]
    for bundle in bundlers:
        first, last = bundle(p.command, p.old, new, events)
        rows = [(k, dumps(v)) for k, v in first] + rows + [(k, dumps(v)) for k, v in last]
    return rows + extra


def writer(p: Pending, rows: list[tuple[str, str]], columns: dict[str, Any],
           state_json: str | None, now: datetime, hooks: list[CommitHook]
           ) -> Callable[[BaseDBAsyncClient], Any] | statements.Script:
    """The transaction body of one command (run again as a whole if its group fails);
    `state_json` None leaves the stored state as it was (see `stores_state`).

    A command that seats nobody, ends nothing and gives no hook work (a vote, a night
    order) is a Script: its writes are known now, and its result False means the
    guard failed (Stale). Any other is a function of the connection that raises Stale."""
    old, new = p.old, p.out.state
    command_json = COMMAND_ADAPTER.dump_json(p.command).decode()
    events_json = EVENTS_ADAPTER.dump_json(p.out.events).decode()
    values: dict[str, Any] = {
        "deadline": new.deadline, "reminder_at": reminder_at(new), "seq": new.seq,
        "outbox_seq": p.outbox_seq + len(rows), "updated_at": now, **columns,
    }
    if state_json is not None:
        values["state"] = state_json
    # Indexed columns only when they change: an unchanged index entry costs nothing
    # to keep, while SET rewrites it (pages in the WAL, synced on every commit).
    if new.phase is not old.phase:
        values["phase"] = str(new.phase)
    if new.over != old.over:
        values["active"] = not new.over
    if new.master != old.master:  # a handover to the co-host: the row routes by it
        values["master_id"] = new.master
    if new.over:
        values["active_channel_id"] = None  # frees the channel for the next game
    hooks = list(hooks)
    commit = Commit(game_id=p.game_id, guild_id=p.guild_id, command=p.command,
                    old=old, new=new, events=p.out.events)
    seats = old.players is not new.players \
        and [q.uid for q in old.players] != [q.uid for q in new.players]
    ends = new.phase is PhaseKind.ENDED and old.phase is not PhaseKind.ENDED

    def script(dialect: str) -> statements.Script:
        outbox = statements.outbox_insert(dialect, p.game_id, p.outbox_seq, rows, now,
                                          held=held(rows), hold=ANSWER_HOLD)
        return statements.Script(
            statements.game_update(dialect, p.game_id, values, seq=old.seq,
                                   outbox_seq=p.outbox_seq),
            (statements.log_insert(dialect, p.game_id, new.seq, command_json, events_json,
                                   now),) + ((outbox,) if outbox is not None else ()))

    if not seats and not ends and all(quiet(hook, commit) for hook in hooks):
        return script(statements.default_dialect())

    async def write(conn: BaseDBAsyncClient) -> None:
        if not await statements.run_script(conn, script(str(conn.capabilities.dialect))):
            raise Stale()
        if seats:
            await seat_players(conn, p.game_id, p.guild_id, new)
        if ends:
            await count_stats(conn, p.guild_id, new)
            await rate_game(conn, p.guild_id, p.game_id, new)
        for hook in hooks:
            await hook(conn, commit)

    return write


def held(rows: list[tuple[str, str]]) -> list[int]:
    """Indexes of the rows held for the caller's response."""
    return [i for i, (kind, payload) in enumerate(rows)
            if kind == EVENT_KIND and payload.startswith(ANSWERED)]


def event_payload(state: GameState, event: Event) -> dict[str, Any]:
    """An event's outbox payload, made from the state its command left: `files` (if
    any) say what files to attach when it is delivered (built then from committed data:
    core.sight.record.files_for); a vote's record carries the day's count then
    (`count`, core.sight.tallies.record_fields), not the count at delivery."""
    payload: dict[str, Any] = {"seq": state.seq, "event": event.model_dump(mode="json")}
    files = files_for(event)
    if files:
        payload["files"] = files
    return payload | record_fields(state, event)


def dumps(payload: Any) -> str:
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


async def seat_players(conn: BaseDBAsyncClient, game_id: int, guild_id: int,
                       state: GameState) -> None:
    """Mirror the seating: few writes, only when someone joins, leaves or is replaced."""
    await GamePlayer.filter(game_id=game_id).using_db(conn).delete()
    seats = [GamePlayer(game_id=game_id, guild_id=guild_id, user_id=p.uid, seat=i)
             for i, p in enumerate(state.players)]
    if seats:
        await GamePlayer.bulk_create(seats, using_db=conn)


async def count_stats(conn: BaseDBAsyncClient, guild_id: int, state: GameState) -> None:
    """One finished game (and a win, if the player's team won) for everybody seated.

    Safe beside other writers: missing rows are inserted with ON CONFLICT DO NOTHING
    (two games ending at once in one guild cannot both create a row), the rows are
    then locked in id order (PostgreSQL; SQLite holds its one write lock already) and
    the counters move by atomic `x = x + 1` updates.
    """
    uids = sorted({p.uid for p in state.players})
    if not uids:
        return
    await UserStats.bulk_create([UserStats(guild_id=guild_id, user_id=uid) for uid in uids],
                                ignore_conflicts=True, using_db=conn)
    rows = await UserStats.filter(guild_id=guild_id, user_id__in=uids).order_by("id") \
        .select_for_update().using_db(conn)
    await UserStats.filter(guild_id=guild_id, user_id__in=uids).using_db(conn) \
        .update(games=F("games") + 1)
    sides = {p.uid: str(p.side) for p in state.players
             if p.team is not None and p.team in state.winners and p.side is not None}
    for row in rows:
        side = sides.get(row.user_id)
        if side is None:
            continue
        by_side: dict[str, int] = json.loads(row.wins_by_side)
        by_side[side] = by_side.get(side, 0) + 1
        await UserStats.filter(id=row.id).using_db(conn).update(
            wins=F("wins") + 1, wins_by_side=json.dumps(by_side, sort_keys=True))
