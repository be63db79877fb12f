"""Where an event goes is decided once (core/sight/destinations.py, issue 40): every layer
that routes (the commit's rows, the worker's lanes, the gathering windows) reads it."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from core.game.events import Audience, Event, EventKind
from core.sight.destinations import SIGNUP_EVENTS, Where, destination
from core.storage.commit import default_route
from core.storage.kinds import routed
from core.storage.outbox import OutboxEntry

AUDIENCES = st.one_of(
    st.just(Audience.public()), st.just(Audience.master()),
    st.builds(lambda u: Audience.to(u), st.integers(1, 99)),
    st.sampled_from(["clan:1", "police", "graveyard"]).map(
        lambda team: Audience(kind="team", team=team)))


@given(st.sampled_from(list(EventKind)), AUDIENCES)
def test_every_layer_reads_one_destination(kind: EventKind, audience: Audience) -> None:
    from cogs.delivery.catalogue import EVENT_LANES, event_lane
    from cogs.delivery.gathering import channel_of

    where = destination(kind, audience)
    event = Event(kind=kind, audience=audience, data={})
    entry = OutboxEntry(id=1, game_id=1, ordinal=1, kind="event", attempts=0,
                        payload={"seq": 1, "event": event.model_dump(mode="json")})
    assert event_lane(entry) == EVENT_LANES[where.where]
    assert channel_of(entry) == where.gathered
    # a private note reaches its player through his place's rows, never as an event row
    if where.where is Where.PLACES:
        assert not routed(event)
    if where.where in (Where.GAME, Where.SIGNUP, Where.TEAM, Where.TEAM_SETUP):
        assert default_route(event)
    assert (where.where is Where.SIGNUP) == (audience.kind == "public"
                                              and kind in SIGNUP_EVENTS)
    assert where.private == (audience.kind in ("team", "master"))


@given(st.sampled_from(list(EventKind)), AUDIENCES)
def test_a_rows_batching_is_one_its_kind_declares(kind: EventKind, audience: Audience
                                                  ) -> None:
    """The catalogue's coalescing column is what the batch hook applies (issue 40): an
    event row takes the one of its kind's rules its destination says; a gathered line
    is the desk's or a team's, a latest-only one the signup board's."""
    from core.storage.kinds import KINDS, Coalescing, batching

    event = Event(kind=kind, audience=audience, data={})
    row = OutboxEntry(id=1, game_id=1, ordinal=1, kind="event", attempts=0,
                      payload={"seq": 1, "event": event.model_dump(mode="json")})
    rule = batching(row)
    assert rule in KINDS["event"].coalescing
    where = destination(kind, audience)
    assert (rule is Coalescing.GATHERED) == (where.gathered is not None)
    assert (rule is Coalescing.LATEST) == (where.where is Where.SIGNUP)
    for name, declared in KINDS.items():
        if name != "event":
            other = OutboxEntry(id=1, game_id=1, ordinal=1, kind=name, payload={},
                                attempts=0)
            assert batching(other) is declared.coalescing[0]
