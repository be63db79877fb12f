"""Events: what a command changed, addressed to who may see it.

One flat model keeps rendering uniform: the Discord layer renders
`event.<kind>` from the message catalogue with `data` as parameters, and
sends it where `audience` says. Player ids in data are user ids.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, TypeAdapter

AudienceKind = Literal["public", "players", "team", "master"]


class Audience(BaseModel):
    kind: AudienceKind = "public"
    players: list[int] = Field(default_factory=list)
    team: str | None = None  # 'clan:N', 'police' (investigator+operative), 'graveyard'

    @classmethod
    def public(cls) -> Audience:
        return cls(kind="public")

    @classmethod
    def to(cls, *uids: int) -> Audience:
        return cls(kind="players", players=list(uids))

    @classmethod
    def of_team(cls, team: str, *uids: int) -> Audience:
        return cls(kind="team", team=team, players=list(uids))

    @classmethod
    def master(cls) -> Audience:
        return cls(kind="master")


class Event(BaseModel):
    kind: str
    audience: Audience = Field(default_factory=Audience.public)
    data: dict[str, Any] = Field(default_factory=dict)

    @property
    def public(self) -> bool:
        return self.audience.kind == "public"


EVENTS_ADAPTER: TypeAdapter[list[Event]] = TypeAdapter(list[Event])
