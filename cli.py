"""The `mafia-bot` console script: run the bot (sharded if asked), simulate games
offline, copy the database to another one (`migrate-db`), write a finished game's
archive (`archive`) or serve the archives (`web`)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any

from core.i18n import normalize_locale, t

MODULES = ("extra_roles", "currency", "shop", "crypto")


def _lang() -> str:
    return normalize_locale((os.environ.get("LANG") or "en").split(".")[0].replace("_", "-"))


def parser() -> argparse.ArgumentParser:
    lang = _lang()
    p = argparse.ArgumentParser(prog="mafia-bot", description=t("cli.description", lang))
    sub = p.add_subparsers(dest="command")
    run = sub.add_parser("run", help=t("cli.run.help", lang))
    run.add_argument("--shard-count", type=int, default=None,
                     help=t("cli.run.shard_count", lang))
    run.add_argument("--shard-ids", type=str, default=None, help=t("cli.run.shard_ids", lang))
    run.add_argument("--auto-shard", action="store_true", help=t("cli.run.auto_shard", lang))
    sim = sub.add_parser("simulate", help=t("cli.simulate.help", lang))
    sim.add_argument("--games", type=int, default=100)
    sim.add_argument("--players", type=int, default=12)
    sim.add_argument("--seed", type=int, default=0)
    sim.add_argument("--modules", type=str, default="",
                     help=t("cli.simulate.modules", lang, modules=", ".join(MODULES)))
    sim.add_argument("--db", type=str, default=None, help=t("cli.simulate.db", lang))
    sim.add_argument("--lang", type=str, default=lang)
    arc = sub.add_parser("archive", help=t("cli.archive.help", lang))
    arc.add_argument("game_id", type=int, metavar="GAME_ID")
    arc.add_argument("--out", type=str, default=None, help=t("cli.archive.out", lang))
    arc.add_argument("--lang", type=str, choices=("ru", "en"), default=None,
                     help=t("cli.archive.lang", lang))
    web = sub.add_parser("web", help=t("cli.web.help", lang))
    web.add_argument("--host", type=str, default="127.0.0.1")
    web.add_argument("--port", type=int, default=8080)
    web.add_argument("--lang", type=str, choices=("ru", "en"), default=None,
                     help=t("cli.archive.lang", lang))
    sub.add_parser("status", help=t("delivery.status_help", lang))
    mig = sub.add_parser("migrate-db", help=t("cli.migrate.help", lang))
    mig.add_argument("--from", dest="source", required=True, help=t("cli.migrate.from", lang))
    mig.add_argument("--to", dest="target", required=True, help=t("cli.migrate.to", lang))
    return p


def simulate(args: argparse.Namespace) -> int:
    from core.desk import DESK_ONLY
    from core.narrate import describe, plain, team_name
    from core.sim import Played, play, win_rates
    from core.state import Options

    lang = normalize_locale(args.lang)
    modules = {m.strip() for m in args.modules.split(",") if m.strip()}
    unknown = modules - set(MODULES)
    if unknown:
        print(t("cli.simulate.unknown_module", lang, names=", ".join(sorted(unknown))),
              file=sys.stderr)
        return 2
    options = Options(**{m: True for m in modules}, language=lang)
    if args.db:
        import asyncio

        from bench.soak import simulate_stored

        results: list[Played] = asyncio.run(simulate_stored(
            args.db, args.games, args.players, args.seed, options=options))
    else:
        results = [play(args.seed + i, args.players, options) for i in range(args.games)]
    first = results[0]
    names = {p.uid: p.name for p in first.state.players}
    names[first.state.master] = t("term.master", lang)
    print(t("cli.simulate.log_head", lang, seed=args.seed, players=args.players))
    for event in first.events:
        if event.kind in ("joined", "team_changed", "role_dealt") or event.kind in DESK_ONLY \
                or _told_elsewhere(event):
            continue  # DESK_ONLY: the master's desk feed, a second account of the game
        text = plain(describe(event, lambda uid: names.get(uid, str(uid)), lang))
        if event.public:
            print(text)
        else:
            team = event.audience.team
            who = team_name(team, lang) if team else ", ".join(
                names.get(u, "?") for u in event.audience.players) or t("term.master", lang)
            print(f"    [{who}] {text}")
    rates = win_rates(results)
    print()
    print(t("cli.simulate.rates_head", lang, games=len(results)))
    for winner, count in rates.most_common():
        label = t("cli.simulate.draw", lang) if winner == "draw" else t(f"side.{winner}.name", lang)
        print(f"  {label:<16} {count:>5}  {100 * count / len(results):5.1f}%")
    if rates.get("citizens"):
        print(t("cli.simulate.rates_note", lang))
    return 0


def _database_url() -> str:
    from core.settings import Settings

    return Settings().database_url


def archive(args: argparse.Namespace) -> int:
    """Write a finished game's archive (the file the game-over message carries)."""
    import asyncio
    from pathlib import Path

    from archive.build import archive_file
    from core.archive import NotFinished
    from core.settings import ConfigError
    from core.storage.archive import finished_input
    from core.storage.db import close_db, init_db
    from core.storage.service import GameNotFound, GameService

    lang = _lang()

    async def load() -> tuple[str, bytes]:
        await init_db(_database_url())
        try:
            initial, log, language = await finished_input(GameService(), args.game_id)
        finally:
            await close_db()
        return await asyncio.to_thread(archive_file, initial, log,
                                       args.lang or normalize_locale(language))

    try:
        name, data = asyncio.run(load())
    except ConfigError as exc:
        print(t("cli.config_error", lang, error=str(exc)), file=sys.stderr)
        return 2
    except GameNotFound:
        print(t("cli.archive.not_found", lang, game=args.game_id), file=sys.stderr)
        return 2
    except NotFinished:
        print(t("cli.archive.not_finished", lang, game=args.game_id), file=sys.stderr)
        return 2
    out = Path(args.out or name)
    out.write_bytes(data)
    print(t("cli.archive.written", lang, path=str(out), size=len(data)))
    return 0


def web(args: argparse.Namespace) -> int:
    """Serve the read-only index of finished games and their archives until stopped."""
    import asyncio

    from archive.web import serve
    from core.settings import ConfigError

    try:
        asyncio.run(serve(_database_url(), args.host, args.port, args.lang or _lang()))
    except ConfigError as exc:
        print(t("cli.config_error", _lang(), error=str(exc)), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 0
    return 0


def _told_elsewhere(event: Any) -> bool:
    """Lines the log already prints another way: a death is announced publicly (the
    victim's own notice would repeat it), a missed turn by the master's line naming whose
    (the player's own warning would repeat it)."""
    return event.kind in ("you_died", "turn_warning")


def _shown(url: str) -> str:
    """The URL without its password."""
    from urllib.parse import urlsplit

    try:
        password = urlsplit(url).password
    except ValueError:
        return url
    return url.replace(f":{password}@", ":***@", 1) if password else url


def migrate_db(args: argparse.Namespace) -> int:
    """Copy every table to an empty database, then print the checks (exit 1 if they fail)."""
    import asyncio

    from core.settings import ConfigError
    from core.storage.copy import CopyRefused, copy_database

    lang = _lang()
    print(t("cli.migrate.head", lang, source=_shown(args.source), target=_shown(args.target)))
    try:
        report = asyncio.run(copy_database(args.source, args.target))
    except CopyRefused as exc:
        print(t(f"cli.migrate.{exc.code}", lang, **exc.params), file=sys.stderr)
        return 2
    except ConfigError as exc:
        print(t("cli.config_error", lang, error=str(exc)), file=sys.stderr)
        return 2
    except Exception as exc:
        print(t("cli.migrate.error", lang, error=f"{type(exc).__name__}: {exc}"),
              file=sys.stderr)
        return 3
    print(t("cli.migrate.columns", lang))
    for row in report.tables:
        print(f"  {row.table:<16} {row.source:>9} {row.target:>9}  {'=' if row.ok else '≠'}")
    print(t("cli.migrate.wallets", lang, wallets=report.wallets,
            matching=report.wallets_matching))
    for guild, user, balance, total in report.mismatches:
        print(t("cli.migrate.mismatch", lang, guild=guild, user=user, balance=balance,
                total=total))
    if report.sequences_reset:
        print(t("cli.migrate.sequences", lang))
    if not report.ok:
        print(t("cli.migrate.failed", lang), file=sys.stderr)
        return 1
    print(t("cli.migrate.ok", lang, rows=report.rows))
    return 0


def _shard_problem(args: argparse.Namespace) -> tuple[str, dict[str, object]] | None:
    """The catalogue key (and parameters) of what is wrong with the shard options."""
    try:
        ids = [int(x) for x in args.shard_ids.split(",")] if args.shard_ids else None
    except ValueError:
        return "cli.shard.bad_ids", {"ids": args.shard_ids}
    count = args.shard_count
    if args.auto_shard and (count is not None or ids is not None):
        return "cli.shard.auto_alone", {}
    if ids is not None and count is None:
        return "cli.shard.ids_need_count", {}
    if count is not None and count < 1:
        return "cli.shard.bad_count", {}
    outside = sorted({i for i in ids or [] if not 0 <= i < (count or 1)})
    if outside:
        return "cli.shard.outside", {"ids": ", ".join(map(str, outside)),
                                     "last": (count or 1) - 1}
    return None


def run(args: argparse.Namespace) -> int:
    problem = _shard_problem(args)
    if problem is not None:
        key, params = problem
        print(t(key, _lang(), **params), file=sys.stderr)
        return 2
    from bot import main as run_bot

    return run_bot(shard_count=args.shard_count, shard_ids=args.shard_ids,
                   auto_shard=args.auto_shard)


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.command == "simulate":
        return simulate(args)
    if args.command == "migrate-db":
        return migrate_db(args)
    if args.command == "archive":
        return archive(args)
    if args.command == "web":
        return web(args)
    if args.command == "status":
        import asyncio

        from cogs.delivery import outbox_status

        print(asyncio.run(outbox_status(_database_url())))
        return 0
    if args.command is None:
        args = parser().parse_args(["run", *(argv or [])])
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
