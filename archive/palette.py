"""Colours and line styles readers with colour-blindness can tell apart.

Okabe & Ito's eight colours (yellow left out: too faint on white), each paired
with its own dash pattern and marker, so no line relies on colour alone.
"""

from __future__ import annotations

OKABE_ITO = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"]
DASHES = ["-", "--", "-.", ":", (0, (5, 1, 1, 1, 1, 1)), (0, (8, 2)), (0, (1, 1))]
SVG_DASHES = ["", "8 4", "8 3 2 3", "2 3", "6 2 2 2 2 2", "10 3", "1 2"]
MARKERS = ["o", "s", "^", "D", "v", "P", "X"]
SHOWN = len(OKABE_ITO)  # candidates drawn in colour; the rest are thin grey lines


def style_of(rank: int) -> tuple[str, object, str]:
    """(colour, matplotlib dash, marker) of the candidate ranked `rank` (0 = first)."""
    i = rank % SHOWN
    return OKABE_ITO[i], DASHES[i], MARKERS[i]
