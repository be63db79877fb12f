"""Every message the bot builds fits Discord's limits by construction, with the longest
inputs the commands allow, and republished user text never renders as markup.

Events come from whole simulated games (30 players, every module), with every user-typed
field blown up to its maximum (1,500-character texts and stories, three stories a
morning, 300-character reasons, 15 secret bonuses, a 100-character title and a
1,500-character plot); each renderer's output goes through the same splitting the bot
uses (`pack` for outbox posts, one clamped embed for replies) and is checked both by
`limits.fits` and by the fake Discord's validator (tests/harness), which answers an
oversize payload with 400 / 50035 as Discord does.
"""

from __future__ import annotations

import re
from typing import Any

import discord
import pytest

from cogs.delivery.deliverer import nonce
from cogs.ui import limits
from cogs.ui.limits import Part, chunks, clamp_embed, clip, pack
from cogs.ui.lobby import signup_embed
from cogs.ui.markup import only_role, only_users, user_text
from cogs.ui.render import (
    card_embed,
    event_embed,
    reply_embed,
    shop_embed,
    status_embed,
    tally_embed,
)
from core.game.events import Event
from core.game.state import GameState, Notice, Options
from core.play.sim import play
from core.sight.views import lobby_view, shop_view
from core.sight.visibility import card, public_view
from tests.harness.world import ApiError, validate_message_body

EVIL = "[official rules](https://evil.example/login) **x** @everyone "
TEXT = (EVIL * 40)[:1500]
REASON = (EVIL * 10)[:300]
EVERY_MODULE = Options(extra_roles=True, currency=True, shop=True, crypto=True)


def masked_links(text: str) -> list[str]:
    return re.findall(r"(?<!\\)\[[^\]\n]*\]\(\s*<?https?://", text)


def payload(part: Part) -> dict[str, Any]:
    return {"content": part.content, "embeds": [e.to_dict() for e in part.embeds]}


def check(parts: list[Part]) -> str:
    """Every part within the limits (ours and the fake Discord's); their text joined."""
    texts = []
    for part in parts:
        body = payload(part)
        assert limits.fits(body) == [], limits.fits(body)
        try:
            validate_message_body(body, has_files=False, editing=False)
        except ApiError as exc:  # pragma: no cover - the failure message
            pytest.fail(f"Discord would refuse it: {exc}")
        texts.append(part.content or "")
        for e in part.embeds:
            texts += [e.title or "", e.description or "", e.footer.text or ""]
            texts += [f"{f.name}\n{f.value}" for f in e.fields]
    text = "\n".join(texts)
    assert not masked_links(text), masked_links(text)
    return text


def inflated(event: Event) -> Event:
    """The event with every user-typed field at the longest the commands allow."""
    data = dict(event.data)
    if "text" in data:
        data["text"] = TEXT
    if "story" in data:
        data["story"] = TEXT
    if event.kind == "morning":
        data["stories"] = [f"story{i} " + TEXT[:1490] for i in range(3)]
    if "reason" in data:
        data["reason"] = REASON
    if event.kind == "payouts":
        uids = sorted({line["uid"] for line in data["lines"]})
        data["bonuses"] = [{"uid": uids[i % len(uids)], "amount": 1000, "secret": True,
                            "reason": f"bonus{i:02d} " + REASON[:290]} for i in range(15)]
    return event.model_copy(update={"data": data})


@pytest.fixture(scope="module")
def games() -> list[Any]:
    return [play(seed, 30, EVERY_MODULE) for seed in (1, 2, 3)]


def test_every_event_of_whole_games_fits_when_posted(games: list[Any]) -> None:
    kinds = set()
    typed = [Event(kind="anon_post", data={"text": TEXT, "signature": sig})
             for sig in ("mafioso", None)]  # the simulator's agents post nothing anonymous
    for played in games:
        for event in [*played.events, *typed]:
            big = inflated(event)
            kinds.add(event.kind)
            for lang in ("ru", "en"):
                text = check(pack(None, [event_embed(big, lang)]))
                if event.kind == "morning" and event.data["victims"]:  # every story whole
                    kinds.add("deadly morning")
                    for i in range(3):
                        assert f"story{i} " + user_text(TEXT[:1490]) in text
                if event.kind == "payouts":
                    for i in range(15):
                        assert f"bonus{i:02d} " + user_text(REASON[:290]) in text
                check([Part(embeds=[reply_embed(big, lang)])])
    assert {"deadly morning", "payouts", "day_result", "game_over", "anon_post"} <= kinds


def test_a_whole_command_worth_of_events_fits_as_the_outbox_batches_them(
        games: list[Any]) -> None:
    """The outbox posts a command's public events together: still within the limits."""
    for played in games:
        embeds = [event_embed(inflated(e), "ru") for e in played.events
                  if e.audience.kind == "public"][-40:]
        check(pack(None, embeds))


def long_state(played: Any) -> GameState:
    state: GameState = played.state.model_copy(deep=True)
    state.title = ("[t](https://evil.example) " * 10)[:100]
    state.plot = TEXT
    state.roles_text = TEXT
    for p in state.players:
        p.name = ("n" * 100)
        p.notices += [Notice(kind="whisper", night=1, data={"text": TEXT, "signature": None})
                      for _ in range(15)]
    return state


@pytest.mark.parametrize("lang", ["ru", "en"])
def test_every_reply_renderer_fits_with_the_longest_inputs(games: list[Any], lang: str) -> None:
    for played in games:
        state = long_state(played)
        view = public_view(state)
        check([Part(embeds=[status_embed(view, lang)])])
        check([Part(embeds=[tally_embed(view, lang)])])
        check([Part(embeds=[signup_embed(lobby_view(state), lang)])])
        for p in state.players:
            check([Part(embeds=[card_embed(card(state, p.uid), lang)])])
            check([Part(embeds=[shop_embed(shop_view(state, p.uid), lang, 10**9)])])


def test_splitting_keeps_every_character_and_cuts_at_lines() -> None:
    text = "\n".join(f"line {i} " + "y" * (i * 37 % 700) for i in range(200))
    pieces = chunks(text, 4096)
    assert all(0 < len(p) <= 4096 for p in pieces)
    assert "\n".join(pieces) == text
    one_line = "z" * 9000
    assert "".join(chunks(one_line, 4096)) == one_line
    assert clip("a" * 300, 256) == "a" * 255 + "…" and len(clip("a" * 300, 256)) == 256
    huge = discord.Embed(title="T" * 400, description="d" * 20000)
    for _i in range(40):
        huge.add_field(name="n" * 300, value="v" * 3000)
    huge.set_footer(text="f" * 3000)
    huge.set_author(name="a" * 300)
    parts = pack("c" * 4500, [huge])
    check(parts)
    assert sum(len(p.content or "") for p in parts) == 4500
    assert sum(len(e.description or "") for p in parts for e in p.embeds) == 20000
    assert sum(f.value.count("v") for p in parts for e in p.embeds for f in e.fields) \
        == 40 * 3000  # type: ignore[union-attr]
    one = clamp_embed(huge)
    check([Part(embeds=[one])])


def test_user_text_is_literal() -> None:
    out = user_text("[official rules](https://evil.example/login) @everyone @here **b** `c`")
    assert not masked_links(out)
    assert "@everyone" not in out and "@here" not in out
    assert "\\*\\*b\\*\\*" in out and "\\`c\\`" in out


def test_allowed_mentions_helpers_allow_exactly_what_they_name() -> None:
    assert discord.AllowedMentions.none().to_dict() == {"parse": []}
    assert only_role(42).to_dict() == {"parse": [], "roles": [42]}
    assert only_users([7]).to_dict() == {"parse": [], "users": [7]}


def test_nonces_fit_discord_and_differ_by_entry_and_part() -> None:
    keys = {nonce(f"g{g}o{o}{s}", p) for g in (1, 2**40) for o in (1, 10**6)
            for s in ("", "w") for p in (0, 9)}
    assert len(keys) == 16 and all(len(k) <= 25 for k in keys)
