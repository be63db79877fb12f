"""`mafia-bot web`: a read-only index of finished games and their archives (aiohttp).

Only finished games exist here: the index lists games whose phase is "ended",
and an archive is built only for such a game; any other id (running, cancelled,
unknown) is a plain 404, the same for all, so the site says nothing about games
in play. GET and HEAD only; every page forbids external loads (CSP) and is a template
escaped by default (templates/index.html.j2).
"""

from __future__ import annotations

import asyncio

from aiohttp import web

from core.archive import NotFinished
from core.i18n import normalize_locale, t
from core.storage.archive import finished_games, finished_input
from core.storage.db import close_db, init_db
from core.storage.service import GameNotFound, GameService

from .build import archive_file
from .templating import render_template

CSP = ("default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
       "img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
SERVICE: web.AppKey[GameService] = web.AppKey("service", GameService)
LANG: web.AppKey[str] = web.AppKey("lang", str)


def _lang(request: web.Request) -> str | None:
    value = request.query.get("lang")
    return normalize_locale(value) if value in ("ru", "en") else None


async def index(request: web.Request) -> web.Response:
    lang = _lang(request) or request.app[LANG]
    html = render_template("index.html.j2", lang=lang, t=t, games=await finished_games(),
                           title=t("archive.web.title", lang))
    return web.Response(text=html, content_type="text/html",
                        headers={"Content-Security-Policy": CSP})


async def game(request: web.Request) -> web.Response:
    try:
        game_id = int(request.match_info["game_id"])
        initial, log, language = await finished_input(request.app[SERVICE], game_id)
    except (ValueError, GameNotFound, NotFinished):
        raise web.HTTPNotFound() from None
    lang = _lang(request) or normalize_locale(language)
    _, data = await asyncio.to_thread(archive_file, initial, log, lang)
    return web.Response(body=data, content_type="text/html", charset="utf-8",
                        headers={"Content-Security-Policy": CSP})


def make_app(service: GameService | None = None, lang: str = "en") -> web.Application:
    """The site; the database must be open (core.storage.db.init_db) while it serves."""
    app = web.Application()
    app[SERVICE] = service or GameService()
    app[LANG] = lang
    app.router.add_get("/", index)
    app.router.add_get(r"/games/{game_id}", game)
    return app


async def serve(url: str, host: str, port: int, lang: str) -> None:
    await init_db(url)
    runner = web.AppRunner(make_app(lang=lang))
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port).start()
        print(t("archive.web.serving", lang, url=f"http://{host}:{port}/"), flush=True)
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()
        await close_db()
