"""What one viewer may see of a game: the Discord layer's only door to a game's state.

The cogs never hold a GameState. They ask this facade a question about a game (its
public view, one player's card, the players one may name in an option, whether one may
use the master's tools) and get back a view (core.sight.views, core.sight.visibility,
core.sight.guide)
or a plain value: what that viewer is allowed to know, computed by the rules' side.
Secrecy then holds at one boundary, as an observer per viewer holds it in OpenSpiel.

A command goes through `apply`, which answers with an `Outcome`: the events and the
few facts of the new state a reply needs, never the state itself.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import NamedTuple

from core.game import access
from core.game.access import ChannelKind as ChannelKind
from core.game.access import Sight as Sight
from core.game.access import game_place_refusal as game_place_refusal
from core.game.commands import Command
from core.game.events import Event, EventKind
from core.game.state import GameState
from core.play.balance import Job, job_for
from core.sight import desk, legal, places, views
from core.sight.guide import Guide, guide
from core.sight.places import PING_KIND as PING_KIND
from core.sight.places import PLACE_KIND as PLACE_KIND
from core.sight.places import SILENCE_KIND as SILENCE_KIND
from core.sight.record import NotFinished as NotFinished
from core.sight.record import team_channel_readers
from core.sight.tallies import record_fields
from core.sight.views import LobbyView, ShopView
from core.sight.visibility import (
    Card,
    LiveTally,
    PublicView,
    RecordCount,
    card,
    live_count,
    living_choices,
    public_view,
)
from core.storage.patches import ServerOverwrite as ServerOverwrite
from core.storage.patches import overwrite_key as overwrite_key
from core.storage.service import EVENT_KIND as EVENT_KIND
from core.storage.service import Applied
from core.storage.service import DiscordPatch as DiscordPatch
from core.storage.service import GameInfo as GameInfo
from core.storage.service import GameService as GameService
from core.storage.service import OutboxItem as OutboxItem

History = list[tuple[int, Command, list[Event]]]


class SeatNews(NamedTuple):
    """A seat's push as its holder may read it now (one read of the game)."""

    holder: int
    events: list[Event]  # those whose reason still holds (core.sight.places.stale)
    card: Card | None  # his whole card, when a role was dealt among them


class Outcome:
    """A committed command as the Discord layer sees it: its events and what a reply
    may say of the new state (the state itself stays behind the facade)."""

    __slots__ = ("_state", "answered", "events", "game_id", "seq")

    def __init__(self, applied: Applied) -> None:
        self.events: list[Event] = applied.events
        self.game_id = applied.game_id
        self.seq = applied.seq
        self.answered = applied.answered  # held outbox entries the caller answers itself
        self._state = applied.state

    @property
    def players(self) -> int:
        """Seats taken (the signup's count after a join or a leave)."""
        return len(self._state.players)

    @property
    def deadline(self) -> datetime | None:
        return self._state.deadline

    @property
    def started(self) -> bool:
        return self._state.started

    @property
    def spectators_see_teams(self) -> bool:
        return self._state.options.spectators_see_teams

    def record_count(self, event: Event) -> RecordCount | None:
        """The day's count `event`'s public record carries (a vote, a withdrawal): the
        same fields its outbox entry carries, so a reply and a post read alike."""
        fields = record_fields(self._state, event)
        return RecordCount.model_validate(fields["count"]) if fields else None

    def lobby(self) -> LobbyView:
        """The signup as this command left it."""
        return views.lobby_view(self._state)

    def balance_job(self) -> Job:
        """The balance estimate's job for the setup as this command left it (it knows
        the setup only, nothing secret)."""
        return job_for(self._state)


class Observer:
    """Questions about a game, answered for one viewer (game ids in, views out)."""

    def __init__(self, service: GameService) -> None:
        self.service = service

    async def _state(self, game_id: int) -> GameState:
        return await self.service.state(game_id)

    # --- commands -------------------------------------------------------------------
    async def apply(self, game_id: int, command: Command, *,
                    answer: Callable[[Event], bool] | None = None,
                    reply: str | None = None) -> Outcome:
        """Apply and commit `command` (GameService.apply, `answer` and `reply`
        included); RuleError if refused."""
        return Outcome(await self.service.apply(game_id, command, answer=answer,
                                                reply=reply))

    async def answered(self, game_id: int, ordinals: Sequence[int], *,
                       release: bool = False) -> None:
        """The caller answered these held outbox entries itself, or (`release`) leaves
        them to the worker (GameService.answered)."""
        await self.service.answered(game_id, ordinals, release=release)

    # --- the table ------------------------------------------------------------------
    async def view(self, game_id: int) -> PublicView:
        """What anyone at the table may see (the same for every viewer)."""
        return public_view(await self._state(game_id))

    async def live_count(self, game_id: int) -> LiveTally | None:
        """The day's live board as it stands now (public: the same for everyone)."""
        return live_count(await self._state(game_id))

    async def card(self, game_id: int, uid: int) -> Card:
        """`uid`'s own card; RuleError(not_a_player) for anyone without a seat."""
        return card(await self._state(game_id), uid)

    async def lobby(self, game_id: int) -> LobbyView:
        return views.lobby_view(await self._state(game_id))

    async def balance_job(self, game_id: int) -> Job:
        """The balance estimate's job for the setup as it stands (/game start asks for
        the estimate of what it would deal)."""
        return job_for(await self._state(game_id))

    async def started(self, game_id: int) -> bool:
        return (await self._state(game_id)).started

    async def seats(self, game_id: int) -> list[int]:
        """Every seat's current holder, in seat order (whose display names to look up)."""
        return views.seat_uids(await self._state(game_id))

    async def private_reader(self, game_id: int, uid: int) -> bool:
        """The game writes to `uid` privately (a seat, the standby list, the master's
        desk): his language is worth remembering (core.sight.places.private_reader)."""
        return places.private_reader(await self._state(game_id), uid)

    async def seated(self, game_id: int, uid: int) -> bool:
        return (await self._state(game_id)).player(uid) is not None

    async def living(self, game_id: int) -> list[tuple[int, str]]:
        """The living players with their labels, in seat order (the day's vote menu)."""
        return living_choices(await self._state(game_id))

    async def dead_among(self, game_id: int, uids: list[int]) -> list[int]:
        """Those of `uids` who hold a seat and are dead (public knowledge)."""
        state = await self._state(game_id)
        return [u for u in uids if (p := state.player(u)) is not None and not p.alive]

    # --- naming players -------------------------------------------------------------
    async def player(self, game_id: int, text: str) -> int:
        """A player option as typed (an id, a mention or a name) resolved to a uid."""
        return views.parse_player(text, await self._state(game_id))

    async def choices(self, game_id: int, uid: int, kind: str,
                      shown: Mapping[int, str]) -> list[tuple[int, str]]:
        """The players `uid` may name in an option of `kind`, labelled for a menu."""
        return views.target_choices(await self._state(game_id), uid, kind, dict(shown))

    async def cast_targets(self, game_id: int, uid: int, spell: str) -> list[int]:
        """Whom /cast may name with `spell`, by the engine's own target check (a ghost
        for a day spell, never for a night spell)."""
        return legal.cast_targets(await self._state(game_id), uid, spell)

    # --- phases ---------------------------------------------------------------------
    async def seen(self, game_id: int) -> tuple[int, int]:
        """The phase a command's sender is looking at now (core.game.commands.stamped)."""
        return views.phase_seen(await self._state(game_id))

    async def menu_seen(self, game_id: int, day: int) -> tuple[int, int]:
        """The phase a vote menu of `day` was sent in, or a refusal once it is over."""
        return views.menu_seen(await self._state(game_id), day)

    # --- who may do what (core.game.access decides) --------------------------------------
    async def require_master(self, game_id: int, uid: int, *, admin: bool) -> None:
        access.require_master(await self._state(game_id), uid, admin=admin)

    async def may_master(self, game_id: int, uid: int, *, admin: bool) -> bool:
        return access.may_master(await self._state(game_id), uid, admin=admin)

    async def records_host(self, game_id: int, uid: int) -> bool:
        return access.records_host(await self._state(game_id), uid)

    async def sight_rose(self, game_id: int, uid: int, sight: Sight) -> bool:
        """A seated player's rights now show him more than the table was told."""
        state = await self._state(game_id)
        return state.player(uid) is not None and access.sight_rose(state, uid, sight)

    async def seated_sight(self, game_id: int, sights: dict[int, Sight]) -> dict[int, Sight]:
        return access.seated_sight(await self._state(game_id), sights)

    # --- help, the shop -------------------------------------------------------------
    async def guide(self, game_id: int | None, uid: int, *, admin: bool) -> Guide:
        """The reader's guide (None: no game here, the general help)."""
        state = await self._state(game_id) if game_id is not None else None
        return guide(state, uid, admin=admin)

    async def shop(self, game_id: int, uid: int) -> ShopView:
        """/shop: `uid`'s shop, refused when the game is over or has none."""
        return views.open_shop(await self._state(game_id), uid)

    async def attackers(self, game_id: int) -> list[str]:
        return views.attacker_choices(await self._state(game_id))

    async def attacker(self, game_id: int, text: str | None) -> str | None:
        return views.parse_attacker(text, await self._state(game_id))

    # --- the master's desk ----------------------------------------------------------
    async def standby(self, game_id: int) -> list[tuple[int, str]]:
        """The standby list, first come first: (uid, name)."""
        return desk.standby_list(await self._state(game_id))

    async def log_names(self, game_id: int, history: History) -> dict[int, str]:
        """Everyone the master's log names, by the name he knew (file export)."""
        return desk.known_names(history, await self._state(game_id))

    # --- private places (what cogs/delivery/deliverer.py and places.py read) ----------
    async def channel_access(self, game_id: int, team: str) -> tuple[list[int], list[int]]:
        return views.channel_access(await self._state(game_id), team)

    async def archive_channels(self, game_id: int) -> bool:
        return (await self._state(game_id)).options.archive_channels

    async def ping_members(self, game_id: int) -> set[int]:
        return places.ping_members(await self._state(game_id))

    async def seat_holder(self, game_id: int, seat: int) -> int | None:
        return places.seat_holder(await self._state(game_id), seat)

    async def seat_count(self, game_id: int) -> int:
        return len(places.seats(await self._state(game_id)))

    async def fresh(self, game_id: int, events: list[Event], uid: int) -> list[Event]:
        """Those of `events` to `uid` whose reason still holds (a reminder after he voted
        is not sent late: core.sight.places.stale)."""
        state = await self._state(game_id)
        return [e for e in events if not places.stale(state, e, uid)]

    async def seat_news(self, game_id: int, seat: int, events: list[Event]) -> SeatNews | None:
        """What a push to `seat` still tells its holder (None: nobody holds it now)."""
        state = await self._state(game_id)
        holder = places.seat_holder(state, seat)
        if holder is None:
            return None
        fresh = [e for e in events if not places.stale(state, e, holder)]
        dealt = any(e.kind is EventKind.ROLE_DEALT for e in fresh)
        return SeatNews(holder, fresh, card(state, holder) if dealt else None)

    async def team_channel_readers(self, game_id: int, team: str, members: list[int]
                                   ) -> list[int]:
        """Who reads a private channel once the game is over (core.sight.record)."""
        return team_channel_readers(await self._state(game_id), team, members)

