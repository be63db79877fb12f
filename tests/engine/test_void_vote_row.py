"""N5 (issue 28): a vote voided by Sleep or Silence stays listed under its target, marked
as not counting with weight 0 (RULES.md §6), also when it is the target's only vote:
in /votes (`tally_rows`) and the live count (`live_tally`)."""

from __future__ import annotations

from core.game.state import PhaseKind
from core.sight.visibility import live_tally, tally_rows
from tests.engine.scenario import Game

ROLES = {"A": "mafioso:1", "B": "mafioso:1", "C": "investigator", "D": "sergeant",
         "E": "bouncer", "F": "citizen", "G": "citizen", "H": "citizen"}


def day_one() -> Game:
    g = Game(ROLES)
    g.checkin_all()
    g.advance()  # night 0
    g.advance()  # day 1
    assert (g.state.phase, g.state.number) == (PhaseKind.DAY, 1)
    return g


def test_a_voided_only_vote_keeps_its_row_at_zero() -> None:
    g = day_one()
    g.vote("F", "A")
    g.vote("G", "H")
    g.vote("C", "H")
    voided = next(m for m in g.state.vote_log if m.voter == g.id("F"))
    voided.void = True  # what Sleep or Silence does to it
    rows = {r.target: r for r in tally_rows(g.state)}
    assert list(rows) == [g.id("H"), g.id("A")]  # the counted first, then the row at 0
    assert rows[g.id("A")].halves == 0
    assert rows[g.id("A")].voters == [(g.id("F"), 0, False)]
    live = live_tally(g.state)
    assert live is not None
    line = next(x for x in live.rows if x.target == g.id("A"))
    assert line.halves == 0 and [(v.uid, v.halves) for v in line.voters] == [(g.id("F"), 0)]
    assert g.id("F") not in live.not_voted
