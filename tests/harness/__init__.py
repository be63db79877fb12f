"""Discord test harness: run the real discord.py command tree against a fake Discord.

Nothing talks to the network and nothing in discord.py is mocked.  The harness

* swaps the aiohttp session inside ``bot.http`` for :class:`FakeSession`, so *every*
  request (REST, interaction callbacks, webhook follow-ups) flows through discord.py's own
  request code and is answered by :class:`FakeDiscord` from a payload-shaped
  :class:`FakeWorld` (guilds, roles, members, channels + overwrites, messages, DMs);
* feeds gateway-shaped dicts to ``bot._connection.parse_*`` (READY, GUILD_CREATE,
  INTERACTION_CREATE, and the CHANNEL_/MESSAGE_/GUILD_MEMBER_ events Discord sends after
  each REST mutation), honouring the bot's intents;
* awaits the tasks discord.py spawns for each dispatch and reports what happened.

Usage (pytest-asyncio, ``asyncio_mode=auto``)::

    from tests.harness import Harness

    @pytest.fixture
    async def h():
        bot = make_bot()                       # a commands.Bot, cogs added in setup_hook
        async with Harness(bot) as h:          # login('fake') -> setup_hook -> READY
            yield h

    async def test_create(h):
        guild = h.add_guild("Mafia Club", locale="ru")          # GUILD_CREATE
        alice = h.add_member("Alice", locale="ru")              # GUILD_MEMBER_ADD
        h.set_bot_permissions(discord.Permissions(send_messages=True, view_channel=True))

        res = await h.slash(alice, "game create", title="x", day_minutes=5)
        assert res.ephemeral and "Manage Channels" in res.text
        res.requests_to("POST /guilds/{guild_id}/channels")      # captured HTTP calls

        msg = h.messages_in(guild.general_id)[-1]                # what the bot posted
        res = await h.click(alice, msg, "join")                  # button / select
        res = await h.submit_modal(alice, {"name": "Bob"})       # the modal it showed
        res = await h.autocomplete(alice, "vote", option="player", value="Al")
        assert [c.name for c in res.choices] == ["Alice"]

        ch = h.channel_named("mafia")
        assert ch.overwrites[guild.id].denies("view_channel")
        assert not h.visible_channels(alice).can_view(ch.id)     # secrecy audit

        h.fake.forbid("POST /guilds/{guild_id}/channels")        # next create -> 403 50013
        h.fake.rate_limit("POST /channels/{channel_id}/messages", retry_after=1.0)
        h.fake.server_error("*", times=2); h.fake.timeout("GET /channels/{channel_id}")

        res = await h.dm_slash(alice, "role")                     # DM context (no guild)
        h.dms_to(alice)                                           # what the bot DM'd her

        pending = await h.slash(alice, "ask", wait=False)         # handler blocks in wait_for
        await h.user_message(alice, guild.general_id, "Bob")      # MESSAGE_CREATE
        res = await h.finish(pending)

Option values: ``str``/``int``/``float``/``bool``; users, members, roles and channels as
refs (``h.add_member(...)``), ids or discord.py objects; attachments as
``(filename, bytes)``.  Python parameter names and (renamed) Discord option names both
work; pass ``options={...}`` when a name clashes with a harness keyword (``channel``...).

Each interaction helper returns an :class:`InteractionResult` (``.response_type``,
``.content``, ``.embeds``, ``.components``, ``.flags``, ``.ephemeral``, ``.text``,
``.original``/``.followups`` after deferrals and edits, ``.choices``, ``.modal``,
``.requests``/``.rest_requests``, ``.errors``).  By default the harness raises when:
the bot never acknowledges an interaction (:class:`InteractionNotAcknowledged`), an
exception escapes to discord.py's "Ignoring exception" logger
(:class:`UnhandledInteractionError`, ``.original`` is the unwrapped error), the bot hits an
endpoint the fake does not implement (:class:`UnhandledRouteError`), or handling takes
longer than ``timeout`` (:class:`InteractionTimeout`).  It also refuses to build payloads
Discord could not send (:class:`HarnessError`): unknown options, out-of-range values,
clicking disabled buttons, guild-only commands in DMs, users lacking
``default_member_permissions``...

Fidelity notes: REST handlers enforce the bot's permissions (403 50013 / 50001), Discord's
overwrite-grant rule, role hierarchy, message/embed/component limits, DMs-closed (50007)
and interaction acknowledgement rules (40060, 10062, 10015).  discord.py's retry sleeps
(429 ``retry_after``, 5xx backoff) are scaled by ``retry_sleep_scale`` (default 0 = no
real waiting; requested delays are recorded in ``h.fake.sleeps``).
"""

from .errors import (
    GatewayEventError,
    HarnessError,
    InteractionNotAcknowledged,
    InteractionTimeout,
    UnhandledInteractionError,
    UnhandledRouteError,
)
from .gateway import FakeGatewayWebSocket, GatewayBridge
from .harness import EventResult, Harness, InteractionResult
from .permissions import DEFAULT_BOT, DEFAULT_EVERYONE
from .transport import Captured, CapturedFile, FakeDiscord, FakeResponse, FakeSession, Fault, Reply
from .world import (
    ApiError,
    ChannelRef,
    ChannelView,
    FakeWorld,
    GuildRef,
    MemberRef,
    MessageRecord,
    Overwrite,
    RoleRef,
    UserRef,
    VisibilityReport,
)

__all__ = [
    "DEFAULT_BOT",
    "DEFAULT_EVERYONE",
    "ApiError",
    "Captured",
    "CapturedFile",
    "ChannelRef",
    "ChannelView",
    "EventResult",
    "FakeDiscord",
    "FakeGatewayWebSocket",
    "FakeResponse",
    "FakeSession",
    "FakeWorld",
    "Fault",
    "GatewayBridge",
    "GatewayEventError",
    "GuildRef",
    "Harness",
    "HarnessError",
    "InteractionNotAcknowledged",
    "InteractionResult",
    "InteractionTimeout",
    "MemberRef",
    "MessageRecord",
    "Overwrite",
    "Reply",
    "RoleRef",
    "UnhandledInteractionError",
    "UnhandledRouteError",
    "UserRef",
    "VisibilityReport",
]
