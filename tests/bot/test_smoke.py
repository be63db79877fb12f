from __future__ import annotations

from tests.harness import Harness


async def test_create_a_game(h: Harness) -> None:
    alice = h.add_member("Alice", locale="en-US")
    guild = h.default_guild
    res = await h.slash(alice, "game create", title="Night in Palermo", channel=guild.general_id)
    assert not res.ephemeral
    assert "Night in Palermo" in res.text
