"""The :class:`Harness`: logs a real bot into the fake Discord and drives interactions."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Self

import discord
from discord import app_commands
from discord.http import Route

from . import permissions as perms
from .errors import (
    GatewayEventError,
    HarnessError,
    InteractionNotAcknowledged,
    InteractionTimeout,
    UnhandledInteractionError,
    UnhandledRouteError,
)
from .gateway import FakeGatewayWebSocket, GatewayBridge
from .payloads import PayloadBuilder
from .routes import RestApi
from .transport import CURRENT_ORIGIN, Captured, FakeDiscord, FakeSession
from .world import (
    CATEGORY,
    DM,
    TEXT,
    ChannelRef,
    ChannelView,
    FakeWorld,
    GuildRef,
    InteractionRecord,
    MemberRef,
    MessageRecord,
    OpenModal,
    RoleRef,
    Snowflakeish,
    UserRef,
    VisibilityReport,
    clone,
    sid,
)

OverwriteSpec = (
    discord.PermissionOverwrite | tuple[int | discord.Permissions, int | discord.Permissions]
)
LocaleLike = str | discord.Locale


def _locale(value: LocaleLike | None, default: str) -> str:
    if value is None:
        return default
    return value.value if isinstance(value, discord.Locale) else str(value)


def _bits(value: int | discord.Permissions | None) -> int:
    return perms.as_bits(value)


def _loop_idle(loop: asyncio.AbstractEventLoop) -> bool:
    """True when no callback is ready and no timer is due: another iteration could only
    pick up work that needs real time to pass (threads, I/O, later timers), which a
    fixed number of iterations never guaranteed either.  Stopping there saves most of
    ``settle``'s iterations when a test drives the bot one interaction at a time.  An
    event loop without asyncio's internals (``_ready``/``_scheduled``) is never idle."""
    ready = getattr(loop, "_ready", None)
    scheduled = getattr(loop, "_scheduled", None)
    if ready is None or scheduled is None or ready:
        return False
    return not scheduled or scheduled[0].when() > loop.time()


# ------------------------------------------------------------------------ results


@dataclass
class _ErrorCollector:
    """Exceptions discord.py logs as "Ignoring exception in ..." for one dispatch
    (records logged from another harness dispatch's tasks are ignored)."""

    origin: int | None = None
    errors: list[BaseException] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)

    def wants(self, source: int | None) -> bool:
        return source is None or self.origin is None or source == self.origin


class _ErrorRouter(logging.Handler):
    """The one handler a harness puts on the ``discord`` logger while dispatches are in
    flight; it hands each error record to the collectors that want it.  (A handler per
    dispatch cost a lock, a weakref and two logger edits per interaction.)"""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.collectors: list[_ErrorCollector] = []

    def emit(self, record: logging.LogRecord) -> None:
        if not record.exc_info or record.exc_info[1] is None:
            return
        source = CURRENT_ORIGIN.get()
        for collector in self.collectors:
            if collector.wants(source):
                collector.errors.append(record.exc_info[1])
                collector.messages.append(record.getMessage())


@dataclass
class EventResult:
    """Outcome of anything the harness dispatched (interaction or gateway event)."""

    requests: list[Captured]
    errors: list[BaseException]
    #: tasks spawned while handling that were still running afterwards (view timeouts,
    #: ``asyncio.create_task`` from the bot...); not awaited by the harness.
    background: list[asyncio.Task[Any]] = field(default_factory=list)
    #: directly spawned handler tasks not awaited because of ``wait=False``.
    pending: list[asyncio.Task[Any]] = field(default_factory=list)
    #: harness dispatch id (see ``Captured.origin``)
    origin: int | None = None

    @property
    def rest_requests(self) -> list[Captured]:
        """Requests other than the interaction callback / webhook follow-ups."""
        return [r for r in self.requests if r.kind == "rest"]

    def requests_to(self, route: str | None = None, **params: int | str) -> list[Captured]:
        return [r for r in self.requests if r.matches(route, **params)]


@dataclass
class InteractionResult(EventResult):
    """What the bot did in response to one interaction.

    Message state (``original``/``followups``) is read live from the fake world, so it
    reflects later edits too; ``requests`` is the snapshot made during the interaction.
    """

    payload: dict[str, Any] = field(default_factory=dict)
    record: InteractionRecord | None = None
    world: FakeWorld | None = None
    label: str = ""
    expect_response: bool | None = None

    # -- response -------------------------------------------------------------
    @property
    def interaction_id(self) -> int:
        return int(self.payload["id"])

    @property
    def responded(self) -> bool:
        return bool(self.record and self.record.responded)

    @property
    def response_type(self) -> int | None:
        """Callback type: 4 message, 5 deferred (thinking), 6 deferred update, 7 update,
        8 autocomplete result, 9 modal."""
        return self.record.response_type if self.record else None

    @property
    def response_data(self) -> dict[str, Any]:
        return dict(self.record.response_data or {}) if self.record else {}

    @property
    def deferred(self) -> bool:
        return self.response_type in (5, 6)

    @property
    def callback(self) -> Captured | None:
        return next(
            (r for r in self.requests if r.kind == "interaction" and 200 <= r.status < 300),
            None,
        )

    # -- messages -------------------------------------------------------------
    @property
    def original(self) -> MessageRecord | None:
        """The original response message (for type 6/7: the component's message)."""
        if self.record is None or self.record.original_message_id is None or self.world is None:
            return None
        return self.world.message_record(self.record.original_message_id)

    @property
    def followups(self) -> list[MessageRecord]:
        if self.record is None or self.world is None:
            return []
        return [self.world.message_record(m) for m in self.record.followup_ids]

    @property
    def messages(self) -> list[MessageRecord]:
        first = [self.original] if self.original is not None else []
        return first + self.followups

    @property
    def message(self) -> MessageRecord | None:
        """The primary message: original response, else first follow-up."""
        msgs = self.messages
        return msgs[0] if msgs else None

    @property
    def content(self) -> str:
        return self.message.content if self.message else ""

    @property
    def embeds(self) -> list[dict[str, Any]]:
        return self.message.embeds if self.message else []

    @property
    def components(self) -> list[dict[str, Any]]:
        return self.message.components if self.message else []

    @property
    def flags(self) -> int:
        return self.message.flags if self.message else 0

    @property
    def ephemeral(self) -> bool:
        """``flags & 64`` of the primary message (False for modals/autocomplete)."""
        return bool(self.flags & 64)

    @property
    def text(self) -> str:
        """Content + embed text of the original response and all follow-ups."""
        return "\n".join(m.text for m in self.messages if m.text)

    @property
    def custom_ids(self) -> list[str]:
        return self.message.custom_ids if self.message else []

    # -- other callback kinds --------------------------------------------------
    @property
    def choices(self) -> list[app_commands.Choice[Any]]:
        """Autocomplete choices offered (callback type 8)."""
        if self.response_type != 8:
            return []
        return [
            app_commands.Choice(name=c["name"], value=c["value"])
            for c in self.response_data.get("choices", [])
        ]

    @property
    def modal(self) -> dict[str, Any] | None:
        """The modal shown (callback type 9): ``{"custom_id", "title", "components"}``."""
        return self.response_data if self.response_type == 9 else None


# ------------------------------------------------------------------------ harness


class Harness:
    """Drive a real ``discord.Client``/``commands.Bot`` against a fake Discord.

    See the package docstring (``tests/harness/__init__.py``) for a walkthrough.
    """

    def __init__(
        self,
        bot: discord.Client,
        *,
        bot_name: str = "HarnessBot",
        strict_routes: bool = True,
        raise_errors: bool = True,
        require_response: bool = True,
        timeout: float = 5.0,
        retry_sleep_scale: float = 0.0,
        dispatch_ready: bool = True,
        settle_rounds: int = 10,
    ) -> None:
        self.bot = bot
        self.world = FakeWorld(bot_name=bot_name, intents=bot._connection._intents)
        self.fake = FakeDiscord(strict=strict_routes, limits=self.world.ratelimits)
        self.api = RestApi(self.world)
        self.api.install(self.fake)
        self.payloads = PayloadBuilder(self.world, bot)
        self.raise_errors = raise_errors
        self.require_response = require_response
        self.timeout = timeout
        self.retry_sleep_scale = retry_sleep_scale
        self.dispatch_ready = dispatch_ready
        self.settle_rounds = settle_rounds
        self.gateway: GatewayBridge | None = None
        self.ws: FakeGatewayWebSocket | None = None
        self._default_guild: GuildRef | None = None
        self._started = False
        self._seen_unhandled = 0
        self._seen_gateway_errors = 0
        self._collectors: list[list[asyncio.Task[Any]]] = []
        self._error_router = _ErrorRouter()
        self._spans: dict[int, list[int | None]] = {}
        self._factory: tuple[asyncio.AbstractEventLoop, Any, Any] | None = None

    # ------------------------------------------------------------------ lifecycle

    async def __aenter__(self) -> Self:
        try:
            await self.start()
        except BaseException:
            await self.close()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def start(self, token: str = "harness.fake.token") -> Self:
        """Install the fake transport, ``login`` (runs ``setup_hook``) and fire READY."""
        http = self.bot.http
        session = FakeSession(self.fake)

        async def static_login(tok: str) -> Any:
            # HTTPClient.static_login minus the real aiohttp.ClientSession
            http._HTTPClient__session = session  # type: ignore[attr-defined]
            http._global_over = asyncio.Event()
            http._global_over.set()
            http.token = tok
            return await http.request(Route("GET", "/users/@me"))

        http.static_login = static_login  # type: ignore[method-assign,assignment]
        self.fake.install_retry_clock(self.retry_sleep_scale)
        self._budget_on_fake_clock()
        self._install_task_factory()
        state = self.bot._connection
        self.gateway = GatewayBridge(state, self.world)
        self.world.listeners.append(self.gateway)
        await self._run(lambda: None, starter=lambda: self.bot.login(token), label="login")
        self._budget_on_fake_clock()  # a budget set up by setup_hook (an extension's)
        self.ws = FakeGatewayWebSocket(self.fake, self.world, state)
        self.bot.ws = self.ws  # type: ignore[assignment]
        self._started = True
        if self.dispatch_ready:
            state.guild_ready_timeout = 0.0

            async def ready() -> None:
                state.parse_ready(
                    {
                        "v": 10,
                        "user": self.world.bot_user_payload(),
                        "guilds": [],
                        "session_id": "harness-session",
                        "resume_gateway_url": "wss://gateway.invalid",
                        "application": {"id": str(self.world.application_id), "flags": 0},
                    }  # type: ignore[typeddict-item]
                )
                await asyncio.wait_for(self.bot.wait_until_ready(), self.timeout)

            await self._run(lambda: None, starter=ready, label="READY")
        return self

    def _budget_on_fake_clock(self) -> None:
        """A bot keeping its own request budget (an object at ``bot.budget`` with
        ``clock`` and ``skip``, like cogs/delivery/budget.py's RateBudget) waits as
        discord.py does here: when the harness skips discord.py's waits
        (``retry_sleep_scale`` 0), the budget skips its own too and moves the fake's
        clock instead, so both sides of the rate limits see the same time."""
        budget = getattr(self.bot, "budget", None)
        if budget is None or not hasattr(budget, "skip") or self.retry_sleep_scale:
            return
        clock = self.fake.limits.clock
        budget.clock = clock
        budget.skip = clock.at_least

    async def close(self) -> None:
        try:
            if self._started:
                await self.bot.close()
        finally:
            self.fake.uninstall_retry_clock()
            self._uninstall_task_factory()
            if self.gateway in self.world.listeners:
                self.world.listeners.remove(self.gateway)
            self._started = False

    # ------------------------------------------------------------------ task tracking

    def _install_task_factory(self) -> None:
        """One loop-wide factory for the harness lifetime; every running dispatch
        registers a list and receives the tasks created while it is active."""
        if self._factory is not None:
            return
        loop = asyncio.get_running_loop()
        previous = loop.get_task_factory()
        collectors = self._collectors

        def factory(lp: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any) -> asyncio.Future[Any]:
            if previous is not None:
                task = previous(lp, coro, **kwargs)
            else:
                task = asyncio.Task(coro, loop=lp, **kwargs)
            if isinstance(task, asyncio.Task):
                for spawned in collectors:
                    spawned.append(task)
            return task

        loop.set_task_factory(factory)
        self._factory = (loop, factory, previous)

    def _uninstall_task_factory(self) -> None:
        if self._factory is None:
            return
        loop, factory, previous = self._factory
        if not loop.is_closed() and loop.get_task_factory() is factory:
            loop.set_task_factory(previous)
        self._factory = None

    @contextlib.contextmanager
    def _track_tasks(self) -> Iterator[list[asyncio.Task[Any]]]:
        self._install_task_factory()
        spawned: list[asyncio.Task[Any]] = []
        self._collectors.append(spawned)
        try:
            yield spawned
        finally:
            self._collectors.remove(spawned)

    @contextlib.contextmanager
    def _collect_errors(self, origin: int | None = None) -> Iterator[_ErrorCollector]:
        """Collect the bot's logged errors for one dispatch; the shared router is on the
        ``discord`` logger only while some dispatch is collecting."""
        collector = _ErrorCollector(origin)
        router = self._error_router
        if not router.collectors:
            logging.getLogger("discord").addHandler(router)
        router.collectors.append(collector)
        try:
            yield collector
        finally:
            router.collectors.remove(collector)
            if not router.collectors:
                logging.getLogger("discord").removeHandler(router)

    async def _wait(
        self, tasks: Sequence[asyncio.Task[Any]], label: str, record: InteractionRecord | None
    ) -> None:
        if not tasks:
            return
        _, pending = await asyncio.wait(tasks, timeout=self.timeout)
        if pending:
            details = "\n".join(f"  - {t.get_name()}: {t.get_coro()!r}" for t in pending)
            for t in pending:
                t.cancel()
            responded = f"(responded={record.responded})" if record else ""
            raise InteractionTimeout(
                f"{label}: {len(pending)} task(s) still running after {self.timeout}s "
                f"{responded}\n{details}\nIf the handler legitimately waits (bot.wait_for...), "
                "pass wait=False and later `await h.finish(result)`."
            )

    @staticmethod
    def _task_errors(tasks: Sequence[asyncio.Task[Any]]) -> list[BaseException]:
        out: list[BaseException] = []
        for task in tasks:
            if task.done() and not task.cancelled():
                exc = task.exception()
                if exc is not None:
                    out.append(exc)
        return out

    async def _run(
        self,
        dispatch: Callable[[], None],
        *,
        starter: Callable[[], Any] | None = None,
        label: str = "dispatch",
        record: InteractionRecord | None = None,
        wait: bool = True,
    ) -> EventResult:
        """Call ``dispatch`` (sync, e.g. a ``parse_*``), await the tasks it spawned
        directly (unless ``wait=False``), then let the loop settle."""
        origin = len(self._spans) + 1
        self._spans[origin] = [len(self.fake.requests), None]
        with self._collect_errors(origin) as collector, self._track_tasks() as spawned:
            token = CURRENT_ORIGIN.set(origin)
            try:
                if starter is not None:
                    spawned.append(asyncio.ensure_future(starter()))
                dispatch()
            finally:
                CURRENT_ORIGIN.reset(token)
            direct = list(spawned)
            if wait:
                await self._wait(direct, label, record)
            await self.settle()
            errors = list(collector.errors) + self._task_errors(direct)
            pending = [t for t in direct if not t.done()]
            background = [t for t in spawned if not t.done() and t not in pending]
        if not pending:
            self._spans[origin][1] = len(self.fake.requests)
        result = EventResult(self._requests_of(origin), errors, background, pending, origin)
        self._check(result, label)
        return result

    def _requests_of(self, origin: int) -> list[Captured]:
        """Requests made while ``origin`` was in flight, minus those attributed to other
        dispatches in flight at the same time (concurrent interactions)."""
        start, end = self._spans[origin]
        assert start is not None
        stop = len(self.fake.requests) if end is None else end

        def overlaps(other: int | None) -> bool:
            span = self._spans.get(other) if other is not None else None
            if span is None:
                return False
            s, e = span
            return s is not None and s < stop and (e is None or e > start)

        verdict: dict[int | None, bool] = {origin: False}
        out: list[Captured] = []
        for r in self.fake.requests[start:stop]:
            other = verdict.get(r.origin)
            if other is None:
                other = verdict[r.origin] = overlaps(r.origin)
            if not other:
                out.append(r)
        return out

    def _check(self, result: EventResult, label: str) -> None:
        if self.gateway is not None and len(self.gateway.errors) > self._seen_gateway_errors:
            new = self.gateway.errors[self._seen_gateway_errors :]
            self._seen_gateway_errors = len(self.gateway.errors)
            raise GatewayEventError("\n".join(new))
        if len(self.fake.unhandled) > self._seen_unhandled:
            new_routes = self.fake.unhandled[self._seen_unhandled :]
            self._seen_unhandled = len(self.fake.unhandled)
            if self.fake.strict:
                names = ", ".join(sorted({r.route or f"{r.method} {r.path}" for r in new_routes}))
                raise UnhandledRouteError(
                    f"{label}: the bot called endpoint(s) the fake Discord does not implement: "
                    f"{names}. Add a handler with h.fake.add_handler(route, fn) or "
                    "h.fake.respond(route, body)."
                )
        if self.raise_errors and result.errors:
            first = result.errors[0]
            raise UnhandledInteractionError(
                f"{label}: unhandled exception in the bot: {type(first).__name__}: {first}",
                result.errors,
            ) from first

    def _check_ack(
        self, result: InteractionResult, expect_response: bool | None, label: str
    ) -> None:
        must = self.require_response if expect_response is None else expect_response
        if must and not result.responded:
            raise InteractionNotAcknowledged(
                f"{label}: the bot never responded to the interaction "
                "(Discord shows 'This interaction failed')"
            )

    async def _interact(
        self,
        payload: dict[str, Any],
        record: InteractionRecord,
        *,
        expect_response: bool | None,
        label: str,
        wait: bool = True,
    ) -> InteractionResult:
        self.world.interactions[record.token] = record
        state = self.bot._connection
        base = await self._run(
            lambda: state.parse_interaction_create(clone(payload)),  # type: ignore[arg-type]
            label=label,
            record=record,
            wait=wait,
        )
        result = InteractionResult(
            requests=base.requests,
            errors=base.errors,
            background=base.background,
            pending=base.pending,
            origin=base.origin,
            payload=payload,
            record=record,
            world=self.world,
            label=label,
            expect_response=expect_response,
        )
        if wait:
            self._check_ack(result, expect_response, label)
        return result

    async def finish(self, result: InteractionResult) -> InteractionResult:
        """Await an interaction started with ``wait=False`` (e.g. one blocked in
        ``bot.wait_for``) and run the usual checks; ``result.requests`` is refreshed."""
        with self._collect_errors(result.origin) as collector, self._track_tasks() as spawned:
            await self._wait(result.pending, result.label, result.record)
            await self.settle()
            errors = list(collector.errors) + self._task_errors(result.pending)
            result.background.extend(t for t in spawned if not t.done())
        result.pending = []
        if result.origin is not None:
            self._spans[result.origin][1] = len(self.fake.requests)
            result.requests = self._requests_of(result.origin)
        result.errors = result.errors + errors
        self._check(EventResult([], errors), result.label)
        self._check_ack(result, result.expect_response, result.label)
        return result

    # ------------------------------------------------------------------ world building

    def _emit_roles_moved(self, guild_id: int, before: Mapping[int, int]) -> None:
        for rid, role in self.world.guild(guild_id).roles.items():
            if rid in before and before[rid] != role["position"]:
                self.world.emit("GUILD_ROLE_UPDATE", {"guild_id": str(guild_id), "role": role})

    def add_guild(
        self,
        name: str = "Test Guild",
        *,
        locale: LocaleLike = "en-US",
        owner: Snowflakeish | None = None,
        bot_permissions: int | discord.Permissions = perms.DEFAULT_BOT,
        everyone_permissions: int | discord.Permissions = perms.DEFAULT_EVERYONE,
    ) -> GuildRef:
        """Create a guild (with #general, @everyone, the bot member + its managed role)
        and deliver GUILD_CREATE. The first guild becomes the default one."""
        ref = self.world.add_guild(
            name,
            locale=_locale(locale, "en-US"),
            owner_id=sid(owner) if owner is not None else None,
            bot_permissions=_bits(bot_permissions),
            everyone_permissions=_bits(everyone_permissions),
        )
        self.world.emit("GUILD_CREATE", self.world.guild_payload(ref.id, gateway=True))
        if self._default_guild is None:
            self._default_guild = ref
        return ref

    @property
    def default_guild(self) -> GuildRef:
        if self._default_guild is None:
            self._default_guild = self.add_guild()
        return self._default_guild

    def add_user(self, name: str, *, locale: LocaleLike = "en-US", bot: bool = False) -> UserRef:
        """A Discord user (not in any guild). ``locale`` is their client locale."""
        return self.world.add_user(name, locale=_locale(locale, "en-US"), bot=bot)

    def add_member(
        self,
        name_or_user: str | Snowflakeish,
        guild: Snowflakeish | None = None,
        *,
        roles: Sequence[Snowflakeish] = (),
        nick: str | None = None,
        locale: LocaleLike = "en-US",
    ) -> MemberRef:
        """Add a user (created if given a name) to a guild and deliver GUILD_MEMBER_ADD."""
        gid = sid(guild) if guild is not None else self.default_guild.id
        if isinstance(name_or_user, str) and not name_or_user.isdigit():
            user = self.world.add_user(name_or_user, locale=_locale(locale, "en-US"))
            uid = user.id
        else:
            uid = sid(name_or_user)
        ref = self.world.add_member(gid, uid, roles=[sid(r) for r in roles], nick=nick)
        data = self.world.member_payload(gid, uid)
        data["guild_id"] = str(gid)
        self.world.emit("GUILD_MEMBER_ADD", data)
        return ref

    def remove_member(self, user: Snowflakeish, guild: Snowflakeish | None = None) -> None:
        gid = sid(guild) if guild is not None else self.default_guild.id
        uid = sid(user)
        del self.world.guild(gid).members[uid]
        self.world.emit(
            "GUILD_MEMBER_REMOVE", {"guild_id": str(gid), "user": self.world.user_payload(uid)}
        )

    def add_role(
        self,
        name: str,
        guild: Snowflakeish | None = None,
        *,
        permissions: int | discord.Permissions = 0,
        position: int | None = None,
        hoist: bool = False,
        mentionable: bool = False,
    ) -> RoleRef:
        """Create a role (default position 1: just above @everyone, below the bot)."""
        gid = sid(guild) if guild is not None else self.default_guild.id
        before = {rid: r["position"] for rid, r in self.world.guild(gid).roles.items()}
        ref = self.world.add_role(
            gid,
            name,
            permissions=_bits(permissions),
            position=position,
            hoist=hoist,
            mentionable=mentionable,
        )
        self.world.emit(
            "GUILD_ROLE_CREATE", {"guild_id": str(gid), "role": self.world.role(gid, ref.id)}
        )
        self._emit_roles_moved(gid, before)
        return ref

    def give_role(
        self, user: Snowflakeish, role: Snowflakeish, guild: Snowflakeish | None = None
    ) -> None:
        gid = sid(guild) if guild is not None else self.default_guild.id
        member = self.world.member(gid, sid(user))
        self.world.role(gid, sid(role))
        if str(sid(role)) not in member["roles"]:
            member["roles"].append(str(sid(role)))
        self._emit_member_update(gid, sid(user))

    def take_role(
        self, user: Snowflakeish, role: Snowflakeish, guild: Snowflakeish | None = None
    ) -> None:
        gid = sid(guild) if guild is not None else self.default_guild.id
        member = self.world.member(gid, sid(user))
        member["roles"] = [r for r in member["roles"] if int(r) != sid(role)]
        self._emit_member_update(gid, sid(user))

    def _emit_member_update(self, gid: int, uid: int) -> None:
        data = self.world.member_payload(gid, uid)
        data["guild_id"] = str(gid)
        self.world.emit("GUILD_MEMBER_UPDATE", data)

    def set_role_permissions(
        self,
        role: Snowflakeish,
        permissions: int | discord.Permissions,
        guild: Snowflakeish | None = None,
    ) -> None:
        gid = sid(guild) if guild is not None else self.default_guild.id
        role_data = self.world.role(gid, sid(role))
        role_data["permissions"] = str(_bits(permissions))
        self.world.emit("GUILD_ROLE_UPDATE", {"guild_id": str(gid), "role": role_data})

    def set_bot_permissions(
        self, permissions: int | discord.Permissions, guild: Snowflakeish | None = None
    ) -> None:
        """Replace the permissions of the bot's managed role (what ``guild.me`` has)."""
        gid = sid(guild) if guild is not None else self.default_guild.id
        self.set_role_permissions(self.world.guild(gid).bot_role_id, permissions, gid)

    def set_everyone_permissions(
        self, permissions: int | discord.Permissions, guild: Snowflakeish | None = None
    ) -> None:
        gid = sid(guild) if guild is not None else self.default_guild.id
        self.set_role_permissions(gid, permissions, gid)

    def _overwrite_entries(
        self, guild_id: int, overwrites: Mapping[Snowflakeish, OverwriteSpec] | None
    ) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for target, spec in (overwrites or {}).items():
            tid = sid(target)
            if isinstance(spec, discord.PermissionOverwrite):
                allow, deny = (p.value for p in spec.pair())
            else:
                allow, deny = _bits(spec[0]), _bits(spec[1])
            otype = 0 if tid in self.world.guild(guild_id).roles else 1
            out.append({"id": str(tid), "type": otype, "allow": str(allow), "deny": str(deny)})
        return out

    def add_text_channel(
        self,
        name: str,
        guild: Snowflakeish | None = None,
        *,
        category: Snowflakeish | None = None,
        overwrites: Mapping[Snowflakeish, OverwriteSpec] | None = None,
        topic: str | None = None,
    ) -> ChannelRef:
        """Create a text channel (as an admin would) and deliver CHANNEL_CREATE.

        ``overwrites`` maps role/member (ref, id or discord object) to a
        ``discord.PermissionOverwrite`` or an ``(allow, deny)`` pair."""
        gid = sid(guild) if guild is not None else self.default_guild.id
        ref = self.world.add_channel(
            gid,
            name,
            TEXT,
            parent_id=sid(category) if category is not None else None,
            overwrites=self._overwrite_entries(gid, overwrites),
            topic=topic,
        )
        self.world.emit("CHANNEL_CREATE", self.world.channel_payload(ref.id))
        return ref

    def add_category(
        self,
        name: str,
        guild: Snowflakeish | None = None,
        *,
        overwrites: Mapping[Snowflakeish, OverwriteSpec] | None = None,
    ) -> ChannelRef:
        gid = sid(guild) if guild is not None else self.default_guild.id
        ref = self.world.add_channel(
            gid, name, CATEGORY, overwrites=self._overwrite_entries(gid, overwrites)
        )
        self.world.emit("CHANNEL_CREATE", self.world.channel_payload(ref.id))
        return ref

    def set_overwrite(
        self, channel: Snowflakeish, target: Snowflakeish, overwrite: OverwriteSpec | None
    ) -> None:
        """Admin-side overwrite edit (``None`` removes it); delivers CHANNEL_UPDATE."""
        cid = sid(channel)
        ch = self.world.channel(cid)
        gid = int(ch["guild_id"])
        if overwrite is None:
            self.world.remove_overwrite(cid, sid(target))
        else:
            entry = self._overwrite_entries(gid, {target: overwrite})[0]
            self.world.set_overwrite(
                cid,
                sid(target),
                type=entry["type"],
                allow=int(entry["allow"]),
                deny=int(entry["deny"]),
            )
        self.world.emit("CHANNEL_UPDATE", self.world.channel_payload(cid))

    def close_dms(self, user: Snowflakeish) -> None:
        """Make DMs to ``user`` fail with 403 50007 (user has DMs disabled)."""
        self.world.closed_dms.add(sid(user))

    # ------------------------------------------------------------------ gateway input

    async def user_message(
        self, user: Snowflakeish, channel: Snowflakeish | None, content: str, **extra: Any
    ) -> EventResult:
        """A user posts a message (MESSAGE_CREATE); awaits the bot's ``on_message`` work.

        ``channel=None`` means the user's DM with the bot."""
        uid = sid(user)
        cid = self.world.dm_channel(uid) if channel is None else sid(channel)
        ch = self.world.channel(cid)
        if ch["type"] != DM:
            have = self.world.channel_permissions(cid, uid)
            if (
                have & (perms.VIEW_CHANNEL | perms.SEND_MESSAGES)
                != perms.VIEW_CHANNEL | perms.SEND_MESSAGES
            ):
                raise HarnessError(f"user {uid} cannot send messages in channel {cid}")
        stored = self.world.create_message(cid, uid, {"content": content, **extra})
        return await self._run(
            lambda: self.world.emit("MESSAGE_CREATE", stored.payload), label=f"message from {uid}"
        )

    async def settle(self, rounds: int | None = None) -> None:
        """Let already-scheduled callbacks run: event-loop iterations (``settle_rounds``
        at most) until nothing is left to run without real time passing."""
        loop = asyncio.get_running_loop()
        for _ in range(rounds or self.settle_rounds):
            await asyncio.sleep(0)
            if _loop_idle(loop):
                break

    # ------------------------------------------------------------------ interactions

    def _target_channel(self, channel: Snowflakeish | None, user_id: int, dm: bool) -> int:
        if dm:
            return self.world.dm_channel(user_id)
        if channel is not None:
            return sid(channel)
        return self.default_guild.general_id

    def _user_locale(self, user_id: int, locale: LocaleLike | None) -> str:
        return _locale(locale, self.world.user_locales.get(user_id, "en-US"))

    async def slash(
        self,
        user: Snowflakeish,
        command: str,
        *,
        channel: Snowflakeish | None = None,
        dm: bool = False,
        locale: LocaleLike | None = None,
        options: Mapping[str, Any] | None = None,
        expect_response: bool | None = None,
        wait: bool = True,
        **kwargs: Any,
    ) -> InteractionResult:
        """Invoke ``/command`` (space separated for groups: ``"game create"``).

        Options are keyword arguments (Python parameter names or Discord option names);
        use ``options={...}`` for names that clash with this method's parameters. Values:
        str/int/float/bool, ids or refs or discord objects for user/member/role/channel,
        ``(filename, bytes)`` for attachments. ``channel`` defaults to the default
        guild's #general; ``dm=True`` runs it in the user's DM with the bot."""
        uid = sid(user)
        cid = self._target_channel(channel, uid, dm)
        guild_id = self.payloads.guild_of(cid)
        cmd = self.payloads.resolve_command(command, guild_id)
        self.payloads.check_availability(cmd, user_id=uid, channel_id=cid)
        values = {**(options or {}), **kwargs}
        data = self.payloads.command_data(cmd, values, user_id=uid, channel_id=cid)
        payload, record = self.payloads.base(
            2,
            user_id=uid,
            channel_id=cid,
            data=data,
            locale=self._user_locale(uid, locale),
            command_name=command,
        )
        return await self._interact(
            payload, record, expect_response=expect_response, label=f"/{command}", wait=wait
        )

    async def dm_slash(self, user: Snowflakeish, command: str, **kwargs: Any) -> InteractionResult:
        """``slash`` in the user's DM channel with the bot (no guild, ``interaction.user``
        is a ``discord.User``)."""
        return await self.slash(user, command, dm=True, **kwargs)

    async def user_command(
        self,
        user: Snowflakeish,
        name: str,
        target: Snowflakeish,
        *,
        channel: Snowflakeish | None = None,
        locale: LocaleLike | None = None,
        expect_response: bool | None = None,
    ) -> InteractionResult:
        """A user context-menu command (right click on a member, Apps, ``name``) run by
        ``user`` on ``target`` in ``channel`` (the default guild's #general): a type-2
        interaction whose data is of type 2 with ``target_id`` and the target resolved,
        as Discord sends it."""
        uid, tid = sid(user), sid(target)
        cid = self._target_channel(channel, uid, False)
        data = self.payloads.user_command_data(name, tid, user_id=uid, channel_id=cid)
        payload, record = self.payloads.base(
            2, user_id=uid, channel_id=cid, data=data,
            locale=self._user_locale(uid, locale), command_name=name,
        )
        return await self._interact(
            payload, record, expect_response=expect_response, label=f"menu {name!r}"
        )

    async def autocomplete(
        self,
        user: Snowflakeish,
        command: str,
        *,
        option: str,
        value: str = "",
        channel: Snowflakeish | None = None,
        dm: bool = False,
        locale: LocaleLike | None = None,
        options: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> InteractionResult:
        """Type-4 interaction: the user is typing ``value`` into ``option``.
        Returns the result; ``.choices`` holds what the bot offered."""
        uid = sid(user)
        cid = self._target_channel(channel, uid, dm)
        cmd = self.payloads.resolve_command(command, self.payloads.guild_of(cid))
        self.payloads.check_availability(cmd, user_id=uid, channel_id=cid)
        data = self.payloads.command_data(
            cmd, {**(options or {}), **kwargs}, user_id=uid, channel_id=cid, focused=(option, value)
        )
        payload, record = self.payloads.base(
            4,
            user_id=uid,
            channel_id=cid,
            data=data,
            locale=self._user_locale(uid, locale),
            command_name=command,
        )
        return await self._interact(
            payload, record, expect_response=None, label=f"autocomplete /{command} {option}"
        )

    def find_component_message(self, custom_id: str, user_id: int | None = None) -> MessageRecord:
        """Newest live message carrying ``custom_id`` that ``user_id`` can see."""
        for mid in sorted(self.world.messages, reverse=True):
            stored = self.world.messages[mid]
            if stored.deleted:
                continue
            if (
                stored.ephemeral_for is not None
                and user_id is not None
                and stored.ephemeral_for != user_id
            ):
                continue
            record = self.world.message_record(mid)
            if custom_id in record.custom_ids:
                return record
        raise HarnessError(
            f"no message in the fake world has a component with custom_id {custom_id!r}"
        )

    async def click(
        self,
        user: Snowflakeish,
        target: MessageRecord | InteractionResult | Snowflakeish | str,
        custom_id: str | None = None,
        *,
        values: Sequence[Any] | None = None,
        locale: LocaleLike | None = None,
        expect_response: bool | None = None,
        wait: bool = True,
    ) -> InteractionResult:
        """Click a button / choose select ``values`` on a message the bot sent.

        ``target`` is a :class:`MessageRecord`, an :class:`InteractionResult` (its primary
        message), a message id, or a custom_id string (newest message carrying it)."""
        uid = sid(user)
        if isinstance(target, str) and not target.isdigit():
            record = self.find_component_message(target, uid)
            custom_id = target
        elif isinstance(target, InteractionResult):
            if target.message is None:
                raise HarnessError("that interaction produced no message to click on")
            record = target.message
        elif isinstance(target, MessageRecord):
            record = self.world.message_record(target.id)
        else:
            record = self.world.message_record(sid(target))
        if record.deleted:
            raise HarnessError(f"message {record.id} was deleted")
        if record.ephemeral_for is not None and record.ephemeral_for != uid:
            raise HarnessError(f"message {record.id} is ephemeral to another user")
        cid = record.channel_id
        data = self.payloads.component_data(record.id, custom_id, values, channel_id=cid)
        payload, rec = self.payloads.base(
            3,
            user_id=uid,
            channel_id=cid,
            data=data,
            locale=self._user_locale(uid, locale),
            message_id=record.id,
        )
        return await self._interact(
            payload,
            rec,
            expect_response=expect_response,
            label=f"click {data['custom_id']}",
            wait=wait,
        )

    async def select(
        self,
        user: Snowflakeish,
        target: MessageRecord | InteractionResult | Snowflakeish | str,
        values: Sequence[Any],
        custom_id: str | None = None,
        **kwargs: Any,
    ) -> InteractionResult:
        """Alias of :meth:`click` for select menus."""
        return await self.click(user, target, custom_id, values=values, **kwargs)

    def open_modals(self, user: Snowflakeish) -> list[OpenModal]:
        return list(self.world.open_modals.get(sid(user), []))

    async def submit_modal(
        self,
        user: Snowflakeish,
        fields: Mapping[str, Any] | None = None,
        *,
        custom_id: str | None = None,
        locale: LocaleLike | None = None,
        expect_response: bool | None = None,
        wait: bool = True,
        **field_values: Any,
    ) -> InteractionResult:
        """Submit the modal the bot showed ``user`` (the latest, or by ``custom_id``).

        ``fields`` maps component custom_id -> text (or list of values for selects);
        unspecified text inputs keep their default value."""
        uid = sid(user)
        modals = self.world.open_modals.get(uid, [])
        candidates = [m for m in modals if custom_id is None or m.custom_id == custom_id]
        if not candidates:
            raise HarnessError(
                f"the bot has not shown user {uid} a modal"
                + (f" {custom_id!r}" if custom_id else "")
            )
        modal = candidates[-1]
        data = self.payloads.modal_data(
            modal, {**(fields or {}), **field_values}, channel_id=modal.channel_id
        )
        payload, rec = self.payloads.base(
            5,
            user_id=uid,
            channel_id=modal.channel_id,
            data=data,
            locale=self._user_locale(uid, locale),
            message_id=modal.message_id,
        )
        modals.remove(modal)
        return await self._interact(
            payload,
            rec,
            expect_response=expect_response,
            label=f"modal {modal.custom_id}",
            wait=wait,
        )

    # ------------------------------------------------------------------ assertions

    @property
    def requests(self) -> list[Captured]:
        """Every request captured since start (REST, interaction callbacks, webhooks)."""
        return self.fake.requests

    def requests_to(self, route: str | None = None, **params: int | str) -> list[Captured]:
        return self.fake.find(route, params=params)

    def messages_in(
        self,
        channel: Snowflakeish,
        *,
        include_ephemeral: bool = False,
        bot_only: bool = True,
        include_deleted: bool = False,
    ) -> list[MessageRecord]:
        """Messages in a channel, oldest first (default: the bot's, public, not deleted)."""
        out: list[MessageRecord] = []
        for stored in self.world.records_in(sid(channel)):
            if stored.deleted and not include_deleted:
                continue
            if stored.ephemeral_for is not None and not include_ephemeral:
                continue
            if bot_only and int(stored.payload["author"]["id"]) != self.world.bot_id:
                continue
            out.append(self.world.message_record(stored.id))
        return out

    def dms_to(self, user: Snowflakeish) -> list[MessageRecord]:
        """Messages the bot sent to ``user`` by DM."""
        cid = self.world.dm_by_user.get(sid(user))
        return [] if cid is None else self.messages_in(cid)

    def channel(self, channel: Snowflakeish) -> ChannelView:
        """A channel as stored by the fake Discord (``.overwrites``: id -> Overwrite)."""
        return self.world.channel_view(sid(channel))

    def channels(self, guild: Snowflakeish | None = None) -> list[ChannelView]:
        gid = sid(guild) if guild is not None else self.default_guild.id
        return [self.world.channel_view(c) for c in self.world.guild(gid).channel_ids]

    def channel_named(self, name: str, guild: Snowflakeish | None = None) -> ChannelView:
        found = [c for c in self.channels(guild) if c.name == name]
        if len(found) != 1:
            raise HarnessError(f"expected exactly one channel named {name!r}, found {len(found)}")
        return found[0]

    def permissions_in(self, user: Snowflakeish, channel: Snowflakeish) -> discord.Permissions:
        """Effective permissions computed by the fake Discord (independent of discord.py)."""
        return discord.Permissions(self.world.channel_permissions(sid(channel), sid(user)))

    def visible_channels(
        self, user: Snowflakeish, guild: Snowflakeish | None = None
    ) -> VisibilityReport:
        """Which channels ``user`` can VIEW / SEND in (overwrites, roles, @everyone)."""
        gid = sid(guild) if guild is not None else self.default_guild.id
        return self.world.visibility(gid, sid(user))

    def guild(self, guild: Snowflakeish | None = None) -> discord.Guild:
        """discord.py's cached ``Guild`` (what the bot sees)."""
        gid = sid(guild) if guild is not None else self.default_guild.id
        found = self.bot.get_guild(gid)
        if found is None:
            raise HarnessError(f"discord.py has no guild {gid} cached")
        return found
