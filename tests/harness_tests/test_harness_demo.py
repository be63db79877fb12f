"""End-to-end proof of the Discord harness, using a small demo bot defined here.

The demo bot is deliberately independent of the project's cogs: it exercises slash
groups with typed options, checks, autocomplete, persistent/dynamic components, modals,
private channels with overwrites, channel posts, DMs, locales and error paths.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar

import discord
import pytest
from discord import app_commands
from discord.ext import commands

from tests.harness import (
    Harness,
    HarnessError,
    InteractionNotAcknowledged,
    UnhandledInteractionError,
    UnhandledRouteError,
)

T = TypeVar("T")


# ----------------------------------------------------------------------------- demo bot


class LobbyView(discord.ui.View):
    """Persistent view: fixed custom ids, no timeout (re-registered in setup_hook)."""

    def __init__(self) -> None:
        super().__init__(timeout=None)

    @discord.ui.button(label="Join", style=discord.ButtonStyle.green, custom_id="demo:join")
    async def join(self, interaction: discord.Interaction, button: discord.ui.Button[Any]) -> None:
        await interaction.response.send_message(
            f"{interaction.user.display_name} joined", ephemeral=True
        )

    @discord.ui.select(
        custom_id="demo:color",
        placeholder="Pick a colour",
        options=[
            discord.SelectOption(label="Red", value="red"),
            discord.SelectOption(label="Blue", value="blue"),
        ],
    )
    async def color(self, interaction: discord.Interaction, select: discord.ui.Select[Any]) -> None:
        await interaction.response.edit_message(content=f"colour: {select.values[0]}")


class VoteButton(
    discord.ui.DynamicItem[discord.ui.Button[Any]], template=r"demo:vote:(?P<target>\d+)"
):
    def __init__(self, target: int) -> None:
        super().__init__(discord.ui.Button(label="Vote", custom_id=f"demo:vote:{target}"))
        self.target = target

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> VoteButton:
        return cls(int(match["target"]))

    async def callback(self, interaction: discord.Interaction) -> None:
        await interaction.response.send_message(
            f"vote recorded for <@{self.target}>", ephemeral=True
        )


class NameModal(discord.ui.Modal, title="Choose a name"):
    name: discord.ui.TextInput[NameModal] = discord.ui.TextInput(
        label="Name", custom_id="demo:name", max_length=20
    )

    async def on_submit(self, interaction: discord.Interaction) -> None:
        await interaction.response.send_message(f"Hello {self.name.value}", ephemeral=True)


def is_host() -> Callable[[T], T]:
    async def predicate(interaction: discord.Interaction) -> bool:
        member = interaction.user
        if isinstance(member, discord.Member) and any(r.name == "Host" for r in member.roles):
            return True
        raise app_commands.CheckFailure("not host")

    return app_commands.check(predicate)


class DemoCog(commands.Cog):
    game = app_commands.Group(name="game", description="Game commands", guild_only=True)

    def __init__(self, bot: commands.Bot) -> None:
        self.bot = bot
        self.seen: list[dict[str, Any]] = []

    async def cog_app_command_error(
        self, interaction: discord.Interaction, error: app_commands.AppCommandError
    ) -> None:
        if isinstance(error, app_commands.CheckFailure):
            await interaction.response.send_message("Only the host can do that.", ephemeral=True)
            return
        raise error

    @game.command(name="create", description="Create a game")
    @app_commands.rename(day_minutes="day-minutes")
    async def create(
        self,
        interaction: discord.Interaction,
        title: str,
        day_minutes: app_commands.Range[int, 1, 60] = 5,
        private: bool = False,
        cohost: discord.Member | None = None,
    ) -> None:
        self.seen.append(
            {"title": title, "day_minutes": day_minutes, "private": private, "cohost": cohost}
        )
        await interaction.response.defer(thinking=True)
        guild = interaction.guild
        assert guild is not None and isinstance(interaction.user, discord.Member)
        target: discord.abc.Messageable = interaction.channel  # type: ignore[assignment]
        if private:
            overwrites: dict[Any, discord.PermissionOverwrite] = {
                guild.default_role: discord.PermissionOverwrite(view_channel=False),
                interaction.user: discord.PermissionOverwrite(
                    view_channel=True, send_messages=True
                ),
                guild.me: discord.PermissionOverwrite(view_channel=True, send_messages=True),
            }
            if cohost is not None:
                overwrites[cohost] = discord.PermissionOverwrite(
                    view_channel=True, send_messages=False
                )
            try:
                target = await guild.create_text_channel(f"Game {title}", overwrites=overwrites)
            except discord.Forbidden as exc:
                await interaction.followup.send(
                    f"I lack permission to create channels ({exc.code})."
                )
                return
        view = LobbyView()
        view.add_item(VoteButton(interaction.user.id))
        await target.send(f"Lobby for **{title}**", view=view)
        await interaction.followup.send(f"Game {title} created ({day_minutes} min)")

    @game.command(name="secret", description="Host only")
    @is_host()
    async def secret(self, interaction: discord.Interaction) -> None:
        await interaction.response.send_message("the secret is 42", ephemeral=True)

    @game.command(name="announce", description="Post an announcement")
    async def announce(self, interaction: discord.Interaction, text: str) -> None:
        assert isinstance(interaction.channel, discord.TextChannel)
        embed = discord.Embed(title="Announcement", description=text)
        embed.add_field(name="By", value=interaction.user.mention)
        await interaction.channel.send(embed=embed)
        await interaction.response.send_message("posted", ephemeral=True)

    @game.command(name="mkchan", description="Create a channel without error handling")
    async def mkchan(self, interaction: discord.Interaction, name: str) -> None:
        assert interaction.guild is not None
        await interaction.guild.create_text_channel(name)
        await interaction.response.send_message("made")

    @app_commands.command(name="vote", description="Vote for a player")
    async def vote(self, interaction: discord.Interaction, player: str) -> None:
        await interaction.response.send_message(f"You voted for {player}")

    @vote.autocomplete("player")
    async def vote_player(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        assert interaction.guild is not None
        names = sorted(m.display_name for m in interaction.guild.members if not m.bot)
        return [
            app_commands.Choice(name=n, value=n)
            for n in names
            if n.lower().startswith(current.lower())
        ]

    @app_commands.command(name="rename", description="Open the name modal")
    async def rename(self, interaction: discord.Interaction) -> None:
        await interaction.response.send_modal(NameModal())

    @app_commands.command(name="hello", description="Localised greeting")
    async def hello(self, interaction: discord.Interaction) -> None:
        where = "dm" if interaction.guild is None else f"guild:{interaction.guild_locale}"
        kind = type(interaction.user).__name__
        if interaction.locale is discord.Locale.russian:
            await interaction.response.send_message(f"Привет! ({where}, {kind})")
        else:
            await interaction.response.send_message(f"Hello! ({where}, {kind})")

    @app_commands.command(name="whisper", description="DM a player")
    async def whisper(
        self, interaction: discord.Interaction, player: discord.User, text: str
    ) -> None:
        try:
            await player.send(f"psst: {text}")
        except discord.Forbidden as exc:
            await interaction.response.send_message(f"could not DM ({exc.code})", ephemeral=True)
            return
        await interaction.response.send_message("sent", ephemeral=True)

    @app_commands.command(name="silent", description="Forgets to respond")
    async def silent(self, interaction: discord.Interaction) -> None:
        return None

    @app_commands.command(name="crash", description="Raises")
    async def crash(self, interaction: discord.Interaction) -> None:
        raise RuntimeError("boom")

    @app_commands.command(name="emojis", description="Uses an endpoint the fake lacks")
    @app_commands.guild_only()
    async def emojis(self, interaction: discord.Interaction) -> None:
        assert interaction.guild is not None
        await interaction.guild.fetch_emojis()
        await interaction.response.send_message("ok")

    @app_commands.command(name="lookup", description="Fetch a channel via REST")
    @app_commands.guild_only()
    async def lookup(self, interaction: discord.Interaction, channel_id: str) -> None:
        try:
            ch = await self.bot.fetch_channel(int(channel_id))
        except discord.NotFound as exc:
            await interaction.response.send_message(f"not found ({exc.code})", ephemeral=True)
            return
        await interaction.response.send_message(f"found {ch.name}", ephemeral=True)  # type: ignore[union-attr]

    @app_commands.command(name="admin", description="Needs Manage Server")
    @app_commands.default_permissions(manage_guild=True)
    @app_commands.guild_only()
    async def admin(self, interaction: discord.Interaction) -> None:
        await interaction.response.send_message("admin ok", ephemeral=True)

    @commands.Cog.listener()
    async def on_message(self, message: discord.Message) -> None:
        if message.author.bot:
            return
        if message.content == "ping":
            await message.channel.send("pong")


class DemoBot(commands.Bot):
    def __init__(self) -> None:
        intents = discord.Intents.default()
        intents.members = True
        intents.message_content = True
        super().__init__(command_prefix="!", intents=intents)
        self.cog: DemoCog | None = None
        self.ready_fired = False

    async def setup_hook(self) -> None:
        self.cog = DemoCog(self)
        await self.add_cog(self.cog)
        self.add_view(LobbyView())
        self.add_dynamic_items(VoteButton)
        await self.tree.sync()

    async def on_ready(self) -> None:
        self.ready_fired = True


# ----------------------------------------------------------------------------- fixtures


@pytest.fixture
async def h() -> AsyncIterator[Harness]:
    async with Harness(DemoBot(), bot_name="DemoBot") as harness:
        yield harness


# ----------------------------------------------------------------------------- tests


async def test_login_runs_setup_hook_and_ready(h: Harness) -> None:
    bot = h.bot
    assert isinstance(bot, DemoBot)
    assert bot.user is not None and bot.user.id == h.world.bot_id
    assert bot.is_ready() and bot.ready_fired
    sync = h.requests_to("PUT /applications/{application_id}/commands")
    assert len(sync) == 1
    assert {c["name"] for c in sync[0].json} >= {"game", "vote", "hello"}
    # Discord's echo assigned ids which later interactions carry
    assert h.world.command_id(None, "game") is not None


async def test_guild_create_populates_discord_py_cache(h: Harness) -> None:
    guild_ref = h.add_guild("Mafia Club", locale="ru")
    alice = h.add_member("Alice")
    guild = h.bot.get_guild(guild_ref.id)
    assert guild is not None
    assert guild.preferred_locale is discord.Locale.russian
    assert guild.me is not None and guild.me.guild_permissions.manage_channels
    assert any(r.managed and r.is_bot_managed() for r in guild.me.roles)
    general = guild.get_channel(guild_ref.general_id)
    assert isinstance(general, discord.TextChannel) and general.name == "general"
    member = guild.get_member(alice.id)
    assert member is not None and member.name == "Alice"


async def test_slash_group_subcommand_parses_typed_options(h: Harness) -> None:
    h.add_guild()
    alice = h.add_member("Alice")
    bob = h.add_member("Bob")
    res = await h.slash(
        alice, "game create", title="Night", day_minutes=7, private=False, cohost=bob
    )

    assert h.bot.cog is not None  # type: ignore[attr-defined]
    seen = h.bot.cog.seen[-1]  # type: ignore[attr-defined]
    assert seen["title"] == "Night" and seen["day_minutes"] == 7 and seen["private"] is False
    assert isinstance(seen["cohost"], discord.Member) and seen["cohost"].id == bob.id

    # deferred "thinking" response, then the follow-up replaced the loading message
    assert res.response_type == 5 and res.deferred
    assert res.original is not None and not res.original.loading
    assert res.content == "Game Night created (7 min)"
    assert not res.ephemeral
    # the nested payload carried SUB_COMMAND_GROUP/SUB_COMMAND structure + resolved member
    option = res.payload["data"]["options"][0]
    assert option["type"] == 1 and option["name"] == "create"
    assert {o["name"] for o in option["options"]} == {"title", "day-minutes", "private", "cohost"}
    assert str(bob.id) in res.payload["data"]["resolved"]["members"]
    # the lobby was posted in the channel via REST
    assert [r.route for r in res.rest_requests] == ["POST /channels/{channel_id}/messages"]


async def test_option_validation_mirrors_discord_client(h: Harness) -> None:
    h.add_guild()
    alice = h.add_member("Alice")
    with pytest.raises(HarnessError, match="outside"):
        await h.slash(alice, "game create", title="x", day_minutes=61)
    with pytest.raises(HarnessError, match="required option 'title'"):
        await h.slash(alice, "game create")
    with pytest.raises(HarnessError, match="no option 'colour'"):
        await h.slash(alice, "game create", title="x", colour="red")
    with pytest.raises(HarnessError, match="no subcommand"):
        await h.slash(alice, "game destroy")


async def test_check_refuses_with_ephemeral_message(h: Harness) -> None:
    h.add_guild()
    host_role = h.add_role("Host")
    alice = h.add_member("Alice")
    bob = h.add_member("Bob", roles=[host_role])

    refused = await h.slash(alice, "game secret")
    assert refused.ephemeral
    assert refused.text == "Only the host can do that."

    allowed = await h.slash(bob, "game secret")
    assert allowed.ephemeral and "42" in allowed.text


async def test_default_member_permissions_hide_command(h: Harness) -> None:
    h.add_guild()
    alice = h.add_member("Alice")
    with pytest.raises(HarnessError, match="default_member_permissions"):
        await h.slash(alice, "admin")
    mods = h.add_role("Mods", permissions=discord.Permissions(manage_guild=True))
    h.give_role(alice, mods)
    assert (await h.slash(alice, "admin")).text == "admin ok"


async def test_autocomplete_returns_choices(h: Harness) -> None:
    h.add_guild()
    alice = h.add_member("Alice")
    h.add_member("Alan")
    h.add_member("Bob")
    res = await h.autocomplete(alice, "vote", option="player", value="Al")
    assert res.response_type == 8
    assert [c.name for c in res.choices] == ["Alan", "Alice"]
    focused = res.payload["data"]["options"][0]
    assert focused == {"name": "player", "type": 3, "value": "Al", "focused": True}


async def test_persistent_button_select_and_dynamic_item(h: Harness) -> None:
    guild = h.add_guild()
    alice = h.add_member("Alice")
    await h.slash(alice, "game create", title="Lobby")
    lobby = h.messages_in(guild.general_id)[-1]
    assert set(lobby.custom_ids) == {"demo:join", "demo:color", f"demo:vote:{alice.id}"}

    joined = await h.click(alice, lobby, "demo:join")
    assert joined.response_type == 4 and joined.ephemeral
    assert joined.text == "Alice joined"

    picked = await h.select(alice, lobby, ["blue"], "demo:color")
    assert picked.response_type == 7
    assert h.world.message_record(lobby.id).content == "colour: blue"

    voted = await h.click(alice, f"demo:vote:{alice.id}")
    assert voted.text == f"vote recorded for <@{alice.id}>"

    with pytest.raises(HarnessError, match="not an option"):
        await h.select(alice, lobby, ["green"], "demo:color")


async def test_persistent_view_survives_unknown_message(h: Harness) -> None:
    """A message sent by a previous bot process: the persistent view still answers."""
    guild = h.add_guild()
    alice = h.add_member("Alice")
    old = h.world.create_message(
        guild.general_id,
        h.world.bot_id,
        {
            "content": "old lobby",
            "components": [
                {
                    "type": 1,
                    "components": [
                        {"type": 2, "style": 3, "label": "Join", "custom_id": "demo:join"}
                    ],
                }
            ],
        },
    )
    res = await h.click(alice, old.id)
    assert res.text == "Alice joined"


async def test_modal_round_trip(h: Harness) -> None:
    h.add_guild()
    alice = h.add_member("Alice")
    opened = await h.slash(alice, "rename")
    assert opened.response_type == 9
    assert opened.modal is not None and opened.modal["title"] == "Choose a name"

    submitted = await h.submit_modal(alice, {"demo:name": "Zed"})
    assert submitted.ephemeral and submitted.text == "Hello Zed"

    await h.slash(alice, "rename")
    with pytest.raises(HarnessError, match="length"):
        await h.submit_modal(alice, {"demo:name": "x" * 21})


async def test_private_channel_overwrites_and_visibility(h: Harness) -> None:
    guild = h.add_guild()
    alice = h.add_member("Alice")
    bob = h.add_member("Bob")
    carol = h.add_member("Carol")
    res = await h.slash(alice, "game create", title="Secret Night", private=True, cohost=bob)

    create = res.requests_to("POST /guilds/{guild_id}/channels")
    assert len(create) == 1 and create[0].status == 201
    channel = h.channel_named("game-secret-night")  # Discord lowercases/dashes text names
    ow = channel.overwrites
    assert ow[guild.id].denies("view_channel") and ow[guild.id].allow == 0
    assert ow[alice.id].allows("view_channel", "send_messages")
    assert ow[h.world.bot_id].allows("view_channel", "send_messages")
    assert ow[bob.id].allows("view_channel") and ow[bob.id].denies("send_messages")
    assert carol.id not in ow

    for user, view, send in ((alice, True, True), (bob, True, False), (carol, False, False)):
        report = h.visible_channels(user)
        assert report.can_view(channel.id) is view
        assert report.can_send(channel.id) is send
        assert report.can_view(guild.general_id)

    # discord.py learnt about the channel through CHANNEL_CREATE and agrees on permissions
    dguild = h.guild()
    dchannel = dguild.get_channel(channel.id)
    assert isinstance(dchannel, discord.TextChannel)
    for user in (alice, bob, carol):
        member = dguild.get_member(user.id)
        assert member is not None
        assert dchannel.permissions_for(member).value == h.permissions_in(user, channel.id).value

    # the lobby went to the private channel, not #general
    assert [m.content for m in h.messages_in(channel.id)] == ["Lobby for **Secret Night**"]
    assert [m.content for m in h.messages_in(guild.general_id)] == [res.content]
    assert res.content == "Game Secret Night created (5 min)"


async def test_posted_message_is_readable(h: Harness) -> None:
    guild = h.add_guild()
    alice = h.add_member("Alice")
    res = await h.slash(alice, "game announce", text="Day 1 begins")
    assert res.ephemeral and res.text == "posted"
    [post] = h.messages_in(guild.general_id)
    assert post.embeds[0]["title"] == "Announcement"
    assert "Day 1 begins" in post.text and f"By: <@{alice.id}>" in post.text
    assert post.author_id == h.world.bot_id
    # ephemeral replies are not visible in the channel unless asked for
    assert len(h.messages_in(guild.general_id, include_ephemeral=True)) == 2


async def test_forbidden_fault_is_seen_by_command(h: Harness) -> None:
    h.add_guild()
    alice = h.add_member("Alice")
    h.fake.forbid("POST /guilds/{guild_id}/channels")
    res = await h.slash(alice, "game create", title="x", private=True)
    assert res.text == "I lack permission to create channels (50013)."
    assert [r.status for r in res.requests_to("POST /guilds/{guild_id}/channels")] == [403]


async def test_missing_manage_channels_enforced_by_fake_world(h: Harness) -> None:
    h.add_guild()
    alice = h.add_member("Alice")
    h.set_bot_permissions(discord.Permissions(view_channel=True, send_messages=True))
    assert not h.guild().me.guild_permissions.manage_channels  # discord.py saw the role update
    res = await h.slash(alice, "game create", title="x", private=True)
    assert "(50013)" in res.text
    # interaction.app_permissions (from the payload) reflects the channel-level truth
    assert not discord.Permissions(int(res.payload["app_permissions"])).manage_channels


async def test_uncaught_forbidden_surfaces_as_discord_exception(h: Harness) -> None:
    h.add_guild()
    alice = h.add_member("Alice")
    h.fake.forbid("POST /guilds/{guild_id}/channels")
    with pytest.raises(UnhandledInteractionError) as info:
        await h.slash(alice, "game mkchan", name="x")
    original = info.value.original
    assert isinstance(original, discord.Forbidden)
    assert original.status == 403 and original.code == 50013


async def test_dm_context(h: Harness) -> None:
    h.add_guild()
    alice = h.add_member("Alice")
    res = await h.dm_slash(alice, "hello")
    assert res.text == "Hello! (dm, User)"
    assert "guild_id" not in res.payload and res.payload["channel"]["type"] == 1
    with pytest.raises(HarnessError, match="not available in DMs"):
        await h.dm_slash(alice, "game secret")


async def test_locale_dependent_reply(h: Harness) -> None:
    h.add_guild(locale="ru")
    ivan = h.add_member("Ivan", locale="ru")
    bob = h.add_member("Bob")
    assert (await h.slash(ivan, "hello")).text == "Привет! (guild:ru, Member)"
    assert (await h.slash(bob, "hello")).text == "Hello! (guild:ru, Member)"
    assert (await h.slash(bob, "hello", locale=discord.Locale.russian)).text.startswith("Привет")


async def test_dm_send_and_closed_dms(h: Harness) -> None:
    h.add_guild()
    alice = h.add_member("Alice")
    bob = h.add_member("Bob")
    ok = await h.slash(alice, "whisper", player=bob, text="you are mafia")
    assert ok.text == "sent"
    assert [m.content for m in h.dms_to(bob)] == ["psst: you are mafia"]

    h.close_dms(bob)
    closed = await h.slash(alice, "whisper", player=bob, text="again")
    assert closed.text == "could not DM (50007)"


async def test_unacknowledged_interaction_is_reported(h: Harness) -> None:
    h.add_guild()
    alice = h.add_member("Alice")
    with pytest.raises(InteractionNotAcknowledged):
        await h.slash(alice, "silent")
    res = await h.slash(alice, "silent", expect_response=False)
    assert not res.responded


async def test_unhandled_exception_is_reported(h: Harness) -> None:
    h.add_guild()
    alice = h.add_member("Alice")
    with pytest.raises(UnhandledInteractionError) as info:
        await h.slash(alice, "crash")
    assert isinstance(info.value.original, RuntimeError)


async def test_unimplemented_route_is_named(h: Harness) -> None:
    h.add_guild()
    alice = h.add_member("Alice")
    with pytest.raises(UnhandledRouteError, match=r"GET /guilds/\{guild_id\}/emojis"):
        await h.slash(alice, "emojis")
    h.fake.respond("GET /guilds/{guild_id}/emojis", [])
    assert (await h.slash(alice, "emojis")).text == "ok"


async def test_not_found_fault(h: Harness) -> None:
    guild = h.add_guild()
    alice = h.add_member("Alice")
    assert (
        await h.slash(alice, "lookup", channel_id=str(guild.general_id))
    ).text == "found general"
    h.fake.not_found("GET /channels/{channel_id}", channel_id=guild.general_id)
    assert (
        await h.slash(alice, "lookup", channel_id=str(guild.general_id))
    ).text == "not found (10003)"
    # unknown ids give the same 404 from the fake world itself
    assert (await h.slash(alice, "lookup", channel_id="123")).text == "not found (10003)"


async def test_rate_limit_and_server_error_are_retried_by_discord_py(h: Harness) -> None:
    guild = h.add_guild()
    alice = h.add_member("Alice")
    h.fake.rate_limit("POST /channels/{channel_id}/messages", retry_after=2.5)
    h.fake.server_error("POST /channels/{channel_id}/messages", times=1)
    res = await h.slash(alice, "game announce", text="hi")
    attempts = res.requests_to("POST /channels/{channel_id}/messages")
    assert [a.status for a in attempts] == [429, 500, 200]
    assert 2.5 in h.fake.sleeps  # discord.py honoured retry_after (scaled to no real wait)
    assert len(h.messages_in(guild.general_id)) == 1


async def test_timeout_fault(h: Harness) -> None:
    h.add_guild()
    alice = h.add_member("Alice")
    h.fake.timeout("POST /channels/{channel_id}/messages")
    with pytest.raises(UnhandledInteractionError) as info:
        await h.slash(alice, "game announce", text="hi")
    assert isinstance(info.value.original, asyncio.TimeoutError)


async def test_user_message_reaches_listeners(h: Harness) -> None:
    guild = h.add_guild()
    alice = h.add_member("Alice")
    result = await h.user_message(alice, guild.general_id, "ping")
    assert [r.route for r in result.requests] == ["POST /channels/{channel_id}/messages"]
    assert [m.content for m in h.messages_in(guild.general_id)] == ["pong"]
