"""The `mafia-bot` console script: run the bot (sharded if asked), simulate games
offline, copy the database to another one (`migrate-db`), write a finished game's
archive (`archive`) or serve the archives (`web`)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any

from core.game.events import EventKind
from core.text.i18n import format_number, normalize_locale, t

MODULES = ("extra_roles", "currency", "shop", "crypto")


def version() -> str:
    """The installed package's version (pyproject.toml; CHANGELOG.md says what changed)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("mafia-bot")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown"


def _lang() -> str:
    return normalize_locale((os.environ.get("LANG") or "en").split(".")[0].replace("_", "-"))


def _with_default(text: str, value: object, lang: str) -> str:
    """An option's help with its default, in the reader's language."""
    return t("cli.with_default", lang, help=text, value=value)


def _database_shown() -> str:
    """The database `archive` and `web` read when --db is not given, for their help."""
    from core.settings import DEFAULT_DATABASE_URL

    try:
        return _shown(_database_url())
    except Exception:  # a bad setting is reported when the command runs, not in --help
        return DEFAULT_DATABASE_URL


def _run_parser(sub: Any, lang: str) -> None:
    """`mafia-bot run` and its sharding options."""
    run = sub.add_parser("run", help=t("cli.run.help", lang))
    run.add_argument("--shard-count", type=int, default=None,
                     help=_with_default(t("cli.run.shard_count", lang),
                                        t("cli.run.one_shard", lang), lang))
    run.add_argument("--shard-ids", type=str, default=None,
                     help=_with_default(t("cli.run.shard_ids", lang),
                                        t("cli.run.every_shard", lang), lang))
    run.add_argument("--auto-shard", action="store_true",
                     help=_with_default(t("cli.run.auto_shard", lang), t("cli.off", lang), lang))


def parser() -> argparse.ArgumentParser:
    """Every option says what it does and its default (`mafia-bot COMMAND --help`)."""
    lang = _lang()
    none = t("cli.default_none", lang)
    p = argparse.ArgumentParser(prog="mafia-bot", description=t("cli.description", lang))
    p.add_argument("--version", action="version", version=f"%(prog)s {version()}",
                   help=t("cli.version", lang))
    sub = p.add_subparsers(dest="command")
    _run_parser(sub, lang)
    sim = sub.add_parser("simulate", help=t("cli.simulate.help", lang))
    sim.add_argument("--games", type=int, default=100,
                     help=_with_default(t("cli.simulate.games", lang), 100, lang))
    sim.add_argument("--players", type=int, default=None, help=t("balance.cli.players", lang))
    sim.add_argument("--setup", type=str, default=None,
                     help=_with_default(t("balance.cli.setup", lang), none, lang))
    sim.add_argument("--seed", type=int, default=0,
                     help=_with_default(t("cli.simulate.seed", lang), 0, lang))
    sim.add_argument("--modules", type=str, default="",
                     help=_with_default(t("cli.simulate.modules", lang,
                                          modules=", ".join(MODULES)), none, lang))
    sim.add_argument("--db", type=str, default=None,
                     help=_with_default(t("cli.simulate.db", lang),
                                        t("cli.simulate.in_memory", lang), lang))
    sim.add_argument("--lang", type=str, choices=("ru", "en"), default=lang,
                     help=_with_default(t("cli.simulate.lang", lang), lang, lang))
    database = _database_shown()
    arc = sub.add_parser("archive", help=t("cli.archive.help", lang))
    arc.add_argument("game_id", type=int, metavar="GAME_ID", help=t("cli.archive.game", lang))
    arc.add_argument("--db", type=str, default=None,
                     help=_with_default(t("cli.db", lang), database, lang))
    arc.add_argument("--out", type=str, default=None, help=t("cli.archive.out", lang))
    arc.add_argument("--lang", type=str, choices=("ru", "en"), default=None,
                     help=t("cli.archive.lang", lang))
    web = sub.add_parser("web", help=t("cli.web.help", lang))
    web.add_argument("--db", type=str, default=None,
                     help=_with_default(t("cli.db", lang), database, lang))
    web.add_argument("--host", type=str, default="127.0.0.1",
                     help=_with_default(t("cli.web.host", lang), "127.0.0.1", lang))
    web.add_argument("--port", type=int, default=8080,
                     help=_with_default(t("cli.web.port", lang), 8080, lang))
    web.add_argument("--lang", type=str, choices=("ru", "en"), default=None,
                     help=_with_default(t("cli.web.lang", lang), lang, lang))
    web.add_argument("--link", type=int, default=None, metavar="GUILD_ID",
                     help=_with_default(t("cli.web.link", lang), none, lang))
    web.add_argument("--base", type=str, default=None, metavar="URL",
                     help=_with_default(t("cli.web.base", lang), "http://HOST:PORT", lang))
    status = sub.add_parser("status", help=t("delivery.status_help", lang))
    status.add_argument("--db", type=str, default=None,
                        help=_with_default(t("cli.db", lang), database, lang))
    mig = sub.add_parser("migrate-db", help=t("cli.migrate.help", lang))
    mig.add_argument("--from", dest="source", required=True, help=t("cli.migrate.from", lang))
    mig.add_argument("--to", dest="target", required=True, help=t("cli.migrate.to", lang))
    return p


def simulate(args: argparse.Namespace) -> int:
    from core.game.state import Options
    from core.play.sim import Played, play
    from core.sight.desk import DESK_ONLY
    from core.sight.narrate import describe, plain, team_name

    lang = normalize_locale(args.lang)
    modules = {m.strip() for m in args.modules.split(",") if m.strip()}
    unknown = modules - set(MODULES)
    if unknown:
        print(t("cli.simulate.unknown_module", lang, names=", ".join(sorted(unknown))),
              file=sys.stderr)
        return 2
    options = Options(**{m: True for m in modules}, language=lang)
    if args.setup is not None:
        return estimate_setup(args, options, lang)
    args.players = args.players or 12
    if args.db:
        import asyncio

        from core.storage.soak import simulate_stored

        results: list[Played] = asyncio.run(simulate_stored(
            args.db, args.games, args.players, args.seed, options=options))
    else:
        results = [play(args.seed + i, args.players, options) for i in range(args.games)]
    first = results[0]
    names = {p.uid: p.name for p in first.state.players}
    names[first.state.master] = t("term.master", lang)
    print(t("cli.simulate.log_head", lang, seed=args.seed, players=args.players))
    for event in first.events:
        if event.kind in (EventKind.JOINED, EventKind.TEAM_CHANGED, EventKind.ROLE_DEALT) \
                or event.kind in DESK_ONLY \
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
    _print_rates(results, lang)
    return 0


def _print_rates(results: list[Any], lang: str) -> None:
    """Each side's wins, named as the balance estimate names them (town, mafia or each
    clan, neutrals, draw), and the note when a game had several winners."""
    from core.play.balance import SIDE_ORDER, side_name, winners_of

    wins: dict[str, int] = {}
    for r in results:
        for side in winners_of(r.state, len(r.state.clans) > 1):
            wins[side] = wins.get(side, 0) + 1
    print()
    print(t("cli.simulate.rates_head", lang, count=len(results)))
    ranked = sorted(wins, key=lambda k: (SIDE_ORDER.get(k.split(":")[0], 2), k))
    labels = {k: side_name(k, lang) for k in ranked}
    width = max((len(v) for v in labels.values()), default=0)
    for side in ranked:
        share = format_number(round(100 * wins[side] / len(results), 1), lang)
        print(f"  {labels[side]:<{width}} {wins[side]:>5}  {share:>5}%")
    if sum(wins.values()) > len(results):
        print(t("balance.overlap", lang))


def _role_hint(name: str, lang: str) -> str:
    """For an unknown role: the nearest names the setup takes (difflib), else every
    role's name in the reader's language."""
    import difflib

    from core.game.roles import by_alias, rows

    known = [t(f"role.{ri.role}.name", lang) for ri in rows()]
    # the reader's own names first, then every other name the parser takes
    words = list(dict.fromkeys([*known, *by_alias()]))
    near = difflib.get_close_matches(name.strip().lower(), words, n=3, cutoff=0.6)
    if near:
        return t("cli.simulate.nearest", lang, names=", ".join(f"«{n}»" if lang == "ru"
                                                               else f"“{n}”" for n in near))
    return t("cli.simulate.known_roles", lang, names=", ".join(known))


def _with_modules(setup: str, options: Any, lang: str) -> Any:
    """The options with the modules the setup's roles need switched on (a module role
    is estimated as it would be played, with its module), and a line saying so."""
    from core.game.roles import info
    from core.game.rules.setup import parse

    if options.extra_roles or not any(info(r).extra for r in parse(setup).roles):
        return options
    print(t("cli.simulate.module_on", lang, module=t("module.additional_roles.name", lang),
            option="--modules extra_roles"))
    return options.model_copy(update={"extra_roles": True})


def estimate_setup(args: argparse.Namespace, options: object, lang: str) -> int:
    """`simulate --setup`: the balance estimate the master sees at /game setup."""
    from core.game.errors import ErrorCode, RuleError
    from core.game.rules.setup import check_written
    from core.game.state import Options
    from core.play.balance import estimate, report, seats
    from core.play.balance import simulate as simulate_setup
    from core.sight.narrate import describe_error, plain

    assert isinstance(options, Options)
    try:
        options = _with_modules(args.setup, options, lang)
        assert isinstance(options, Options)
        players = args.players or seats(args.setup, 0, options)
        check_written(args.setup, players, extra_roles=options.extra_roles)
        tally = simulate_setup(args.setup, players, options, max(1, args.games), args.seed)
    except RuleError as exc:
        print(plain(describe_error(exc.code, exc.params, str, lang)), file=sys.stderr)
        if exc.code == ErrorCode.SETUP_UNKNOWN_ROLE:
            print(_role_hint(str(exc.params.get("name", "")), lang), file=sys.stderr)
        return 2
    for line in report(estimate(tally, players), lang):
        print(plain(line.removeprefix("-# ")))
    return 0


def _database_url() -> str:
    from core.settings import Settings

    return Settings().database_url


def _missing_file(url: str) -> str | None:
    """The path of a SQLite database file that does not exist: `archive` and `web` only
    read, so they say so rather than create an empty database and find no game in it."""
    from pathlib import Path
    from urllib.parse import unquote

    scheme, sep, rest = url.strip().partition("://")
    path = unquote(rest.partition("?")[0])
    if not sep or scheme.lower() != "sqlite" or not path or path == ":memory:":
        return None
    return None if Path(path).exists() else path


def archive(args: argparse.Namespace) -> int:
    """Write a finished game's archive (the file the game-over message carries)."""
    import asyncio
    from pathlib import Path

    from archive.build import archive_file
    from core.game.state import PhaseKind
    from core.settings import ConfigError
    from core.sight.record import NotFinished
    from core.storage.archive import finished_input
    from core.storage.db import close_db, init_db
    from core.storage.service import GameNotFound, GameService

    lang = _lang()
    try:
        url = args.db or _database_url()
    except Exception as exc:  # pydantic's ValidationError: a setting that cannot be read
        print(t("cli.config_error", lang, error=str(exc)), file=sys.stderr)
        return 2
    missing = _missing_file(url)
    if missing is not None:
        print(t("cli.db_missing", lang, path=missing), file=sys.stderr)
        return 2

    async def load() -> tuple[str, bytes]:
        await init_db(url)
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
    except NotFinished as exc:
        cancelled = exc.args[:1] == (str(PhaseKind.CANCELLED),)
        print(t("cli.archive.cancelled" if cancelled else "cli.archive.not_finished", lang,
                game=args.game_id), file=sys.stderr)
        return 2
    out = Path(args.out or name)
    out.write_bytes(data)
    print(t("cli.archive.written", lang, path=str(out), size=len(data)))
    return 0


def web(args: argparse.Namespace) -> int:
    """Serve the read-only index of finished games and their archives until stopped."""
    import asyncio

    from archive.web import guild_path, serve
    from core.settings import ConfigError, Settings

    try:
        secret = Settings().web_secret
        url = args.db or _database_url()
    except Exception as exc:  # pydantic's ValidationError: a setting that cannot be read
        print(t("cli.config_error", _lang(), error=str(exc)), file=sys.stderr)
        return 2
    missing = None if args.link is not None else _missing_file(url)
    if missing is not None:
        print(t("cli.db_missing", _lang(), path=missing), file=sys.stderr)
        return 2
    if not secret:
        print(t("cli.web.no_secret", _lang()), file=sys.stderr)
        return 2
    if args.link is not None:  # a guild's address, for its owner: printed, nothing served
        base = (args.base or f"http://{args.host}:{args.port}").rstrip("/")
        print(base + guild_path(secret, args.link))
        return 0
    try:
        asyncio.run(serve(url, args.host, args.port, args.lang or _lang(), secret))
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
    return event.kind in (EventKind.YOU_DIED, EventKind.TURN_WARNING)


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

        from cogs.delivery.deliverer import outbox_status

        url = args.db or _database_url()
        missing = _missing_file(url)
        if missing is not None:
            print(t("cli.db_missing", _lang(), path=missing), file=sys.stderr)
            return 2
        from core.settings import Settings

        print(asyncio.run(outbox_status(url, Settings().outbox_stuck_seconds)))
        return 0
    if args.command is None:
        args = parser().parse_args(["run", *(argv or [])])
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
