"""The typed payloads read what the engine emits, and what older rows stored.

Played games (every kind a simulated game reaches, with and without the currency) are
read through each model of their kind, before and after a JSON round trip like the one
the event log and the outbox make."""

from __future__ import annotations

import json

import pytest

from core.game import commands as c
from core.game import payloads as pl
from core.game.events import EVENTS_ADAPTER, Event, EventKind
from core.game.state import Options
from core.play.sim import MASTER, Table, play
from core.sight.narrate import describe


def _played() -> list[Event]:
    events: list[Event] = []
    for seed in range(6):
        money = seed % 2 == 0
        options = Options(currency=money, shop=money, crypto=money, graveyard=not money)
        events += play(seed, 9 + seed, options).events
    return events + _scripted()


def _scripted() -> list[Event]:
    """The master's and the substitutes' commands a random game does not send."""
    table = Table(3, 10, Options(currency=True, shop=True, crypto=True))
    table.send(c.Configure(by=MASTER, at=table.clock, roles="mafioso; citizen x9"))
    table.send(c.Start(by=MASTER, at=table.clock, confirm=True))
    table.send(c.Standby(by=900, at=table.clock, name="Sub"))
    table.send(c.Standby(by=901, at=table.clock, name="Gone"))
    table.send(c.Standby(by=901, at=table.clock, name="Gone"))  # again: leaves the list
    table.send(c.Extend(by=MASTER, at=table.tick(), minutes=30))
    table.send(c.Remind(by=MASTER, at=table.tick()))
    table.send(c.Replace(by=MASTER, at=table.tick(), old=100, new=900, name="Sub"))
    table.send(c.Anon(by=101, at=table.tick(), text="I saw it", signature=None))
    return table.played.events


EVENTS = _played()


def test_every_model_reads_what_played_games_emit_and_store() -> None:
    stored = EVENTS_ADAPTER.validate_json(EVENTS_ADAPTER.dump_json(EVENTS))
    read: set[type[pl.Payload]] = set()
    for event in [*EVENTS, *stored]:
        for model in pl.MODELS:
            if event.kind in model.KINDS:
                event.read(model)
                read.add(model)
    # the kinds a simulated game never reaches are read by the describe tests of tests/
    unread = set(pl.MODELS) - read
    assert unread <= {pl.ClanKillFailed, pl.Thanked}, unread


def test_payload_reads_each_kind_through_its_narrowest_model() -> None:
    assert pl.BY_KIND[EventKind.ROLES_SET] is pl.RolesSet
    assert pl.BY_KIND[EventKind.GAME_STARTED] is pl.Composition
    for event in EVENTS:
        found = pl.payload(event)
        assert (found is None) == (event.kind not in pl.BY_KIND)
        assert found is None or event.kind in type(found).KINDS
    morning = next(e for e in EVENTS if e.kind is EventKind.MORNING)
    match pl.payload(morning):
        case pl.Morning(victims=victims):
            assert victims == morning.read(pl.Morning).victims
        case other:
            raise AssertionError(other)


def test_reading_the_wrong_kind_is_refused() -> None:
    event = Event(kind=EventKind.JOINED, data={"uid": 1})
    with pytest.raises(ValueError, match="joined"):
        event.read(pl.Morning)


def test_a_stored_day_result_reads_its_tally_keys_as_ids() -> None:
    row = {"kind": "day_result", "audience": {"kind": "public", "players": [], "team": None},
           "data": {"number": 2, "tally": {"101": 4, "102": 2}, "hanged": 101, "tied": []}}
    result = Event.model_validate(json.loads(json.dumps(row))).read(pl.DayResult)
    assert result.tally == {101: 4, 102: 2}


def test_an_old_vote_without_shout_fields_reads_as_a_plain_vote() -> None:
    old = Event(kind=EventKind.VOTE_CAST, data={"voter": 101, "target": 102, "total": 2})
    vote = old.read(pl.VoteCast)
    assert (vote.shout, vote.again, vote.ghost) == (False, False, False)
    text = describe(old, lambda uid: f"P{uid}", "en")
    assert "P101" in text and "P102" in text


def test_every_played_event_is_described_in_both_languages() -> None:
    for event in EVENTS:
        for lang in ("ru", "en"):
            assert describe(event, str, lang).strip()
