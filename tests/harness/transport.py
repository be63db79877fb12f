"""Fake HTTP transport: an aiohttp-session look-alike that answers discord.py locally.

discord.py sends *every* request through ``HTTPClient._HTTPClient__session``: the REST
API (``HTTPClient.request``) and, via ``Interaction._session``, interaction callbacks and
webhook follow-ups (``AsyncWebhookAdapter.request``).  Replacing that one session object
therefore captures everything while leaving discord.py's own request code (JSON/multipart
encoding, rate-limit and retry handling, ``HTTPException``/``Forbidden``/``NotFound``
construction) in the loop.

Requests are matched against the route templates declared in discord.py's own source
(``discord/http.py``, ``discord/webhook/async_.py``) so every :class:`Captured` carries the
template (``"POST /channels/{channel_id}/messages"``) and its parameters.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import io
import json
import re
import sys
import types
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeAlias
from urllib.parse import parse_qsl, unquote, urlsplit

import aiohttp
import discord
import discord.http
import discord.webhook.async_
from multidict import CIMultiDict, CIMultiDictProxy

from .ratelimits import RateLimits, VirtualClock
from .world import ApiError

Kind: TypeAlias = Literal["rest", "interaction", "webhook", "gateway", "cdn"]

API_PREFIX = re.compile(r"^/api/v\d+")

#: Which harness dispatch caused the current code to run.  Set by the harness around each
#: dispatch; asyncio tasks copy it, so requests are attributed to the interaction/event
#: whose handlers (transitively) made them.
CURRENT_ORIGIN: contextvars.ContextVar[int | None] = contextvars.ContextVar(
    "harness_origin", default=None
)


# --------------------------------------------------------------------- routes


@dataclass(frozen=True)
class RouteTemplate:
    method: str
    path: str
    regex: re.Pattern[str]
    literals: int

    @property
    def key(self) -> str:
        return f"{self.method} {self.path}"


@functools.cache
def _compile(method: str, path: str) -> RouteTemplate:
    parts = path.strip("/").split("/")
    pattern = ""
    literals = 0
    for part in parts:
        m = re.fullmatch(r"\{(\w+)\}", part)
        if m:
            pattern += f"/(?P<{m.group(1)}>[^/]+)"
        else:
            pattern += "/" + re.escape(part)
            literals += 1
    return RouteTemplate(method, path, re.compile(f"^{pattern}$"), literals)


@functools.cache
def discord_route_templates() -> tuple[RouteTemplate, ...]:
    """All ``Route(method, path)`` templates found in the installed discord.py source."""
    found: set[tuple[str, str]] = set()
    for module in (discord.http, discord.webhook.async_):
        source = Path(module.__file__ or "").read_text(encoding="utf-8")
        for method, path in re.findall(
            r"Route\(\s*['\"]([A-Z]+)['\"],\s*['\"]([^'\"]+)['\"]", source
        ):
            found.add((method, path))
    return tuple(_compile(m, p) for m, p in sorted(found))


def match_route(
    method: str, path: str, extra: Iterable[str] = ()
) -> tuple[str | None, dict[str, int | str]]:
    """Find the most specific template for ``method path``; returns (key, params)."""
    best: tuple[RouteTemplate, re.Match[str]] | None = None
    for tpl in _candidates(method, path.count("/"), tuple(extra)):
        match = tpl.regex.match(path)
        if match and (best is None or tpl.literals > best[0].literals):
            best = (tpl, match)
    if best is None:
        return None, {}
    params: dict[str, int | str] = {}
    for name, raw in best[1].groupdict().items():
        value = unquote(raw)
        params[name] = int(value) if value.isdigit() else value
    return best[0].key, params


@functools.lru_cache(maxsize=256)
def _candidates(method: str, slashes: int, extra: tuple[str, ...]) -> tuple[RouteTemplate, ...]:
    """The templates that could match a path of this method and depth (a segment never
    holds a slash: parameters match [^/]+)."""
    every = list(discord_route_templates())
    for key in extra:
        m, p = key.split(" ", 1)
        every.append(_compile(m, p))
    return tuple(t for t in every
                 if t.method == method and t.path.rstrip("/").count("/") == slashes)


# --------------------------------------------------------------------- records


@dataclass(frozen=True)
class CapturedFile:
    filename: str
    data: bytes
    content_type: str | None = None


@dataclass
class Captured:
    """One request the bot made (one HTTP attempt; retries are separate entries)."""

    seq: int
    kind: Kind
    method: str
    path: str
    route: str | None
    params: dict[str, int | str]
    query: dict[str, str]
    json: Any
    files: list[CapturedFile] = field(default_factory=list)
    reason: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    status: int = 0
    fault: str | None = None
    origin: int | None = None
    _response: Any = field(default=None, repr=False)
    #: JSON text of the answer, decoded into ``response`` on first read (see there)
    _response_json: bytes | None = field(default=None, repr=False)

    @property
    def response(self) -> Any:
        """The body the fake answered with, as discord.py received it: a snapshot, so
        later world changes don't show.  A JSON answer is decoded from the bytes sent
        to discord.py only when read (tests rarely look; every request made one)."""
        if self._response_json is not None:
            self._response = json.loads(self._response_json)
            self._response_json = None
        return self._response

    @response.setter
    def response(self, value: Any) -> None:
        self._response, self._response_json = value, None

    def matches(self, route: str | None = None, **params: int | str) -> bool:
        """True if ``route`` (template key, ``"*"`` or None) and all ``params`` match."""
        if route not in (None, "*") and self.route != route:
            return False
        return all(str(self.params.get(k)) == str(v) for k, v in params.items())

    def __repr__(self) -> str:
        tag = f" fault={self.fault}" if self.fault else ""
        return f"<Captured #{self.seq} {self.method} {self.path} -> {self.status}{tag}>"


@dataclass
class Reply:
    """Explicit response from a handler (status + JSON body or None for 204)."""

    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


Handler: TypeAlias = Callable[[Captured], Any]


@dataclass
class Fault:
    """An injected failure; see :meth:`FakeDiscord.fail`."""

    route: str
    status: int = 500
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    times: int | None = 1
    params: dict[str, int | str] = field(default_factory=dict)
    where: Callable[[Captured], bool] | None = None
    exception: Callable[[], BaseException] | None = None
    delay: float = 0.0
    label: str = ""
    hits: int = 0

    @property
    def exhausted(self) -> bool:
        return self.times is not None and self.hits >= self.times

    def applies(self, captured: Captured) -> bool:
        if self.exhausted or not captured.matches(self.route, **self.params):
            return False
        return self.where is None or self.where(captured)


class UnhandledRouteError(AssertionError):
    """The bot called an endpoint the fake has no handler for (strict mode)."""


# --------------------------------------------------------------------- responses


class FakeResponse:
    """The subset of ``aiohttp.ClientResponse`` discord.py reads."""

    def __init__(
        self, method: str, url: str, status: int, body: Any, headers: Mapping[str, str]
    ) -> None:
        self.method = method
        self.url = url
        self.status = status
        self.reason = _REASONS.get(status, "Unknown")
        hdrs: CIMultiDict[str] = CIMultiDict(headers)
        #: the body's JSON text when it was JSON-encoded, else None
        self.json_text: bytes | None = None
        if isinstance(body, bytes):
            self._bytes = body
        elif body is None:
            self._bytes = b""
        elif isinstance(body, str):
            self._bytes = body.encode()
            hdrs.setdefault("Content-Type", "text/plain")
        else:
            self._bytes = self.json_text = json.dumps(body).encode()
            hdrs["Content-Type"] = "application/json"
        self.headers: CIMultiDictProxy[str] = CIMultiDictProxy(hdrs)

    async def text(self, encoding: str = "utf-8") -> str:
        return self._bytes.decode(encoding)

    async def read(self) -> bytes:
        return self._bytes

    async def json(self, **_: Any) -> Any:
        return json.loads(self._bytes)

    def release(self) -> None:
        return None

    def __repr__(self) -> str:
        return f"<FakeResponse {self.status} {self.method} {self.url}>"


_REASONS = {
    200: "OK",
    201: "Created",
    204: "No Content",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    429: "Too Many Requests",
    500: "Internal Server Error",
    501: "Not Implemented",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}


class _RequestContext:
    def __init__(self, coro_factory: Callable[[], Any]) -> None:
        self._factory = coro_factory
        self._response: FakeResponse | None = None

    async def __aenter__(self) -> FakeResponse:
        self._response = await self._factory()
        return self._response

    async def __aexit__(self, *exc: object) -> None:
        return None

    def __await__(self) -> Any:
        return self._factory().__await__()


class FakeSession:
    """Stands in for ``aiohttp.ClientSession`` inside discord.py's HTTPClient."""

    def __init__(self, transport: FakeDiscord) -> None:
        self._transport = transport
        self.closed = False

    def request(self, method: str, url: str, **kwargs: Any) -> _RequestContext:
        return _RequestContext(lambda: self._transport.handle(method, str(url), kwargs))

    def get(self, url: str, **kwargs: Any) -> _RequestContext:
        return self.request("GET", url, **kwargs)

    async def ws_connect(self, url: str, **kwargs: Any) -> Any:
        raise RuntimeError("the harness has no websocket; gateway events are injected instead")

    async def close(self) -> None:
        self.closed = True


# --------------------------------------------------------------------- retry clock


class _ScaledAsyncio(types.ModuleType):
    """Proxy of :mod:`asyncio` whose ``sleep`` is scaled (discord.py's retry/backoff and
    rate-limit bucket waits); the fake's clock still moves as far as the whole wait would
    have, so the rate limits see the time the client waited (ratelimits.VirtualClock)."""

    def __init__(self, scale: float, log: list[float], clock: VirtualClock) -> None:
        super().__init__("asyncio")
        self._scale = scale
        self._log = log
        self._clock = clock

    def __getattr__(self, name: str) -> Any:
        return getattr(asyncio, name)

    async def sleep(self, delay: float, result: Any = None) -> Any:
        self._log.append(delay)
        start = self._clock()
        try:
            return await asyncio.sleep(delay * self._scale, result)
        finally:
            self._clock.at_least(start + max(0.0, delay))


# --------------------------------------------------------------------- transport


class FakeDiscord:
    """Records every request and answers it from handlers, overrides or faults.

    ``strict``: an unmatched endpoint is answered ``501`` *and* recorded in
    :attr:`unhandled`; the :class:`~tests.harness.Harness` raises
    :class:`UnhandledRouteError` naming it after the interaction.  Non-strict answers
    ``{}`` (``204`` for PUT/DELETE).

    ``limits`` (the world's :class:`~tests.harness.ratelimits.RateLimits`; a disabled one
    if omitted) answers requests over Discord's rate limits with 429 and adds the
    ``X-RateLimit-*`` headers to every REST answer.
    """

    def __init__(self, *, strict: bool = True, limits: RateLimits | None = None) -> None:
        self.strict = strict
        self.limits = limits if limits is not None else RateLimits(enabled=False)
        self.requests: list[Captured] = []
        self.unhandled: list[Captured] = []
        self.faults: list[Fault] = []
        self.handlers: dict[str, Handler] = {}
        self.sleeps: list[float] = []
        self._seq = 0
        self._patched: list[tuple[types.ModuleType, Any]] = []

    # ------------------------------------------------------------ configuration

    def add_handler(self, route: str, handler: Handler) -> None:
        """Install/replace the handler for a template key, e.g. ``"GET /guilds/{guild_id}"``."""
        self.handlers[route] = handler

    def respond(
        self, route: str, body: Any = None, *, status: int = 200, times: int | None = None
    ) -> Fault:
        """Canned answer for a route (a non-error "fault"): ``times=None`` means forever."""
        return self._add(route, {}, status=status, body=body, times=times, label="canned")

    def _add(
        self,
        route: str,
        params: Mapping[str, int | str],
        *,
        status: int = 500,
        code: int = 0,
        message: str = "",
        body: Any = None,
        headers: Mapping[str, str] | None = None,
        times: int | None = 1,
        where: Callable[[Captured], bool] | None = None,
        delay: float = 0.0,
        exception: Callable[[], BaseException] | None = None,
        label: str = "",
    ) -> Fault:
        if body is None and status >= 400:
            body = {"message": message or _REASONS.get(status, "Error"), "code": code}
        fault = Fault(
            route=route,
            status=status,
            body=body,
            headers=dict(headers or {}),
            times=times,
            params=dict(params),
            where=where,
            exception=exception,
            delay=delay,
            label=label or f"{status}",
        )
        self.faults.append(fault)
        return fault

    def fail(
        self,
        route: str,
        *,
        status: int = 500,
        code: int = 0,
        message: str = "",
        body: Any = None,
        headers: Mapping[str, str] | None = None,
        times: int | None = 1,
        where: Callable[[Captured], bool] | None = None,
        delay: float = 0.0,
        **params: int | str,
    ) -> Fault:
        """Answer matching requests with ``status`` (Discord JSON error body by default).

        ``route`` is a template key (``"POST /guilds/{guild_id}/channels"``) or ``"*"``;
        ``params`` filter on route parameters (``channel_id=123``); ``where`` filters on the
        :class:`Captured` request; ``times=None`` = forever; ``delay`` sleeps (real time)
        before answering.  Faults are checked in insertion order, before handlers.
        """
        return self._add(
            route,
            params,
            status=status,
            code=code,
            message=message,
            body=body,
            headers=headers,
            times=times,
            where=where,
            delay=delay,
        )

    def forbid(self, route: str, *, times: int | None = 1, **params: int | str) -> Fault:
        """403 Missing Permissions (50013)."""
        return self._add(
            route, params, status=403, code=50013, message="Missing Permissions", times=times
        )

    def not_found(
        self,
        route: str,
        *,
        code: int = 10003,
        message: str = "Unknown Channel",
        times: int | None = 1,
        **params: int | str,
    ) -> Fault:
        """404 (default Unknown Channel 10003)."""
        return self._add(route, params, status=404, code=code, message=message, times=times)

    def rate_limit(
        self,
        route: str,
        *,
        retry_after: float = 0.5,
        is_global: bool = False,
        times: int | None = 1,
        **params: int | str,
    ) -> Fault:
        """429 with a ``retry_after`` body and the headers Discord sends (``Via`` etc.)."""
        body = {
            "message": "You are being rate limited.",
            "retry_after": retry_after,
            "global": is_global,
        }
        headers = {
            "Via": "1.1 google",
            "Retry-After": str(max(1, round(retry_after))),
            "X-RateLimit-Scope": "global" if is_global else "user",
        }
        if is_global:
            headers["X-RateLimit-Global"] = "true"
        return self._add(
            route, params, status=429, body=body, headers=headers, times=times, label="429"
        )

    def server_error(
        self, route: str, *, status: int = 500, times: int | None = 1, **params: int | str
    ) -> Fault:
        """5xx; discord.py retries 500/502/504/524 up to 5 times before raising."""
        return self._add(route, params, status=status, message="Internal Server Error", times=times)

    def timeout(self, route: str, *, times: int | None = 1, **params: int | str) -> Fault:
        """Raise ``aiohttp.ServerTimeoutError`` (an ``asyncio.TimeoutError``) from the session."""

        def make() -> BaseException:
            return aiohttp.ServerTimeoutError(f"harness: injected timeout on {route}")

        return self._add(route, params, status=0, exception=make, times=times, label="timeout")

    def clear_faults(self) -> None:
        self.faults.clear()

    # ------------------------------------------------------------ queries

    def find(
        self,
        route: str | None = None,
        *,
        kind: Kind | None = None,
        params: Mapping[str, int | str] | None = None,
    ) -> list[Captured]:
        """Captured requests matching a template key (or ``"*"``/None), kind and params."""
        wanted = dict(params or {})
        return [
            c
            for c in self.requests
            if c.matches(route, **wanted) and (kind is None or c.kind == kind)
        ]

    def record_gateway_send(self, op: str, data: Any) -> Captured:
        self._seq += 1
        captured = Captured(
            self._seq,
            "gateway",
            "SEND",
            op,
            op,
            {},
            {},
            data,
            status=0,
            origin=CURRENT_ORIGIN.get(),
        )
        self.requests.append(captured)
        return captured

    # ------------------------------------------------------------ retry clock

    def install_retry_clock(self, scale: float) -> None:
        """Scale discord.py's HTTP retry sleeps (429 ``retry_after``, 5xx backoff)."""
        if self._patched:
            return
        for module in (discord.http, discord.webhook.async_):
            self._patched.append((module, module.asyncio))
            module.asyncio = _ScaledAsyncio(  # type: ignore[attr-defined]
                scale, self.sleeps, self.limits.clock)

    def uninstall_retry_clock(self) -> None:
        while self._patched:
            module, original = self._patched.pop()
            module.asyncio = original  # type: ignore[attr-defined]

    # ------------------------------------------------------------ core

    def _parse_body(self, kwargs: Mapping[str, Any]) -> tuple[Any, list[CapturedFile]]:
        data = kwargs.get("data")
        if data is None:
            return None, []
        if isinstance(data, str | bytes):
            try:
                return json.loads(data), []
            except ValueError:
                return data, []
        if isinstance(data, aiohttp.FormData):
            payload: Any = None
            files: list[CapturedFile] = []
            for type_options, headers, value in data._fields:
                name = type_options.get("name")
                if name == "payload_json":
                    payload = json.loads(value)
                    continue
                raw: bytes
                if isinstance(value, io.IOBase) or hasattr(value, "read"):
                    raw = value.read()
                    if isinstance(raw, str):
                        raw = raw.encode()
                elif isinstance(value, bytes | bytearray):
                    raw = bytes(value)
                else:
                    raw = str(value).encode()
                files.append(
                    CapturedFile(
                        str(type_options.get("filename") or name),
                        raw,
                        headers.get("Content-Type"),
                    )
                )
            return payload, files
        return data, []

    async def handle(self, method: str, url: str, kwargs: Mapping[str, Any]) -> FakeResponse:
        parts = urlsplit(url)
        query = dict(parse_qsl(parts.query))
        for k, v in (kwargs.get("params") or {}).items():
            query[str(k)] = str(v)
        headers = {str(k): str(v) for k, v in (kwargs.get("headers") or {}).items()}
        body, files = self._parse_body(kwargs)
        self._seq += 1

        if parts.netloc != "discord.com":
            captured = Captured(
                self._seq,
                "cdn",
                method,
                url,
                None,
                {},
                query,
                None,
                headers=headers,
                origin=CURRENT_ORIGIN.get(),
            )
            self.requests.append(captured)
            captured.status = 200
            return FakeResponse(
                method, url, 200, b"\x89PNG\r\n\x1a\nharness", {"Content-Type": "image/png"}
            )

        path = API_PREFIX.sub("", parts.path)
        route, params = match_route(method, path, self.handlers)
        kind: Kind = "rest"
        if path.startswith("/interactions/"):
            kind = "interaction"
        elif path.startswith("/webhooks/"):
            kind = "webhook"
        reason = headers.get("X-Audit-Log-Reason")
        captured = Captured(
            self._seq,
            kind,
            method,
            path,
            route,
            params,
            query,
            body,
            files,
            unquote(reason) if reason else None,
            headers,
            origin=CURRENT_ORIGIN.get(),
        )
        self.requests.append(captured)

        for fault in self.faults:
            if fault.applies(captured):
                fault.hits += 1
                captured.fault = fault.label
                if fault.delay:
                    await asyncio.sleep(fault.delay)
                if fault.exception is not None:
                    captured.status = 0
                    raise fault.exception()
                captured.status = fault.status
                captured.response = fault.body
                return FakeResponse(method, url, fault.status, fault.body, fault.headers)

        handler = self.handlers.get(route) if route else None
        if handler is None:
            return self._unhandled(captured, method, url)
        limits: dict[str, str] = {}
        if kind == "rest":  # interaction callbacks and their webhooks: not limited here
            limited, limits = self.limits.check(
                method, route, params, body, counts_globally=True)
            if limited is not None:
                captured.status = 429
                captured.fault = "ratelimit"
                captured.response = limited[0]
                return FakeResponse(method, url, 429, limited[0], limited[1])
        try:
            result = handler(captured)
        except ApiError as err:
            captured.status = err.status
            captured.response = err.body()
            return FakeResponse(method, url, err.status, err.body(), limits)
        reply = (
            result if isinstance(result, Reply) else Reply(204 if result is None else 200, result)
        )
        # Encoded right away, so handlers may return live world state uncopied; the
        # record keeps the encoded text (no copy unless a test reads it).
        response = FakeResponse(method, url, reply.status, reply.body,
                                {**limits, **reply.headers} if limits else reply.headers)
        captured.status = reply.status
        if response.json_text is not None:
            captured._response_json = response.json_text
        else:
            captured.response = reply.body
        return response

    def _unhandled(self, captured: Captured, method: str, url: str) -> FakeResponse:
        self.unhandled.append(captured)
        name = captured.route or f"{captured.method} {captured.path}"
        if self.strict:
            error = {"message": f"harness: no fake handler for {name}", "code": 0}
            captured.status = 501
            captured.response = error
            print(f"[harness] unhandled Discord route: {name}", file=sys.stderr)
            return FakeResponse(method, url, 501, error, {})
        status = 204 if method in ("PUT", "DELETE") else 200
        body: dict[str, Any] | None = None if status == 204 else {}
        captured.status = status
        captured.response = body
        return FakeResponse(method, url, status, body, {})


def arrivals_fake(route: str) -> tuple[FakeDiscord, list[float]]:
    """A fake Discord whose limits (the global one above all) run on the real clock,
    answering `route` (a channel GET) and recording when each request arrived: what a
    request budget lets through, and when (tests/bot/test_shared_budget.py and
    bench/sharedbudget.py measure the same thing)."""
    limits = RateLimits(clock=VirtualClock())
    fake = FakeDiscord(strict=False, limits=limits)
    arrivals: list[float] = []

    def answer(c: Captured) -> dict[str, Any]:
        arrivals.append(limits.clock())
        return {"id": str(c.params["channel_id"])}

    fake.add_handler(route, answer)
    return fake, arrivals
