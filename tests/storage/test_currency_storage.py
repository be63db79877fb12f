"""Module 'Currency' in storage: wallets open with 60 lira, every change is a ledger
row in the command's transaction, balances never go negative, payouts happen once."""

from __future__ import annotations

import contextlib
from datetime import UTC, datetime, timedelta

import pytest

from core.game import commands as c
from core.game.errors import RuleError
from core.game.state import Options
from core.storage import wallets
from core.storage.models import Ledger, Wallet
from core.storage.service import GameService

GUILD = 77
T0 = datetime(2026, 1, 1, tzinfo=UTC)
ALL = Options(currency=True, shop=True, extra_roles=True)


async def open_game(service: GameService, players: int, channel: int,
                    options: Options = ALL, seed: int = 1) -> int:
    game = await service.create(GUILD, channel, 1, "t", options=options, seed=seed)
    for i in range(players):
        await service.apply(game, c.Join(by=100 + i, at=T0, name=f"P{i}"))
    return game


async def check_books() -> None:
    for w in await Wallet.all():
        assert w.balance >= 0
        assert w.balance == await wallets.ledger_sum(w.guild_id, w.user_id)


async def test_joining_a_currency_game_opens_a_wallet_once(game_service: GameService) -> None:
    await open_game(game_service, 6, 1)
    await open_game(game_service, 6, 2)  # same players: no second opening
    rows = await Ledger.filter(reason="opening").count()
    assert rows == 6
    assert (await wallets.balances(None, GUILD, [100]))[100] == 60
    await check_books()


async def test_random_games_through_the_service_keep_the_books(
        game_service: GameService) -> None:
    """Purchases, payouts and thanks over whole games: balance == ledger, never negative."""
    for seed in range(3):
        game = await open_game(game_service, 10 + seed, 10 + seed, seed=seed)

        async def send(cmd: c.Command, game: int = game) -> None:
            with contextlib.suppress(RuleError):
                await game_service.apply(game, cmd)

        await send(c.Start(by=1, at=T0))
        clock = T0
        for _ in range(200):
            state = await game_service.state(game)
            if state.over:
                break
            # drive the same random agents, but through the service (async)
            for cmd in _agent_commands(state, clock, seed):
                await send(cmd)
            clock = max(clock, state.deadline or clock) + timedelta(seconds=1)
            await send(c.Advance(by=0, at=clock, deadline=True))
        state = await game_service.state(game)
        assert state.over
        paid = await Ledger.filter(game_id=game, reason__startswith="payout.").count()
        assert paid == len(state.payouts)
        for p in state.players:
            await game_service.apply(game, c.Thank(by=p.uid, at=clock, premium=1))
        await check_books()


def _agent_commands(state, clock, seed):
    """A few legal-looking commands per phase; refusals are fine."""
    import random

    from core.game.engine import legal_targets, night_move
    from core.game.rules.shop import ITEMS
    from core.game.state import PhaseKind

    rng = random.Random(f"{seed}:{state.seq}")
    for p in state.living():
        if state.phase is PhaseKind.DAY and state.number == 0:
            yield c.CheckIn(by=p.uid, at=clock)
        elif state.phase is PhaseKind.DAY:
            targets = legal_targets(state, p.uid, "vote")
            yield c.Vote(by=p.uid, at=clock, target=rng.choice(targets),
                         shout=rng.random() < 0.2)
            yield c.Buy(by=p.uid, at=clock, item=rng.choice(ITEMS[1:]),
                        if_hanged=rng.choice(targets) if rng.random() < 0.5 else None)
        elif night_move(state, p.uid):
            targets = legal_targets(state, p.uid, "night")
            if targets:
                yield c.NightOrder(by=p.uid, at=clock, target=rng.choice(targets))
            yield c.Buy(by=p.uid, at=clock, item="alarm_clock")


async def test_two_games_cannot_overdraw_one_wallet(game_service: GameService) -> None:
    """The guarded UPDATE refuses the second spender; the command leaves nothing behind."""
    a = await open_game(game_service, 6, 31)
    b = await open_game(game_service, 6, 32)
    for game in (a, b):
        await game_service.apply(game, c.Start(by=1, at=T0))
        for i in range(6):
            await game_service.apply(game, c.CheckIn(by=100 + i, at=T0))
        await game_service.apply(game, c.Advance(by=1, at=T0))  # evening of night 0
    # Wallet at 60; two cheque books (30 each) in A use it up.
    for _ in range(2):
        await game_service.apply(a, c.Buy(by=100, at=T0, item="cheque_book"))
    before = await game_service.state(b)
    with pytest.raises(RuleError) as err:
        await game_service.apply(b, c.Buy(by=100, at=T0, item="cheque_book"))
    assert err.value.code == "not_enough_lira"
    assert await game_service.state(b) == before
    assert (await wallets.balances(None, GUILD, [100]))[100] == 0
    await check_books()


async def test_a_failing_ledger_write_rolls_the_whole_command_back(
        game_service: GameService, monkeypatch: pytest.MonkeyPatch) -> None:
    game = await open_game(game_service, 6, 41)
    await game_service.apply(game, c.Start(by=1, at=T0))
    for i in range(6):
        await game_service.apply(game, c.CheckIn(by=100 + i, at=T0))
    await game_service.apply(game, c.Advance(by=1, at=T0))
    state = await game_service.state(game)
    ledger_rows = await Ledger.all().count()

    async def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("disk full")

    monkeypatch.setattr(wallets, "post", broken)
    with pytest.raises(RuntimeError):
        await game_service.apply(game, c.Buy(by=100, at=T0, item="alarm_clock"))
    monkeypatch.undo()
    assert await game_service.state(game) == state
    assert await Ledger.all().count() == ledger_rows
    await check_books()
