"""Tortoise models: the durable shape of games, their logs and the bot's ledgers.

Portable on purpose (SQLite by default, PostgreSQL for scale-out): no raw SQL,
JSON kept as TEXT where bytes must round-trip exactly (the state, the log),
and uniqueness rules expressed as plain unique constraints. Schema changes go
through `core/storage/migrations` (see MIGRATIONS.md), never `generate_schemas`.
"""

from __future__ import annotations

from tortoise import fields
from tortoise.models import Model

# Outbox statuses.
PENDING = "pending"
DELIVERED = "delivered"
PARKED = "parked"


class Game(Model):
    """One game: its current state (JSON text) plus the columns the bot queries by.

    `active_channel_id` equals `channel_id` while the game runs and is NULL once
    it is over: a unique column that allows many NULLs is the portable way to
    say "one active game per channel" in the database itself.
    """

    id = fields.IntField(primary_key=True)
    guild_id = fields.BigIntField(db_index=True)
    channel_id = fields.BigIntField(db_index=True)
    active_channel_id = fields.BigIntField(null=True, unique=True)
    master_id = fields.BigIntField()
    title = fields.CharField(max_length=200)
    plot = fields.TextField(default="")
    options = fields.TextField()  # core.game.state.Options as JSON: replay needs it
    seed = fields.BigIntField()
    state = fields.TextField()  # core.game.state.GameState as JSON
    phase = fields.CharField(max_length=16, db_index=True)
    active = fields.BooleanField(default=True, db_index=True)
    deadline = fields.DatetimeField(null=True)
    # When the scheduled reminder of the deadline is due (core.game.rules.owing.reminder_at of
    # the state): a restarted bot re-arms reminders from columns, parsing no state.
    reminder_at = fields.DatetimeField(null=True)
    seq = fields.IntField(default=0)
    outbox_seq = fields.IntField(default=0)  # last outbox ordinal handed out
    language = fields.CharField(max_length=16, default="ru")
    signup_message_id = fields.BigIntField(null=True)
    category_id = fields.BigIntField(null=True)
    private_channels = fields.TextField(default="{}")  # JSON map team -> channel id
    # JSON map key -> id of a message the bot keeps editing (e.g. "tally:3", day 3's count)
    live_messages = fields.TextField(default="{}")
    # JSON map "channel:member" -> [type, allow, deny] or null: a member's overwrite as
    # the server had it before the bot first changed it (given back at the end)
    server_overwrites = fields.TextField(null=True, default="{}")  # NULL: none kept (older rows)
    created_at = fields.DatetimeField(auto_now_add=True)
    updated_at = fields.DatetimeField(auto_now=True)

    class Meta:
        table = "game"


class GamePlayer(Model):
    """Who sits in which game: answers "which games is this user in" by index."""

    id = fields.IntField(primary_key=True)
    game: fields.ForeignKeyRelation[Game] = fields.ForeignKeyField(
        "models.Game", related_name="seats", on_delete=fields.CASCADE
    )
    guild_id = fields.BigIntField()
    user_id = fields.BigIntField()
    seat = fields.IntField()

    class Meta:
        table = "game_player"
        unique_together = (("game", "user_id"),)
        indexes = (("guild_id", "user_id"), ("user_id",))


class EventLog(Model):
    """Append-only: every accepted command (verbatim) and the events it produced.

    Replaying the commands from the game's seed rebuilds `Game.state` exactly.
    """

    id = fields.IntField(primary_key=True)
    game: fields.ForeignKeyRelation[Game] = fields.ForeignKeyField(
        "models.Game", related_name="log", on_delete=fields.CASCADE
    )
    seq = fields.IntField()
    command = fields.TextField()
    events = fields.TextField()
    created_at = fields.DatetimeField(auto_now_add=True)

    class Meta:
        table = "event_log"
        unique_together = (("game", "seq"),)


class Outbox(Model):
    """Messages to deliver to Discord, written in the same transaction as the change."""

    id = fields.IntField(primary_key=True)
    game: fields.ForeignKeyRelation[Game] = fields.ForeignKeyField(
        "models.Game", related_name="outbox", on_delete=fields.CASCADE
    )
    ordinal = fields.IntField()  # delivery order within the game
    kind = fields.CharField(max_length=64)
    payload = fields.TextField()  # JSON
    status = fields.CharField(max_length=16, default=PENDING)
    attempts = fields.IntField(default=0)
    next_attempt_at = fields.DatetimeField()
    last_error = fields.TextField(null=True)
    created_at = fields.DatetimeField(auto_now_add=True)
    delivered_at = fields.DatetimeField(null=True)
    # JSON list of the steps of a multi-request entry that went out (a member given the
    # ping role, a part posted): a later try, in this process or the next, skips them
    # (core/storage/outbox.py `OutboxEntry.progress`; docs/delivery.md).
    progress = fields.TextField(null=True)

    class Meta:
        table = "outbox"
        unique_together = (("game", "ordinal"),)
        indexes = (("status", "next_attempt_at"),)


class Wallet(Model):
    """Currency module: one balance per member per guild."""

    id = fields.IntField(primary_key=True)
    guild_id = fields.BigIntField()
    user_id = fields.BigIntField()
    balance = fields.BigIntField(default=0)
    updated_at = fields.DatetimeField(auto_now=True)

    class Meta:
        table = "wallet"
        unique_together = (("guild_id", "user_id"),)


class Ledger(Model):
    """Currency module: every balance change with its reason (append-only)."""

    id = fields.IntField(primary_key=True)
    guild_id = fields.BigIntField()
    user_id = fields.BigIntField()
    game: fields.ForeignKeyNullableRelation[Game] = fields.ForeignKeyField(
        "models.Game", related_name="ledger", null=True, on_delete=fields.SET_NULL
    )
    amount = fields.BigIntField()
    reason = fields.CharField(max_length=64)
    created_at = fields.DatetimeField(auto_now_add=True)

    class Meta:
        table = "ledger"
        indexes = (("guild_id", "user_id"),)


class UserStats(Model):
    """Finished games and wins per member, updated when a game ends."""

    id = fields.IntField(primary_key=True)
    guild_id = fields.BigIntField()
    user_id = fields.BigIntField()
    games = fields.IntField(default=0)
    wins = fields.IntField(default=0)
    wins_by_side = fields.TextField(default="{}")  # JSON map side -> wins
    updated_at = fields.DatetimeField(auto_now=True)

    class Meta:
        table = "user_stats"
        unique_together = (("guild_id", "user_id"),)


class Rating(Model):
    """A member's rating in a guild (core/sight/ratings.py), moved when a game ends."""

    id = fields.IntField(primary_key=True)
    guild_id = fields.BigIntField()
    user_id = fields.BigIntField()
    mu = fields.FloatField()
    sigma = fields.FloatField()
    rated = fields.IntField(default=0)  # rated games (a cancelled game is not one)
    updated_at = fields.DatetimeField(auto_now=True)

    class Meta:
        table = "rating"
        unique_together = (("guild_id", "user_id"),)


class Achievement(Model):
    """An achievement a member earned in a guild (core/sight/achievements.py): the first
    time only, and the game that earned it."""

    id = fields.IntField(primary_key=True)
    guild_id = fields.BigIntField()
    user_id = fields.BigIntField()
    mark = fields.CharField(max_length=32)
    game_id = fields.IntField(null=True)
    created_at = fields.DatetimeField(auto_now_add=True)

    class Meta:
        table = "achievement"
        unique_together = (("guild_id", "user_id", "mark"),)


class Reader(Model):
    """What one reader of a game chose for himself, kept beside the game (not in its
    state: a presentation preference is no rule, so it stays out of the replayed log):
    the language he last used with the bot (his private pushes are written in it) and,
    for the master, which desk lines ping him. Survives a restart; one row per member
    who touched the game."""

    id = fields.IntField(primary_key=True)
    game: fields.ForeignKeyRelation[Game] = fields.ForeignKeyField(
        "models.Game", related_name="readers", on_delete=fields.CASCADE
    )
    user_id = fields.BigIntField()
    language = fields.CharField(max_length=16, null=True)
    desk_pings = fields.CharField(max_length=200, null=True)  # comma-separated kinds

    class Meta:
        table = "game_reader"
        unique_together = (("game", "user_id"),)
