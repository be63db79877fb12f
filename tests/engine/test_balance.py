"""The balance estimate (core/play/balance.py): Wilson intervals, determinism, chunks, and
the interval covering the engine's own long-run share (issue 34, point 1)."""

from __future__ import annotations

import pytest

from core.game.commands import Advance
from core.game.events import Event
from core.game.state import Options
from core.play.balance import DRAW, Tally, estimate, report, seats, simulate, wilson
from core.play.sim import Table

SETUP = "mafioso x2; investigator; sergeant; bouncer"


def test_wilson_matches_the_textbook_values() -> None:
    low, high = wilson(7, 10)
    assert (round(low, 4), round(high, 4)) == (0.3968, 0.8922)
    assert wilson(0, 20)[0] == 0.0 and wilson(20, 20)[1] == 1.0
    assert wilson(0, 0) == (0.0, 1.0)


def test_the_same_seed_gives_the_same_figures_and_chunks_add_up() -> None:
    opts = Options()
    whole = simulate(SETUP, 6, opts, 12, seed=5)
    assert whole == simulate(SETUP, 6, opts, 12, seed=5)
    parts = simulate(SETUP, 6, opts, 5, seed=5).merge(simulate(SETUP, 6, opts, 7, seed=10))
    assert parts == whole
    assert whole.games == 12 and sum(whole.wins.values()) >= 12


def test_the_interval_covers_the_long_run_share() -> None:
    """A 200-game estimate against 1,000 independent games (other seeds) of the same
    agents: each side's long-run share lies inside the estimate's 95% interval."""
    opts = Options()
    est = estimate(simulate(SETUP, 6, opts, 200, seed=0), 6)
    long = simulate(SETUP, 6, opts, 1000, seed=1_000_000)
    for share in est.shares:
        truth = long.wins.get(share.side, 0) / long.games
        assert share.low <= truth <= share.high, (share, truth)
    assert {s.side for s in est.shares} >= {"town", "mafia", "neutral"}


def test_seats_follow_the_setup_and_the_signup() -> None:
    assert seats(SETUP, 0, Options()) == 6
    assert seats(SETUP, 9, Options()) == 9
    assert seats("mafioso x3; investigator; citizen x5", 2, Options()) == 9


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_report_warns_when_one_side_wins_more_than_70_percent(lang: str) -> None:
    from core.text.i18n import t

    lopsided = estimate(Tally(games=100, wins={"mafia": 80, "town": 20}, days=300,
                              keys=["town", "mafia"]), 8)
    lines = report(lopsided, lang)
    assert lines[-2] == t("balance.lopsided", lang, side=t("balance.side.mafia", lang),
                          share=80)
    even = estimate(Tally(games=100, wins={"mafia": 50, "town": 45, DRAW: 5}, days=300,
                          keys=["town", "mafia"]), 8)
    text = "\n".join(report(even, lang))
    assert t("balance.side.draw", lang) in text and "⚠️" not in text
    assert even.mean_days == 3.0


class Copying(Table):
    """A table that never changes a state in place."""

    def advance(self, cmd: Advance) -> list[Event]:
        return self.send(cmd)


def test_the_deadline_advance_in_place_plays_the_same_game() -> None:
    """The strategic games advance their phases in place (core.play.sim.Table.advance): the same
    final state as through `apply`'s private copy, and the signup they share untouched."""
    from core.play import sim
    from core.play.agents import play_strategic
    from core.play.balance import signup_state

    signup = signup_state(SETUP, 7, Options())
    before = signup.model_dump_json()
    for seed in range(4):
        fast = play_strategic(sim.Table.seated(signup, seed)).state
        slow = play_strategic(Copying.seated(signup, seed)).state
        assert fast.model_dump_json() == slow.model_dump_json()
    assert signup.model_dump_json() == before


def test_simulate_setup_prints_the_estimate(capsys: pytest.CaptureFixture[str]) -> None:
    import cli
    from core.text.i18n import t

    assert cli.main(["simulate", "--setup", "mafia x2; detective; bouncer", "--games", "20",
                     "--seed", "4", "--lang", "en"]) == 0
    out = capsys.readouterr().out.splitlines()
    expected = report(estimate(simulate("mafia x2; detective; bouncer", 6, Options(language="en"),
                                        20, seed=4), 6), "en")
    assert out == [line.removeprefix("-# ").replace("**", "") for line in expected]
    assert out[0].startswith(t("balance.head", "en", count=20, players=6, days=0)[:40])
    assert cli.main(["simulate", "--setup", "chess x2", "--games", "2", "--lang", "en"]) == 2
    assert "chess" in capsys.readouterr().err
