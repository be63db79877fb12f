"""`mafia-bot web`: a read-only index of finished games and their archives (aiohttp).

One site per guild: a guild's games live under `/g/<token>/`, where the token is an
HMAC of the guild's id with the operator's secret (`WEB_SECRET`): unguessable, so a
server's games are never listed beside another's, and nobody finds a server's page
without being given its address (`mafia-bot web --link GUILD_ID` prints it). Only
finished games exist here: the index lists games whose phase is "ended", and an
archive is built only for such a game; anything else (a running, cancelled or unknown
game, another guild's game, an unknown token, the bare root, an id no database holds)
is a plain 404, the same for all, so the site says nothing about games in play. GET
and HEAD only; every page forbids external loads (CSP) and is a template escaped by
default (templates/index.html.j2).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import re
import time
from collections.abc import Callable

from aiohttp import web

from core.sight.record import NotFinished
from core.storage.archive import finished_games, finished_guilds, finished_input
from core.storage.db import close_db, init_db
from core.storage.service import GameNotFound, GameService
from core.text.i18n import normalize_locale, t

from .build import archive_file
from .templating import render_template

CSP = ("default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
       "img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
SERVICE: web.AppKey[GameService] = web.AppKey("service", GameService)
LANG: web.AppKey[str] = web.AppKey("lang", str)
SECRET: web.AppKey[str] = web.AppKey("secret", str)
TOKEN_HEX = 32  # 128 bits of HMAC-SHA256: nobody guesses a guild's address
_ID = re.compile(r"[1-9][0-9]{0,18}")  # a positive decimal; checked < 2**63 below
MAX_ID = 2**63 - 1  # the database's BIGINT


def token_for(secret: str, guild_id: int) -> str:
    """A guild's part of the site's addresses."""
    return hmac.new(secret.encode(), str(guild_id).encode(), hashlib.sha256
                    ).hexdigest()[:TOKEN_HEX]


def guild_path(secret: str, guild_id: int) -> str:
    return f"/g/{token_for(secret, guild_id)}/"


def parse_id(text: str) -> int | None:
    """A game id as the database can hold it, or None (then: 404, never a 500)."""
    if not _ID.fullmatch(text):
        return None
    value = int(text)
    return value if value <= MAX_ID else None


# Seconds between two readings of the guilds' ids that an unknown address may cause: a
# guild's first finished game shows at its address within this time.
REFRESH = 30.0


class Guilds:
    """Which guild an address's token names: a map token -> guild made from the ids of
    the guilds with a finished game (one row per guild, nothing else read). A token the
    map lacks reads the ids again at most every `REFRESH` seconds, whatever addresses
    are asked: an unknown or wrong address costs a dict lookup, the same at any size of
    the archive (issue 41: it used to read every finished game, state included, and
    try each guild's HMAC, per request)."""

    def __init__(self, secret: str, clock: Callable[[], float] = time.monotonic) -> None:
        self.secret = secret
        self.clock = clock
        self._by_token: dict[str, int] = {}
        self._read_at: float | None = None
        self._lock = asyncio.Lock()

    async def guild(self, token: str) -> int | None:
        if len(token) != TOKEN_HEX:
            return None
        found = self._by_token.get(token)
        if found is not None:
            return found
        async with self._lock:  # one reading for many misses at once
            due = self._read_at is None or self.clock() - self._read_at >= REFRESH
            if due:
                self._read_at = self.clock()
                self._by_token = {token_for(self.secret, g): g
                                  for g in await finished_guilds()}
        return self._by_token.get(token)


GUILDS: web.AppKey[Guilds] = web.AppKey("guilds", Guilds)


async def _guild(request: web.Request) -> int:
    """The guild whose token the path carries; 404 for any other token."""
    guild_id = await request.app[GUILDS].guild(request.match_info["token"])
    if guild_id is None:
        raise web.HTTPNotFound()
    return guild_id


def _lang(request: web.Request) -> str | None:
    value = request.query.get("lang")
    return normalize_locale(value) if value in ("ru", "en") else None


async def index(request: web.Request) -> web.Response:
    guild_id = await _guild(request)
    lang = _lang(request) or request.app[LANG]
    games = await finished_games(guild_id)
    html = render_template("index.html.j2", lang=lang, t=t, games=games,
                           title=t("archive.web.title", lang))
    return web.Response(text=html, content_type="text/html",
                        headers={"Content-Security-Policy": CSP})


async def game(request: web.Request) -> web.Response:
    guild_id = await _guild(request)
    game_id = parse_id(request.match_info["game_id"])
    if game_id is None:
        raise web.HTTPNotFound()
    try:
        initial, log, language = await finished_input(request.app[SERVICE], game_id,
                                                      guild_id=guild_id)
    except (GameNotFound, NotFinished):
        raise web.HTTPNotFound() from None
    lang = _lang(request) or normalize_locale(language)
    _, data = await asyncio.to_thread(archive_file, initial, log, lang)
    return web.Response(body=data, content_type="text/html", charset="utf-8",
                        headers={"Content-Security-Policy": CSP})


def make_app(secret: str, service: GameService | None = None, lang: str = "en"
             ) -> web.Application:
    """The site; the database must be open (core.storage.db.init_db) while it serves.
    Nothing answers outside a guild's path (aiohttp's own 404 for the root and the rest)."""
    if not secret:
        raise ValueError("the site needs a secret (WEB_SECRET)")
    app = web.Application()
    app[SERVICE] = service or GameService()
    app[LANG] = lang
    app[SECRET] = secret
    app[GUILDS] = Guilds(secret)
    app.router.add_get(r"/g/{token}/", index)
    app.router.add_get(r"/g/{token}/games/{game_id}", game)
    return app


async def serve(url: str, host: str, port: int, lang: str, secret: str) -> None:
    await init_db(url)
    runner = web.AppRunner(make_app(secret, lang=lang))
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port).start()
        print(t("archive.web.serving", lang, url=f"http://{host}:{port}/"), flush=True)
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()
        await close_db()
