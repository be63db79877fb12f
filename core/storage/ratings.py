"""The ratings' and achievements' rows (core/sight/ratings.py, core/sight/achievements.py
decide; this keeps): written in the transaction that ends a game (core/storage/commit.py),
read as values by /profile and /stats players."""

from __future__ import annotations

from dataclasses import dataclass

from tortoise.backends.base.client import BaseDBAsyncClient

from core.game.state import GameState
from core.sight import achievements, ratings
from core.sight.ratings import Skill
from core.storage.models import Achievement, Rating


@dataclass(frozen=True, slots=True)
class Standing:
    """One row of the leaderboard: place (1 first), member, rating, rated games."""

    place: int
    user_id: int
    skill: Skill
    rated: int


async def rate_game(conn: BaseDBAsyncClient, guild_id: int, game_id: int,
                    state: GameState) -> None:
    """Move the seated members' ratings and keep the achievements earned for the first
    time. Safe beside another game ending in the guild: rows are created with ON CONFLICT
    DO NOTHING, then locked in id order (PostgreSQL; SQLite holds its write lock)."""
    uids = sorted({p.uid for p in state.players})
    if ratings.rated(state) and uids:
        await Rating.bulk_create([Rating(guild_id=guild_id, user_id=u, mu=Skill().mu,
                                         sigma=Skill().sigma) for u in uids],
                                 ignore_conflicts=True, using_db=conn)
        rows = await Rating.filter(guild_id=guild_id, user_id__in=uids).order_by("id") \
            .select_for_update().using_db(conn)
        after = ratings.update(state, {r.user_id: Skill(r.mu, r.sigma) for r in rows})
        for row in rows:
            new = after.get(row.user_id)
            if new is not None:
                await Rating.filter(id=row.id).using_db(conn).update(
                    mu=new.mu, sigma=new.sigma, rated=row.rated + 1)
    marks = [Achievement(guild_id=guild_id, user_id=uid, mark=str(m), game_id=game_id)
             for uid, ms in sorted(achievements.earned(state).items()) for m in ms]
    if marks:
        await Achievement.bulk_create(marks, ignore_conflicts=True, using_db=conn)


async def skill_of(guild_id: int, user_id: int) -> Standing | None:
    """The member's row of the leaderboard, None when he was never rated here."""
    row = await Rating.get_or_none(guild_id=guild_id, user_id=user_id)
    if row is None:
        return None
    skill = Skill(row.mu, row.sigma)
    above = sum(1 for r in await Rating.filter(guild_id=guild_id).only("mu", "sigma")
                if Skill(r.mu, r.sigma).shown > skill.shown)
    return Standing(place=above + 1, user_id=user_id, skill=skill, rated=row.rated)


async def leaderboard(guild_id: int, limit: int) -> list[Standing]:
    """The guild's best `limit` by shown rating (ties: more rated games, then the id)."""
    rows = await Rating.filter(guild_id=guild_id)
    ranked = sorted(rows, key=lambda r: (-Skill(r.mu, r.sigma).shown, -r.rated, r.user_id))
    shown = [Skill(r.mu, r.sigma).shown for r in ranked]
    return [Standing(place=1 + shown.index(shown[i]), user_id=r.user_id,
                     skill=Skill(r.mu, r.sigma), rated=r.rated)
            for i, r in enumerate(ranked[:limit])]


async def marks_of(guild_id: int, user_id: int) -> list[achievements.Mark]:
    """The member's achievements here, in the order he earned them."""
    rows = await Achievement.filter(guild_id=guild_id, user_id=user_id).order_by("id")
    known = {str(m) for m in achievements.Mark}
    return [achievements.Mark(r.mark) for r in rows if r.mark in known]
