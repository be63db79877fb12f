"""Exceptions raised by the harness (as opposed to the discord.py ones the bot sees)."""

from __future__ import annotations

from collections.abc import Sequence

from .transport import UnhandledRouteError


class HarnessError(AssertionError):
    """The test asked for something Discord itself would not send/allow."""


class InteractionTimeout(HarnessError):
    """The tasks discord.py spawned for an interaction did not finish in time."""


class InteractionNotAcknowledged(HarnessError):
    """The bot never responded to an interaction ("This interaction failed" in Discord)."""


class UnhandledInteractionError(HarnessError):
    """An exception escaped the bot's handlers (discord.py only logged it)."""

    def __init__(self, message: str, errors: Sequence[BaseException]) -> None:
        super().__init__(message)
        self.errors = list(errors)

    @property
    def original(self) -> BaseException:
        """The first error, unwrapped from ``CommandInvokeError``/``HybridCommandError``."""
        error = self.errors[0]
        while getattr(error, "original", None) is not None:
            error = error.original  # type: ignore[attr-defined]
        return error


class GatewayEventError(HarnessError):
    """discord.py failed to parse a gateway payload the fake world produced (harness bug)."""


__all__ = [
    "GatewayEventError",
    "HarnessError",
    "InteractionNotAcknowledged",
    "InteractionTimeout",
    "UnhandledInteractionError",
    "UnhandledRouteError",
]
