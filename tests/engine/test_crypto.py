"""Module 'Cryptography': anonymous posts, whispers, public moves (engine level)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from core.game import commands as c
from core.game.errors import RuleError
from core.game.state import Options
from tests.engine.scenario import Game

ROLES = {"Don": "mafioso:1", "Vito": "mafioso:1", "Ivan": "investigator", "Serg": "sergeant",
         "Bob": "bouncer", "C1": "citizen", "C2": "citizen", "C3": "citizen"}


def game(**opts: bool) -> Game:
    return Game(ROLES, Options(crypto=True, **opts))


def test_anonymous_post_carries_no_trace_of_the_sender() -> None:
    g = game()
    events = g.do(c.Anon(by=g.id("C1"), at=g.tick(), text="I know who did it",
                         signature="investigator"))
    assert [e.kind for e in events] == ["anon_post"]
    post = events[0]
    assert post.public and post.data == {"text": "I know who did it",
                                         "signature": "investigator"}
    assert str(g.id("C1")) not in post.model_dump_json()


def test_master_sees_the_sender_only_when_the_option_says_so() -> None:
    g = game(master_sees_anon=True)
    events = g.do(c.Anon(by=g.id("C1"), at=g.tick(), text="hi"))
    master = [e for e in events if e.audience.kind == "master"]
    assert master and master[0].data["uid"] == g.id("C1")


def test_signature_must_be_a_role_of_the_game() -> None:
    g = game()
    with pytest.raises(RuleError) as err:
        g.do(c.Anon(by=g.id("C1"), at=g.tick(), text="x", signature="occultist"))
    assert err.value.code == "unknown_role"


def test_whisper_reaches_exactly_the_living_holders() -> None:
    g = game()
    events = g.do(c.Whisper(by=g.id("C1"), at=g.tick(), role="mafioso", text="psst"))
    whisper = next(e for e in events if e.kind == "whisper")
    assert sorted(whisper.audience.players) == sorted([g.id("Don"), g.id("Vito")])
    assert "by" not in whisper.data and str(g.id("C1")) not in whisper.model_dump_json()
    assert any(n.kind == "whisper" for n in g.p("Don").notices)
    assert not any(n.kind == "whisper" for n in g.p("Ivan").notices)


def test_rate_limit() -> None:
    g = game()
    g.do(c.Anon(by=g.id("C1"), at=g.clock, text="one"))
    with pytest.raises(RuleError) as err:
        g.do(c.Anon(by=g.id("C1"), at=g.clock + timedelta(seconds=5), text="two"))
    assert err.value.code == "post_too_soon"
    for i in range(1, 5):
        g.do(c.Anon(by=g.id("C1"), at=g.clock + timedelta(minutes=i), text=str(i)))
    with pytest.raises(RuleError) as err:
        g.do(c.Anon(by=g.id("C1"), at=g.clock + timedelta(minutes=9), text="six"))
    assert err.value.code == "post_limit"


def test_public_move_reveals_the_last_check_without_the_actor() -> None:
    g = game(public_moves=True)
    g.to_night(0)
    g.night("Bob", "C3")
    g.night("Don", "C3")
    g.advance()
    for n in g.names:
        if n != "C2":
            g.vote(n, "C2")
    g.vote("C2", "C1")
    g.advance()
    g.night("Ivan", "Vito")
    g.night("Vito", "C1")
    g.night("Bob", "C1")
    g.advance()
    events = g.do(c.Reveal(by=g.id("Ivan"), at=g.tick()))
    move = events[0]
    assert move.public and move.data["role"] == "mafioso" and move.data["target"] == g.id("Vito")
    assert g.id("Ivan") not in move.data.values()
    with pytest.raises(RuleError) as err:
        g.do(c.Reveal(by=g.id("Ivan"), at=g.tick()))
    assert err.value.code == "nothing_to_reveal"


def test_reveal_refused_for_other_roles_or_when_disabled() -> None:
    g = game()
    with pytest.raises(RuleError) as err:
        g.do(c.Reveal(by=g.id("Ivan"), at=g.tick()))
    assert err.value.code == "public_moves_off"
    g = game(public_moves=True)
    with pytest.raises(RuleError) as err:
        g.do(c.Reveal(by=g.id("C1"), at=g.tick()))
    assert err.value.code == "wrong_role"


def test_everything_refused_when_the_module_is_off() -> None:
    g = Game(ROLES)
    for cmd in (c.Anon(by=g.id("C1"), at=g.tick(), text="x"),
                c.Whisper(by=g.id("C1"), at=g.tick(), role="mafioso", text="x"),
                c.Reveal(by=g.id("Ivan"), at=g.tick())):
        with pytest.raises(RuleError) as err:
            g.do(cmd)
        assert err.value.code == "module_off"
