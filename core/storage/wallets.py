"""Lira wallets and their ledger (module "Currency"), inside the caller's transaction.

Every balance change is a ledger row written with an atomic guarded UPDATE
(`balance = balance + x WHERE balance + x >= 0`), never a read-modify-write in
Python: two games spending one wallet at once cannot overdraw it, and the
balance always equals the sum of its ledger.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from tortoise.backends.base.client import BaseDBAsyncClient
from tortoise.expressions import F

from core.game.commands import Command
from core.game.errors import ErrorCode, RuleError
from core.game.rules.economy import OPENING_BALANCE, ledger_entries
from core.game.state import GameState
from core.storage.db import reader
from core.storage.hooks import Commit, QuietHook
from core.storage.models import Ledger, Wallet

OPENING_REASON = "opening"


async def balances(conn: BaseDBAsyncClient | None, guild_id: int,
                   uids: Iterable[int]) -> dict[int, int]:
    wanted = sorted(set(uids))
    if not wanted:
        return {}
    # outside a transaction: the last commit, read without waiting behind one in flight
    # (a command's funds are checked again by its own commit, core/storage/service.py)
    rows = await Wallet.filter(guild_id=guild_id, user_id__in=wanted) \
        .using_db(conn if conn is not None else reader()).values_list("user_id", "balance")
    return {int(uid): int(balance) for uid, balance in rows}


async def open_wallets(conn: BaseDBAsyncClient, guild_id: int, uids: Iterable[int],
                       game_id: int | None) -> list[int]:
    """Give first-timers their opening 60 lira; returns who got a wallet now."""
    have = await balances(conn, guild_id, uids)
    opened = []
    for uid in sorted(set(uids) - set(have)):
        await Wallet.create(using_db=conn, guild_id=guild_id, user_id=uid, balance=0)
        await post(conn, guild_id, game_id, [(uid, OPENING_BALANCE, OPENING_REASON)])
        opened.append(uid)
    return opened


async def post(conn: BaseDBAsyncClient, guild_id: int, game_id: int | None,
               entries: Sequence[tuple[int, int, str]]) -> None:
    """Apply ledger entries; RuleError('not_enough_lira') rolls the transaction back."""
    for uid, amount, reason in entries:
        if amount == 0:
            continue
        exists = await Wallet.filter(guild_id=guild_id, user_id=uid).using_db(conn).exists()
        if not exists:
            await Wallet.create(using_db=conn, guild_id=guild_id, user_id=uid, balance=0)
        query = Wallet.filter(guild_id=guild_id, user_id=uid)
        if amount < 0:
            query = query.filter(balance__gte=-amount)
        changed = await query.using_db(conn).update(balance=F("balance") + amount)
        if changed != 1:
            raise RuleError(ErrorCode.NOT_ENOUGH_LIRA, need=-amount, have=(
                await balances(conn, guild_id, [uid])).get(uid, 0))
        await Ledger.create(using_db=conn, guild_id=guild_id, user_id=uid, game_id=game_id,
                            amount=amount, reason=reason[:64])


async def recent(guild_id: int, uid: int, limit: int = 10
                 ) -> tuple[int, list[tuple[datetime, int, str, int | None]]]:
    """Balance and the latest ledger rows (when, amount, reason, game)."""
    balance = (await balances(None, guild_id, [uid])).get(uid, 0)
    rows = await Ledger.filter(guild_id=guild_id, user_id=uid).order_by("-id").limit(limit) \
        .values_list("created_at", "amount", "reason", "game_id")
    return balance, [(when, int(a), str(r), g) for when, a, r, g in rows]


async def ledger_sum(guild_id: int, uid: int) -> int:
    rows = await Ledger.filter(guild_id=guild_id, user_id=uid).values_list("amount", flat=True)
    return sum(int(str(a)) for a in rows)


async def stamp_funds(guild_id: int, state: GameState, command: Command) -> Command:
    """Give the engine the wallets it may need to refuse what cannot be paid (only to
    commands that can spend: the others skip the read)."""
    if not command.reads_funds():
        return command
    uids = [p.uid for p in state.players] + [state.master, command.by]
    funds = await balances(None, guild_id, uids)
    return command.model_copy(update={"funds": funds})


def _opens_wallets(commit: Commit) -> bool:
    return [p.uid for p in commit.new.players] != [p.uid for p in commit.old.players] \
        or not commit.old.options.currency


def _entries(commit: Commit) -> list[tuple[int, int, str]]:
    return [entry for e in commit.events
            for entry in ledger_entries(e.kind, e.data, commit.new.master)]


async def _write_currency(conn: BaseDBAsyncClient, commit: Commit) -> None:
    """Wallet changes of a command, in its own transaction: opening balances for new
    players, then the ledger entries its events imply (purchases, payouts, thanks)."""
    new = commit.new
    if not new.options.currency:
        return
    if _opens_wallets(commit):
        await open_wallets(conn, commit.guild_id, [p.uid for p in new.players],
                           commit.game_id)
    await post(conn, commit.guild_id, commit.game_id, _entries(commit))


def _currency_quiet(commit: Commit) -> bool:
    """Most commands (votes, night orders) move no lira: nothing to open or post."""
    return not commit.new.options.currency \
        or (not _opens_wallets(commit) and not _entries(commit))


currency_hook = QuietHook(_write_currency, _currency_quiet)
