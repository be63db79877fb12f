"""REST + interaction-webhook handlers of the fake Discord, backed by :class:`FakeWorld`.

Each handler mirrors the documented Discord behaviour closely enough for bot tests:
permission checks produce ``403 50013``/``50001``, unknown ids produce the right ``404``
codes, message bodies are validated (2000 chars, embed limits, duplicate custom ids, empty
messages), and every mutation emits the gateway event Discord would send (fed to
discord.py by the harness so its caches stay in sync).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

from . import permissions as perms
from .transport import Captured, FakeDiscord, Reply
from .world import (
    CATEGORY,
    DM,
    EPHEMERAL,
    LOADING,
    PRIVATE_THREAD,
    PUBLIC_THREAD,
    TEXT,
    THREAD_TYPES,
    ApiError,
    FakeWorld,
    InteractionRecord,
    OpenModal,
    StoredMessage,
    clone,
    invalid_form,
    iso_now,
    missing_permissions,
    unknown,
    validate_message_body,
)

F = TypeVar("F", bound=Callable[..., Any])
#: `permission_overwrites` of PATCH /channels/{id}: maxItems in Discord's OpenAPI description
MAX_OVERWRITES = 100


def route(*keys: str) -> Callable[[F], F]:
    def deco(fn: F) -> F:
        fn.__dict__["__routes__"] = keys
        return fn

    return deco


def _i(c: Captured, name: str) -> int:
    value = c.params[name]
    if isinstance(value, int):
        return value
    raise unknown("channel" if "channel" in name else "user")


def _body(c: Captured) -> dict[str, Any]:
    return dict(c.json) if isinstance(c.json, dict) else {}


def _files(c: Captured) -> list[tuple[str, bytes]]:
    return [(f.filename, f.data) for f in c.files]


#: Which callback types Discord accepts per interaction type.
ALLOWED_CALLBACKS: dict[int, set[int]] = {2: {4, 5, 9}, 3: {4, 5, 6, 7, 9}, 4: {8}, 5: {4, 5, 6, 7}}


class RestApi:
    """Handlers keyed by discord.py route templates; install with :meth:`install`.

    Handlers return live world objects: the transport encodes the answer at once, and
    ``world.emit`` copies event data per listener, so neither needs a copy here."""

    def __init__(self, world: FakeWorld) -> None:
        self.world = world
        #: what GET /gateway/bot answers: the recommended shard count and how many
        #: shards may identify at once (session_start_limit.max_concurrency; see
        #: gateway.IdentifyGate, which enforces it)
        self.shards = 1
        self.max_concurrency = 1

    def install(self, transport: FakeDiscord) -> None:
        for name in dir(self):
            fn = getattr(self, name)
            for key in getattr(fn, "__routes__", ()):
                transport.add_handler(key, fn)

    # ------------------------------------------------------------------ helpers

    def _emit_message(self, event: str, stored: StoredMessage) -> None:
        if stored.ephemeral_for is None:
            self.world.emit(event, stored.payload)

    def _emit_channel(self, event: str, channel_id: int) -> None:
        ch = self.world.channel_payload(channel_id)
        if ch["type"] in THREAD_TYPES:
            event = event.replace("CHANNEL_", "THREAD_")
        self.world.emit(event, ch)

    def _emit_member(self, guild_id: int, user_id: int) -> None:
        data = self.world.member_payload(guild_id, user_id)
        data["guild_id"] = str(guild_id)
        self.world.emit("GUILD_MEMBER_UPDATE", data)

    def _channel_in_guild(self, c: Captured) -> tuple[int, dict[str, Any]]:
        cid = _i(c, "channel_id")
        ch = self.world.channel(cid)
        self.world.idle_archive(cid)  # a quiet thread archived while nobody looked
        return cid, ch

    @staticmethod
    def _archived(ch: dict[str, Any]) -> bool:
        return bool(ch["type"] in THREAD_TYPES and ch["thread_metadata"]["archived"])

    def _require_visible(self, channel_id: int) -> None:
        ch = self.world.channel(channel_id)
        if ch["type"] != DM:
            self.world.require_channel(channel_id, perms.VIEW_CHANNEL)

    def _message_in(self, channel_id: int, message_id: int) -> StoredMessage:
        stored = self.world.message(message_id)
        if int(stored.payload["channel_id"]) != channel_id:
            raise unknown("message")
        return stored

    # ------------------------------------------------------------------ users / app

    @route("GET /users/@me", "PATCH /users/@me")
    def me(self, c: Captured) -> Any:
        body = _body(c)
        if c.method == "PATCH" and "username" in body:
            self.world.users[self.world.bot_id]["username"] = body["username"]
        return self.world.bot_user_payload()

    @route("GET /gateway/bot")
    def gateway_bot(self, c: Captured) -> Any:
        return {"url": "wss://gateway.invalid", "shards": self.shards,
                "session_start_limit": {"total": 1000, "remaining": 1000,
                                        "reset_after": 86_400_000,
                                        "max_concurrency": self.max_concurrency}}

    @route("GET /oauth2/applications/@me")
    def app_info(self, c: Captured) -> Any:
        return self.world.app_info_payload()

    @route("GET /users/{user_id}")
    def get_user(self, c: Captured) -> Any:
        return self.world.user_payload(_i(c, "user_id"))

    @route("POST /users/@me/channels")
    def create_dm(self, c: Captured) -> Any:
        recipient = int(_body(c).get("recipient_id", 0))
        return self.world.channel_payload(self.world.dm_channel(recipient))

    @route("GET /applications/{application_id}/emojis")
    def app_emojis(self, c: Captured) -> Any:
        return {"items": []}

    @route(
        "GET /applications/{application_id}/entitlements", "GET /applications/{application_id}/skus"
    )
    def entitlements(self, c: Captured) -> Any:
        return []

    # ------------------------------------------------------------------ app commands

    def _cmd_scope(self, c: Captured) -> int | None:
        gid = c.params.get("guild_id")
        return int(gid) if gid is not None else None

    @route(
        "PUT /applications/{application_id}/commands",
        "PUT /applications/{application_id}/guilds/{guild_id}/commands",
    )
    def bulk_commands(self, c: Captured) -> Any:
        payload = c.json if isinstance(c.json, list) else []
        return self.world.register_commands(self._cmd_scope(c), payload)

    @route(
        "GET /applications/{application_id}/commands",
        "GET /applications/{application_id}/guilds/{guild_id}/commands",
    )
    def list_commands(self, c: Captured) -> Any:
        return list(self.world.commands.get(self._cmd_scope(c), {}).values())

    @route(
        "POST /applications/{application_id}/commands",
        "POST /applications/{application_id}/guilds/{guild_id}/commands",
    )
    def upsert_command(self, c: Captured) -> Any:
        scope = self._cmd_scope(c)
        body = _body(c)
        current = [
            x for x in self.world.commands.get(scope, {}).values() if x["name"] != body.get("name")
        ]
        self.world.register_commands(scope, [*current, body])
        cid = self.world.command_id(scope, str(body.get("name")), int(body.get("type", 1)))
        return Reply(201, self.world.commands[scope][cid or 0])

    @route(
        "GET /applications/{application_id}/commands/{command_id}",
        "GET /applications/{application_id}/guilds/{guild_id}/commands/{command_id}",
        "PATCH /applications/{application_id}/commands/{command_id}",
        "PATCH /applications/{application_id}/guilds/{guild_id}/commands/{command_id}",
        "DELETE /applications/{application_id}/commands/{command_id}",
        "DELETE /applications/{application_id}/guilds/{guild_id}/commands/{command_id}",
    )
    def one_command(self, c: Captured) -> Any:
        scope = self._cmd_scope(c)
        cid = _i(c, "command_id")
        table = self.world.commands.get(scope, {})
        if cid not in table:
            raise unknown("command")
        if c.method == "DELETE":
            del table[cid]
            return None
        if c.method == "PATCH":
            table[cid].update(clone(_body(c)))
        return table[cid]

    # ------------------------------------------------------------------ guilds

    @route("GET /guilds/{guild_id}")
    def get_guild(self, c: Captured) -> Any:
        gid = _i(c, "guild_id")
        data = self.world.guild_payload(gid)
        if c.query.get("with_counts") in ("1", "true", "True"):
            data["approximate_member_count"] = len(self.world.guild(gid).members)
            data["approximate_presence_count"] = 0
        return data

    @route("GET /guilds/{guild_id}/channels")
    def guild_channels(self, c: Captured) -> Any:
        g = self.world.guild(_i(c, "guild_id"))
        return [
            self.world.channel_payload(cid)
            for cid in g.channel_ids
            if self.world.channels[cid]["type"] not in THREAD_TYPES
        ]

    @route("POST /guilds/{guild_id}/channels")
    def create_channel(self, c: Captured) -> Any:
        gid = _i(c, "guild_id")
        self.world.guild(gid)
        self.world.require_guild(gid, perms.MANAGE_CHANNELS)
        body = _body(c)
        overwrites = body.get("permission_overwrites") or []
        self.world.require_overwrite_grantable(gid, overwrites)
        name = str(body.get("name") or "")
        if not 1 <= len(name) <= 100:
            raise invalid_form(
                "name", "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 100 in length."
            )
        parent = body.get("parent_id")
        ref = self.world.add_channel(
            gid,
            name,
            int(body.get("type", TEXT)),
            parent_id=int(parent) if parent else None,
            overwrites=overwrites,
            topic=body.get("topic"),
            position=body.get("position"),
            nsfw=bool(body.get("nsfw", False)),
        )
        if body.get("rate_limit_per_user") is not None:
            self.world.channels[ref.id]["rate_limit_per_user"] = int(body["rate_limit_per_user"])
        self._emit_channel("CHANNEL_CREATE", ref.id)
        return Reply(201, self.world.channel_payload(ref.id))

    @route("PATCH /guilds/{guild_id}/channels")
    def channel_positions(self, c: Captured) -> Any:
        gid = _i(c, "guild_id")
        self.world.require_guild(gid, perms.MANAGE_CHANNELS)
        for entry in c.json if isinstance(c.json, list) else []:
            ch = self.world.channel(int(entry["id"]))
            if "position" in entry and entry["position"] is not None:
                ch["position"] = int(entry["position"])
            if "parent_id" in entry:
                ch["parent_id"] = str(entry["parent_id"]) if entry["parent_id"] else None
                if entry.get("lock_permissions") and entry["parent_id"]:
                    parent = self.world.channel(int(entry["parent_id"]))
                    ch["permission_overwrites"] = clone(parent["permission_overwrites"])
            self._emit_channel("CHANNEL_UPDATE", int(entry["id"]))
        return None

    # ------------------------------------------------------------------ members

    @route("GET /guilds/{guild_id}/members")
    def list_members(self, c: Captured) -> Any:
        gid = _i(c, "guild_id")
        g = self.world.guild(gid)
        if not self.world.intents.members:
            raise ApiError(403, 50001, "Missing Access")
        limit = int(c.query.get("limit", 1))
        after = int(c.query.get("after", 0))
        ids = sorted(u for u in g.members if u > after)[:limit]
        return [self.world.member_payload(gid, u) for u in ids]

    @route("GET /guilds/{guild_id}/members/{member_id}")
    def get_member(self, c: Captured) -> Any:
        return self.world.member_payload(_i(c, "guild_id"), _i(c, "member_id"))

    @route("PATCH /guilds/{guild_id}/members/{user_id}", "PATCH /guilds/{guild_id}/members/@me")
    def edit_member(self, c: Captured) -> Any:
        gid = _i(c, "guild_id")
        uid = self.world.bot_id if "@me" in c.path else _i(c, "user_id")
        member = self.world.member(gid, uid)
        body = _body(c)
        required = 0
        if "nick" in body:
            required |= (
                perms.CHANGE_NICKNAME if uid == self.world.bot_id else perms.MANAGE_NICKNAMES
            )
        if "roles" in body:
            required |= perms.MANAGE_ROLES
        if "mute" in body:
            required |= perms.MUTE_MEMBERS
        if "deaf" in body:
            required |= perms.DEAFEN_MEMBERS
        if "channel_id" in body:
            required |= perms.MOVE_MEMBERS
        if "communication_disabled_until" in body:
            required |= perms.MODERATE_MEMBERS
            if self.world.base_permissions(gid, uid) & perms.ADMINISTRATOR:
                raise missing_permissions()
        self.world.require_guild(gid, required)
        if uid != self.world.bot_id:
            self.world.require_hierarchy(gid, uid)
        if "roles" in body:
            old = set(self.world.member_role_ids(gid, uid))
            new = {int(r) for r in body["roles"] or []}
            for rid in old ^ new:
                self.world.require_role_below_bot(gid, rid)
            member["roles"] = [str(r) for r in sorted(new)]
        for key in ("nick", "mute", "deaf", "communication_disabled_until", "flags"):
            if key in body:
                member[key] = body[key]
        self._emit_member(gid, uid)
        return self.world.member_payload(gid, uid)

    @route(
        "PUT /guilds/{guild_id}/members/{user_id}/roles/{role_id}",
        "DELETE /guilds/{guild_id}/members/{user_id}/roles/{role_id}",
    )
    def member_role(self, c: Captured) -> Any:
        gid, uid, rid = _i(c, "guild_id"), _i(c, "user_id"), _i(c, "role_id")
        member = self.world.member(gid, uid)
        self.world.role(gid, rid)
        self.world.require_guild(gid, perms.MANAGE_ROLES)
        self.world.require_role_below_bot(gid, rid)
        roles = {int(r) for r in member["roles"]}
        if c.method == "PUT":
            roles.add(rid)
        else:
            roles.discard(rid)
        member["roles"] = [str(r) for r in sorted(roles)]
        self._emit_member(gid, uid)
        return None

    @route("DELETE /guilds/{guild_id}/members/{user_id}")
    def kick(self, c: Captured) -> Any:
        gid, uid = _i(c, "guild_id"), _i(c, "user_id")
        self.world.member(gid, uid)
        self.world.require_guild(gid, perms.KICK_MEMBERS)
        self.world.require_hierarchy(gid, uid)
        del self.world.guild(gid).members[uid]
        self.world.emit(
            "GUILD_MEMBER_REMOVE", {"guild_id": str(gid), "user": self.world.user_payload(uid)}
        )
        return None

    # ------------------------------------------------------------------ roles

    @route("GET /guilds/{guild_id}/roles")
    def list_roles(self, c: Captured) -> Any:
        return list(self.world.guild(_i(c, "guild_id")).roles.values())

    # ------------------------------------------------------------ guild scheduled events
    # As Discord documents them (discord-api-spec, guild-scheduled-event): an EXTERNAL
    # event (entity_type 3) needs entity_metadata.location and a scheduled_end_time after
    # its start, which must be in the future; privacy_level 2 (GUILD_ONLY). Creating one
    # needs Create Events or Manage Events; the status moves SCHEDULED (1) -> ACTIVE (2)
    # or CANCELED (4), ACTIVE -> COMPLETED (3), and never back.
    _EVENT_MOVES: ClassVar[dict[int, set[int]]] = {1: {2, 4}, 2: {3}, 3: set(), 4: set()}

    def _scheduled_event(self, c: Captured) -> dict[str, Any]:
        event = self.world.scheduled_events.get(_i(c, "guild_scheduled_event_id"))
        if event is None or int(event["guild_id"]) != _i(c, "guild_id"):
            raise ApiError(404, 10070, "Unknown Guild Scheduled Event")
        return event

    def _require_events(self, gid: int, event: dict[str, Any] | None = None) -> None:
        have = self.world.bot_base_permissions(gid)
        if have & perms.ADMINISTRATOR or have & perms.MANAGE_EVENTS:
            return
        own = event is None or int(event["creator_id"]) == self.world.bot_id
        if not (have & perms.CREATE_EVENTS and own):
            raise missing_permissions()

    @route("POST /guilds/{guild_id}/scheduled-events")
    def create_scheduled_event(self, c: Captured) -> Any:
        import datetime as dt

        gid = _i(c, "guild_id")
        self.world.guild(gid)
        self._require_events(gid)
        body = _body(c)
        name = str(body.get("name") or "")
        if not 1 <= len(name) <= 100:
            raise invalid_form("name", "BASE_TYPE_BAD_LENGTH", "Must be 1-100 characters")
        if len(str(body.get("description") or "")) > 1000:
            raise invalid_form("description", "BASE_TYPE_BAD_LENGTH", "Must be at most 1000")
        if int(body.get("privacy_level") or 0) != 2:
            raise invalid_form("privacy_level", "BASE_TYPE_CHOICES", "Value must be 2")
        start = dt.datetime.fromisoformat(str(body.get("scheduled_start_time")))
        if start <= dt.datetime.now(dt.UTC):
            raise invalid_form("scheduled_start_time", "GUILD_SCHEDULED_EVENT_SCHEDULE_PAST",
                               "Cannot schedule event in the past.")
        if int(body.get("entity_type") or 0) == 3:
            location = (body.get("entity_metadata") or {}).get("location")
            if not location or len(str(location)) > 100:
                raise invalid_form("entity_metadata.location", "BASE_TYPE_REQUIRED",
                                   "This field is required")
            end = body.get("scheduled_end_time")
            if not end or dt.datetime.fromisoformat(str(end)) <= start:
                raise invalid_form("scheduled_end_time", "BASE_TYPE_REQUIRED",
                                   "This field is required")
        eid = self.world.next_id()
        event = {
            "id": str(eid), "guild_id": str(gid), "channel_id": body.get("channel_id"),
            "creator_id": str(self.world.bot_id), "name": name,
            "description": body.get("description"),
            "scheduled_start_time": body.get("scheduled_start_time"),
            "scheduled_end_time": body.get("scheduled_end_time"),
            "privacy_level": 2, "status": 1, "entity_type": int(body.get("entity_type") or 0),
            "entity_id": None, "entity_metadata": body.get("entity_metadata"),
            "creator": self.world.user_payload(self.world.bot_id), "user_count": 0,
            "image": None,
        }
        self.world.scheduled_events[eid] = event
        return clone(event)

    @route("GET /guilds/{guild_id}/scheduled-events/{guild_scheduled_event_id}")
    def get_scheduled_event(self, c: Captured) -> Any:
        return clone(self._scheduled_event(c))

    @route("PATCH /guilds/{guild_id}/scheduled-events/{guild_scheduled_event_id}")
    def edit_scheduled_event(self, c: Captured) -> Any:
        event = self._scheduled_event(c)
        self._require_events(_i(c, "guild_id"), event)
        body = _body(c)
        if "status" in body:
            new = int(body["status"])
            if new not in self._EVENT_MOVES[int(event["status"])]:
                raise ApiError(400, 180000, "Cannot update event status")
            event["status"] = new
        for key in ("name", "description", "scheduled_start_time", "scheduled_end_time"):
            if key in body:
                event[key] = body[key]
        return clone(event)

    @route("DELETE /guilds/{guild_id}/scheduled-events/{guild_scheduled_event_id}")
    def delete_scheduled_event(self, c: Captured) -> Any:
        event = self._scheduled_event(c)
        self._require_events(_i(c, "guild_id"), event)
        del self.world.scheduled_events[int(event["id"])]
        return Reply(204, None)

    @route("GET /guilds/{guild_id}/roles/{role_id}")
    def get_role(self, c: Captured) -> Any:
        return self.world.role(_i(c, "guild_id"), _i(c, "role_id"))

    def _check_role_perms(self, gid: int, body: dict[str, Any]) -> None:
        have = self.world.bot_base_permissions(gid)
        if (
            "permissions" in body
            and not have & perms.ADMINISTRATOR
            and int(body["permissions"] or 0) & ~have
        ):
            raise missing_permissions()

    @route("POST /guilds/{guild_id}/roles")
    def create_role(self, c: Captured) -> Any:
        gid = _i(c, "guild_id")
        self.world.require_guild(gid, perms.MANAGE_ROLES)
        body = _body(c)
        self._check_role_perms(gid, body)
        ref = self.world.add_role(
            gid,
            str(body.get("name") or "new role"),
            permissions=int(body.get("permissions") or 0),
            hoist=bool(body.get("hoist", False)),
            mentionable=bool(body.get("mentionable", False)),
            color=int(body.get("color") or 0),
        )
        role = self.world.role(gid, ref.id)
        self.world.emit("GUILD_ROLE_CREATE", {"guild_id": str(gid), "role": role})
        return role

    @route("PATCH /guilds/{guild_id}/roles/{role_id}")
    def edit_role(self, c: Captured) -> Any:
        gid, rid = _i(c, "guild_id"), _i(c, "role_id")
        role = self.world.role(gid, rid)
        self.world.require_guild(gid, perms.MANAGE_ROLES)
        if rid != gid:
            self.world.require_role_below_bot(gid, rid)
        body = _body(c)
        self._check_role_perms(gid, body)
        for key in ("name", "hoist", "mentionable", "color", "icon", "unicode_emoji"):
            if key in body:
                role[key] = body[key]
        if "permissions" in body:
            role["permissions"] = str(int(body["permissions"] or 0))
        self.world.emit("GUILD_ROLE_UPDATE", {"guild_id": str(gid), "role": role})
        return role

    @route("PATCH /guilds/{guild_id}/roles")
    def role_positions(self, c: Captured) -> Any:
        gid = _i(c, "guild_id")
        self.world.require_guild(gid, perms.MANAGE_ROLES)
        for entry in c.json if isinstance(c.json, list) else []:
            role = self.world.role(gid, int(entry["id"]))
            role["position"] = int(entry["position"])
            self.world.emit("GUILD_ROLE_UPDATE", {"guild_id": str(gid), "role": role})
        return list(self.world.guild(gid).roles.values())

    @route("DELETE /guilds/{guild_id}/roles/{role_id}")
    def delete_role(self, c: Captured) -> Any:
        gid, rid = _i(c, "guild_id"), _i(c, "role_id")
        self.world.role(gid, rid)
        self.world.require_guild(gid, perms.MANAGE_ROLES)
        self.world.require_role_below_bot(gid, rid)
        g = self.world.guild(gid)
        del g.roles[rid]
        for member in g.members.values():
            member["roles"] = [r for r in member["roles"] if int(r) != rid]
        self.world.emit("GUILD_ROLE_DELETE", {"guild_id": str(gid), "role_id": str(rid)})
        return None

    # ------------------------------------------------------------------ channels

    @route("GET /channels/{channel_id}")
    def get_channel(self, c: Captured) -> Any:
        cid, _ = self._channel_in_guild(c)
        self._require_visible(cid)
        return self.world.channel_payload(cid)

    def _require_manage(self, cid: int, ch: dict[str, Any]) -> None:
        if ch["type"] in THREAD_TYPES:
            if int(ch.get("owner_id", 0)) != self.world.bot_id:
                self.world.require_channel(cid, perms.MANAGE_THREADS)
        else:
            self.world.require_channel(cid, perms.MANAGE_CHANNELS)

    @route("PATCH /channels/{channel_id}")
    def edit_channel(self, c: Captured) -> Any:
        cid, ch = self._channel_in_guild(c)
        if ch["type"] == DM:
            raise ApiError(400, 50024, "Cannot execute action on this channel type")
        self._require_manage(cid, ch)
        body = _body(c)
        gid = int(ch["guild_id"])
        if self._archived(ch) and set(body) - {"archived", "locked"}:
            raise ApiError(400, 50083, "Thread is archived")  # open it first
        if "permission_overwrites" in body:
            # the whole list replaces the channel's (Manage Roles besides Manage Channels;
            # at most 100 entries, OpenAPI update_channel; a role's must exist, as for PUT)
            listed = body["permission_overwrites"] or []
            if len(listed) > MAX_OVERWRITES:
                raise invalid_form("permission_overwrites", "BASE_TYPE_MAX_LENGTH",
                                   f"Must be {MAX_OVERWRITES} or fewer in length.")
            self.world.require_channel(cid, perms.MANAGE_ROLES)
            self.world.require_overwrite_grantable(gid, listed)
            for ow in listed:
                if int(ow.get("type", 0)) == 0:
                    self.world.role(gid, int(ow["id"]))
            ch["permission_overwrites"] = self.world.normalize_overwrites(listed)
        if "name" in body:
            name = str(body["name"])
            ch["name"] = name.lower().replace(" ", "-") if ch["type"] == TEXT else name
        if "parent_id" in body:
            parent = body["parent_id"]
            if parent:
                p = self.world.channel(int(parent))
                if p["type"] != CATEGORY:
                    raise invalid_form(
                        "parent_id", "CHANNEL_PARENT_INVALID", "Invalid parent channel"
                    )
            ch["parent_id"] = str(parent) if parent else None
        for key in ("topic", "nsfw", "rate_limit_per_user", "position", "flags"):
            if key in body:
                ch[key] = body[key]
        if ch["type"] in THREAD_TYPES:
            meta = ch["thread_metadata"]
            if body.get("archived") is False and meta["locked"] and body.get("locked", True) \
                    and not self.world.bot_channel_permissions(cid) & perms.MANAGE_THREADS:
                raise missing_permissions()
            for key in ("archived", "locked", "auto_archive_duration", "invitable"):
                if key in body:
                    meta[key] = body[key]
            if body.get("archived") is False:
                self.world.thread_activity(cid)
        self._emit_channel("CHANNEL_UPDATE", cid)
        return self.world.channel_payload(cid)

    @route("DELETE /channels/{channel_id}")
    def delete_channel(self, c: Captured) -> Any:
        cid, ch = self._channel_in_guild(c)
        if ch["type"] == DM:
            return self.world.channel_payload(cid)
        self._require_manage(cid, ch)
        payload = self.world.channel_payload(cid)
        self.world.delete_channel(cid)
        if ch["type"] in THREAD_TYPES:
            self.world.emit(
                "THREAD_DELETE",
                {
                    "id": str(cid),
                    "guild_id": ch["guild_id"],
                    "parent_id": ch["parent_id"],
                    "type": ch["type"],
                },
            )
        else:
            self.world.emit("CHANNEL_DELETE", payload)
        return payload

    @route(
        "PUT /channels/{channel_id}/permissions/{target}",
        "DELETE /channels/{channel_id}/permissions/{target}",
    )
    def channel_permission(self, c: Captured) -> Any:
        cid, ch = self._channel_in_guild(c)
        if ch["type"] in (DM, *THREAD_TYPES):
            raise ApiError(400, 50024, "Cannot execute action on this channel type")
        target = _i(c, "target")
        gid = int(ch["guild_id"])
        self.world.require_channel(cid, perms.MANAGE_ROLES)
        if c.method == "PUT":
            body = _body(c)
            self.world.require_overwrite_grantable(gid, [body])
            otype = int(body.get("type", 0))
            if otype == 0:
                self.world.role(gid, target)
            self.world.set_overwrite(
                cid,
                target,
                type=otype,
                allow=int(body.get("allow") or 0),
                deny=int(body.get("deny") or 0),
            )
        else:
            self.world.remove_overwrite(cid, target)
        self._emit_channel("CHANNEL_UPDATE", cid)
        return None

    @route("POST /channels/{channel_id}/typing")
    def typing(self, c: Captured) -> Any:
        cid, _ = self._channel_in_guild(c)
        self._require_visible(cid)
        return None

    # ------------------------------------------------------------------ messages

    def _require_send(self, cid: int, ch: dict[str, Any], *, files: bool) -> None:
        if ch["type"] == DM:
            recipient = self.world.dm_recipient(cid)
            if recipient in self.world.closed_dms or (
                recipient and self.world.users[recipient].get("bot")
            ):
                raise ApiError(403, 50007, "Cannot send messages to this user")
            return
        need = perms.SEND_MESSAGES
        if files:
            need |= perms.ATTACH_FILES
        self.world.require_channel(cid, need)

    @route("POST /channels/{channel_id}/messages")
    def send_message(self, c: Captured) -> Any:
        cid, ch = self._channel_in_guild(c)
        body = _body(c)
        files = _files(c)
        self._require_send(cid, ch, files=bool(files))
        validate_message_body(body, has_files=bool(files), editing=False)
        if self._archived(ch):
            # a message opens an archived thread, unless it is locked (Discord: only
            # Manage Threads may open a locked one, and a message does not)
            if ch["thread_metadata"]["locked"]:
                raise ApiError(400, 50083, "Thread is archived")
            ch["thread_metadata"]["archived"] = False
            self._emit_channel("THREAD_UPDATE", cid)
        # enforce_nonce: a nonce already used by this author here within Discord's window
        # returns that message, and no new one is created
        nonce = body.get("nonce")
        key = (cid, self.world.bot_id, str(nonce))
        if nonce is not None:
            if len(str(nonce)) > 25:
                raise invalid_form("nonce", "BASE_TYPE_MAX_LENGTH",
                                   "Must be 25 or fewer in length.")
            seen = self.world.nonces.get(key)
            if body.get("enforce_nonce") and seen is not None \
                    and self.world.clock() - seen[1] <= self.world.nonce_window:
                stored = self.world.messages.get(seen[0])
                if stored is not None and not stored.deleted:
                    return stored.payload
        ref = body.get("message_reference")
        if ref and ref.get("message_id") and ref.get("fail_if_not_exists", True):
            try:
                self.world.message(int(ref["message_id"]))
            except ApiError:
                raise invalid_form(
                    "message_reference", "MESSAGE_REFERENCE_UNKNOWN_MESSAGE", "Unknown message"
                ) from None
        stored = self.world.create_message(
            cid, self.world.bot_id, body, files=files, msg_type=19 if ref else 0
        )
        if nonce is not None:
            stored.payload["nonce"] = str(nonce)
            self.world.nonces[key] = (stored.id, self.world.clock())
        self._emit_message("MESSAGE_CREATE", stored)
        return stored.payload

    @route("GET /channels/{channel_id}/messages")
    def history(self, c: Captured) -> Any:
        cid, ch = self._channel_in_guild(c)
        if ch["type"] != DM:
            self.world.require_channel(cid, perms.READ_MESSAGE_HISTORY)
        msgs = [m for m in self.world.records_in(cid) if not m.deleted and m.ephemeral_for is None]
        msgs.sort(key=lambda m: m.id, reverse=True)
        if "before" in c.query:
            msgs = [m for m in msgs if m.id < int(c.query["before"])]
        if "after" in c.query:
            msgs = [m for m in msgs if m.id > int(c.query["after"])]
        limit = int(c.query.get("limit", 50))
        return [m.payload for m in msgs[:limit]]

    @route("GET /channels/{channel_id}/messages/{message_id}")
    def get_message(self, c: Captured) -> Any:
        cid, ch = self._channel_in_guild(c)
        if ch["type"] != DM:
            self.world.require_channel(cid, perms.READ_MESSAGE_HISTORY)
        stored = self._message_in(cid, _i(c, "message_id"))
        if stored.ephemeral_for is not None:
            raise unknown("message")
        return stored.payload

    @route("PATCH /channels/{channel_id}/messages/{message_id}")
    def edit_message(self, c: Captured) -> Any:
        cid, _ = self._channel_in_guild(c)
        stored = self._message_in(cid, _i(c, "message_id"))
        body = _body(c)
        if int(stored.payload["author"]["id"]) != self.world.bot_id:
            if set(body) - {"flags"}:
                raise ApiError(403, 50005, "Cannot edit a message authored by another user")
            self.world.require_channel(cid, perms.MANAGE_MESSAGES)
        validate_message_body(body, has_files=bool(c.files), editing=True)
        self.world.edit_message(stored.id, body, files=_files(c))
        self._emit_message("MESSAGE_UPDATE", stored)
        return stored.payload

    @route("DELETE /channels/{channel_id}/messages/{message_id}")
    def delete_message(self, c: Captured) -> Any:
        cid, ch = self._channel_in_guild(c)
        stored = self._message_in(cid, _i(c, "message_id"))
        if int(stored.payload["author"]["id"]) != self.world.bot_id and ch["type"] != DM:
            self.world.require_channel(cid, perms.MANAGE_MESSAGES)
        self.world.delete_message(stored.id)
        event = {"id": str(stored.id), "channel_id": str(cid)}
        if ch.get("guild_id"):
            event["guild_id"] = ch["guild_id"]
        if stored.ephemeral_for is None:
            self.world.emit("MESSAGE_DELETE", event)
        return None

    @route("POST /channels/{channel_id}/messages/bulk-delete")
    def bulk_delete(self, c: Captured) -> Any:
        cid, ch = self._channel_in_guild(c)
        self.world.require_channel(cid, perms.MANAGE_MESSAGES)
        ids = [int(x) for x in _body(c).get("messages", [])]
        if not 2 <= len(ids) <= 100:
            raise invalid_form(
                "messages", "BASE_TYPE_BAD_LENGTH", "Must be between 2 and 100 in length."
            )
        for mid in ids:
            self._message_in(cid, mid)
        for mid in ids:
            self.world.delete_message(mid)
        self.world.emit(
            "MESSAGE_DELETE_BULK",
            {"ids": [str(i) for i in ids], "channel_id": str(cid), "guild_id": ch.get("guild_id")},
        )
        return None

    @route(
        "PUT /channels/{channel_id}/messages/pins/{message_id}",
        "DELETE /channels/{channel_id}/messages/pins/{message_id}",
    )
    def pin(self, c: Captured) -> Any:
        cid, ch = self._channel_in_guild(c)
        stored = self._message_in(cid, _i(c, "message_id"))
        if ch["type"] != DM:
            have = self.world.bot_channel_permissions(cid)
            if not have & (perms.MANAGE_MESSAGES | perms.PIN_MESSAGES):
                raise missing_permissions()
        stored.payload["pinned"] = c.method == "PUT"
        return None

    @route("GET /channels/{channel_id}/messages/pins")
    def list_pins(self, c: Captured) -> Any:
        cid, _ = self._channel_in_guild(c)
        items = [
            {"pinned_at": iso_now(), "message": m.payload}
            for m in self.world.records_in(cid)
            if m.payload.get("pinned") and not m.deleted
        ]
        return {"items": items, "has_more": False}

    @route(
        "PUT /channels/{channel_id}/messages/{message_id}/reactions/{emoji}/@me",
        "DELETE /channels/{channel_id}/messages/{message_id}/reactions/{emoji}/@me",
    )
    def react(self, c: Captured) -> Any:
        cid, ch = self._channel_in_guild(c)
        stored = self._message_in(cid, _i(c, "message_id"))
        emoji = str(c.params["emoji"])
        name, _, eid = emoji.partition(":")
        reactions: list[dict[str, Any]] = stored.payload.setdefault("reactions", [])
        existing = next((r for r in reactions if r["emoji"]["name"] == name), None)
        if c.method == "PUT":
            if ch["type"] != DM:
                need = perms.READ_MESSAGE_HISTORY | (0 if existing else perms.ADD_REACTIONS)
                self.world.require_channel(cid, need)
            if existing is None:
                reactions.append(
                    {
                        "emoji": {"id": eid or None, "name": name},
                        "count": 1,
                        "count_details": {"burst": 0, "normal": 1},
                        "me": True,
                        "me_burst": False,
                        "burst_colors": [],
                    }
                )
            elif not existing["me"]:
                existing["me"] = True
                existing["count"] += 1
        elif existing is not None and existing["me"]:
            existing["me"] = False
            existing["count"] -= 1
            if existing["count"] <= 0:
                reactions.remove(existing)
        return None

    # ------------------------------------------------------------------ threads

    def _create_thread(self, c: Captured, *, from_message: bool) -> Any:
        cid, ch = self._channel_in_guild(c)
        if ch["type"] not in (TEXT, 5):
            raise ApiError(400, 50024, "Cannot execute action on this channel type")
        body = _body(c)
        private = not from_message and int(body.get("type", PRIVATE_THREAD)) == PRIVATE_THREAD
        need = perms.CREATE_PRIVATE_THREADS if private else perms.CREATE_PUBLIC_THREADS
        self.world.require_channel(cid, need)
        source = self._message_in(cid, _i(c, "message_id")) if from_message else None
        ref = self.world.add_thread(
            cid,
            str(body.get("name", "thread")),
            private=private,
            owner_id=self.world.bot_id,
            thread_id=source.id if source is not None else None,  # Discord reuses the message id
        )
        thread = self.world.channels[ref.id]
        meta = thread["thread_metadata"]
        if "auto_archive_duration" in body:
            meta["auto_archive_duration"] = int(body["auto_archive_duration"])
        if "invitable" in body:
            meta["invitable"] = bool(body["invitable"])
        if source is not None:
            source.payload["thread"] = clone(thread)
        event = self.world.channel_payload(ref.id)
        event["newly_created"] = True
        event["member"] = {
            "id": str(ref.id),
            "user_id": str(self.world.bot_id),
            "join_timestamp": iso_now(),
            "flags": 0,
        }
        self.world.emit("THREAD_CREATE", event)
        return Reply(201, self.world.channel_payload(ref.id))

    @route("POST /channels/{channel_id}/threads")
    def create_thread(self, c: Captured) -> Any:
        return self._create_thread(c, from_message=False)

    @route("POST /channels/{channel_id}/messages/{message_id}/threads")
    def create_thread_from_message(self, c: Captured) -> Any:
        return self._create_thread(c, from_message=True)

    @route(
        "PUT /channels/{channel_id}/thread-members/{user_id}",
        "DELETE /channels/{channel_id}/thread-members/{user_id}",
        "PUT /channels/{channel_id}/thread-members/@me",
        "DELETE /channels/{channel_id}/thread-members/@me",
    )
    def thread_member(self, c: Captured) -> Any:
        cid, ch = self._channel_in_guild(c)
        if ch["type"] not in THREAD_TYPES:
            raise ApiError(400, 50024, "Cannot execute action on this channel type")
        uid = self.world.bot_id if c.path.endswith("@me") else _i(c, "user_id")
        gid = int(ch["guild_id"])
        self.world.member(gid, uid)
        members = self.world.thread_members.setdefault(cid, set())
        if self._archived(ch):
            raise ApiError(400, 50083, "Thread is archived")
        if uid != self.world.bot_id:
            self.world.require_channel(cid, perms.SEND_MESSAGES)
            if c.method == "DELETE":
                self.world.require_channel(cid, perms.MANAGE_THREADS)
        event: dict[str, Any] = {"id": str(cid), "guild_id": str(gid)}
        if c.method == "PUT":
            members.add(uid)
            event["added_members"] = [
                {"id": str(cid), "user_id": str(uid), "join_timestamp": iso_now(), "flags": 0}
            ]
        else:
            members.discard(uid)
            event["removed_member_ids"] = [str(uid)]
        ch["member_count"] = len(members)
        event["member_count"] = len(members)
        self.world.emit("THREAD_MEMBERS_UPDATE", event)
        return None

    @route("GET /channels/{channel_id}/thread-members")
    def thread_members(self, c: Captured) -> Any:
        cid, _ = self._channel_in_guild(c)
        return [
            {"id": str(cid), "user_id": str(u), "join_timestamp": iso_now(), "flags": 0}
            for u in sorted(self.world.thread_members.get(cid, set()))
        ]

    # ------------------------------------------------------------------ interactions

    def _record(self, c: Captured, *, webhook: bool) -> InteractionRecord:
        token = str(c.params["webhook_token"])
        rec = self.world.interactions.get(token)
        if webhook:
            if (
                rec is None
                or int(c.params["webhook_id"]) != self.world.application_id
                or not rec.responded
            ):
                raise unknown("webhook")
        elif rec is None or int(c.params["webhook_id"]) != rec.id:
            raise unknown("interaction")
        return rec

    def _interaction_message(
        self,
        rec: InteractionRecord,
        body: dict[str, Any],
        files: list[tuple[str, bytes]],
        *,
        flags: int,
        msg_type: int,
    ) -> StoredMessage:
        ephemeral = bool(flags & EPHEMERAL)
        return self.world.create_message(
            rec.channel_id,
            self.world.bot_id,
            body,
            files=files,
            msg_type=msg_type,
            flags=flags,
            ephemeral_for=rec.user_id if ephemeral else None,
            interaction=rec,
            interaction_name=rec.command_name,
        )

    @route("POST /interactions/{webhook_id}/{webhook_token}/callback")
    def interaction_callback(self, c: Captured) -> Any:
        rec = self._record(c, webhook=False)
        if rec.responded:
            raise ApiError(400, 40060, "Interaction has already been acknowledged.")
        body = _body(c)
        rtype = int(body.get("type", 0))
        # decoded from the request just now: the records below keep it without copies
        # (the world copies what it stores in messages)
        data: dict[str, Any] = dict(body.get("data") or {})
        allowed = set(ALLOWED_CALLBACKS.get(rec.type, set()))
        if rec.type == 5 and rec.message_id is None:
            allowed -= {6, 7}
        if rtype not in allowed:
            raise invalid_form(
                "type",
                "INTERACTION_RESPONSE_TYPE_INVALID",
                f"Callback type {rtype} is not valid for interaction type {rec.type}",
            )
        files = _files(c)
        stored: StoredMessage | None = None
        if rtype == 4:
            validate_message_body(data, has_files=bool(files), editing=False)
            flags = int(data.get("flags") or 0)
            stored = self._interaction_message(
                rec, data, files, flags=flags, msg_type=20 if rec.type == 2 else 0
            )
            rec.original_message_id = stored.id
            self._emit_message("MESSAGE_CREATE", stored)
        elif rtype == 5:
            flags = (int(data.get("flags") or 0) & EPHEMERAL) | LOADING
            stored = self._interaction_message(
                rec, {"content": ""}, [], flags=flags, msg_type=20 if rec.type == 2 else 0
            )
            rec.original_message_id = stored.id
            rec.loading = True
            self._emit_message("MESSAGE_CREATE", stored)
        elif rtype in (6, 7):
            assert rec.message_id is not None
            rec.original_message_id = rec.message_id
            stored = self.world.message(rec.message_id)
            if rtype == 7:
                validate_message_body(data, has_files=bool(files), editing=True)
                self.world.edit_message(rec.message_id, data, files=files)
                self._emit_message("MESSAGE_UPDATE", stored)
        elif rtype == 8:
            choices = data.get("choices") or []
            if len(choices) > 25:
                raise invalid_form(
                    "data.choices", "BASE_TYPE_MAX_LENGTH", "Must be 25 or fewer in length."
                )
            for i, choice in enumerate(choices):
                if not 1 <= len(str(choice.get("name", ""))) <= 100:
                    raise invalid_form(
                        f"data.choices.{i}.name",
                        "BASE_TYPE_BAD_LENGTH",
                        "Must be between 1 and 100 in length.",
                    )
        elif rtype == 9:
            title = str(data.get("title", ""))
            if not 1 <= len(title) <= 45:
                raise invalid_form(
                    "data.title", "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 45 in length."
                )
            if not 1 <= len(data.get("components") or []) <= 5:
                raise invalid_form(
                    "data.components", "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 5 in length."
                )
            self.world.open_modals.setdefault(rec.user_id, []).append(
                OpenModal(
                    custom_id=str(data.get("custom_id")),
                    data=data,
                    user_id=rec.user_id,
                    guild_id=rec.guild_id,
                    channel_id=rec.channel_id,
                    message_id=rec.message_id,
                    interaction_id=rec.id,
                )
            )
        rec.responded = True
        rec.response_type = rtype
        rec.response_data = data
        interaction: dict[str, Any] = {"id": str(rec.id), "type": rec.type}
        resource: dict[str, Any] = {"type": rtype}
        if stored is not None:
            interaction["response_message_id"] = str(stored.id)
            interaction["response_message_loading"] = rtype == 5
            interaction["response_message_ephemeral"] = bool(stored.payload["flags"] & EPHEMERAL)
            resource["message"] = stored.payload
        return {"interaction": interaction, "resource": resource}

    def _webhook_message(self, rec: InteractionRecord, c: Captured) -> StoredMessage:
        raw = c.params.get("message_id")
        if "@original" in c.path:
            if rec.original_message_id is None:
                raise unknown("message")
            return self.world.message(rec.original_message_id)
        mid = int(raw) if raw is not None else 0
        if mid != rec.original_message_id and mid not in rec.followup_ids:
            raise unknown("message")
        return self.world.message(mid)

    @route("POST /webhooks/{webhook_id}/{webhook_token}")
    def followup(self, c: Captured) -> Any:
        rec = self._record(c, webhook=True)
        body = _body(c)
        files = _files(c)
        validate_message_body(body, has_files=bool(files), editing=False)
        if rec.loading and rec.original_message_id is not None:
            # The first follow-up after a "thinking" defer replaces the loading message.
            stored = self.world.edit_message(rec.original_message_id, body, files=files)
            stored.payload["flags"] &= ~LOADING
            stored.payload["edited_timestamp"] = None
            rec.loading = False
            self._emit_message("MESSAGE_UPDATE", stored)
        else:
            flags = int(body.get("flags") or 0)
            stored = self._interaction_message(rec, body, files, flags=flags, msg_type=0)
            rec.followup_ids.append(stored.id)
            self._emit_message("MESSAGE_CREATE", stored)
        if c.query.get("wait") in ("1", "true", "True"):
            return stored.payload
        return None

    @route(
        "GET /webhooks/{webhook_id}/{webhook_token}/messages/@original",
        "GET /webhooks/{webhook_id}/{webhook_token}/messages/{message_id}",
    )
    def webhook_get(self, c: Captured) -> Any:
        rec = self._record(c, webhook=True)
        return self._webhook_message(rec, c).payload

    @route(
        "PATCH /webhooks/{webhook_id}/{webhook_token}/messages/@original",
        "PATCH /webhooks/{webhook_id}/{webhook_token}/messages/{message_id}",
    )
    def webhook_edit(self, c: Captured) -> Any:
        rec = self._record(c, webhook=True)
        stored = self._webhook_message(rec, c)
        body = _body(c)
        validate_message_body(body, has_files=bool(c.files), editing=True)
        self.world.edit_message(stored.id, body, files=_files(c))
        if stored.payload["flags"] & LOADING:
            stored.payload["flags"] &= ~LOADING
            rec.loading = False
        self._emit_message("MESSAGE_UPDATE", stored)
        return stored.payload

    @route(
        "DELETE /webhooks/{webhook_id}/{webhook_token}/messages/@original",
        "DELETE /webhooks/{webhook_id}/{webhook_token}/messages/{message_id}",
    )
    def webhook_delete(self, c: Captured) -> Any:
        rec = self._record(c, webhook=True)
        stored = self._webhook_message(rec, c)
        self.world.delete_message(stored.id)
        if stored.ephemeral_for is None:
            event = {"id": str(stored.id), "channel_id": stored.payload["channel_id"]}
            if stored.payload.get("guild_id"):
                event["guild_id"] = stored.payload["guild_id"]
            self.world.emit("MESSAGE_DELETE", event)
        return None


__all__ = ["ALLOWED_CALLBACKS", "PUBLIC_THREAD", "RestApi"]
