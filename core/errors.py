"""Typed refusals: every rejected command raises one, the state stays as it was.

`code` is stable (it is the message-catalogue key suffix `error.<code>`);
`params` carry what a localized message needs.
"""

from __future__ import annotations

from typing import Any


class RuleError(Exception):
    """A command the rules (or the lobby) do not allow right now."""

    def __init__(self, code: str, **params: Any) -> None:
        super().__init__(code)
        self.code = code
        self.params: dict[str, Any] = params

    def __repr__(self) -> str:
        return f"RuleError({self.code!r}, {self.params!r})"


class SetupError(RuleError):
    """An impossible or unreadable role composition."""
