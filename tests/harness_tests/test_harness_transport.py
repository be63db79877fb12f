"""Harness transport/world tests driven through discord.py's real HTTP and model code.

Uses a plain ``discord.Client`` + ``app_commands.CommandTree`` (no ``commands.Bot``) to
prove the harness does not depend on the ext.commands framework.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import AsyncIterator
from typing import Any

import discord
import pytest
from discord import app_commands

from tests.harness import Harness, HarnessError, UnhandledInteractionError
from tests.harness.transport import FakeDiscord, match_route


class LabelModal(discord.ui.Modal, title="Roles"):
    pick: discord.ui.Label[LabelModal] = discord.ui.Label(
        text="Pick",
        component=discord.ui.Select(
            custom_id="m:pick",
            options=[
                discord.SelectOption(label="A", value="a"),
                discord.SelectOption(label="B", value="b"),
            ],
        ),
    )
    who: discord.ui.Label[LabelModal] = discord.ui.Label(
        text="Who", component=discord.ui.UserSelect(custom_id="m:who")
    )
    note: discord.ui.Label[LabelModal] = discord.ui.Label(
        text="Note", component=discord.ui.TextInput(custom_id="m:note", required=False)
    )

    async def on_submit(self, interaction: discord.Interaction) -> None:
        pick: Any = self.pick.component
        who: Any = self.who.component
        note: Any = self.note.component
        await interaction.response.send_message(
            f"{pick.values} {[u.name for u in who.values]} {note.value!r}"
        )


class TreeClient(discord.Client):
    def __init__(self) -> None:
        intents = discord.Intents.default()
        intents.members = True
        super().__init__(intents=intents)
        self.tree = app_commands.CommandTree(self)
        self.log: list[Any] = []
        tree = self.tree

        @tree.command(name="flavours", description="Every response flavour")
        async def flavours(interaction: discord.Interaction, mode: str) -> None:
            if mode == "ephemeral-defer":
                await interaction.response.defer(ephemeral=True, thinking=True)
                await interaction.edit_original_response(content="done quietly")
            elif mode == "followups":
                await interaction.response.send_message("first")
                await interaction.followup.send("second", ephemeral=True)
                msg = await interaction.followup.send("third", wait=True)
                await msg.edit(content="third (edited)")
            elif mode == "delete":
                await interaction.response.send_message("short-lived")
                await interaction.delete_original_response()
            elif mode == "file":
                await interaction.response.send_message(
                    "report", file=discord.File(io.BytesIO(b"votes: 3"), filename="votes.txt")
                )
            elif mode == "early-followup":
                await interaction.followup.send("too early")
            elif mode == "long":
                await interaction.response.send_message("x" * 2001)

        @tree.command(name="buttons", description="A view with a deferred-update button")
        async def buttons(interaction: discord.Interaction) -> None:
            view = discord.ui.View(timeout=30)

            async def on_click(inter: discord.Interaction) -> None:
                await inter.response.defer()  # type 6: deferred update
                await inter.edit_original_response(content="clicked", view=None)

            button: discord.ui.Button[Any] = discord.ui.Button(label="Go", custom_id="go")
            button.callback = on_click  # type: ignore[method-assign,assignment]
            view.add_item(button)
            view.add_item(discord.ui.Button(label="Off", custom_id="off", disabled=True))
            await interaction.response.send_message("choose", view=view, ephemeral=True)

        @tree.command(name="pick", description="User select")
        async def pick(interaction: discord.Interaction) -> None:
            view = discord.ui.View()
            select: discord.ui.UserSelect[Any] = discord.ui.UserSelect(
                custom_id="who", max_values=2
            )

            async def chosen(inter: discord.Interaction) -> None:
                names = sorted(u.display_name for u in select.values)
                await inter.response.send_message(", ".join(names))

            select.callback = chosen  # type: ignore[method-assign,assignment]
            view.add_item(select)
            await interaction.response.send_message("who?", view=view)

        @tree.command(name="thread", description="Private thread for a member")
        async def thread(interaction: discord.Interaction, member: discord.Member) -> None:
            assert isinstance(interaction.channel, discord.TextChannel)
            t = await interaction.channel.create_thread(
                name="Mafia chat", type=discord.ChannelType.private_thread
            )
            await t.add_user(member)
            await t.send("welcome")
            await interaction.response.send_message(f"thread {t.id}", ephemeral=True)

        @tree.command(name="chunk", description="Chunk + presence")
        async def chunk(interaction: discord.Interaction) -> None:
            assert interaction.guild is not None
            members = await interaction.guild.chunk()
            await interaction.client.change_presence(activity=discord.Game("Mafia"))
            await interaction.response.send_message(str(len(members)))

        @tree.command(name="roles", description="Role management")
        async def roles(
            interaction: discord.Interaction, member: discord.Member, role: discord.Role
        ) -> None:
            try:
                await member.add_roles(role)
            except discord.Forbidden as exc:
                await interaction.response.send_message(f"forbidden {exc.code}")
                return
            await interaction.response.send_message("added")

        @tree.command(name="types", description="Every option type")
        @app_commands.choices(mode=[app_commands.Choice(name="Fast", value="fast")])
        async def types(
            interaction: discord.Interaction,
            ratio: float,
            where: discord.TextChannel,
            role: discord.Role,
            who: discord.User,
            mode: app_commands.Choice[str],
            proof: discord.Attachment | None = None,
        ) -> None:
            self.log.append((ratio, where, role, who, mode, proof))
            await interaction.response.send_message("typed")

        @tree.command(name="labels", description="Modal with labels and selects")
        async def labels(interaction: discord.Interaction) -> None:
            await interaction.response.send_modal(LabelModal())

        @tree.command(name="ping", description="ping")
        async def ping(interaction: discord.Interaction) -> None:
            await interaction.response.send_message("pong")


@pytest.fixture
async def h() -> AsyncIterator[Harness]:
    async with Harness(TreeClient()) as harness:
        harness.add_guild()
        yield harness


def test_route_templates_come_from_discord_py() -> None:
    assert match_route("POST", "/channels/1/messages") == (
        "POST /channels/{channel_id}/messages",
        {"channel_id": 1},
    )
    key, params = match_route("PATCH", "/webhooks/5/tok/messages/@original")
    assert key == "PATCH /webhooks/{webhook_id}/{webhook_token}/messages/@original"
    assert params == {"webhook_id": 5, "webhook_token": "tok"}
    assert (
        match_route("GET", "/channels/1/messages/pins")[0]
        == "GET /channels/{channel_id}/messages/pins"
    )
    assert match_route("GET", "/nope")[0] is None


async def test_response_flavours(h: Harness) -> None:
    alice = h.add_member("Alice")

    quiet = await h.slash(alice, "flavours", mode="ephemeral-defer")
    assert quiet.response_type == 5 and quiet.ephemeral and quiet.text == "done quietly"
    assert quiet.original is not None and not quiet.original.loading

    many = await h.slash(alice, "flavours", mode="followups")
    assert [m.content for m in many.messages] == ["first", "second", "third (edited)"]
    assert [m.ephemeral for m in many.messages] == [False, True, False]
    assert many.text == "first\nsecond\nthird (edited)"
    assert [r.kind for r in many.requests] == ["interaction", "webhook", "webhook", "webhook"]

    gone = await h.slash(alice, "flavours", mode="delete")
    assert gone.original is not None and gone.original.deleted
    assert h.messages_in(h.default_guild.general_id)[-1].content != "short-lived"

    filed = await h.slash(alice, "flavours", mode="file")
    [callback] = filed.requests
    assert callback.files[0].filename == "votes.txt" and callback.files[0].data == b"votes: 3"
    assert filed.original is not None and filed.original.attachments[0]["filename"] == "votes.txt"


async def test_all_option_types_are_transformed_by_discord_py(h: Harness) -> None:
    alice = h.add_member("Alice")
    role = h.add_role("Town")
    stranger = h.add_user("Stranger")  # not a guild member: resolved as a plain User
    res = await h.slash(
        alice,
        "types",
        ratio=0.5,
        where=h.default_guild.general_id,
        role=role,
        who=stranger,
        mode="fast",
        proof=("proof.png", b"png"),
    )
    assert res.text == "typed"
    client = h.bot
    assert isinstance(client, TreeClient)
    ratio, where, got_role, who, mode, proof = client.log[-1]
    assert ratio == 0.5
    assert isinstance(where, discord.TextChannel) and where.id == h.default_guild.general_id
    assert isinstance(got_role, discord.Role) and got_role.name == "Town"
    assert type(who) is discord.User and who.id == stranger.id
    assert mode.value == "fast"
    assert isinstance(proof, discord.Attachment) and proof.filename == "proof.png"
    with pytest.raises(HarnessError, match="declared choices"):
        await h.slash(
            alice,
            "types",
            ratio=1.0,
            where=h.default_guild.general_id,
            role=role,
            who=stranger,
            mode="slow",
        )


async def test_modal_with_labels_and_selects(h: Harness) -> None:
    alice = h.add_member("Alice")
    opened = await h.slash(alice, "labels")
    assert opened.modal is not None
    assert [c["type"] for c in opened.modal["components"]] == [18, 18, 18]
    with pytest.raises(HarnessError, match="must be among"):
        await h.submit_modal(alice, {"m:pick": ["z"]})
    res = await h.submit_modal(alice, {"m:pick": ["b"], "m:who": [alice]})
    assert res.text == "['b'] ['Alice'] ''"
    assert h.open_modals(alice) == []


async def test_discord_rejections_surface_as_discord_exceptions(h: Harness) -> None:
    alice = h.add_member("Alice")
    with pytest.raises(UnhandledInteractionError) as early:
        await h.slash(alice, "flavours", mode="early-followup")
    assert isinstance(early.value.original, discord.NotFound) and early.value.original.code == 10015

    with pytest.raises(UnhandledInteractionError) as long:
        await h.slash(alice, "flavours", mode="long")
    err = long.value.original
    assert isinstance(err, discord.HTTPException) and err.code == 50035
    assert "content" in err.text and "2000" in err.text


async def test_component_deferred_update_and_disabled(h: Harness) -> None:
    alice = h.add_member("Alice")
    bob = h.add_member("Bob")
    res = await h.slash(alice, "buttons")
    assert res.ephemeral and res.custom_ids == ["go", "off"]
    with pytest.raises(HarnessError, match="disabled"):
        await h.click(alice, res, "off")
    with pytest.raises(HarnessError, match="ephemeral to another user"):
        await h.click(bob, res, "go")
    clicked = await h.click(alice, res, "go")
    assert clicked.response_type == 6
    assert clicked.original is not None and clicked.original.id == res.original.id  # type: ignore[union-attr]
    assert clicked.content == "clicked" and clicked.components == []


async def test_user_select_resolves_members(h: Harness) -> None:
    alice = h.add_member("Alice")
    bob = h.add_member("Bob")
    res = await h.slash(alice, "pick")
    chosen = await h.select(alice, res, [alice, bob])
    assert chosen.text == "Alice, Bob"
    assert set(chosen.payload["data"]["resolved"]["members"]) == {str(alice.id), str(bob.id)}


async def test_private_thread_visibility(h: Harness) -> None:
    alice = h.add_member("Alice")
    bob = h.add_member("Bob")
    res = await h.slash(alice, "thread", member=bob)
    thread_id = int(res.text.split()[1])
    assert h.channel(thread_id).type == 12
    assert [m.content for m in h.messages_in(thread_id)] == ["welcome"]
    assert h.visible_channels(bob).can_send(thread_id)
    assert not h.visible_channels(alice).can_view(thread_id)
    thread = h.guild().get_thread(thread_id)
    assert thread is not None and thread.name == "Mafia chat"


async def test_gateway_sends_are_recorded(h: Harness) -> None:
    h.add_member("Alice")
    alice = h.add_member("Alicia")
    res = await h.slash(alice, "chunk")
    assert res.text == "4"  # owner, bot, Alice, Alicia
    sent = [r for r in h.requests if r.kind == "gateway"]
    assert [r.route for r in sent] == ["REQUEST_GUILD_MEMBERS", "PRESENCE_UPDATE"]
    assert sent[1].json["activities"][0]["name"] == "Mafia"


async def test_role_hierarchy_enforced(h: Harness) -> None:
    alice = h.add_member("Alice")
    low = h.add_role("Villager")
    high = h.add_role("Admin", position=10)
    assert (await h.slash(alice, "roles", member=alice, role=low)).text == "added"
    assert low.id in h.world.member_role_ids(h.default_guild.id, alice.id)
    member = h.guild().get_member(alice.id)
    assert member is not None and any(r.id == low.id for r in member.roles)  # GUILD_MEMBER_UPDATE
    assert (await h.slash(alice, "roles", member=alice, role=high)).text == "forbidden 50013"


async def test_server_errors_exhaust_retries(h: Harness) -> None:
    alice = h.add_member("Alice")
    h.fake.server_error("POST /interactions/{webhook_id}/{webhook_token}/callback", times=None)
    with pytest.raises(UnhandledInteractionError) as info:
        await h.slash(alice, "ping", expect_response=False)
    assert isinstance(info.value.original, discord.DiscordServerError)
    assert len(h.requests_to("POST /interactions/{webhook_id}/{webhook_token}/callback")) == 5


async def test_non_strict_and_custom_handlers() -> None:
    fake = FakeDiscord(strict=False)
    resp = await fake.handle("GET", "https://discord.com/api/v10/guilds/1/emojis", {})
    assert resp.status == 200 and fake.unhandled[0].route == "GET /guilds/{guild_id}/emojis"

    fake.add_handler("GET /guilds/{guild_id}/emojis", lambda c: [{"id": str(c.params["guild_id"])}])
    resp = await fake.handle("GET", "https://discord.com/api/v10/guilds/7/emojis", {})
    assert await resp.json() == [{"id": "7"}]

    fake.timeout("GET /guilds/{guild_id}/emojis")
    with pytest.raises(asyncio.TimeoutError):
        await fake.handle("GET", "https://discord.com/api/v10/guilds/7/emojis", {})


async def test_global_rate_limit_with_low_max_timeout_raises_rate_limited() -> None:
    client = TreeClient()
    client.http.max_ratelimit_timeout = 30.0
    async with Harness(client) as h:
        h.add_guild()
        alice = h.add_member("Alice")
        h.fake.rate_limit("POST /channels/{channel_id}/messages", retry_after=60.0)

        channel = h.guild().get_channel(h.default_guild.general_id)
        assert isinstance(channel, discord.TextChannel)
        with pytest.raises(discord.RateLimited):
            await channel.send("hi")
        assert alice.id in h.world.guild(h.default_guild.id).members
