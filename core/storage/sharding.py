"""Which guilds a bot process serves when the bot runs as several shard processes.

Discord assigns every guild to exactly one shard: shard_id = (guild_id >> 22) %
shard_count. A process that holds shards `shard_ids` receives the gateway events
(interactions included) of exactly those guilds, so letting it also own their
games, deadlines and outbox entries gives every game one process that writes it,
with no lock shared between processes (see README, "Scale-out").
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


def shard_of(guild_id: int, shard_count: int) -> int:
    """Discord's rule: the shard that receives this guild's events."""
    if shard_count < 1:
        raise ValueError("shard_count must be at least 1")
    return (guild_id >> 22) % shard_count


@dataclass(frozen=True)
class ShardFilter:
    """`owns(guild_id)` for a process holding `shard_ids` out of `shard_count` shards."""

    shard_count: int
    shard_ids: frozenset[int]

    def __post_init__(self) -> None:
        if self.shard_count < 1:
            raise ValueError("shard_count must be at least 1")
        bad = sorted(i for i in self.shard_ids if not 0 <= i < self.shard_count)
        if bad:
            raise ValueError(f"shard ids {bad} are outside 0..{self.shard_count - 1}")
        if not self.shard_ids:
            raise ValueError("a process must hold at least one shard")

    def __call__(self, guild_id: int) -> bool:
        return shard_of(guild_id, self.shard_count) in self.shard_ids


def guild_filter(shard_count: int | None, shard_ids: Iterable[int] | None) -> ShardFilter | None:
    """The ownership filter of a process, or None when it serves every guild (not sharded,
    all shards in one process, or an automatic shard count: AutoShardedBot then runs
    every shard itself)."""
    if shard_count is None:
        if shard_ids is not None:
            raise ValueError("shard ids need a shard count")
        return None
    ids = frozenset(range(shard_count)) if shard_ids is None else frozenset(shard_ids)
    owner = ShardFilter(shard_count, ids)
    if len(owner.shard_ids) == shard_count:
        return None
    return owner
