"""core.sight.places over random legal games (hypothesis): who is told what, and who holds the
ping role, command by command."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.game.engine import apply, create_game
from core.game.state import Options
from core.play.sim import MASTER, play
from core.sight.places import PING_KIND, PLACE_KIND, SHOWN_IN_REPLY, outbox_rows, ping_members

SETTINGS = settings(max_examples=25, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
options_st = st.sampled_from([False, True]).flatmap(lambda money: st.builds(
    Options, extra_roles=st.booleans(), currency=st.just(money),
    shop=st.booleans() if money else st.just(False), crypto=st.booleans(),
    reveal_roles=st.booleans()))


@SETTINGS
@given(st.integers(0, 2**31), st.integers(6, 16), options_st)
def test_every_private_event_reaches_its_seat_once(seed: int, players: int,
                                                   options: Options) -> None:
    played = play(seed, players, options)
    state = create_game(seed=seed, master=MASTER, title=f"Game {seed}", options=options)
    holders: set[int] = set()
    for cmd in played.commands:
        out = apply(state, cmd)
        old, new = state, out.state
        state = new
        first, last = outbox_rows(cmd, old, new, out.events)
        places = [p for k, p in first + last if k == PLACE_KIND]
        seats = [p["seat"] for p in places]
        assert len(seats) == len(set(seats))  # one message per seat and command
        if not new.started:
            assert not places
        for p in places:
            assert new.players[p["seat"]].uid == p["uid"]
            for e in p["events"]:
                if e["kind"] == "replaced":
                    assert e["data"]["new"] == p["uid"]
                elif e["audience"]["kind"] == "players":
                    assert p["uid"] in e["audience"]["players"]
                else:
                    assert e["kind"] == "promoted" and e["data"]["uid"] == p["uid"]
        # every players-audience event is pushed to each seated recipient (his own
        # acknowledgements aside) once the game has started
        for e in out.events:
            if e.audience.kind != "players" or not new.started:
                continue
            for uid in e.audience.players:
                if new.player(uid) is None or (uid == cmd.by and e.kind in SHOWN_IN_REPLY):
                    continue
                mine = [p for p in places if p["uid"] == uid]
                assert mine and e.model_dump(mode="json") in mine[0]["events"], (e.kind, uid)
        for k, change in first + last:
            if k == PING_KIND:
                holders = (holders | set(change["add"])) - set(change["remove"])
        if not new.over:
            assert holders == ping_members(new)
    assert state.over
