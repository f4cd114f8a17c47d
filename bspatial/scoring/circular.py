"""Circular evaluation of four-option items (VLMEvalKit's CircularEval): the rules, pure.

An item is asked once per rotation of its options, ``A B C D -> B C D A -> C D A B -> D A B C``; the correct
letter moves with its option. The item counts as correct only if every rotation is answered correctly, so a
model that prefers a letter (or a position) cannot collect credit from that preference: a model that always
answers "A" is right in exactly one rotation of every item and scores 0, whatever its plain accuracy.

Rotation 0 is the item as written, so a circular run also yields the plain accuracy of the same answers.

Example:
    >>> rotate_choice(("above", "under", "front", "behind"), "C", 1)
    (('under', 'front', 'behind', 'above'), 'B')
    >>> circular_verdict([True, True, True, True]), circular_verdict([True, False, True, True])
    (True, False)
"""

from __future__ import annotations

from collections.abc import Sequence

from bspatial.scoring.choice import LETTERS

ROTATIONS = len(LETTERS)
"""Rotations per item: every option visits every letter once (CircularEval's passes for four options)."""


def rotate_choice(options: Sequence[str], answer: str, shift: int) -> tuple[tuple[str, ...], str]:
    """The options shifted ``shift`` places to the left (A takes B's text) and the answer letter that follows its text.

    Args:
        options: the four option texts in letter order A-D.
        answer: the correct letter, A-D.
        shift: the rotation index, 0 (as written) to ``ROTATIONS - 1``.

    Example:
        >>> rotate_choice("abcd", "A", 1), rotate_choice("abcd", "A", 3)
        ((('b', 'c', 'd', 'a'), 'D'), (('d', 'a', 'b', 'c'), 'B'))
    """
    if len(options) != ROTATIONS:
        raise ValueError(f"options must hold {ROTATIONS} texts, got {list(options)!r}")
    if answer not in LETTERS:
        raise ValueError(f"answer must be one of {list(LETTERS)}, got {answer!r}")
    if not 0 <= shift < ROTATIONS:
        raise ValueError(f"shift must be in 0..{ROTATIONS - 1}, got {shift!r}")
    rotated = tuple(options[shift:]) + tuple(options[:shift])
    return rotated, LETTERS[(LETTERS.index(answer) - shift) % ROTATIONS]


def circular_verdict(correct: Sequence[bool]) -> bool:
    """An item's circular verdict: correct only if each of its ``ROTATIONS`` rotations was answered correctly."""
    if len(correct) != ROTATIONS:
        raise ValueError(f"a circular verdict needs {ROTATIONS} rotation results, got {len(correct)}")
    return all(bool(c) for c in correct)
