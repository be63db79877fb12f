"""Discord REST calls per complete 12-player game, against a lower bound.

The whole game goes through the harness as players would play it: /game create (every
module on), /game join x12, /game start, /checkin on day 0, /vote by day (the town
hangs a suspect), /night for every role with a move, /master advance to end each
phase. Every HTTP request the bot makes is captured by the fake Discord.

Lower bound (what no design can go below):
    one response per interaction
  + one public post per public action (vote, withdrawal, check-in: posted by the outbox
    in the game channel, since the reply may be typed elsewhere and a crash must not
    lose it; the reply only confirms, to the sender)
  + the signup board (one post by the outbox; /game create's reply only confirms)
  + one announcement per phase change (each phase opened, and the end of the game)
  + the channel set-up (one category and one channel per private team)
  + the private places and the ping role (cogs/delivery/places.py), each call a necessary one:
    per seat one thread, its player and the master let in, one message per command
    that has news for him, and the thread archived at the end; the role created,
    given, taken and deleted once per change the game's outbox asked for
  + the live vote count: one message per voting day, and one edit per command that
    changed it (the bench lets each command's messages go out before the next command,
    so no two of them can be merged: these are the tally's outbox entries)
Anything else (signup edits, welcome lines, separate death notices, archiving the
channels) is overhead the ratio shows.

Also reported: the busiest channel's peak messages per 5 s (`ChannelPosts`), the
figure Discord limits per channel (5 per 5 s); the storm (bench/storm.py) reports it too.
"""

from __future__ import annotations

import contextlib
import json
import random
import re
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from cogs.delivery.places import is_place_key
from cogs.delivery.tally import TALLY_KIND
from core.game.engine import legal_targets, night_move
from core.game.roles import Side
from core.game.state import PhaseKind
from core.sight.places import PING_KIND, PLACE_KIND
from core.storage.models import Outbox

from .e2e import EVERYTHING, PLAYERS, running_bot

MAX_PHASES = 60
CHANNEL_LIMIT = 5  # Discord: 5 messages per 5 s per channel
CHANNEL_WINDOW = 5.0
_MESSAGES = re.compile(r"/channels/(\d+)/messages$")


class ChannelPosts:
    """Every message the bot posted, by channel, with the time the fake Discord accepted
    it on the fake's own clock (the one its limits are judged on: real time, plus the
    waits the harness skipped), to find the busiest channel's peak per 5 s."""

    def __init__(self, h: Any) -> None:
        self.h = h
        self.times: dict[int, list[float]] = defaultdict(list)

    @contextlib.contextmanager
    def installed(self) -> Iterator[ChannelPosts]:
        handle, clock = self.h.fake.handle, self.h.fake.limits.clock

        async def counted(method: str, url: str, kwargs: Any) -> Any:
            response = await handle(method, url, kwargs)
            if method == "POST" and response.status < 300:
                found = _MESSAGES.search(url.split("?", 1)[0])
                if found is not None:
                    self.times[int(found.group(1))].append(clock())
            return response

        self.h.fake.handle = counted
        try:
            yield self
        finally:
            self.h.fake.handle = handle

    def peak(self, window: float = CHANNEL_WINDOW) -> dict[str, Any]:
        """The most messages one channel got within any `window` seconds (sliding), and
        how many channels were posted in."""
        best, busiest = 0, None
        for channel, times in self.times.items():
            times = sorted(times)
            first = 0
            for last, moment in enumerate(times):
                while moment - times[first] >= window:
                    first += 1
                if last - first + 1 > best:
                    best, busiest = last - first + 1, channel
        return {"peak": best, "channel": busiest, "window_s": window,
                "channels": len(self.times), "messages": sum(map(len, self.times.values())),
                "limit": CHANNEL_LIMIT}


async def rest_per_game(workdir: Path, seed: int = 5) -> dict[str, Any]:
    rng = random.Random(seed)
    async with running_bot(workdir / "rest") as bench:
        h, bot = bench.h, bench.bot
        # every command is waited out before the next (the outbox idle): at that pace
        # each vote edits the live count, as it did with the old 5 s interval; production's
        # TALLY_INTERVAL (60 s) would make each wait a minute and save only what a burst
        # saves (bench/targets.py measures that, in real time)
        bot.delivery.tallies.interval = 0.0
        guild = h.add_guild("REST Club", locale="en-US")
        h.set_bot_permissions(EVERYTHING, guild)
        master = h.add_member("Master", guild)
        players = [h.add_member(f"P{i + 1}", guild) for i in range(PLAYERS)]
        channel = guild.general_id
        first = len(h.fake.requests)
        with ChannelPosts(h).installed() as posts:
            interactions = 0
            caused: list[tuple[str, list[Any]]] = []  # (command, REST calls besides its response)

            async def do(user: Any, command: str, **options: Any) -> Any:
                """One interaction, then everything its outbox entries send."""
                nonlocal interactions
                interactions += 1
                since = len(h.fake.requests)
                res = await h.slash(user, command, channel=channel, **options)
                await bot.outbox.idle(within=60)
                await h.settle()
                caused.append((command, [r for r in h.fake.requests[since:] if r.kind == "rest"]))
                return res

            res = await do(master, "game create", title="Bench", extra_roles=True, currency=True,
                           shop=True, crypto=True)
            assert res.ephemeral, res.text  # the board is the outbox's post, counted below
            info = await bot.service.game_in_channel(channel)
            assert info is not None
            for p in players:
                res = await do(p, "game join")
                assert res.ephemeral, res.text
            res = await do(master, "game start")
            assert res.ephemeral, res.text
            for _ in range(MAX_PHASES):
                state = await bot.service.state(info.id)
                if state.over:
                    break
                living = [p.uid for p in state.living()]
                if state.phase is PhaseKind.DAY and state.number == 0:
                    for uid in living:
                        await do(uid, "checkin")
                elif state.phase is PhaseKind.DAY:
                    suspects = [p.uid for p in state.living()
                                if p.side not in (Side.CITIZENS, Side.POSITIVE)] or living
                    target = rng.choice(suspects)
                    for uid in living:
                        if uid != target:
                            await do(uid, "vote", player=str(target))
                    others = [u for u in living if u != target]
                    if others:
                        await do(target, "vote", player=str(rng.choice(others)))
                else:
                    for uid in living:
                        if night_move(state, uid) is None:
                            continue
                        targets = legal_targets(state, uid, "night")
                        if targets:
                            await do(uid, "night", target=str(rng.choice(targets)))
                await do(master, "master advance")
            state = await bot.service.state(info.id)
            assert state.over, "the benchmark game did not end"
            info = await bot.service.info(info.id)
            log = await bot.service.log(info.id)
            events = Counter(e.kind for _, _, evs in log for e in evs)
            tally_entries = await Outbox.filter(game_id=info.id, kind=TALLY_KIND).count()
            requests = h.fake.requests[first:]
            places_bound = await _places_bound(info.id, info.private_channels)

    by_kind = Counter(r.kind for r in requests)
    by_route = Counter(r.route or f"{r.method} {r.path}" for r in requests if r.kind == "rest")
    responses = by_kind["interaction"] + by_kind["webhook"]
    teams = sum(1 for key in info.private_channels if not is_place_key(key))
    phases = events["phase_started"]
    # check-ins have no post of their own: day 0's check-in list shows them (tally entries)
    public_actions = events["vote_cast"] + events["vote_withdrawn"]
    # a day's live count is posted with its first vote (none for a day nobody voted in);
    # day 0's check-in list is posted at dawn: one live message each
    voted: set[int] = set()
    day = 0
    for _, _, evs in log:
        for e in evs:
            if e.kind == "phase_started":
                day = e.data["number"] if e.data["phase"] == "day" else -1
            elif e.kind == "vote_cast" and day > 0:
                voted.add(day)
    voting_days = len(voted) + 1
    board = 1  # the signup board
    bound = interactions + board + public_actions + (phases + 1) + (1 + teams) \
        + places_bound + tally_entries
    total = len(requests)
    # a storm: calls per player beyond the one private message (and place set-up) each
    # player's news needs
    threads = {v for k, v in info.private_channels.items() if k.startswith("place:")}
    placed = [sum(1 for r in rest if _for_places(r, threads)) for _, rest in caused]
    others = [(cmd, len(rest) - p) for (cmd, rest), p in zip(caused, placed, strict=True)]
    worst = max(others, key=lambda s: s[1]) if others else ("-", 0)
    dms = sum(n for route, n in by_route.items() if "/users/@me/channels" in route)
    return {
        "players": PLAYERS, "phases": phases, "interactions": interactions,
        "teams": teams, "public_actions": public_actions, "rest_calls": total,
        "responses": responses,
        "other_rest_calls": total - responses, "lower_bound": bound,
        "places_bound": places_bound, "places_calls": sum(placed),
        "ratio": total / bound, "target_ratio": 1.5, "by_route": dict(by_route.most_common()),
        "max_rest_for_one_command": {"command": worst[0], "calls": worst[1]},
        "dm_channels_opened": dms, "voting_days": voting_days, "tally_entries": tally_entries,
        "tally_posts": bot.delivery.tallies.posts, "tally_edits": bot.delivery.tallies.edits,
        # a storm: one command making a REST call per player (or more) besides its response
        "storm": worst[1] >= PLAYERS or dms > 0,
        "winners": list(state.winners), "draw": state.draw,
        "channel_peak": posts.peak(),
    }


PLACE_ROUTES = ("/thread-members/", "/threads", "/roles")


def _for_places(request: Any, threads: set[int]) -> bool:
    """A call made for the private places or the ping role: threads, thread members,
    roles, or anything in a place (its messages, its archiving)."""
    path = request.path or ""
    if any(part in path for part in PLACE_ROUTES):
        return True
    channel = request.params.get("channel_id")
    return channel is not None and int(channel) in threads


async def _places_bound(game_id: int, keys: dict[str, int]) -> int:
    """The calls the places and the role cannot do without, from the game's outbox."""
    seats = sum(1 for key in keys if key.startswith("place:"))
    calls = seats * (1 + 2 + 1)  # thread, player and master let in, archived at the end
    for kind, payload in await Outbox.filter(game_id=game_id, kind__in=[PING_KIND, PLACE_KIND]) \
            .values_list("kind", "payload"):
        data = json.loads(payload)
        calls += len(data.get("add", [])) + len(data.get("remove", []))
        if kind == PING_KIND and data.get("create"):
            calls += 2  # the role made, and deleted at the end
        if kind == PLACE_KIND and data.get("events"):
            calls += 1  # one message of news
    return calls
