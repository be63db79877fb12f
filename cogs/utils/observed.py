"""What the command tree (bot.py's MafiaTree) records of each slash command, for the
log and the metrics (cogs/metrics.py) to read: when it was taken, and how it failed."""

from __future__ import annotations

#: Interaction.extras: when the tree took the command (time.perf_counter)
STARTED = "mafia.started"
#: the event a failed command dispatches, with (interaction, outcome); discord.py's
#: app_command_completion tells the others
COMMAND_FAILED = "mafia_command_failed"
#: outcomes: a command that ran, one refused by the rules or a check, one that raised
OK, REFUSED, ERROR = "ok", "refused", "error"
