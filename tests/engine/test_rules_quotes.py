"""RULES.md quotes the original exactly (issue 33): every Cyrillic quotation in it, «…» or
"…", is found in shared/rules/original-ru.txt, or, when RULES.md quotes the bot's own
Russian wording (listed in BOT_WORDS), in the bot's Russian catalogue.

Compared after normalizing whitespace, case, ё/е and dashes; an ellipsis ("..." or "…")
in a quotation stands for words left out, so the pieces around it must appear in that
order. The original is looked up beside the repository (../shared/rules/original-ru.txt
from the repo root, as CI checks it out); the test skips, saying so, when it is absent.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ORIGINAL = Path(os.environ.get("RULES_ORIGINAL", ROOT.parent / "shared/rules/original-ru.txt"))
RULES = ROOT / "RULES.md"
CATALOGUES = [ROOT / "data/locales/ru.toml", *sorted((ROOT / "data/locales/ru").glob("*.toml"))]

# RULES.md §6 ("Wording") quotes the bot's own Russian texts, not the original's: these
# are checked against the catalogue. Any other quotation must be the original's words.
BOT_WORDS = frozenset({
    "выбывает из игры", "повешение по итогам дня", "в игре / вне игры", "Мастер отменяет игру",
    "против игрока {name}", "бонус игроку {name}", "записались на игру «…»", "24 ч / 12 ч",
    "По итогам дня повешен игрок {uid}. Роль: {role}", "Этой ночью убит игрок {name}",
    "Сегодня от клана ходит {acting}, а не вы", "Куплено: {item} за {cost}",
    "теперь в ней {count} игрока", "личная ветка",
})

CYRILLIC = re.compile("[А-Яа-яЁё]")
GAP = re.compile(r"\.\.\.|…|\{[^}]*\}|\d+")  # words left out, placeholders, figures
BLOCK = re.compile(r"\n(?=\s*\n|- |#|\|)")  # paragraphs, bullets, headings, table rows


def norm(text: str) -> str:
    text = text.replace("ё", "е").replace("Ё", "Е").replace("«", "").replace("»", "")
    text = re.sub("[\u2010-\u2015\u2212-]", "-", text)
    return re.sub(r"\s+", " ", text).casefold().strip()


def quotations(text: str) -> Iterator[tuple[int, str]]:
    """(line, quotation) for every «…» (outermost) and "…" holding Cyrillic letters."""
    depth, start = 0, 0
    for i, ch in enumerate(text):
        if ch == "«":
            start = i if depth == 0 else start
            depth += 1
        elif ch == "»" and depth:
            depth -= 1
            if depth == 0 and CYRILLIC.search(text[start:i]):
                yield text.count("\n", 0, start) + 1, text[start + 1:i]
    offset = 0
    for block in BLOCK.split(text):  # a stray quote mark cannot pair across bullets
        for m in re.finditer(r'"([^"]*)"', block):
            if CYRILLIC.search(m.group(1)):
                yield text.count("\n", 0, offset + m.start()) + 1, m.group(1)
        offset += len(block) + 1


def pieces(quotation: str) -> list[str]:
    return [p for p in (norm(x).strip(" ,.;:") for x in GAP.split(quotation)) if p]


def found_in(parts: list[str], haystack: str) -> bool:
    at = 0
    for part in parts:
        at = haystack.find(part, at)
        if at < 0:
            return False
        at += len(part)
    return True


def catalogue_texts() -> list[str]:
    texts: list[str] = []

    def walk(node: dict[str, object]) -> None:
        for value in node.values():
            if isinstance(value, dict):
                walk(value)
            elif isinstance(value, str):
                texts.append(norm(GAP.sub("\0", value)))

    for path in CATALOGUES:
        walk(tomllib.loads(path.read_text(encoding="utf-8")))
    return texts


def in_catalogue(quotation: str, texts: list[str]) -> bool:
    """Each alternative ("a / b") is some catalogue text, placeholders and figures aside."""
    return all(any(found_in(pieces(alt), text) for text in texts)
               for alt in quotation.split(" / "))


@pytest.fixture(scope="module")
def original() -> str:
    if not ORIGINAL.is_file():
        pytest.skip(f"the original ruleset is not beside the repository: {ORIGINAL}")
    return norm(ORIGINAL.read_text(encoding="utf-8"))


def test_every_cyrillic_quotation_in_rules_md_is_the_originals_or_the_bots(
        original: str) -> None:
    texts = catalogue_texts()
    wrong = []
    for line, quotation in quotations(RULES.read_text(encoding="utf-8")):
        flat = " ".join(quotation.split())
        if flat in BOT_WORDS:
            ok = in_catalogue(flat, texts)
        else:
            ok = found_in(pieces(quotation), original)
        if not ok:
            wrong.append(f"RULES.md:{line}: {flat!r}")
    assert wrong == [], (
        "Quotations not found in the original (or, for the bot's words in BOT_WORDS, in "
        "the Russian catalogue). Quote the original exactly, mark a gap with '...', or "
        "unquote a paraphrase:\n" + "\n".join(wrong))


def test_the_check_finds_what_it_should() -> None:
    """The extraction and comparison themselves: a paraphrase fails, a gap passes."""
    sample = ('- a "не более чем дважды за один ход" b\n'
              '- «Не может быть использовано более чем\n  дважды за один ход»\n'
              '- "Набравший ... игрок" and "in red"\n')
    found = [q for _, q in quotations(sample)]
    assert found == ["Не может быть использовано более чем\n  дважды за один ход",
                     "не более чем дважды за один ход", "Набравший ... игрок"]
    original = norm("Немота – Не может быть использовано более чем дважды за один ход. "
                    "Набравший по итогам дня больше всех голосов игрок")
    assert [found_in(pieces(q), original) for q in found] == [True, False, True]
    assert norm("ещё — тире") == norm("еще - тире")
    texts = [norm(GAP.sub("\0", "{uid} выбывает из игры: {cause}.")),
             norm("в игре"), norm("вне игры")]
    assert in_catalogue("выбывает из игры", texts) and in_catalogue("в игре / вне игры", texts)
    assert not in_catalogue("уходит из игры", texts)
