"""Team ids: who wins together and who shares a private channel.

A team is a clan with its number or a named team (a side that wins as one, the police,
the graveyard). `Team` is the very string it is stored as ("clan:2", "police"), so
stored states, outbox rows and the channel keys in the database read unchanged, and
the Discord layer, which keys channels by it, needs no conversion; core builds and
reads it only through this type.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import GetCoreSchemaHandler
from pydantic_core import core_schema


class TeamKind(StrEnum):
    CLAN = "clan"  # the negatives of one clan: the only numbered kind
    POLICE = "police"  # whoever holds or held the investigator's role, and the operative
    OPCOP = "opcop"  # the police channel's former name: kept so old games still load
    GRAVEYARD = "graveyard"  # the dead, when the master opens their channel
    POSITIVE = "positive"
    NEUTRAL = "neutral"
    CITIZENS = "citizens"


class Team(str):
    """A team id, validated: `Team("clan:2")`, `Team.clan(2)`, `Team.of(TeamKind.POLICE)`.

    Immutable like any string; `str(team)` is the stored form, and `Team(str(team))`
    gives the same team back."""

    __slots__ = ()

    def __new__(cls, value: str) -> Team:
        kind, colon, number = value.partition(":")
        try:
            parsed = TeamKind(kind)
        except ValueError:
            raise ValueError(f"not a team: {value!r}") from None
        numbered = number.isdigit() and not number.startswith("0")
        if (parsed is TeamKind.CLAN) != bool(colon) or (colon and not numbered):
            raise ValueError(f"not a team: {value!r}")
        return super().__new__(cls, value)

    @classmethod
    def parse(cls, value: str) -> Team | None:
        """The team a string names; None if it names none (a side such as "negative")."""
        try:
            return cls(value)
        except ValueError:
            return None

    @classmethod
    def clan(cls, number: int) -> Team:
        return cls(f"{TeamKind.CLAN}:{number}")

    @classmethod
    def of(cls, kind: TeamKind) -> Team:
        """A named team (a clan needs its number: `Team.clan`)."""
        return cls(str(kind))

    @property
    def kind(self) -> TeamKind:
        return TeamKind(self.partition(":")[0])

    @property
    def number(self) -> int | None:
        """The clan's number; None for a named team."""
        number = self.partition(":")[2]
        return int(number) if number else None

    def __repr__(self) -> str:
        return f"Team({str(self)!r})"

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any,
                                     handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        """Validated from its string and stored as that string (states, events)."""
        return core_schema.no_info_after_validator_function(
            cls, core_schema.str_schema(),
            serialization=core_schema.plain_serializer_function_ser_schema(str))
