"""Builders for INTERACTION_CREATE payloads, shaped like Discord's (API v10).

Slash-command options are built from the command's *registration schema*
(``Command.to_dict(tree)``, i.e. exactly what ``tree.sync()`` would upload), so the
payload only contains what Discord could send: option names/types/choices/ranges are
validated like the Discord client does before anything reaches discord.py.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import discord
from discord import app_commands

from . import permissions as perms
from .errors import HarnessError
from .world import (
    DM,
    THREAD_TYPES,
    FakeWorld,
    InteractionRecord,
    OpenModal,
    clone,
    sid,
    walk_components,
)

ATTACHMENT_LIMIT = 10 * 1024 * 1024
SELECT_TYPES = {3, 5, 6, 7, 8}
ENTITY_SELECT_TYPES = {5, 6, 7, 8}
OPTION_TYPE_NAMES = {
    3: "string",
    4: "integer",
    5: "boolean",
    6: "user",
    7: "channel",
    8: "role",
    9: "mentionable",
    10: "number",
    11: "attachment",
}


@dataclass(frozen=True)
class ResolvedCommand:
    root: app_commands.Command[Any, ..., Any] | app_commands.Group
    leaf: app_commands.Command[Any, ..., Any]
    path: tuple[str, ...]
    scope: int | None
    root_schema: dict[str, Any]
    leaf_schema: dict[str, Any]


class Resolved:
    """Accumulates the ``resolved`` block of an interaction."""

    def __init__(self) -> None:
        self.data: dict[str, dict[str, Any]] = {}

    def add(self, kind: str, key: int, value: dict[str, Any]) -> None:
        self.data.setdefault(kind, {})[str(key)] = value

    def __bool__(self) -> bool:
        return bool(self.data)


class PayloadBuilder:
    """Creates interaction payloads + the matching :class:`InteractionRecord` in the world."""

    def __init__(self, world: FakeWorld, client: discord.Client) -> None:
        self.world = world
        self.client = client
        self._fake_command_ids: dict[tuple[int | None, str, int], int] = {}
        self._schemas: dict[int, tuple[object, dict[str, Any]]] = {}

    # ------------------------------------------------------------------ common

    @property
    def tree(self) -> app_commands.CommandTree[Any]:
        tree = self.client._connection._command_tree
        if tree is None:
            raise HarnessError("the client has no CommandTree (use commands.Bot or attach a tree)")
        return tree

    def channel_partial(
        self, channel_id: int, user_id: int, permissions: int | None = None
    ) -> dict[str, Any]:
        """The interaction's ``channel``; ``permissions``: the user's, if already known."""
        data = self.world.channel_payload(channel_id)
        if data["type"] != DM:
            if permissions is None:
                permissions = self.world.channel_permissions(channel_id, user_id)
            data["permissions"] = str(permissions)
        return data

    def guild_of(self, channel_id: int) -> int | None:
        ch = self.world.channel(channel_id)
        return int(ch["guild_id"]) if ch.get("guild_id") else None

    def base(
        self,
        itype: int,
        *,
        user_id: int,
        channel_id: int,
        data: dict[str, Any] | None,
        locale: str,
        message_id: int | None = None,
        command_name: str | None = None,
    ) -> tuple[dict[str, Any], InteractionRecord]:
        if user_id not in self.world.users:
            raise HarnessError(f"unknown user {user_id}; create it with h.add_user/h.add_member")
        guild_id = self.guild_of(channel_id)
        # the user's permissions in the channel go into three places; compute them once
        user_perms = self.world.channel_permissions(channel_id, user_id)
        iid = self.world.next_id()
        token = f"harness-interaction-token-{iid}"
        payload: dict[str, Any] = {
            "id": str(iid),
            "application_id": str(self.world.application_id),
            "type": itype,
            "token": token,
            "version": 1,
            "locale": locale,
            "entitlements": [],
            "entitlement_sku_ids": [],
            "attachment_size_limit": ATTACHMENT_LIMIT,
            "channel_id": str(channel_id),
            "channel": self.channel_partial(channel_id, user_id, user_perms),
        }
        if data is not None:
            payload["data"] = data
        if guild_id is not None:
            if not self.world.is_member(guild_id, user_id):
                raise HarnessError(f"user {user_id} is not a member of guild {guild_id}")
            if not user_perms & perms.VIEW_CHANNEL:
                raise HarnessError(
                    f"user {user_id} cannot see channel {channel_id}; "
                    "Discord would not let them act there"
                )
            g = self.world.guild(guild_id)
            member = self.world.member_payload(guild_id, user_id)
            member["permissions"] = str(user_perms)
            payload.update(
                {
                    "guild_id": str(guild_id),
                    "guild": {
                        "id": str(guild_id),
                        "locale": g.data["preferred_locale"],
                        "features": [],
                    },
                    "guild_locale": g.data["preferred_locale"],
                    "member": member,
                    "app_permissions": str(self.world.bot_channel_permissions(channel_id)),
                    "authorizing_integration_owners": {"0": str(guild_id)},
                    "context": 0,
                }
            )
        else:
            payload.update(
                {
                    "user": self.world.user_payload(user_id),
                    "app_permissions": str(perms.DEFAULT_EVERYONE),
                    "authorizing_integration_owners": {"0": "0"},
                    "context": 1,
                }
            )
        if message_id is not None:
            payload["message"] = self.world.message_payload(message_id)
        rec = InteractionRecord(
            id=iid,
            token=token,
            type=itype,
            user_id=user_id,
            guild_id=guild_id,
            channel_id=channel_id,
            message_id=message_id,
            command_name=command_name,
        )
        return payload, rec

    # ------------------------------------------------------------------ commands

    def resolve_command(self, path: str, guild_id: int | None) -> ResolvedCommand:
        parts = tuple(path.split())
        if not parts:
            raise HarnessError("empty command name")
        tree = self.tree
        root: Any = None
        scope: int | None = None
        if guild_id is not None:
            root = tree.get_command(parts[0], guild=discord.Object(guild_id))
            scope = guild_id if root is not None else None
        if root is None:
            root = tree.get_command(parts[0])
        if root is None:
            known = sorted(c.name for c in tree.get_commands())
            raise HarnessError(
                f"no slash command {parts[0]!r} in the tree (global commands: {known})"
            )
        node: Any = root
        for name in parts[1:]:
            if not isinstance(node, app_commands.Group):
                raise HarnessError(
                    f"{node.qualified_name!r} is not a group; cannot invoke {path!r}"
                )
            child = node.get_command(name)
            if child is None:
                known = sorted(c.name for c in node.commands)
                raise HarnessError(
                    f"group {node.qualified_name!r} has no subcommand {name!r} (has {known})"
                )
            node = child
        if not isinstance(node, app_commands.Command):
            raise HarnessError(
                f"{path!r} is a group; Discord only lets users invoke its subcommands"
            )
        return ResolvedCommand(
            root=root,
            leaf=node,
            path=parts,
            scope=scope,
            root_schema=self._schema(root),
            leaf_schema=self._schema(node),
        )

    def _schema(
        self, command: app_commands.Command[Any, ..., Any] | app_commands.Group
    ) -> dict[str, Any]:
        """``command.to_dict(tree)``, built once per command object: every slash needs
        it, and a group's walks all its subcommands.  Only the command's own fields are
        read from it (options, contexts, permissions), which bots set up once; a test
        that edits a command after invoking it must clear ``_schemas``.  Read-only."""
        cached = self._schemas.get(id(command))
        if cached is None or cached[0] is not command:
            cached = self._schemas[id(command)] = (command, command.to_dict(self.tree))
        return cached[1]

    def command_id(self, scope: int | None, name: str, kind: int = 1) -> int:
        registered = self.world.command_id(scope, name, kind)
        if registered is not None:
            return registered
        key = (scope, name, kind)
        if key not in self._fake_command_ids:
            self._fake_command_ids[key] = self.world.next_id()
        return self._fake_command_ids[key]

    def check_availability(self, cmd: ResolvedCommand, *, user_id: int, channel_id: int) -> None:
        """Discord hides commands the user may not run here; refuse to fake those."""
        guild_id = self.guild_of(channel_id)
        schema = cmd.root_schema
        if guild_id is None:
            contexts = schema.get("contexts")
            allowed = 1 in contexts if contexts else schema.get("dm_permission", True)
            if cmd.scope is not None or not allowed:
                raise HarnessError(
                    f"/{' '.join(cmd.path)} is not available in DMs (guild-only command)"
                )
            return
        contexts = schema.get("contexts")
        if contexts and 0 not in contexts:
            raise HarnessError(f"/{' '.join(cmd.path)} is not available in guilds")
        required = schema.get("default_member_permissions")
        if required is not None:
            have = self.world.channel_permissions(channel_id, user_id)
            if not have & perms.ADMINISTRATOR and have & int(required) != int(required):
                raise HarnessError(
                    f"/{' '.join(cmd.path)} needs default_member_permissions "
                    f"{perms.bit_names(int(required))}; Discord hides it from user {user_id}"
                )

    def _map_kwargs(self, cmd: ResolvedCommand, values: Mapping[str, Any]) -> dict[str, Any]:
        by_python = {p.name: p.display_name for p in cmd.leaf.parameters}
        known = {o["name"] for o in cmd.leaf_schema.get("options", [])}
        out: dict[str, Any] = {}
        for key, value in values.items():
            name = key if key in known else by_python.get(key)
            if name is None or name not in known:
                raise HarnessError(
                    f"/{' '.join(cmd.path)} has no option {key!r}; options: {sorted(known)}"
                )
            out[name] = value
        return out

    def _nest(self, cmd: ResolvedCommand, options: list[dict[str, Any]]) -> list[dict[str, Any]]:
        names = list(cmd.path[1:])
        if not names:
            return options
        nested: list[dict[str, Any]] = [{"name": names[-1], "type": 1, "options": options}]
        for group in reversed(names[:-1]):
            nested = [{"name": group, "type": 2, "options": nested}]
        return nested

    def command_data(
        self,
        cmd: ResolvedCommand,
        values: Mapping[str, Any],
        *,
        user_id: int,
        channel_id: int,
        focused: tuple[str, str] | None = None,
    ) -> dict[str, Any]:
        mapped = self._map_kwargs(cmd, values)
        if focused is not None:
            name = self._map_kwargs(cmd, {focused[0]: None}).popitem()[0]
            focused = (name, focused[1])
        resolved = Resolved()
        options: list[dict[str, Any]] = []
        for schema in cmd.leaf_schema.get("options", []):
            name = schema["name"]
            if focused is not None and name == focused[0]:
                if not schema.get("autocomplete"):
                    raise HarnessError(
                        f"option {name!r} of /{' '.join(cmd.path)} has no autocomplete"
                    )
                options.append(
                    {"name": name, "type": schema["type"], "value": focused[1], "focused": True}
                )
                continue
            if name not in mapped:
                if schema.get("required") and focused is None:
                    raise HarnessError(f"/{' '.join(cmd.path)}: required option {name!r} missing")
                continue
            value = self._option_value(
                schema,
                mapped[name],
                resolved=resolved if focused is None else Resolved(),
                user_id=user_id,
                channel_id=channel_id,
            )
            options.append({"name": name, "type": schema["type"], "value": value})
        data: dict[str, Any] = {
            "id": str(self.command_id(cmd.scope, cmd.path[0])),
            "name": cmd.path[0],
            "type": 1,
            "options": self._nest(cmd, options),
        }
        if cmd.scope is not None:
            data["guild_id"] = str(cmd.scope)
        if resolved:
            data["resolved"] = resolved.data
        return data

    def user_command_data(
        self, name: str, target_id: int, *, user_id: int, channel_id: int
    ) -> dict[str, Any]:
        """The data of a user context-menu command as Discord sends it (type 2, the
        target's id and his user and member objects resolved); the menu must be in the
        tree, in the guild's scope or global, and available in the channel."""
        guild_id = self.guild_of(channel_id)
        kind = discord.AppCommandType.user
        menu: Any = None
        scope: int | None = None
        if guild_id is not None:
            menu = self.tree.get_command(name, guild=discord.Object(guild_id), type=kind)
            scope = guild_id if menu is not None else None
        if menu is None:
            menu = self.tree.get_command(name, type=kind)
        if menu is None:
            known = sorted(c.name for c in self.tree.get_commands(type=kind))
            raise HarnessError(f"no user command {name!r} in the tree (has {known})")
        schema = menu.to_dict(self.tree)
        contexts = schema.get("contexts")
        if guild_id is None and (contexts and 1 not in contexts):
            raise HarnessError(f"user command {name!r} is not available in DMs")
        resolved = Resolved()
        self.add_resolved_user(resolved, target_id, guild_id, channel_id)
        data: dict[str, Any] = {
            "id": str(self.command_id(scope, name, 2)),
            "name": name,
            "type": 2,
            "target_id": str(target_id),
            "resolved": resolved.data,
        }
        if scope is not None:
            data["guild_id"] = str(scope)
        return data

    def _check_range(self, schema: Mapping[str, Any], value: float | int, label: str) -> None:
        lo, hi = schema.get("min_value"), schema.get("max_value")
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            raise HarnessError(
                f"{label}={value!r} outside [{lo}, {hi}]; the Discord client refuses it"
            )

    def _option_value(
        self,
        schema: Mapping[str, Any],
        value: Any,
        *,
        resolved: Resolved,
        user_id: int,
        channel_id: int,
    ) -> Any:
        otype = int(schema["type"])
        label = f"option {schema['name']!r} ({OPTION_TYPE_NAMES.get(otype, otype)})"
        if isinstance(value, app_commands.Choice):
            value = value.value
        if isinstance(value, enum.Enum):
            value = value.value
        out: Any
        if otype == 3:
            out = str(value)
            lo, hi = schema.get("min_length"), schema.get("max_length", 6000)
            if (lo is not None and len(out) < lo) or (hi is not None and len(out) > hi):
                raise HarnessError(f"{label} length {len(out)} outside [{lo}, {hi}]")
        elif otype == 4:
            if isinstance(value, bool) or not isinstance(value, int):
                raise HarnessError(f"{label} expects an int, got {value!r}")
            self._check_range(schema, value, label)
            out = value
        elif otype == 10:
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise HarnessError(f"{label} expects a number, got {value!r}")
            self._check_range(schema, value, label)
            out = value
        elif otype == 5:
            if not isinstance(value, bool):
                raise HarnessError(f"{label} expects a bool, got {value!r}")
            out = value
        elif otype in (6, 7, 8, 9):
            out = str(self._resolve_entity(otype, schema, value, resolved, channel_id))
        elif otype == 11:
            out = str(self._resolve_attachment(value, resolved))
        else:
            raise HarnessError(f"unsupported option type {otype}")
        choices = schema.get("choices")
        if choices and out not in [c["value"] for c in choices]:
            raise HarnessError(
                f"{label}={out!r} is not one of the declared choices "
                f"{[c['value'] for c in choices]}"
            )
        return out

    def _resolve_entity(
        self, otype: int, schema: Mapping[str, Any], value: Any, resolved: Resolved, channel_id: int
    ) -> int:
        guild_id = self.guild_of(channel_id)
        ident = sid(value)
        is_role = guild_id is not None and ident in self.world.guild(guild_id).roles
        if otype == 8 or (otype == 9 and is_role):
            if guild_id is None or not is_role:
                raise HarnessError(f"{ident} is not a role of the guild")
            resolved.add("roles", ident, clone(self.world.role(guild_id, ident)))
        elif otype in (6, 9):
            self.add_resolved_user(resolved, ident, guild_id, channel_id)
        elif otype == 7:
            ch = self.world.channel(ident)
            allowed = schema.get("channel_types")
            if allowed and ch["type"] not in allowed:
                raise HarnessError(
                    f"channel {ident} has type {ch['type']}, option allows {allowed}"
                )
            self.add_resolved_channel(resolved, ident)
        return ident

    def add_resolved_user(
        self, resolved: Resolved, user_id: int, guild_id: int | None, channel_id: int
    ) -> None:
        resolved.add("users", user_id, self.world.user_payload(user_id))
        if guild_id is not None and self.world.is_member(guild_id, user_id):
            resolved.add(
                "members",
                user_id,
                self.world.member_payload(
                    guild_id, user_id, with_user=False, channel_id=channel_id
                ),
            )

    def add_resolved_channel(self, resolved: Resolved, channel_id: int) -> None:
        ch = self.world.channel_payload(channel_id)
        entry: dict[str, Any] = {
            k: ch[k]
            for k in (
                "id",
                "type",
                "name",
                "parent_id",
                "guild_id",
                "thread_metadata",
                "topic",
                "nsfw",
                "position",
            )
            if k in ch
        }
        entry["permissions"] = str(self.world.bot_channel_permissions(channel_id))
        if ch["type"] in THREAD_TYPES:
            entry.setdefault("thread_metadata", ch.get("thread_metadata"))
        resolved.add("channels", channel_id, entry)

    def _resolve_attachment(self, value: Any, resolved: Resolved) -> int:
        if isinstance(value, tuple) and len(value) == 2:
            filename, data = value
        elif isinstance(value, discord.File):
            filename, data = value.filename or "file", value.fp.read()
        else:
            raise HarnessError("attachment options take (filename, bytes) or discord.File")
        aid = self.world.next_id()
        url = f"https://cdn.discordapp.com/ephemeral-attachments/{aid}/{filename}"
        resolved.add(
            "attachments",
            aid,
            {"id": str(aid), "filename": filename, "size": len(data), "url": url, "proxy_url": url},
        )
        return aid

    # ------------------------------------------------------------------ components

    def component_data(
        self,
        message_id: int,
        custom_id: str | None,
        values: Sequence[Any] | None,
        *,
        channel_id: int,
    ) -> dict[str, Any]:
        msg = self.world.message_record(message_id)
        dispatchable = [
            c
            for c in walk_components(msg.components)
            if c.get("custom_id") and (c.get("type") in SELECT_TYPES or c.get("type") == 2)
        ]
        if custom_id is None:
            if len(dispatchable) != 1:
                ids = [c["custom_id"] for c in dispatchable]
                raise HarnessError(
                    f"message {message_id} has {len(ids)} interactive components {ids}; "
                    "pass custom_id"
                )
            comp: Mapping[str, Any] = dispatchable[0]
        else:
            try:
                comp = msg.component(custom_id)
            except KeyError as exc:
                raise HarnessError(str(exc.args[0])) from None
        ctype = int(comp["type"])
        if comp.get("disabled"):
            raise HarnessError(
                f"component {comp.get('custom_id')!r} is disabled; it cannot be clicked"
            )
        data: dict[str, Any] = {"custom_id": comp["custom_id"], "component_type": ctype}
        if ctype == 2:
            if int(comp.get("style", 1)) in (5, 6):
                raise HarnessError("link/premium buttons do not create interactions")
            if values:
                raise HarnessError("buttons take no values")
            return data
        if ctype not in SELECT_TYPES:
            raise HarnessError(f"component type {ctype} is not interactive")
        chosen = list(values or [])
        lo, hi = int(comp.get("min_values", 1)), int(comp.get("max_values", 1))
        if not lo <= len(chosen) <= hi:
            raise HarnessError(
                f"select {comp['custom_id']!r} needs between {lo} and {hi} values, "
                f"got {len(chosen)}"
            )
        if ctype == 3:
            options = [o["value"] for o in comp.get("options", [])]
            for v in chosen:
                if str(v) not in options:
                    raise HarnessError(
                        f"{v!r} is not an option of select {comp['custom_id']!r}: {options}"
                    )
            data["values"] = [str(v) for v in chosen]
            return data
        resolved = Resolved()
        guild_id = self.guild_of(channel_id)
        ids = [sid(v) for v in chosen]
        for ident in ids:
            if ctype == 5 or (
                ctype == 7 and (guild_id is None or ident not in self.world.guild(guild_id).roles)
            ):
                self.add_resolved_user(resolved, ident, guild_id, channel_id)
            elif ctype in (6, 7):
                if guild_id is None:
                    raise HarnessError("role selects need a guild")
                resolved.add("roles", ident, clone(self.world.role(guild_id, ident)))
            else:
                self.add_resolved_channel(resolved, ident)
        data["values"] = [str(i) for i in ids]
        data["resolved"] = resolved.data
        return data

    # ------------------------------------------------------------------ modals

    def modal_data(
        self, modal: OpenModal, fields: Mapping[str, Any], *, channel_id: int
    ) -> dict[str, Any]:
        remaining = dict(fields)
        resolved = Resolved()
        guild_id = self.guild_of(channel_id)

        def submit(comp: Mapping[str, Any]) -> dict[str, Any]:
            ctype = int(comp["type"])
            cid = comp.get("custom_id")
            out: dict[str, Any] = {"type": ctype, "id": comp.get("id", 0)}
            if cid is not None:
                out["custom_id"] = cid
            if ctype == 4:
                value = str(remaining.pop(str(cid), comp.get("value") or ""))
                required = comp.get("required", True)
                if required and not value:
                    raise HarnessError(f"modal text input {cid!r} is required")
                lo, hi = comp.get("min_length"), comp.get("max_length")
                if value and (
                    (lo is not None and len(value) < lo) or (hi is not None and len(value) > hi)
                ):
                    raise HarnessError(
                        f"modal text input {cid!r}: length {len(value)} outside [{lo}, {hi}]"
                    )
                out["value"] = value
            elif ctype in SELECT_TYPES:
                chosen = remaining.pop(str(cid), [])
                chosen = [chosen] if isinstance(chosen, str | int) else list(chosen)
                lo, hi = int(comp.get("min_values", 1)), int(comp.get("max_values", 1))
                if not chosen and comp.get("required", True):
                    raise HarnessError(f"modal select {cid!r} is required")
                if chosen and not lo <= len(chosen) <= hi:
                    raise HarnessError(f"modal select {cid!r} takes {lo}..{hi} values")
                options = [o["value"] for o in comp.get("options", [])]
                if ctype == 3 and any(str(v) not in options for v in chosen):
                    raise HarnessError(f"modal select {cid!r}: values must be among {options}")
                if ctype in ENTITY_SELECT_TYPES:
                    for v in chosen:
                        ident = sid(v)
                        if ctype == 8:
                            self.add_resolved_channel(resolved, ident)
                        elif guild_id is not None and ident in self.world.guild(guild_id).roles:
                            resolved.add("roles", ident, clone(self.world.role(guild_id, ident)))
                        else:
                            self.add_resolved_user(resolved, ident, guild_id, channel_id)
                    chosen = [sid(v) for v in chosen]
                out["values"] = [str(v) for v in chosen]
            elif cid is not None and str(cid) in remaining:
                value = remaining.pop(str(cid))
                out["values" if isinstance(value, list | tuple) else "value"] = value
            return out

        components: list[dict[str, Any]] = []
        for comp in modal.data.get("components", []):
            ctype = int(comp["type"])
            if ctype == 1:
                components.append(
                    {
                        "type": 1,
                        "id": comp.get("id", 0),
                        "components": [submit(c) for c in comp["components"]],
                    }
                )
            elif ctype == 18:
                components.append(
                    {"type": 18, "id": comp.get("id", 0), "component": submit(comp["component"])}
                )
            elif ctype == 10:
                components.append({"type": 10, "id": comp.get("id", 0)})
        if remaining:
            raise HarnessError(f"modal {modal.custom_id!r} has no fields {sorted(remaining)}")
        data: dict[str, Any] = {"custom_id": modal.custom_id, "components": components}
        if resolved:
            data["resolved"] = resolved.data
        return data
