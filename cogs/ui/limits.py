"""Discord's message limits, and the one place that makes any payload fit them.

Every message the bot sends is cut to these limits by construction: long text is split
at line breaks into several embeds, fields or messages (nothing the rules made public is
dropped), and only where a single part must stay one (a title, a field name, a footer,
an edited signup message) is text shortened with an ellipsis. Discord refuses an
oversize payload outright (400, code 50035), so failing here would lose the message.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import discord

CONTENT = 2000
TITLE = 256
DESCRIPTION = 4096
FIELDS = 25
FIELD_NAME = 256
FIELD_VALUE = 1024
FOOTER = 2048
AUTHOR = 256
TOTAL = 6000  # all embeds of one message together
EMBEDS = 10
ELLIPSIS = "…"


def clip(text: str, limit: int) -> str:
    """`text` shortened to `limit` characters, an ellipsis marking the cut."""
    if len(text) <= limit:
        return text
    return text[:max(0, limit - len(ELLIPSIS))].rstrip() + ELLIPSIS


def chunks(text: str, limit: int) -> list[str]:
    """`text` in pieces of at most `limit` characters, cut at line breaks where possible
    (a single longer line is cut where it must be); no piece is blank."""
    if len(text) <= limit:
        return [text]
    lines: list[str] = []
    for line in text.split("\n"):
        while len(line) > limit:
            lines.append(line[:limit])
            line = line[limit:]
        lines.append(line)
    out: list[str] = []
    current: str | None = None
    for line in lines:
        if current is None:
            current = line
        elif len(current) + 1 + len(line) <= limit:
            current = f"{current}\n{line}"
        else:
            out.append(current)
            current = line
    if current is not None:
        out.append(current)
    return [piece for piece in out if piece.strip()] or [text[:limit]]


def embed_size(embed: discord.Embed) -> int:
    """Characters Discord counts towards the 6,000 of a message."""
    return len(embed)


def _copy_frame(embed: discord.Embed) -> discord.Embed:
    """An empty continuation of `embed`: same colour, no title, text or fields."""
    return discord.Embed(colour=embed.colour)


def split_embed(embed: discord.Embed) -> list[discord.Embed]:
    """One embed as one or more embeds, each within every per-embed limit: a long
    description continues in the next embed, long field values continue in further
    fields, fields beyond 25 in the next embed; the title, field names, footer and
    author are shortened (they are one line by nature)."""
    title = clip(embed.title, TITLE) if embed.title else None
    parts = chunks(embed.description, DESCRIPTION) if embed.description else []
    first = discord.Embed(title=title, description=parts[0] if parts else None,
                          colour=embed.colour, url=embed.url, timestamp=embed.timestamp)
    if embed.author.name:
        first.set_author(name=clip(embed.author.name, AUTHOR), url=embed.author.url,
                         icon_url=embed.author.icon_url)
    if embed.image.url:
        first.set_image(url=embed.image.url)
    if embed.thumbnail.url:
        first.set_thumbnail(url=embed.thumbnail.url)
    out = [first]
    for part in parts[1:]:
        more = _copy_frame(embed)
        more.description = part
        out.append(more)
    # fields: every value within 1,024 (continued under the same name), at most 25 each
    fields: list[tuple[str, str, bool]] = []
    for f in embed.fields:
        name = clip(str(f.name or "—"), FIELD_NAME)
        for i, value in enumerate(chunks(str(f.value or "—"), FIELD_VALUE)):
            fields.append((name if i == 0 else "\u200b", value or "—", bool(f.inline)))
    target = out[-1]
    for name, value, inline in fields:
        if len(target.fields) >= FIELDS or embed_size(target) + len(name) + len(value) > TOTAL:
            target = _copy_frame(embed)
            out.append(target)
        target.add_field(name=name, value=value, inline=inline)
    if embed.footer.text:
        out[-1].set_footer(text=clip(embed.footer.text, FOOTER), icon_url=embed.footer.icon_url)
    return out


def clamp_embed(embed: discord.Embed) -> discord.Embed:
    """One embed that must stay one (a message edited in place): every part shortened to
    its limit, and fields dropped from the end (the last one saying so) to stay within
    the 6,000 of a message."""
    out = discord.Embed(title=clip(embed.title, TITLE) if embed.title else None,
                        description=clip(embed.description, DESCRIPTION)
                        if embed.description else None,
                        colour=embed.colour, url=embed.url, timestamp=embed.timestamp)
    if embed.author.name:
        out.set_author(name=clip(embed.author.name, AUTHOR), url=embed.author.url,
                       icon_url=embed.author.icon_url)
    if embed.footer.text:
        out.set_footer(text=clip(embed.footer.text, FOOTER), icon_url=embed.footer.icon_url)
    for f in embed.fields[:FIELDS]:
        name, value = clip(str(f.name or "—"), FIELD_NAME), clip(str(f.value or "—"),
                                                                  FIELD_VALUE)
        if embed_size(out) + len(name) + len(value) > TOTAL:
            break
        out.add_field(name=name, value=value, inline=bool(f.inline))
    if embed_size(out) > TOTAL and out.description:  # a huge title+footer+description
        out.description = clip(out.description, max(1, DESCRIPTION - (embed_size(out) - TOTAL)))
    return out


@dataclass
class Part:
    """One message of a payload split to fit: its content and embeds."""

    content: str | None = None
    embeds: list[discord.Embed] = field(default_factory=list)


def pack(content: str | None = None, embeds: list[discord.Embed] | None = None) -> list[Part]:
    """A payload as the fewest messages that each fit: content in pieces of 2,000 (the
    first message carries the first piece), embeds split to their limits and grouped at
    most 10 and 6,000 characters a message, in order."""
    texts = chunks(content, CONTENT) if content else []
    parts = [Part(content=text) for text in texts]
    pieces = [e for embed in (embeds or []) for e in split_embed(embed)]
    size = 0
    current: Part | None = parts[-1] if parts else None
    for piece in pieces:
        n = embed_size(piece)
        if current is None or len(current.embeds) >= EMBEDS or \
                (current.embeds and size + n > TOTAL):
            current = Part()
            parts.append(current)
            size = 0
        current.embeds.append(piece)
        size += n
    return parts or [Part()]


def fits(payload: dict[str, object]) -> list[str]:
    """What in a message payload (the JSON Discord receives) breaks a limit; [] if none."""
    problems: list[str] = []
    content = payload.get("content")
    if isinstance(content, str) and len(content) > CONTENT:
        problems.append(f"content {len(content)}")
    embeds = payload.get("embeds") or []
    assert isinstance(embeds, list)
    if len(embeds) > EMBEDS:
        problems.append(f"{len(embeds)} embeds")
    total = 0
    for i, e in enumerate(embeds):
        for key, limit in (("title", TITLE), ("description", DESCRIPTION)):
            n = len(str(e.get(key) or ""))
            total += n
            if n > limit:
                problems.append(f"embed {i} {key} {n}")
        fields = e.get("fields") or []
        if len(fields) > FIELDS:
            problems.append(f"embed {i}: {len(fields)} fields")
        for f in fields:
            name, value = str(f.get("name") or ""), str(f.get("value") or "")
            total += len(name) + len(value)
            if not name or len(name) > FIELD_NAME or not value or len(value) > FIELD_VALUE:
                problems.append(f"embed {i} field {len(name)}/{len(value)}")
        for key, limit in (("footer", FOOTER), ("author", AUTHOR)):
            sub = e.get(key) or {}
            n = len(str(sub.get("text" if key == "footer" else "name") or ""))
            total += n
            if n > limit:
                problems.append(f"embed {i} {key} {n}")
    if total > TOTAL:
        problems.append(f"embeds total {total}")
    return problems
