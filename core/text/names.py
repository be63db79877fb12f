"""Names and free text as people see them: what is blank, what looks the same.

Discord lets a display name or a text option carry characters that show nothing
(zero-width spaces, joiners, the Hangul filler, variation selectors...). Two names
that differ only by those, or by case, look identical in a menu, and a text made of
them looks empty. Pure functions, used by the engine (blank text) and by every place
that lists players for choosing (the vote menu, autocomplete).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping

# Characters that render as nothing but are not format characters (category Cf,
# removed below as a class): Unicode's "default ignorable" code points outside Cf.
_INVISIBLE = frozenset((
    0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x3164, 0xFFA0, 0x2800,
    *range(0x180B, 0x1810),  # Mongolian free variation selectors and vowel separator
    *range(0xFE00, 0xFE10),  # variation selectors
    *range(0xE0100, 0xE01F0),  # variation selectors supplement
))


def _shows_nothing(ch: str) -> bool:
    return ord(ch) in _INVISIBLE or unicodedata.category(ch) in ("Cf", "Cc", "Cs", "Co", "Cn")


def visible(text: str) -> str:
    """`text` without the characters that show nothing."""
    return "".join(ch for ch in text if not _shows_nothing(ch))


def is_blank(text: str | None) -> bool:
    """Whether a text shows nothing: empty, whitespace, or invisible characters only."""
    return text is None or not visible(text).strip()


def fold(name: str) -> str:
    """The form two names must share to be confusable: invisible characters removed,
    compatibility forms unified (NFKC), whitespace collapsed, case folded."""
    text = unicodedata.normalize("NFKC", visible(name))
    return " ".join(text.split()).casefold()


def confusable(a: str, b: str) -> bool:
    """Whether two display names would look alike in a list."""
    return fold(a) == fold(b)


def labels(shown: Mapping[int, str], unique: Mapping[int, str]) -> dict[int, str]:
    """How to list each user for choosing: his display name, plus ` (@unique name)` when
    another listed user's name is confusable with it (or the name shows nothing). Users
    without a unique name get their id."""
    groups: dict[str, list[int]] = {}
    for uid, name in shown.items():
        groups.setdefault(fold(name), []).append(uid)
    out: dict[int, str] = {}
    for key, uids in groups.items():
        for uid in uids:
            name = shown[uid]
            if len(uids) > 1 or not key:
                tag = unique.get(uid) or str(uid)
                name = f"{visible(name).strip() or '?'} (@{tag})"
            out[uid] = name
    return out
