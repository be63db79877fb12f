"""The `mafia-bot` console script: run the bot, or simulate games offline."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from core.i18n import normalize_locale, t

MODULES = ("extra_roles", "currency", "shop", "crypto")


def _lang() -> str:
    return normalize_locale((os.environ.get("LANG") or "en").split(".")[0].replace("_", "-"))


def parser() -> argparse.ArgumentParser:
    lang = _lang()
    p = argparse.ArgumentParser(prog="mafia-bot", description=t("cli.description", lang))
    sub = p.add_subparsers(dest="command")
    run = sub.add_parser("run", help=t("cli.run.help", lang))
    run.add_argument("--shard-count", type=int, default=None)
    run.add_argument("--shard-ids", type=str, default=None)
    sim = sub.add_parser("simulate", help=t("cli.simulate.help", lang))
    sim.add_argument("--games", type=int, default=100)
    sim.add_argument("--players", type=int, default=12)
    sim.add_argument("--seed", type=int, default=0)
    sim.add_argument("--modules", type=str, default="",
                     help=t("cli.simulate.modules", lang, modules=", ".join(MODULES)))
    sim.add_argument("--db", type=str, default=None, help=t("cli.simulate.db", lang))
    sim.add_argument("--lang", type=str, default=lang)
    return p


def simulate(args: argparse.Namespace) -> int:
    from core.narrate import describe
    from core.sim import play, win_rates
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

        from core.storage.soak import simulate_stored

        results = asyncio.run(simulate_stored(args.db, args.games, args.players, args.seed,
                                              options=options))
    else:
        results = [play(args.seed + i, args.players, options) for i in range(args.games)]
    first = results[0]
    names = {p.uid: p.name for p in first.state.players}
    print(t("cli.simulate.log_head", lang, seed=args.seed, players=args.players))
    for event in first.events:
        if event.kind in ("joined", "team_changed", "role_dealt"):
            continue
        text = describe(event, lambda uid: names.get(uid, str(uid)), lang)
        if event.public:
            print(text)
        else:
            who = ", ".join(names.get(u, "?") for u in event.audience.players) or \
                event.audience.team or event.audience.kind
            print(f"    [{who}] {text}")
    rates = win_rates(results)
    print()
    print(t("cli.simulate.rates_head", lang, games=len(results)))
    for team, count in rates.most_common():
        print(f"  {team:<10} {count:>5}  {100 * count / len(results):5.1f}%")
    return 0


def run(args: argparse.Namespace) -> int:
    from bot import main as run_bot

    return run_bot(shard_count=args.shard_count, shard_ids=args.shard_ids)


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.command == "simulate":
        return simulate(args)
    if args.command is None:
        args = parser().parse_args(["run", *(argv or [])])
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
