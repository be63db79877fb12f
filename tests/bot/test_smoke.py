from __future__ import annotations

from core.text.i18n import t
from tests.harness import Harness


async def test_create_a_game(h: Harness) -> None:
    alice = h.add_member("Alice", locale="en-US")
    guild = h.default_guild
    res = await h.slash(alice, "game create", title="Night in Palermo", channel=guild.general_id)
    # the reply confirms to the master alone; the board is the outbox's public post
    assert res.ephemeral and res.text == t("lobby.created", "en", title="Night in Palermo")
    await h.bot.outbox.idle(within=20)  # type: ignore[attr-defined]
    [board] = h.messages_in(guild.general_id)
    assert "Night in Palermo" in board.text
    game = await h.bot.service.game_in_channel(guild.general_id)  # type: ignore[attr-defined]
    assert set(board.custom_ids) == {f"mafia:join:{game.id}", f"mafia:leave:{game.id}"}
