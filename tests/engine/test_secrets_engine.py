"""Issue 16 at the engine: public fates, the master's seat, bots, blank text, the vote
cooldown, and the pure helpers (look-alike names, open-game limits, where games open)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.game import commands as c
from core.game.access import GameLimits, game_place_refusal, may_master, open_game_refusal
from core.game.engine import apply, create_game
from core.game.errors import RuleError
from core.game.rules.cooldown import VOTE_BURST, VOTE_WINDOW
from core.game.rules.voting import current_votes
from core.game.state import Options
from core.sight.visibility import public_view
from core.text.names import confusable, is_blank, labels
from tests.engine.scenario import MASTER, T0, Game
from tests.engine.test_extra_roles import EXTRA, hang, shielded_night

SHOP_ROLES = {
    "Don": "mafioso:1", "Vito": "mafioso:1", "Ivan": "investigator", "Serg": "sergeant",
    "Bob": "bouncer", "Kate": "killer", "C1": "citizen", "C2": "citizen", "C3": "citizen",
    "C4": "citizen",
}


# --- /game status: the fate, never the killer or the means ------------------------------------
@pytest.mark.parametrize("reveal", [True, False])
def test_status_never_names_the_spiked_club(reveal: bool) -> None:
    g = Game(SHOP_ROLES, Options(currency=True, shop=True, reveal_roles=reveal))
    g.fund(150)
    g.to_night(0)
    g.do(c.Buy(by=g.id("Bob"), at=g.tick(), item="spiked_club"))
    g.night("Bob", "C1")
    g.night("Kate", "C1")
    g.night("Don", "C4")
    events = g.advance()
    assert g.p("Kate").death.cause == "spiked"  # type: ignore[union-attr]
    dead = {d.uid: d for d in public_view(g.state).dead}
    kate = dead[g.id("Kate")]
    assert kate.cause == "killed"
    assert kate.role == ("killer" if reveal else None)
    public = [e.model_dump_json() for e in events if e.public]
    assert not any("spiked" in e or "club" in e for e in public)


def _gassed(reveal: bool) -> tuple[Game, list]:
    g = Game(EXTRA, Options(extra_roles=True, reveal_roles=reveal))
    g.to_night(0)
    shielded_night(g, "C2")
    hang(g, "C4", "C3")
    shielded_night(g, "C3", ("Op", "C1"), ("Ivan", "Don"))
    hang(g, "Occ", "Ivan")
    shielded_night(g, "Ivan", ("Ivan", "Adv"))
    hang(g, "Adv", "Ivan")
    events = shielded_night(g, "Op", ("Op", "C2"), ("Ivan", "Bob"))
    assert g.p("Op").death.cause == "gas_chamber"  # type: ignore[union-attr]
    return g, events


def test_the_gas_chamber_stays_hidden_when_roles_of_the_dead_are() -> None:
    """Roles hidden: the gassed operative is one more death of the night, no role, no
    'gas chamber' (which would name the operative) anywhere public."""
    g, events = _gassed(reveal=False)
    public = [e for e in events if e.public]
    assert not any("gas_chamber" in e.model_dump_json() or "operative" in e.model_dump_json()
                   for e in public)
    morning = next(e for e in public if e.kind == "morning")
    assert {"uid": g.id("Op"), "role": None} in morning.data["victims"]
    op = next(d for d in public_view(g.state).dead if d.uid == g.id("Op"))
    assert (op.cause, op.role) == ("killed", None)


def test_the_gas_chamber_is_announced_when_roles_are_shown() -> None:
    g, events = _gassed(reveal=True)
    died = next(e for e in events if e.kind == "player_died" and e.data["uid"] == g.id("Op"))
    assert died.public and died.data["cause"] == "gas_chamber"
    op = next(d for d in public_view(g.state).dead if d.uid == g.id("Op"))
    assert (op.cause, op.role) == ("gas_chamber", "operative")


# --- the master's seat ---------------------------------------------------------------------
def test_a_player_is_never_the_master_whatever_his_permissions() -> None:
    g = Game(SHOP_ROLES)
    player = g.id("C1")
    assert not may_master(g.state, player, admin=True)
    assert may_master(g.state, 999, admin=True) and may_master(g.state, MASTER, admin=False)
    assert not may_master(g.state, 999, admin=False)
    for cmd in (c.Advance(by=player, at=g.tick(), admin=True),
                c.Kick(by=player, at=g.tick(), admin=True, target=g.id("Don")),
                c.Extend(by=player, at=g.tick(), admin=True, minutes=5)):
        with pytest.raises(RuleError) as err:
            g.do(cmd)
        assert err.value.code == "player_cannot_master"


def test_the_master_cannot_join_and_bots_cannot_sit() -> None:
    state = create_game(seed=1, master=MASTER, title="t")
    for cmd, code in ((c.Join(by=MASTER, at=T0, name="M"), "master_cannot_play"),
                      (c.Join(by=5, at=T0, name="Robot", bot=True), "bot_cannot_play")):
        with pytest.raises(RuleError) as err:
            apply(state, cmd)
        assert err.value.code == code
    g = Game(SHOP_ROLES)
    with pytest.raises(RuleError) as err:
        g.do(c.Replace(by=MASTER, at=g.tick(), old=g.id("C1"), new=777, name="Bot", bot=True))
    assert err.value.code == "bot_cannot_play"
    with pytest.raises(RuleError) as err:
        g.do(c.Replace(by=MASTER, at=g.tick(), old=g.id("C1"), new=MASTER, name="M"))
    assert err.value.code == "master_cannot_play"
    with pytest.raises(RuleError) as err:  # nor may a bot wait on the standby list
        g.do(c.Standby(by=778, at=g.tick(), name="Bot", bot=True))
    assert err.value.code == "bot_cannot_play"



# --- blank text ------------------------------------------------------------------------------
@pytest.mark.parametrize("text", ["", "   ", "\u200b", "\u200d\ufeff", "\u3164", "\n\t"])
def test_blank_texts_are_refused(text: str) -> None:
    assert is_blank(text)
    with pytest.raises(RuleError) as err:
        create_game(seed=1, master=MASTER, title=text)
    assert err.value.code == "blank_text"
    g = Game(SHOP_ROLES, Options(crypto=True))
    before = g.state.model_dump_json()
    for cmd in (c.Anon(by=g.id("C1"), at=g.tick(), text=text or " "),
                c.Whisper(by=g.id("C1"), at=g.tick(), role="killer", text=text or " "),
                c.NightOrder(by=g.id("Kate"), at=g.tick(), target=g.id("C1"), story=text),
                c.Away(by=g.id("C1"), at=g.tick(), reason=text)):
        with pytest.raises(RuleError) as err:
            g.do(cmd)
        assert err.value.code == "blank_text", cmd.kind
    assert g.state.model_dump_json() == before
    assert not is_blank("a\u200b") and not is_blank(" x ")


# --- the vote cooldown --------------------------------------------------------------------------
def test_vote_changes_beyond_the_burst_wait_and_the_last_vote_counts() -> None:
    g = Game(SHOP_ROLES)
    g.to_night(0)
    g.advance()  # day 1
    targets = ["Don", "Vito", "Kate", "Bob"]
    for name in targets[:VOTE_BURST]:
        g.vote("C1", name)
    before = g.state.model_dump_json()
    with pytest.raises(RuleError) as err:
        g.vote("C1", "Bob")
    assert err.value.code == "vote_cooldown" and 1 <= err.value.params["seconds"] <= 60
    with pytest.raises(RuleError):
        g.unvote("C1")
    assert g.state.model_dump_json() == before  # nothing changed, the standing vote holds
    assert current_votes(g.state)[g.id("C1")].target == g.id("Kate")
    g.vote("C1", "Bob", wait=err.value.params["seconds"])  # after the wait: accepted
    assert current_votes(g.state)[g.id("C1")].target == g.id("Bob")


@given(gaps=st.lists(st.integers(0, 90), min_size=1, max_size=12))
def test_the_cooldown_allows_a_burst_per_window_and_the_tally_follows(gaps: list[int]) -> None:
    g = Game(SHOP_ROLES)
    g.to_night(0)
    g.advance()
    accepted: list[tuple[int, str]] = []
    names = ["Don", "Vito", "Kate", "Bob"]
    clock = 0
    for i, gap in enumerate(gaps):
        clock += gap
        target = names[i % len(names)]
        if accepted and accepted[-1][1] == target:
            continue
        recent = [t for t, _ in accepted if clock - t < VOTE_WINDOW.total_seconds()]
        try:
            g.do(c.Vote(by=g.id("C1"), at=g.clock + timedelta(seconds=clock),
                        target=g.id(target)))
        except RuleError as err:
            assert err.code == "vote_cooldown" and len(recent) >= VOTE_BURST
            continue
        assert len(recent) < VOTE_BURST
        accepted.append((clock, target))
    last = accepted[-1][1] if accepted else None
    standing = current_votes(g.state).get(g.id("C1"))
    assert (standing.target if standing else None) == (g.id(last) if last else None)


# --- pure helpers ------------------------------------------------------------------------------
def test_look_alike_names_get_the_unique_name() -> None:
    assert confusable("Anna", "anna\u200b") and confusable("ＡＮＮＡ", "anna")
    assert not confusable("Anna", "Anya")
    shown = {1: "Anna", 2: "ANNA\u200b", 3: "Boris", 4: "\u200b"}
    got = labels(shown, {1: "anna_k", 2: "impostor", 3: "boris"})
    assert got[1] == "Anna (@anna_k)" and got[2] == "ANNA (@impostor)"
    assert got[3] == "Boris" and got[4] == "? (@4)"


def test_open_game_limits_and_places() -> None:
    limits = GameLimits(per_member=3, per_guild=25)
    assert open_game_refusal(2, 24, limits) is None
    assert open_game_refusal(3, 3, limits).code == "too_many_games_member"  # type: ignore[union-attr]
    assert open_game_refusal(0, 25, limits).code == "too_many_games_guild"  # type: ignore[union-attr]
    assert game_place_refusal("text", None) is None
    assert game_place_refusal("text", 4).code == "create_here_game_channel"  # type: ignore[union-attr]
    assert game_place_refusal("thread", None).code == "create_here_not_text"  # type: ignore[union-attr]
