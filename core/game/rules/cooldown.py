"""Cooldown on public vote actions (RULES.md §4, "Vote changes").

Every vote and withdrawal is posted publicly ("in red"), so a player re-voting in
a loop floods the game channel. A player may make at most `VOTE_BURST` vote actions
(vote, change, withdrawal) within any `VOTE_WINDOW`; a further one is refused with the
seconds to wait and changes nothing, so every vote that counts was posted and the
tally is always what the posts say. Decided from the commands' own timestamps, so a
replay decides alike.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta

from core.game.errors import ErrorCode, RuleError
from core.game.state import GameState

VOTE_BURST = 3
VOTE_WINDOW = timedelta(seconds=60)


def check_vote_cooldown(state: GameState, uid: int, at: datetime) -> None:
    """Refuse (`vote_cooldown`, seconds=...) a vote action beyond the burst allowance."""
    recent = [m.at for m in state.vote_log
              if m.voter == uid and m.at is not None and timedelta(0) <= at - m.at < VOTE_WINDOW]
    if len(recent) < VOTE_BURST:
        return
    oldest = sorted(recent)[-VOTE_BURST]
    wait = VOTE_WINDOW - (at - oldest)
    raise RuleError(ErrorCode.VOTE_COOLDOWN, seconds=max(1, math.ceil(wait.total_seconds())))
