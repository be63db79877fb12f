"""The live vote count fits Discord's limits by construction, whatever the table."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from cogs.delivery.tally import tally_message_embed
from core.sight.visibility import LiveTally, TallyLine, TallyVoter

BIG = 10**18  # the longest snowflakes: the longest mentions


@pytest.mark.parametrize("lang", ["en", "ru"])
@pytest.mark.parametrize("closed", [False, True])
def test_a_full_table_fits(lang: str, closed: bool) -> None:
    uids = [BIG + i for i in range(30)]
    rows = [TallyLine(target=t, halves=59, voters=[
        TallyVoter(uid=v, halves=0 if v % 3 else 1, ghost=bool(v % 2)) for v in uids])
        for t in uids]
    count = LiveTally(number=99, deadline=datetime(2026, 1, 1, tzinfo=UTC), rows=rows,
                      not_voted=uids, ghosts=True, closed=closed,
                      hanged=uids[0] if closed else None, tied=uids[:2] if closed else [])
    embed = tally_message_embed(count, lang)
    assert len(embed.description or "") <= 4096 and len(embed) <= 6000
    assert all(len(f.value or "") <= 1024 for f in embed.fields)
    assert (embed.description or "").endswith("…")  # cut between rows, never inside one
    if not closed:
        assert f"<@{uids[0]}>" in embed.fields[0].value  # type: ignore[operator]
