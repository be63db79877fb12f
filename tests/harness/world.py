"""The fake Discord "world": guilds, roles, members, channels, messages, interactions.

Everything is stored *payload-shaped* (the JSON dicts Discord sends), so the same data
serves REST responses, gateway events fed to discord.py, and test assertions.  The
world never imports the bot; it knows nothing about discord.py objects except the
permission bit values.
"""

from __future__ import annotations

import datetime as dt
import itertools
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeAlias, TypeVar, cast, runtime_checkable

import discord

from . import permissions as perms
from .ratelimits import RateLimits

JSON: TypeAlias = Any
T = TypeVar("T")
GatewayListener: TypeAlias = Callable[[str, dict[str, Any]], None]

DISCORD_EPOCH_MS = 1420070400000
EPHEMERAL = 1 << 6
LOADING = 1 << 7

TEXT = 0
DM = 1
CATEGORY = 4
PUBLIC_THREAD = 11
PRIVATE_THREAD = 12
THREAD_TYPES = (10, PUBLIC_THREAD, PRIVATE_THREAD)


@runtime_checkable
class HasId(Protocol):
    @property
    def id(self) -> int: ...


Snowflakeish: TypeAlias = int | str | HasId


def sid(value: Snowflakeish) -> int:
    """Turn an int / numeric str / anything with ``.id`` into an int snowflake."""
    if isinstance(value, bool):
        raise TypeError("bool is not a snowflake")
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        return int(value)
    return int(value.id)


#: JSON scalars that survive a JSON round trip unchanged (exact types: subclasses such
#: as enums are rewritten by ``json``, so they take the slow path).
_PLAIN: frozenset[type] = frozenset((str, int, float, bool, type(None)))


def clone(value: T) -> T:
    """Deep copy with the result of a JSON round trip (tuples become lists, keys
    strings, enums their values), so stored/sent data is wire-clean and private.

    Called several times per interaction, so plain dicts/lists/scalars are copied
    directly (several times faster than ``json``); anything else - non-string keys,
    subclasses, unknown types - goes through ``json`` itself, which also raises
    ``TypeError`` for what Discord could never receive."""
    return cast(T, _clone(value))


def _clone(value: Any) -> Any:
    kind = type(value)
    if kind is dict:
        out: dict[str, Any] = {}
        for key, item in value.items():
            if type(key) is not str:
                return json.loads(json.dumps(value))
            out[key] = item if type(item) in _PLAIN else _clone(item)
        return out
    if kind is list or kind is tuple:
        return [item if type(item) in _PLAIN else _clone(item) for item in value]
    if kind in _PLAIN:
        return value
    return json.loads(json.dumps(value))


def iso_now() -> str:
    return dt.datetime.now(dt.UTC).isoformat()


class SnowflakeFactory:
    """Monotonic snowflakes whose timestamp part is "now" (so ``created_at`` is sane)."""

    def __init__(self) -> None:
        now_ms = int(dt.datetime.now(dt.UTC).timestamp() * 1000)
        self._next = (now_ms - DISCORD_EPOCH_MS) << 22

    def __call__(self) -> int:
        self._next += 1 << 12  # leave room for worker/process bits
        return self._next


class ApiError(Exception):
    """A Discord JSON error; the transport turns it into an HTTP error response."""

    def __init__(
        self, status: int, code: int, message: str, errors: dict[str, Any] | None = None
    ) -> None:
        super().__init__(f"{status} {code} {message}")
        self.status = status
        self.code = code
        self.message = message
        self.errors = errors

    def body(self) -> dict[str, Any]:
        out: dict[str, Any] = {"message": self.message, "code": self.code}
        if self.errors:
            out["errors"] = self.errors
        return out


def missing_permissions() -> ApiError:
    return ApiError(403, 50013, "Missing Permissions")


def missing_access() -> ApiError:
    return ApiError(403, 50001, "Missing Access")


def invalid_form(path: str, code: str, message: str) -> ApiError:
    """400 50035 with Discord's nested ``errors`` structure for ``path`` (dot separated)."""
    node: dict[str, Any] = {"_errors": [{"code": code, "message": message}]}
    for part in reversed(path.split(".")):
        node = {part: node}
    return ApiError(400, 50035, "Invalid Form Body", node)


UNKNOWN = {
    "channel": (10003, "Unknown Channel"),
    "guild": (10004, "Unknown Guild"),
    "member": (10007, "Unknown Member"),
    "message": (10008, "Unknown Message"),
    "role": (10011, "Unknown Role"),
    "user": (10013, "Unknown User"),
    "webhook": (10015, "Unknown Webhook"),
    "interaction": (10062, "Unknown interaction"),
    "command": (10063, "Unknown application command"),
}


def unknown(kind: str) -> ApiError:
    code, message = UNKNOWN[kind]
    return ApiError(404, code, message)


# --------------------------------------------------------------------------- refs


@dataclass(frozen=True)
class UserRef:
    """Handle returned by :meth:`FakeWorld.add_user`; usable wherever a snowflake is."""

    id: int
    name: str

    def __int__(self) -> int:
        return self.id

    @property
    def mention(self) -> str:
        return f"<@{self.id}>"


@dataclass(frozen=True)
class MemberRef(UserRef):
    guild_id: int = 0


@dataclass(frozen=True)
class RoleRef:
    id: int
    guild_id: int
    name: str

    def __int__(self) -> int:
        return self.id

    @property
    def mention(self) -> str:
        return f"<@&{self.id}>"


@dataclass(frozen=True)
class ChannelRef:
    id: int
    guild_id: int | None
    name: str
    type: int

    def __int__(self) -> int:
        return self.id

    @property
    def mention(self) -> str:
        return f"<#{self.id}>"


@dataclass(frozen=True)
class GuildRef:
    id: int
    name: str
    bot_role_id: int
    general_id: int

    def __int__(self) -> int:
        return self.id

    @property
    def everyone_role_id(self) -> int:
        return self.id


# ------------------------------------------------------------------ stored records


@dataclass
class GuildState:
    data: dict[str, Any]
    roles: dict[int, dict[str, Any]] = field(default_factory=dict)
    members: dict[int, dict[str, Any]] = field(default_factory=dict)
    channel_ids: list[int] = field(default_factory=list)
    bot_role_id: int = 0

    @property
    def id(self) -> int:
        return int(self.data["id"])

    @property
    def owner_id(self) -> int:
        return int(self.data["owner_id"])


@dataclass
class StoredMessage:
    payload: dict[str, Any]
    ephemeral_for: int | None = None
    deleted: bool = False
    interaction_token: str | None = None
    files: list[tuple[str, bytes]] = field(default_factory=list)

    @property
    def id(self) -> int:
        return int(self.payload["id"])


@dataclass
class InteractionRecord:
    id: int
    token: str
    type: int
    user_id: int
    guild_id: int | None
    channel_id: int
    message_id: int | None = None
    responded: bool = False
    response_type: int | None = None
    response_data: dict[str, Any] | None = None
    original_message_id: int | None = None
    followup_ids: list[int] = field(default_factory=list)
    loading: bool = False
    command_name: str | None = None


@dataclass
class OpenModal:
    """A modal the bot showed to ``user_id`` (interaction callback type 9)."""

    custom_id: str
    data: dict[str, Any]
    user_id: int
    guild_id: int | None
    channel_id: int
    message_id: int | None
    interaction_id: int


# ------------------------------------------------------------------ public views


def _embed_text(embed: Mapping[str, Any]) -> list[str]:
    parts: list[str] = []
    author = embed.get("author") or {}
    if author.get("name"):
        parts.append(str(author["name"]))
    for key in ("title", "description"):
        if embed.get(key):
            parts.append(str(embed[key]))
    for f in embed.get("fields") or []:
        parts.append(f"{f.get('name', '')}: {f.get('value', '')}")
    footer = embed.get("footer") or {}
    if footer.get("text"):
        parts.append(str(footer["text"]))
    return parts


def walk_components(components: Iterable[Mapping[str, Any]]) -> Iterator[Mapping[str, Any]]:
    """Yield every component, descending into rows / containers / sections / labels."""
    for comp in components:
        yield comp
        if comp.get("components"):
            yield from walk_components(comp["components"])
        if comp.get("component"):
            yield from walk_components([comp["component"]])
        if comp.get("accessory"):
            yield from walk_components([comp["accessory"]])


@dataclass(frozen=True)
class MessageRecord:
    """Read-only view of a message in the fake world (what Discord would store)."""

    payload: dict[str, Any]
    ephemeral_for: int | None = None
    deleted: bool = False
    files: tuple[tuple[str, bytes], ...] = ()

    @property
    def id(self) -> int:
        return int(self.payload["id"])

    @property
    def channel_id(self) -> int:
        return int(self.payload["channel_id"])

    @property
    def author_id(self) -> int:
        return int(self.payload["author"]["id"])

    @property
    def content(self) -> str:
        return str(self.payload.get("content") or "")

    @property
    def embeds(self) -> list[dict[str, Any]]:
        return list(self.payload.get("embeds") or [])

    @property
    def components(self) -> list[dict[str, Any]]:
        return list(self.payload.get("components") or [])

    @property
    def flags(self) -> int:
        return int(self.payload.get("flags") or 0)

    @property
    def ephemeral(self) -> bool:
        return bool(self.flags & EPHEMERAL)

    @property
    def loading(self) -> bool:
        return bool(self.flags & LOADING)

    @property
    def edited(self) -> bool:
        return self.payload.get("edited_timestamp") is not None

    @property
    def attachments(self) -> list[dict[str, Any]]:
        return list(self.payload.get("attachments") or [])

    @property
    def text(self) -> str:
        """Content + embed author/title/description/fields/footer + v2 text displays."""
        parts = [self.content] if self.content else []
        for embed in self.embeds:
            parts.extend(_embed_text(embed))
        for comp in walk_components(self.components):
            if comp.get("type") == 10 and comp.get("content"):
                parts.append(str(comp["content"]))
        return "\n".join(parts)

    @property
    def custom_ids(self) -> list[str]:
        return [str(c["custom_id"]) for c in walk_components(self.components) if c.get("custom_id")]

    def component(self, custom_id: str) -> dict[str, Any]:
        for comp in walk_components(self.components):
            if comp.get("custom_id") == custom_id:
                return dict(comp)
        raise KeyError(f"message {self.id} has no component with custom_id {custom_id!r}")

    def discord_embeds(self) -> list[discord.Embed]:
        return [discord.Embed.from_dict(e) for e in self.embeds]


@dataclass(frozen=True)
class Overwrite:
    """One permission overwrite as stored on a channel (bits as ints)."""

    id: int
    type: int  # 0 = role, 1 = member
    allow: int
    deny: int

    @property
    def is_role(self) -> bool:
        return self.type == 0

    def allows(self, *names: str) -> bool:
        p = discord.Permissions(self.allow)
        return all(getattr(p, n) for n in names)

    def denies(self, *names: str) -> bool:
        p = discord.Permissions(self.deny)
        return all(getattr(p, n) for n in names)

    def to_discord(self) -> discord.PermissionOverwrite:
        return discord.PermissionOverwrite.from_pair(
            discord.Permissions(self.allow), discord.Permissions(self.deny)
        )


@dataclass(frozen=True)
class ChannelView:
    """Read-only view of a channel in the fake world."""

    payload: dict[str, Any]
    deleted: bool = False

    @property
    def id(self) -> int:
        return int(self.payload["id"])

    @property
    def name(self) -> str:
        return str(self.payload.get("name") or "")

    @property
    def type(self) -> int:
        return int(self.payload["type"])

    @property
    def guild_id(self) -> int | None:
        g = self.payload.get("guild_id")
        return int(g) if g is not None else None

    @property
    def parent_id(self) -> int | None:
        p = self.payload.get("parent_id")
        return int(p) if p is not None else None

    @property
    def topic(self) -> str | None:
        return self.payload.get("topic")

    @property
    def overwrites(self) -> dict[int, Overwrite]:
        return {
            int(o["id"]): Overwrite(int(o["id"]), int(o["type"]), int(o["allow"]), int(o["deny"]))
            for o in self.payload.get("permission_overwrites") or []
        }


@dataclass(frozen=True)
class VisibilityReport:
    """Which channels of a guild a user can VIEW / SEND in, computed from world data."""

    user_id: int
    guild_id: int
    names: Mapping[int, str]
    view: frozenset[int]
    send: frozenset[int]

    def can_view(self, channel: Snowflakeish) -> bool:
        return sid(channel) in self.view

    def can_send(self, channel: Snowflakeish) -> bool:
        return sid(channel) in self.send

    @property
    def view_names(self) -> set[str]:
        return {self.names[c] for c in self.view}

    @property
    def send_names(self) -> set[str]:
        return {self.names[c] for c in self.send}


# ------------------------------------------------------------------ validation

_MENTION_USER = re.compile(r"<@!?(\d+)>")
_MENTION_ROLE = re.compile(r"<@&(\d+)>")

EMBED_LIMITS = {
    "title": 256,
    "description": 4096,
}


def validate_message_body(body: Mapping[str, Any], *, has_files: bool, editing: bool) -> None:
    """Reject payloads Discord would reject (lengths, empties, duplicate custom ids...)."""
    content = body.get("content")
    if content is not None and len(str(content)) > 2000:
        raise invalid_form("content", "BASE_TYPE_MAX_LENGTH", "Must be 2000 or fewer in length.")
    embeds = body.get("embeds") or []
    if len(embeds) > 10:
        raise invalid_form("embeds", "BASE_TYPE_MAX_LENGTH", "Must be 10 or fewer in length.")
    total = 0
    for i, embed in enumerate(embeds):
        for key, limit in EMBED_LIMITS.items():
            value = embed.get(key)
            if value is not None and len(str(value)) > limit:
                raise invalid_form(
                    f"embeds.{i}.{key}",
                    "BASE_TYPE_MAX_LENGTH",
                    f"Must be {limit} or fewer in length.",
                )
            total += len(str(value or ""))
        fields = embed.get("fields") or []
        if len(fields) > 25:
            raise invalid_form(
                f"embeds.{i}.fields", "BASE_TYPE_MAX_LENGTH", "Must be 25 or fewer in length."
            )
        for j, f in enumerate(fields):
            name, value = str(f.get("name", "")), str(f.get("value", ""))
            if not name or len(name) > 256:
                raise invalid_form(
                    f"embeds.{i}.fields.{j}.name",
                    "BASE_TYPE_BAD_LENGTH",
                    "Must be between 1 and 256 in length.",
                )
            if not value or len(value) > 1024:
                raise invalid_form(
                    f"embeds.{i}.fields.{j}.value",
                    "BASE_TYPE_BAD_LENGTH",
                    "Must be between 1 and 1024 in length.",
                )
            total += len(name) + len(value)
        for key, sub, limit in (("footer", "text", 2048), ("author", "name", 256)):
            text = str((embed.get(key) or {}).get(sub, ""))
            if len(text) > limit:
                raise invalid_form(
                    f"embeds.{i}.{key}.{sub}",
                    "BASE_TYPE_MAX_LENGTH",
                    f"Must be {limit} or fewer in length.",
                )
            total += len(text)
    if total > 6000:
        raise invalid_form(
            "embeds", "MAX_EMBED_SIZE_EXCEEDED", "Embed size exceeds maximum size of 6000"
        )
    components = body.get("components") or []
    seen: set[str] = set()
    for comp in walk_components(components):
        cid = comp.get("custom_id")
        if cid is None:
            continue
        if len(str(cid)) > 100:
            raise invalid_form(
                "components", "BASE_TYPE_MAX_LENGTH", "custom_id must be 100 or fewer in length."
            )
        if cid in seen:
            raise invalid_form(
                "components",
                "COMPONENT_CUSTOM_ID_DUPLICATED",
                f"Component custom id {cid!r} is duplicated",
            )
        seen.add(str(cid))
    if not editing:
        empty = (
            not content
            and not embeds
            and not has_files
            and not components
            and not body.get("sticker_ids")
            and not body.get("poll")
        )
        if empty:
            raise ApiError(400, 50006, "Cannot send an empty message")


# ------------------------------------------------------------------ the world


class FakeWorld:
    """Mutable fake of Discord's server-side state."""

    def __init__(
        self, *, bot_name: str = "HarnessBot", intents: discord.Intents | None = None
    ) -> None:
        self.next_id = SnowflakeFactory()
        self.intents: discord.Intents = intents or discord.Intents.default()
        self.users: dict[int, dict[str, Any]] = {}
        self.user_locales: dict[int, str] = {}
        self.guilds: dict[int, GuildState] = {}
        self.channels: dict[int, dict[str, Any]] = {}
        self.deleted_channels: dict[int, dict[str, Any]] = {}
        self.messages: dict[int, StoredMessage] = {}
        self.channel_messages: dict[int, list[int]] = {}
        self.dm_by_user: dict[int, int] = {}
        self.closed_dms: set[int] = set()
        self.thread_members: dict[int, set[int]] = {}
        self.commands: dict[int | None, dict[int, dict[str, Any]]] = {}
        self.scheduled_events: dict[int, dict[str, Any]] = {}  # guild scheduled events
        self.interactions: dict[str, InteractionRecord] = {}
        self.open_modals: dict[int, list[OpenModal]] = {}
        self.listeners: list[GatewayListener] = []
        self.sync_new_channels_with_category = True
        # Messages created with `enforce_nonce`: (channel, author, nonce) -> (message id,
        # monotonic time). Discord keeps them "for a few minutes" (nonce_window seconds).
        self.nonces: dict[tuple[int, int, str], tuple[int, float]] = {}
        self.nonce_window = 300.0
        # Threads: when each was last active (created, posted in, opened), on `clock`.
        # Discord archives a thread `auto_archive_duration` minutes after its last
        # activity; the fake does it when the thread is next touched (`idle_archive`).
        self.thread_active: dict[int, float] = {}
        #: Discord's rate limits, on by default (tests/harness/ratelimits.py): a test may
        #: set ``world.ratelimits.enabled = False`` or change a limit, and assert
        #: ``world.ratelimits.limited == 0``.
        self.ratelimits = RateLimits()
        bot = self.add_user(bot_name, bot=True)
        self.bot_id: int = bot.id
        self.application_id: int = bot.id
        self.owner = self.add_user("AppOwner")

    def clock(self) -> float:
        """Discord's time in the fake (monotonic seconds, moved on by skipped waits)."""
        return self.ratelimits.clock()

    def pass_time(self, seconds: float) -> None:
        """Move Discord's clock on (a quiet week in a test: threads then archive)."""
        self.ratelimits.clock.at_least(self.clock() + seconds)

    def thread_activity(self, thread_id: int) -> None:
        self.thread_active[thread_id] = self.clock()

    def idle_archive(self, channel_id: int) -> bool:
        """Archive a thread idle for its auto-archive duration, as Discord does (emits
        THREAD_UPDATE); whether it did."""
        ch = self.channels.get(channel_id)
        if ch is None or ch["type"] not in THREAD_TYPES:
            return False
        meta = ch["thread_metadata"]
        last = self.thread_active.setdefault(channel_id, self.clock())
        if meta["archived"] or self.clock() - last < 60 * int(meta["auto_archive_duration"]):
            return False
        meta["archived"] = True
        meta["archive_timestamp"] = iso_now()
        self.emit("THREAD_UPDATE", self.channel_payload(channel_id))
        return True

    # ---------------------------------------------------------------- events

    def emit(self, event: str, data: dict[str, Any]) -> None:
        """Deliver a gateway event (``CHANNEL_CREATE`` ...) to every listener."""
        for listener in list(self.listeners):
            listener(event, clone(data))

    # ---------------------------------------------------------------- users

    def add_user(
        self,
        name: str,
        *,
        bot: bool = False,
        locale: str = "en-US",
        global_name: str | None = None,
        user_id: int | None = None,
    ) -> UserRef:
        uid = user_id or self.next_id()
        self.users[uid] = {
            "id": str(uid),
            "username": name,
            "global_name": global_name if global_name is not None else (None if bot else name),
            "discriminator": "0",
            "avatar": None,
            "bot": bot,
            "public_flags": 0,
        }
        self.user_locales[uid] = locale
        return UserRef(uid, name)

    def user_payload(self, user_id: int) -> dict[str, Any]:
        try:
            return clone(self.users[user_id])
        except KeyError:
            raise unknown("user") from None

    def bot_user_payload(self) -> dict[str, Any]:
        data = self.user_payload(self.bot_id)
        data.update({"verified": True, "mfa_enabled": False, "flags": 0, "locale": "en-US"})
        return data

    def app_info_payload(self) -> dict[str, Any]:
        bot = self.users[self.bot_id]
        return {
            "id": str(self.application_id),
            "name": bot["username"],
            "description": "discord.py test harness application",
            "icon": None,
            "bot_public": True,
            "bot_require_code_grant": False,
            "owner": self.user_payload(self.owner.id),
            "verify_key": "0" * 64,
            "flags": 0,
            "team": None,
            "bot": self.user_payload(self.bot_id),
            "interactions_endpoint_url": None,
        }

    # ---------------------------------------------------------------- guilds

    def guild(self, guild_id: int) -> GuildState:
        try:
            return self.guilds[guild_id]
        except KeyError:
            raise unknown("guild") from None

    def add_guild(
        self,
        name: str,
        *,
        locale: str = "en-US",
        owner_id: int | None = None,
        bot_permissions: int = perms.DEFAULT_BOT,
        everyone_permissions: int = perms.DEFAULT_EVERYONE,
        general_name: str = "general",
    ) -> GuildRef:
        gid = self.next_id()
        owner = owner_id if owner_id is not None else self.owner.id
        g = GuildState(
            data={
                "id": str(gid),
                "name": name,
                "icon": None,
                "owner_id": str(owner),
                "preferred_locale": locale,
                "features": [],
                "verification_level": 0,
                "default_message_notifications": 0,
                "explicit_content_filter": 0,
                "mfa_level": 0,
                "nsfw_level": 0,
                "premium_tier": 0,
                "system_channel_id": None,
                "system_channel_flags": 0,
                "afk_timeout": 300,
                "emojis": [],
                "stickers": [],
                "large": False,
                "unavailable": False,
                "joined_at": iso_now(),
            }
        )
        self.guilds[gid] = g
        g.roles[gid] = self._role_payload(gid, "@everyone", everyone_permissions, position=0)
        bot_role = self._role_payload(
            self.next_id(),
            str(self.users[self.bot_id]["username"]),
            bot_permissions,
            position=1,
            managed=True,
            tags={"bot_id": str(self.bot_id)},
        )
        g.roles[int(bot_role["id"])] = bot_role
        g.bot_role_id = int(bot_role["id"])
        self._add_member_raw(gid, self.bot_id, [g.bot_role_id])
        if owner in self.users:
            self._add_member_raw(gid, owner, [])
        general = self.add_channel(gid, general_name, TEXT)
        g.data["system_channel_id"] = str(general.id)
        return GuildRef(gid, name, g.bot_role_id, general.id)

    def _role_payload(
        self,
        role_id: int,
        name: str,
        permissions: int,
        *,
        position: int,
        managed: bool = False,
        hoist: bool = False,
        mentionable: bool = False,
        color: int = 0,
        tags: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": str(role_id),
            "name": name,
            "color": color,
            "colors": {"primary_color": color, "secondary_color": None, "tertiary_color": None},
            "hoist": hoist,
            "icon": None,
            "unicode_emoji": None,
            "position": position,
            "permissions": str(permissions),
            "managed": managed,
            "mentionable": mentionable,
            "flags": 0,
        }
        if tags is not None:
            data["tags"] = tags
        return data

    def guild_payload(self, guild_id: int, *, gateway: bool = False) -> dict[str, Any]:
        """REST guild object, or the full GUILD_CREATE payload when ``gateway``."""
        g = self.guild(guild_id)
        data = clone(g.data)
        data["roles"] = [clone(r) for r in g.roles.values()]
        if gateway:
            data["channels"] = [
                self.channel_payload(c)
                for c in g.channel_ids
                if self.channels[c]["type"] not in THREAD_TYPES
            ]
            data["threads"] = [
                self.channel_payload(c)
                for c in g.channel_ids
                if self.channels[c]["type"] in THREAD_TYPES
            ]
            for c in data["channels"] + data["threads"]:
                c.pop("guild_id", None)
            data["members"] = [self.member_payload(guild_id, uid) for uid in g.members]
            data["member_count"] = len(g.members)
            data["voice_states"] = []
            data["presences"] = []
            data["stage_instances"] = []
            data["guild_scheduled_events"] = []
            data["soundboard_sounds"] = []
        else:
            data.pop("joined_at", None)
            data.pop("large", None)
            data.pop("unavailable", None)
        return data

    # ---------------------------------------------------------------- roles

    def add_role(
        self,
        guild_id: int,
        name: str,
        *,
        permissions: int = 0,
        position: int | None = None,
        hoist: bool = False,
        mentionable: bool = False,
        color: int = 0,
    ) -> RoleRef:
        g = self.guild(guild_id)
        rid = self.next_id()
        if position is None:
            position = 1
        # shift roles at/above the requested position, like Discord does
        for r in g.roles.values():
            if int(r["id"]) != guild_id and r["position"] >= position:
                r["position"] += 1
        g.roles[rid] = self._role_payload(
            rid,
            name,
            permissions,
            position=position,
            hoist=hoist,
            mentionable=mentionable,
            color=color,
        )
        return RoleRef(rid, guild_id, name)

    def role(self, guild_id: int, role_id: int) -> dict[str, Any]:
        try:
            return self.guild(guild_id).roles[role_id]
        except KeyError:
            raise unknown("role") from None

    # ---------------------------------------------------------------- members

    def _add_member_raw(
        self, guild_id: int, user_id: int, role_ids: Sequence[int], nick: str | None = None
    ) -> None:
        self.guild(guild_id).members[user_id] = {
            "roles": [str(r) for r in role_ids],
            "nick": nick,
            "avatar": None,
            "banner": None,
            "joined_at": iso_now(),
            "premium_since": None,
            "deaf": False,
            "mute": False,
            "flags": 0,
            "pending": False,
            "communication_disabled_until": None,
        }

    def add_member(
        self, guild_id: int, user_id: int, *, roles: Sequence[int] = (), nick: str | None = None
    ) -> MemberRef:
        if user_id not in self.users:
            raise unknown("user")
        self._add_member_raw(guild_id, user_id, roles, nick)
        return MemberRef(user_id, str(self.users[user_id]["username"]), guild_id)

    def member(self, guild_id: int, user_id: int) -> dict[str, Any]:
        try:
            return self.guild(guild_id).members[user_id]
        except KeyError:
            raise unknown("member") from None

    def is_member(self, guild_id: int, user_id: int) -> bool:
        return guild_id in self.guilds and user_id in self.guilds[guild_id].members

    def member_role_ids(self, guild_id: int, user_id: int) -> list[int]:
        return [int(r) for r in self.member(guild_id, user_id)["roles"]]

    def member_payload(
        self,
        guild_id: int,
        user_id: int,
        *,
        with_user: bool = True,
        channel_id: int | None = None,
    ) -> dict[str, Any]:
        data = clone(self.member(guild_id, user_id))
        if with_user:
            data["user"] = self.user_payload(user_id)
        if channel_id is not None:
            data["permissions"] = str(self.channel_permissions(channel_id, user_id))
        return data

    def is_timed_out(self, guild_id: int, user_id: int) -> bool:
        until = self.member(guild_id, user_id).get("communication_disabled_until")
        if not until:
            return False
        return dt.datetime.fromisoformat(until) > dt.datetime.now(dt.UTC)

    def top_role_position(self, guild_id: int, user_id: int) -> int:
        g = self.guild(guild_id)
        positions = [
            g.roles[r]["position"] for r in self.member_role_ids(guild_id, user_id) if r in g.roles
        ]
        return max(positions, default=0)

    # ---------------------------------------------------------------- permissions

    def base_permissions(self, guild_id: int, user_id: int) -> int:
        g = self.guild(guild_id)
        return perms.base_permissions(
            guild_id=guild_id,
            owner_id=g.owner_id,
            user_id=user_id,
            member_role_ids=self.member_role_ids(guild_id, user_id),
            roles=g.roles,
        )

    def channel_permissions(self, channel_id: int, user_id: int) -> int:
        """Effective permissions of ``user_id`` in a channel (or thread), Discord's algorithm."""
        ch = self.channel(channel_id)
        if ch["type"] == DM:
            return perms.DEFAULT_EVERYONE
        guild_id = int(ch["guild_id"])
        if not self.is_member(guild_id, user_id):
            return 0
        thread: dict[str, Any] | None = None
        if ch["type"] in THREAD_TYPES:
            thread = ch
            ch = self.channel(int(ch["parent_id"]))
        base = self.base_permissions(guild_id, user_id)
        value = perms.apply_overwrites(
            base,
            guild_id=guild_id,
            user_id=user_id,
            member_role_ids=self.member_role_ids(guild_id, user_id),
            overwrites=ch.get("permission_overwrites") or [],
        )
        value = perms.apply_implicit(value, timed_out=self.is_timed_out(guild_id, user_id))
        if thread is not None and not value & perms.ADMINISTRATOR:
            if not value & perms.SEND_MESSAGES_IN_THREADS:
                value &= ~perms.SEND_MESSAGES
            else:
                value |= perms.SEND_MESSAGES
            if thread["type"] == PRIVATE_THREAD:
                joined = user_id in self.thread_members.get(int(thread["id"]), set())
                if not joined and not value & perms.MANAGE_THREADS:
                    value = 0
        return value

    def bot_base_permissions(self, guild_id: int) -> int:
        return self.base_permissions(guild_id, self.bot_id)

    def bot_channel_permissions(self, channel_id: int) -> int:
        return self.channel_permissions(channel_id, self.bot_id)

    def require_guild(self, guild_id: int, bits: int) -> None:
        if self.bot_base_permissions(guild_id) & bits != bits:
            raise missing_permissions()

    def require_channel(self, channel_id: int, bits: int) -> None:
        have = self.bot_channel_permissions(channel_id)
        if not have & perms.VIEW_CHANNEL:
            raise missing_access()
        if have & bits != bits:
            raise missing_permissions()

    def require_overwrite_grantable(
        self, guild_id: int, overwrites: Iterable[Mapping[str, Any]]
    ) -> None:
        """Discord: overwrites may only allow/deny bits the bot itself has (unless admin)."""
        have = self.bot_base_permissions(guild_id)
        if have & perms.ADMINISTRATOR:
            return
        for ow in overwrites:
            bits = int(ow.get("allow") or 0) | int(ow.get("deny") or 0)
            if bits & ~have or bits & perms.MANAGE_ROLES:
                raise missing_permissions()

    def require_hierarchy(self, guild_id: int, target_user_id: int) -> None:
        g = self.guild(guild_id)
        if target_user_id == g.owner_id:
            raise missing_permissions()
        if target_user_id == self.bot_id:
            return
        if self.top_role_position(guild_id, target_user_id) >= self.top_role_position(
            guild_id, self.bot_id
        ):
            raise missing_permissions()

    def require_role_below_bot(self, guild_id: int, role_id: int) -> None:
        """Managed roles can't be assigned; others must sit below the bot's top role."""
        role = self.role(guild_id, role_id)
        if role.get("managed") or role["position"] >= self.top_role_position(guild_id, self.bot_id):
            raise missing_permissions()

    # ---------------------------------------------------------------- channels

    def channel(self, channel_id: int) -> dict[str, Any]:
        try:
            return self.channels[channel_id]
        except KeyError:
            raise unknown("channel") from None

    def channel_payload(self, channel_id: int) -> dict[str, Any]:
        return clone(self.channel(channel_id))

    @staticmethod
    def normalize_overwrites(raw: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
        return [
            {
                "id": str(o["id"]),
                "type": int(o.get("type", 0)),
                "allow": str(int(o.get("allow") or 0)),
                "deny": str(int(o.get("deny") or 0)),
            }
            for o in raw
        ]

    def add_channel(
        self,
        guild_id: int,
        name: str,
        type: int = TEXT,
        *,
        parent_id: int | None = None,
        overwrites: Iterable[Mapping[str, Any]] | None = None,
        topic: str | None = None,
        position: int | None = None,
        nsfw: bool = False,
        extra: Mapping[str, Any] | None = None,
        channel_id: int | None = None,
    ) -> ChannelRef:
        g = self.guild(guild_id)
        cid = channel_id or self.next_id()
        if type == TEXT:
            name = name.lower().replace(" ", "-")
        if parent_id is not None:
            parent = self.channel(parent_id)
            if parent["type"] != CATEGORY or int(parent["guild_id"]) != guild_id:
                raise invalid_form("parent_id", "CHANNEL_PARENT_INVALID", "Invalid parent channel")
        ows = self.normalize_overwrites(overwrites or [])
        if not ows and parent_id is not None and self.sync_new_channels_with_category:
            ows = clone(self.channel(parent_id)["permission_overwrites"])
        if position is None:
            position = sum(1 for c in g.channel_ids if self.channels[c]["type"] == type)
        data: dict[str, Any] = {
            "id": str(cid),
            "type": type,
            "guild_id": str(guild_id),
            "name": name,
            "position": position,
            "permission_overwrites": ows,
            "parent_id": str(parent_id) if parent_id is not None else None,
            "nsfw": nsfw,
            "flags": 0,
        }
        if type != CATEGORY:
            data.update({"topic": topic, "last_message_id": None, "rate_limit_per_user": 0})
        if extra:
            data.update(extra)
        self.channels[cid] = data
        self.channel_messages[cid] = []
        g.channel_ids.append(cid)
        return ChannelRef(cid, guild_id, name, type)

    def delete_channel(self, channel_id: int) -> dict[str, Any]:
        ch = self.channel(channel_id)
        del self.channels[channel_id]
        self.deleted_channels[channel_id] = ch
        gid = ch.get("guild_id")
        if gid is not None:
            g = self.guild(int(gid))
            if channel_id in g.channel_ids:
                g.channel_ids.remove(channel_id)
        return ch

    def set_overwrite(
        self, channel_id: int, target_id: int, *, type: int, allow: int, deny: int
    ) -> None:
        ch = self.channel(channel_id)
        ows = [o for o in ch["permission_overwrites"] if int(o["id"]) != target_id]
        ows.append({"id": str(target_id), "type": type, "allow": str(allow), "deny": str(deny)})
        ch["permission_overwrites"] = ows

    def remove_overwrite(self, channel_id: int, target_id: int) -> None:
        ch = self.channel(channel_id)
        ch["permission_overwrites"] = [
            o for o in ch["permission_overwrites"] if int(o["id"]) != target_id
        ]

    def dm_channel(self, user_id: int) -> int:
        """The (single) DM channel between the bot and ``user_id``, created on demand."""
        if user_id not in self.users:
            raise unknown("user")
        existing = self.dm_by_user.get(user_id)
        if existing is not None:
            return existing
        cid = self.next_id()
        self.channels[cid] = {
            "id": str(cid),
            "type": DM,
            "last_message_id": None,
            "flags": 0,
            "recipients": [self.user_payload(user_id)],
        }
        self.channel_messages[cid] = []
        self.dm_by_user[user_id] = cid
        return cid

    def dm_recipient(self, channel_id: int) -> int | None:
        ch = self.channels.get(channel_id)
        if ch is None or ch["type"] != DM:
            return None
        return int(ch["recipients"][0]["id"])

    def add_thread(
        self,
        parent_id: int,
        name: str,
        *,
        private: bool,
        owner_id: int,
        thread_id: int | None = None,
    ) -> ChannelRef:
        parent = self.channel(parent_id)
        gid = int(parent["guild_id"])
        ttype = PRIVATE_THREAD if private else PUBLIC_THREAD
        ref = self.add_channel(
            gid,
            name,
            ttype,
            channel_id=thread_id,
            extra={
                "parent_id": str(parent_id),
                "owner_id": str(owner_id),
                "member_count": 1,
                "message_count": 0,
                "total_message_sent": 0,
                "thread_metadata": {
                    "archived": False,
                    "auto_archive_duration": 1440,
                    "archive_timestamp": iso_now(),
                    "locked": False,
                    "invitable": True,
                    "create_timestamp": iso_now(),
                },
            },
        )
        self.channels[ref.id].pop("permission_overwrites", None)
        self.thread_members[ref.id] = {owner_id}
        self.thread_activity(ref.id)
        return ref

    # ---------------------------------------------------------------- messages

    def message(self, message_id: int) -> StoredMessage:
        stored = self.messages.get(message_id)
        if stored is None or stored.deleted:
            raise unknown("message")
        return stored

    def message_payload(self, message_id: int) -> dict[str, Any]:
        return clone(self.message(message_id).payload)

    def _normalize_components(self, components: list[dict[str, Any]]) -> list[dict[str, Any]]:
        counter = itertools.count(1)
        out = clone(components)
        for comp in walk_components(out):
            if isinstance(comp, dict) and "id" not in comp:
                comp["id"] = next(counter)
        return out

    def _mentions(
        self, content: str, guild_id: int | None
    ) -> tuple[list[dict[str, Any]], list[str]]:
        users: list[dict[str, Any]] = []
        for raw in dict.fromkeys(_MENTION_USER.findall(content)):
            uid = int(raw)
            if uid not in self.users:
                continue
            data = self.user_payload(uid)
            if guild_id is not None and self.is_member(guild_id, uid):
                data["member"] = self.member_payload(guild_id, uid, with_user=False)
            users.append(data)
        roles = [r for r in dict.fromkeys(_MENTION_ROLE.findall(content))]
        return users, roles

    def _attachments(
        self, channel_id: int, body: Mapping[str, Any], files: Sequence[tuple[str, bytes]]
    ) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        described = {
            int(a["id"]): a for a in body.get("attachments") or [] if str(a.get("id", "")).isdigit()
        }
        for index, (filename, data) in enumerate(files):
            aid = self.next_id()
            desc = described.get(index, {})
            url = f"https://cdn.discordapp.com/attachments/{channel_id}/{aid}/{filename}"
            out.append(
                {
                    "id": str(aid),
                    "filename": filename,
                    "size": len(data),
                    "url": url,
                    "proxy_url": url,
                    "description": desc.get("description"),
                    "flags": 0,
                }
            )
        return out

    def create_message(
        self,
        channel_id: int,
        author_id: int,
        body: Mapping[str, Any],
        *,
        files: Sequence[tuple[str, bytes]] = (),
        msg_type: int = 0,
        flags: int | None = None,
        ephemeral_for: int | None = None,
        interaction: InteractionRecord | None = None,
        interaction_name: str | None = None,
    ) -> StoredMessage:
        ch = self.channel(channel_id)
        guild_id = int(ch["guild_id"]) if ch.get("guild_id") else None
        mid = self.next_id()
        content = str(body.get("content") or "")
        mentions, mention_roles = self._mentions(content, guild_id)
        payload: dict[str, Any] = {
            "id": str(mid),
            "channel_id": str(channel_id),
            "author": self.user_payload(author_id),
            "content": content,
            "timestamp": iso_now(),
            "edited_timestamp": None,
            "tts": bool(body.get("tts", False)),
            "mention_everyone": "@everyone" in content,
            "mentions": mentions,
            "mention_roles": mention_roles,
            "attachments": self._attachments(channel_id, body, files),
            "embeds": clone(body.get("embeds") or []),
            "reactions": [],
            "pinned": False,
            "type": msg_type,
            "flags": int(body.get("flags") or 0) if flags is None else flags,
            "components": self._normalize_components(body.get("components") or []),
        }
        if guild_id is not None:
            payload["guild_id"] = str(guild_id)
            if self.is_member(guild_id, author_id):
                payload["member"] = self.member_payload(guild_id, author_id, with_user=False)
        if body.get("nonce") is not None:
            payload["nonce"] = body["nonce"]
        ref = body.get("message_reference")
        if ref:
            payload["message_reference"] = clone(ref)
            ref_id = ref.get("message_id")
            if ref_id is not None and int(ref_id) in self.messages:
                payload["referenced_message"] = clone(self.messages[int(ref_id)].payload)
        if interaction is not None:
            payload["webhook_id"] = str(self.application_id)
            payload["application_id"] = str(self.application_id)
            meta: dict[str, Any] = {
                "id": str(interaction.id),
                "type": interaction.type,
                "user": self.user_payload(interaction.user_id),
                "authorizing_integration_owners": (
                    {"0": str(interaction.guild_id)}
                    if interaction.guild_id
                    else {"1": str(interaction.user_id)}
                ),
            }
            if interaction.type == 2 and interaction_name:
                meta["name"] = interaction_name
                meta["command_type"] = 1
            if interaction.message_id is not None:
                meta["interacted_message_id"] = str(interaction.message_id)
            payload["interaction_metadata"] = meta
        stored = StoredMessage(
            payload,
            ephemeral_for=ephemeral_for,
            interaction_token=interaction.token if interaction else None,
            files=list(files),
        )
        self.messages[mid] = stored
        self.channel_messages.setdefault(channel_id, []).append(mid)
        if ephemeral_for is None:
            ch["last_message_id"] = str(mid)
            if ch["type"] in THREAD_TYPES:
                self.thread_activity(channel_id)
                ch["message_count"] = int(ch.get("message_count", 0)) + 1
                ch["total_message_sent"] = int(ch.get("total_message_sent", 0)) + 1
        return stored

    def edit_message(
        self, message_id: int, body: Mapping[str, Any], *, files: Sequence[tuple[str, bytes]] = ()
    ) -> StoredMessage:
        stored = self.message(message_id)
        p = stored.payload
        for key in ("content", "embeds", "flags", "allowed_mentions"):
            if key in body:
                value = body[key]
                if key == "content":
                    value = value or ""
                    guild_id = int(p["guild_id"]) if p.get("guild_id") else None
                    p["mentions"], p["mention_roles"] = self._mentions(str(value), guild_id)
                if key == "embeds":
                    value = value or []
                if key == "flags":
                    # ephemeral/loading bits cannot be toggled by an edit
                    value = (int(value or 0) & ~(EPHEMERAL | LOADING)) | (p["flags"] & EPHEMERAL)
                p[key] = clone(value)
        if "components" in body:
            p["components"] = self._normalize_components(body["components"] or [])
        if "attachments" in body or files:
            keep_ids = {str(a.get("id")) for a in body.get("attachments") or []}
            kept = [a for a in p.get("attachments", []) if a["id"] in keep_ids]
            p["attachments"] = kept + self._attachments(int(p["channel_id"]), body, files)
            stored.files = [*stored.files, *files]
        p["edited_timestamp"] = iso_now()
        return stored

    def delete_message(self, message_id: int) -> StoredMessage:
        stored = self.message(message_id)
        stored.deleted = True
        return stored

    def records_in(self, channel_id: int) -> list[StoredMessage]:
        return [self.messages[m] for m in self.channel_messages.get(channel_id, [])]

    # ---------------------------------------------------------------- commands

    def register_commands(
        self, guild_id: int | None, payloads: Iterable[Mapping[str, Any]]
    ) -> list[dict[str, Any]]:
        """Bulk-overwrite application commands (``tree.sync``); returns Discord's echo."""
        # names are unique per type: a slash command and a menu may share one
        existing = {(c["name"], int(c.get("type", 1))): int(c["id"])
                    for c in self.commands.get(guild_id, {}).values()}
        stored: dict[int, dict[str, Any]] = {}
        for raw in payloads:
            data: dict[str, Any] = clone(dict(raw))
            data.setdefault("type", 1)
            cid = existing.get((data["name"], int(data["type"]))) or self.next_id()
            data["id"] = str(cid)
            data["application_id"] = str(self.application_id)
            data["version"] = str(self.next_id())
            data.setdefault("description", "")  # a context menu's, as Discord echoes it
            data.setdefault("default_member_permissions", None)
            if guild_id is not None:
                data["guild_id"] = str(guild_id)
            stored[cid] = data
        self.commands[guild_id] = stored
        return [clone(c) for c in stored.values()]

    def command_id(self, guild_id: int | None, name: str, type: int = 1) -> int | None:
        for c in self.commands.get(guild_id, {}).values():
            if c["name"] == name and int(c.get("type", 1)) == type:
                return int(c["id"])
        return None

    # ---------------------------------------------------------------- views

    def message_record(self, message_id: int) -> MessageRecord:
        stored = self.messages.get(message_id)
        if stored is None:
            raise KeyError(f"no message {message_id} in the fake world")
        return MessageRecord(
            clone(stored.payload), stored.ephemeral_for, stored.deleted, tuple(stored.files)
        )

    def channel_view(self, channel_id: int) -> ChannelView:
        if channel_id in self.channels:
            return ChannelView(clone(self.channels[channel_id]))
        if channel_id in self.deleted_channels:
            return ChannelView(clone(self.deleted_channels[channel_id]), deleted=True)
        raise KeyError(f"no channel {channel_id} in the fake world")

    def visibility(self, guild_id: int, user_id: int) -> VisibilityReport:
        g = self.guild(guild_id)
        view: set[int] = set()
        send: set[int] = set()
        names: dict[int, str] = {}
        for cid in g.channel_ids:
            ch = self.channels[cid]
            names[cid] = str(ch.get("name"))
            if ch["type"] == CATEGORY:
                continue
            value = self.channel_permissions(cid, user_id)
            if value & perms.VIEW_CHANNEL:
                view.add(cid)
                if value & perms.SEND_MESSAGES:
                    send.add(cid)
        return VisibilityReport(user_id, guild_id, names, frozenset(view), frozenset(send))
