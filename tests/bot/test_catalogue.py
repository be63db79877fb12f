"""The catalogue of outbox kinds (core/storage/kinds.py, cogs/delivery/catalogue.py): every row a
real game writes reads as its kind's payload model, a row of another version still
reads, and each kind has its lane and deliverer."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from cogs.delivery.catalogue import DISCORD, LANE_COSMETIC, LANE_PRIVATE, OnDiscord, check, lane
from core.sight.places import PLACE_KIND
from core.storage.kinds import KINDS, EventPayload, PlacePayload, TallyPayload
from core.storage.models import Outbox
from core.storage.outbox import OutboxEntry
from tests.bot.helpers import open_table
from tests.bot.test_rest_per_phase import TWO_DEATHS_ROLES, two_killed
from tests.harness import Harness


async def test_every_row_of_a_game_reads_as_its_kinds_payload(h: Harness) -> None:
    """A game to a night with two deaths and a vote: signup board, events, places, the
    ping role, the silence of the dead and the live count, all read by their models."""
    t = await open_table(h, 8, roles=TWO_DEATHS_ROLES)
    victims = await two_killed(t)
    await t.advance()  # day 1: two dead, silenced, the role kept
    living = [p for p in await t.living() if p not in victims]
    assert (await t.do(living[0], "vote", player=str(living[1].id))).ephemeral is not None
    await t.settle()
    rows = await Outbox.filter(game_id=t.game_id).order_by("ordinal")
    seen = set()
    for row in rows:
        payload = json.loads(row.payload)
        read = KINDS[row.kind].read(payload)
        # nothing the row carries is lost by the model: every stored key is a field
        assert set(payload) <= set(type(read).model_fields), (row.kind, payload)
        seen.add(row.kind)
    # "signup": rows of older versions only; "close": the game's end (not played here)
    assert seen == set(KINDS) - {"signup", "close"}
    assert all(r.status == "delivered" for r in rows), [(r.kind, r.status) for r in rows]


def test_rows_of_other_versions_still_read() -> None:
    """Keys the model does not know are ignored; a missing required one is an error."""
    place = PlacePayload.model_validate({"seq": 3, "seat": 1, "uid": 7, "later": [1]})
    assert (place.seat, place.events, place.add) == (1, [], [])
    with pytest.raises(ValidationError):
        TallyPayload.model_validate({"op": "edit", "coalesce": "tally:1"})
    event = EventPayload.model_validate(
        {"seq": 1, "event": {"kind": "game_over", "data": {}}, "new_key": True})
    assert not event.answered and event.count is None
    with pytest.raises(ValidationError):  # read-only
        place.seat = 2  # type: ignore[misc]


def test_each_kind_has_one_lane_and_deliverer_and_the_check_sees_a_gap() -> None:
    check(KINDS, DISCORD)
    with pytest.raises(RuntimeError, match="without a lane"):
        check([*KINDS, "new_kind"], DISCORD)
    with pytest.raises(RuntimeError, match="does not list"):
        check([k for k in KINDS if k != PLACE_KIND], DISCORD)
    with pytest.raises(RuntimeError, match="no lane"):
        check(KINDS, DISCORD | {PLACE_KIND: OnDiscord(99, DISCORD[PLACE_KIND].deliver)})


def entry(kind: str, payload: dict[str, object]) -> OutboxEntry:
    return OutboxEntry(id=1, game_id=1, ordinal=1, kind=kind, payload=payload, attempts=0)


def test_lanes_by_kind() -> None:
    """Every kind's lane, as it was before the catalogue (an unknown kind: private)."""
    assert lane(entry("tally", {})) == LANE_COSMETIC
    assert lane(entry("no_such_kind", {})) == LANE_PRIVATE
    assert lane(entry("silence", {})) == LANE_PRIVATE
