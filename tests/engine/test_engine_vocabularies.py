"""The typed vocabularies (EventKind, ErrorCode, Team) keep the stored strings.

Logs, outbox rows and states written before they existed hold plain strings
("vote_cast", "clan:1"); they must load as the typed values and be written back
byte for byte, and a team must survive str/parse in both directions.
"""

from __future__ import annotations

import pytest

from core.game.errors import ErrorCode, RuleError
from core.game.events import EVENTS_ADAPTER, Audience, EventKind
from core.game.state import GameState, Options
from core.game.team import Team, TeamKind
from core.play import sim
from core.sight.narrate import team_name

OLD_EVENTS = (
    '[{"kind":"clan_turn","audience":{"kind":"team","players":[],"team":"clan:2"},'
    '"data":{"actor":101,"night":1}},'
    '{"kind":"team_changed","audience":{"kind":"team","players":[5,6],"team":"opcop"},'
    '"data":{"team":"opcop","members":[5,6],"writers":[5]}},'
    '{"kind":"game_over","audience":{"kind":"public","players":[],"team":null},'
    '"data":{"winners":["clan:1","citizens"],"draw":false,"roles":[]}}]'
)


def test_old_event_rows_load_typed_and_dump_unchanged() -> None:
    events = EVENTS_ADAPTER.validate_json(OLD_EVENTS)
    assert [e.kind for e in events] == [EventKind.CLAN_TURN, EventKind.TEAM_CHANGED,
                                        EventKind.GAME_OVER]
    assert events[0].audience.team == Team.clan(2) and type(events[0].audience.team) is Team
    assert events[1].audience.team is not None
    assert events[1].audience.team.kind is TeamKind.OPCOP
    assert EVENTS_ADAPTER.dump_json(events).decode() == OLD_EVENTS


def test_a_finished_game_reloads_byte_for_byte() -> None:
    options = Options(extra_roles=True, currency=True, shop=True, crypto=True, graveyard=True)
    played = sim.play(4, 12, options)
    state_json = played.state.model_dump_json()
    events_json = EVENTS_ADAPTER.dump_json(played.events).decode()
    state = GameState.model_validate_json(state_json)
    assert state.winners or state.draw
    assert all(type(w) is Team for w in state.winners)
    assert state.model_dump_json() == state_json
    assert '"winners":[' in state_json and "Team(" not in state_json
    assert EVENTS_ADAPTER.dump_json(EVENTS_ADAPTER.validate_json(events_json)).decode() \
        == events_json


@pytest.mark.parametrize("text", ["clan:1", "clan:12", "police", "opcop", "graveyard",
                                  "positive", "neutral", "citizens"])
def test_a_team_round_trips_through_its_string(text: str) -> None:
    team = Team(text)
    assert str(team) == text and type(str(team)) is str
    assert Team.parse(str(team)) == team
    assert (team.number is not None) == (team.kind is TeamKind.CLAN)
    assert {team: 1}[text] == 1  # channel keys stored as strings still find it


@pytest.mark.parametrize("text", ["clan", "clan:", "clan:0", "clan:x", "police:1", "negative",
                                  "draw", ""])
def test_a_string_naming_no_team_is_refused(text: str) -> None:
    assert Team.parse(text) is None
    with pytest.raises(ValueError, match="not a team"):
        Team(text)


def test_clan_teams_are_built_and_named_by_number() -> None:
    assert Team.clan(3) == "clan:3" and Team.clan(3).number == 3
    assert Team.of(TeamKind.POLICE) == "police" and Team.of(TeamKind.POLICE).number is None
    assert team_name(Team.clan(3), "en") == team_name("clan:3", "en") == "clan 3"
    assert Audience.of_team(Team.clan(3)).model_dump(mode="json")["team"] == "clan:3"


def test_a_refusal_code_from_outside_core_is_checked() -> None:
    err = RuleError("game_over")  # type: ignore[arg-type]  # as the Discord layer sends it
    assert err.code is ErrorCode.GAME_OVER and str(err) == "game_over"
    assert repr(err) == "RuleError('game_over', {})"
    with pytest.raises(ValueError):
        RuleError("no_such_code")  # type: ignore[arg-type]
