"""Channel overwrites of a game's private channels, per member.

A reader (a dead player, everybody in an after-game archive) must be unable to post
in ANY form: Discord's Send Messages covers only plain messages in the channel, so
threads, reactions, files, polls, voice messages, application commands and webhooks
are each denied explicitly. A member overwrite beats his guild roles' allows.
"""

from __future__ import annotations

import discord

# Every permission that lets a member put something into a channel or its threads.
POSTING: tuple[str, ...] = (
    "send_messages", "send_messages_in_threads", "create_public_threads",
    "create_private_threads", "add_reactions", "attach_files", "embed_links",
    "send_tts_messages", "send_voice_messages", "send_polls", "use_application_commands",
    "use_external_apps", "use_embedded_activities", "mention_everyone",
    "use_external_emojis", "use_external_stickers", "manage_threads", "manage_messages",
    "manage_webhooks", "pin_messages", "create_instant_invite",
)


def member_overwrite(writer: bool, bot: discord.Permissions | None = None
                     ) -> discord.PermissionOverwrite:
    """A member of a private channel: reads its history; writes only if `writer`.

    Discord lets a bot set (allow or deny) only the permissions it holds itself, so a
    reader is denied every posting permission the bot holds (`bot`, all if None); the
    ones a game needs are asked for at /game start (cogs.lobby.REQUIRED_TO_START)."""
    if writer:
        return discord.PermissionOverwrite(view_channel=True, read_message_history=True,
                                           send_messages=True)
    overwrite = discord.PermissionOverwrite(view_channel=True, read_message_history=True)
    held = bot if bot is not None else discord.Permissions.all()
    overwrite.update(**{name: False for name in POSTING
                        if held.administrator or getattr(held, name)})
    return overwrite
