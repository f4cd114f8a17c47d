"""Read the option letter out of a model's answer to a four-option question (paper Appendix 15.1).

The prompt asks for the option's letter and text, e.g. ``C.front``. Real models also write
``(C)``, ``Answer: C``, ``The correct option is (c)``, markdown (``**C**``), ``<answer>C</answer>``,
``\\boxed{C}``, a ``<think>`` block before the answer, or the option text alone. This module turns
any of these into one letter, or says why it cannot.

Policy (never guess; an unparseable answer is scored incorrect, its reason logged):

1. Reasoning: text inside ``<think>...</think>`` is dropped; a ``<think>`` that never closes is
   ``unfinished_reasoning``.
2. Containers win: the last ``<answer>...</answer>``, ``\\boxed{...}`` or JSON ``"answer"`` /
   ``"choice"`` field decides. Malformed markup (nested, stray closing tag, unclosed box) is
   ``malformed_container``, whatever else the text says.
3. Otherwise the last explicit statement decides (``answer is`` / ``answer:`` / ``I choose`` /
   ``option C is correct`` / ``C is correct`` / ``答案是`` / ``选项 C 正确`` / ``Die Antwort ist`` /
   ``La respuesta es`` / ``La réponse est`` / ``Ответ:`` ..., and a rejection followed by the choice:
   ``not A, it is B``, ``not A but B``, ``but it is actually B``). The statement ends at its line:
   ``Answer: B`` followed by an explanation naming other letters is B. If that last statement
   names no offered letter ("Final answer: unknown", "answer is probably B", "answer is E") the
   answer is unparseable: an earlier statement is not used as a fallback.
4. Otherwise a first line that is only an answer (``B``, ``(B).``, ``B. <option B's text>``)
   followed by an explanation with no other line label, letter assertion or hedge ("or maybe C")
   decides. Otherwise implicit forms count: the whole reply is a letter (``C``, ``c.``, ``B;``,
   ``[C]``), a line starts with a label (``C. front``, ``C.front``, ``(c) ...``, ``C: ...``), a reply
   starts with a
   letter and an assertion (``A because ...``, ``b is correct``), a reply ends with
   ``, C.`` / ``; C``, or an upper-case ``(C)`` stands in prose. All letters found this way must
   agree; two different ones (``A or B``, an echoed option list) are ``ambiguous``, and so is a
   letter with a hedged alternative (``B ... or maybe C``; the hedged letter alone is no answer).
5. Otherwise, when option texts are given, a reply that *is* exactly one option's text
   (case, surrounding punctuation and markdown ignored) picks that option. Option text inside a
   longer sentence never counts ("the cup is not yellow" is not option "yellow"), so an option
   that is a substring of another ("left" vs "front-left") cannot be confused.

The corpus of reply shapes this reads (with the peer suites they come from) is
``tests/fixtures/answer_corpus.json``; ``benchmarks/scoring.py`` prints each case's parse.

Deliberately not done: first-capital-letter or first-character heuristics (the article in
"A cup is on the left" is not option A), reading a bare number as an option index, fuzzy or
LLM-judge matching of paraphrased option text, full-width letters (``Ｂ``).

Any reply is read in time linear in its length, with no cap on what is read; no pattern here may
split one run of characters between two quantifiers (``tests/scoring/test_parser_work_bounds.py``
bounds the work on adversarial 1 MB replies).
"""

from __future__ import annotations

import enum
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import repeat

LETTERS: tuple[str, ...] = ("A", "B", "C", "D")  # Appendix 15.1: four options, letters A-D


class ParseStatus(str, enum.Enum):
    """Whether a reply yielded an offered letter."""

    PARSED = "parsed"
    UNPARSEABLE = "unparseable"


# Reasons: a short machine-readable "why" stored in the per-sample logs.
REASON_LETTER = "letter"  # letter-only reply, a line label ("C. front"), or another implicit form
REASON_STATEMENT = "answer_statement"  # "The answer is C", "I choose (c)", "答案是C"
REASON_CONTAINER = "container"  # <answer>C</answer>, \boxed{C}, {"answer": "C"}
REASON_OPTION_TEXT = "option_text"  # the reply is exactly one option's text
REASON_EMPTY = "empty"
REASON_AMBIGUOUS = "ambiguous"  # two different letters asserted
REASON_CONFLICT = "conflict"  # "C. behind" where "behind" is option D's text
REASON_INVALID_LETTER = "invalid_letter"  # a letter that is not offered ("E", "Answer: Z")
REASON_MALFORMED = "malformed_container"
REASON_UNFINISHED = "unfinished_reasoning"  # <think> opened and never closed
REASON_REFUSAL = "refusal"
REASON_NO_ANSWER = "no_answer"
PARSED_REASONS = (REASON_LETTER, REASON_STATEMENT, REASON_CONTAINER, REASON_OPTION_TEXT)
UNPARSEABLE_REASONS = (
    REASON_EMPTY,
    REASON_AMBIGUOUS,
    REASON_CONFLICT,
    REASON_INVALID_LETTER,
    REASON_MALFORMED,
    REASON_UNFINISHED,
    REASON_REFUSAL,
    REASON_NO_ANSWER,
)


_Outcome = tuple[str | None, str]  # (letter or None, reason), before it becomes a ChoiceParse


@dataclass(frozen=True)
class ChoiceParse:
    """The letter read from one reply.

    Attributes:
        letter: one of the offered letters, or None.
        status: ``PARSED`` iff ``letter`` is not None.
        reason: one of ``PARSED_REASONS`` / ``UNPARSEABLE_REASONS``.
    """

    letter: str | None
    status: ParseStatus
    reason: str


# ---------------------------------------------------------------------------------------------
# Patterns. Letters are ASCII only (a full-width "Ｂ" is not read). A letter token needs a
# non-word character (or the text edge) on both sides: "B2", "field_B", "éB", "图B" are not
# letters. Python's \w is Unicode-aware, so CJK and accented neighbours block a match too.
# ---------------------------------------------------------------------------------------------
_OPEN = r"[(\[（【「\"'“‘]"  # wrappers allowed before a letter
_CLOSE = r"[)\]）】」\"'”’]"  # ... and after it
# Polite endings that may follow a letter directly in Japanese / Korean ("Bです", "b입니다").
_CJK_SUFFIX = r"(?:です|입니다|이다)"
# Words that may follow a letter in an answer statement ("the answer is b because ...").
# Nouns and adjectives may not ("the answer is a cup"): there the letter is an article.
_CONTINUATION_WORDS = (
    r"because|since|as|so|and|but|which|that|given|due|based|from|in|on|for|to|here|there|"
    r"is|was|seems|would|should|per|with|according|considering|now|"
    # after a German / Spanish / French / Italian / Portuguese / Russian statement ("Die Antwort ist C, weil").
    r"weil|denn|porque|pues|car|parce|perch[eé]|poich[eé]|pois|потому|так"
)

# Step 1: reasoning blocks (DeepSeek-R1 / Qwen3 <think>, Kimi ◁think▷).
_THINK_OPEN = re.compile(r"<think(?:ing)?>|◁think▷", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</think(?:ing)?>|◁/think▷", re.IGNORECASE)

# Markdown / HTML emphasis that wraps letters: **C**, *C*, `C`, _C_, __C__, <b>C</b>.
_EMPHASIS_CHARS = re.compile(r"[*`]+")
_UNDERSCORE_PAIR = re.compile(r"(?<!\w)(__?)([^\W_]+?)\1(?!\w)")  # paired only: "_B" stays as is
_HTML_EMPHASIS = re.compile(r"</?(?:b|strong|em|i|u|mark)>", re.IGNORECASE)

# Fast path: the clean forms the prompt asks for, matched before anything else. Text after a
# letter is taken only when it is "plain" (words of two or more characters, or digits: no
# single-letter token, bracket, separator or answer keyword that the cascade could read), so the
# fast path and the cascade always agree; tests/scoring/test_choice.py checks this.
_PLAIN_WORD = r"(?:[A-Za-z0-9][A-Za-z0-9'-]*[A-Za-z0-9]|[0-9])"
_PLAIN_TEXT = re.compile(rf"{_PLAIN_WORD}(?: {_PLAIN_WORD})*")
_NOT_PLAIN = re.compile(r"answer|option|choice|selection", re.IGNORECASE)
_FAST_LETTER = re.compile(r"\s*(?:\(\s*([A-Za-z])\s*\)|\[\s*([A-Za-z])\s*\]|([A-Za-z])[.:)]?)\s*")
# Linear work on any reply (tests/scoring/test_parser_work_bounds.py): no two quantifiers may share
# a run of characters. ``([^\n]+?)\s*\.?\s*`` tried every split of a run of n spaces at every length
# of the text (~n^3 steps: 1.4 s for 1,000 spaces, over 20 s for 2,000). The text after a label is
# now the rest of the line from its first to its last non-space character, and the tail
# ``\s*(?:\.\s*)?`` has one parse. Texts only the old pattern read start with a space, are not
# plain, and went to the cascade anyway.
_REST_OF_LINE = r"(\S(?:[^\n]*?\S)?)"
_FULL_STOP_TAIL = r"\s*(?:\.\s*)?"
_FAST_LABEL = re.compile(
    rf"\s*(?:\(([A-Za-z])\)[ \t]+|([A-Za-z])(?:\.[ \t]*|[:)][ \t]+)){_REST_OF_LINE}{_FULL_STOP_TAIL}"
)
_FAST_STATEMENT = re.compile(
    r"\s*(?:the\s+)?(?:correct\s+|final\s+)?answer\s*(?:is(?!\w)|:)\s*(?:\(([A-Za-z])\)|([A-Za-z]))"
    rf"(?:(?:[.:)][ \t]*|[ \t]+){_REST_OF_LINE})?{_FULL_STOP_TAIL}",
    re.IGNORECASE,
)

# Step 2: containers.
_TAG = re.compile(r"(</answer\s*>)|<answer\s*>|(?<![\w</])answer\s*>", re.IGNORECASE)
_BOXED = re.compile(r"\\boxed\s*\{")
_LATEX_TEXT = re.compile(r"\\(?:text|textbf|mathrm|mathbf|mbox)\s*\{([^{}]*)\}")
_JSON_FIELD = re.compile(
    r"[\"'](?:final_answer|answer|choice|option)[\"']\s*:\s*[\"']([^\"'\n]*)[\"']", re.IGNORECASE
)

# Step 3: explicit answer statements. The letter (or option text) follows the anchor.
_ANCHOR = re.compile(
    r"(?:(?<!\w)answer(?:\s+to\s+(?:the|this)\s+question)?\s*"
    r"(?:(?:is|must\s+be|would\s+be|should\s+be|will\s+be)(?!\w)|[:：=])\s*[:：]?"
    r"|(?<!\w)(?:best|correct|right|final|my)\s+(?:choice|option|selection)\s+(?:is|would\s+be|should\s+be)(?!\w)"
    r"\s*[:：]?"
    r"|(?<!\w)I\s+(?:would\s+|will\s+|['’]ll\s+)?(?:choose|pick|select|go\s+with)(?!\w)"
    # lmms-eval mcq_extract's "the choice is"; "I would say B" / "I'd say B".
    r"|(?<!\w)the\s+(?:choice|option|selection)\s+is(?!\w)\s*[:：]?|(?<!\w)I(?:\s+would|['’]d)\s+say(?!\w)"
    # Chinese / Japanese / Korean: 答案是B, 答案为：C, 选D, 选项C, 答えはB, 정답은 b, 답: a, 옵션 C.
    r"|(?:正确)?答案(?:应该)?(?:是|为)|答案|(?:正确)?选项(?:是|为)?|选|所以答|答え(?:は)?|正解(?:は)?|정답은|정답|답은|답|옵션"
    # German, Spanish, French, Portuguese, Italian, Dutch, Russian, Turkish: "Die Antwort ist C",
    # "La respuesta correcta es la C", "La bonne réponse est D", "A resposta é B", "La risposta è C",
    # "Het antwoord is A", "Правильный ответ — C", "Cevap: B".
    # (each needs its verb or a colon: a bare "Antwort" in prose is no statement).
    r"|(?<!\w)antwort(?:\s+(?:ist|lautet)(?!\w)|\s*[:：])|(?<!\w)respuesta(?:\s+correcta)?(?:\s+es(?:\s+la)?(?!\w)|\s*[:：])"
    r"|(?<!\w)r[ée]ponse(?:\s+correcte)?(?:\s+est(?!\w)|\s*[:：])|(?<!\w)resposta(?:\s+correta)?(?:\s+[ée](?!\w)|\s*[:：])"
    r"|(?<!\w)risposta(?:\s+corretta)?(?:\s+[èe](?!\w)|\s*[:：])|(?<!\w)antwoord(?:\s+is(?!\w)|\s*[:：])"
    r"|(?<!\w)ответ(?:\s*[—–:：-])|(?<!\w)cevap\s*[:：]"
    # A rejected option, then the chosen one: "not A, it is B", "It's not A but B", "not A but rather C";
    # and a correction: "At first I thought A, but it is actually B". What follows is read like any answer.
    rf"|(?<!\w)not\s+(?:option\s+)?{_OPEN}?(?-i:[A-Z]){_CLOSE}?(?!\w)\s*(?:[,;]\s*)?"
    r"(?:but(?:\s+rather|\s+it\s+is|\s+it['’]s)?|it\s+is|it['’]s)(?:\s+(?:actually|really))?(?!\w)"
    r"|(?<!\w)but\s+it(?:\s+is|['’]s)\s+(?:actually|really)(?!\w))"
    r"\s*[:：]?",
    re.IGNORECASE,
)
_OPTION_ASSERT = re.compile(
    rf"(?<!\w)(?:option|choice)\s+{_OPEN}*([A-Za-z]){_CLOSE}*(?!\w)\s+(?:is|seems)\s+(?:to\s+be\s+)?"
    r"(?:the\s+)?(?:correct|right|best|answer)(?!\w)"
    # Chinese: "选项 B 正确", "B 是正确的", "B是正确答案" (opencompass first_option_postprocess's forms).
    rf"|(?:选项\s*|(?<!\w)){_OPEN}?([A-Za-z]){_CLOSE}?\s*(?:是正确|是对|正确)(?:答案|的)?",
    re.IGNORECASE,
)
# An upper-case letter asserted correct in prose ("A is not correct. B is correct."); lower case only
# at the start of a reply (_LEADING_ASSERT), where "a is correct" cannot be an article.
_LETTER_ASSERT = re.compile(r"(?<![\w(])\(?([A-Z])\)?\s+is\s+(?:the\s+)?correct(?:\s+(?:answer|option|choice))?(?!\w)"
                            r"(?=[ \t]*(?:$|[.!。,;\n]|(?:because|since|as)(?!\w)))")
# Before a letter, "spaces, wrappers, spaces" is written ``\s*(?:{_OPEN}+\s*)?`` (not
# ``\s*{_OPEN}*\s*``, whose two runs of spaces split n^2 ways): the same texts, one parse.
_VALUE = re.compile(
    rf"\s*(?:(?:option|choice)(?:\s*[:：])?\s+)?(?:{_OPEN}+\s*)?([A-Za-z])(?:(?!\w)|(?={_CJK_SUFFIX})){_CLOSE}*",
    re.IGNORECASE,
)
# A second letter joined by a separator ("A or B", "B and C", "C/D", "A, B"); an article after
# "and" ("C and a cup ...") is not a second letter, hence the lookahead.
_WRAPPED = re.compile(rf"\s*(?:(?:option|choice)(?:\s*[:：])?\s+)?[(\[（【]\s*[A-Za-z][)\]）】]")
_ALTERNATIVE = re.compile(
    rf"\s*(?:,|/|&|\bor\b|\band\b|\bvs\.?)\s*(?:(?:option|choice)\s+)?(?:{_OPEN}+\s*)?([A-Za-z]){_CLOSE}*"
    r"(?=\s*$|\s*[^\w\s]|\s+(?:or|and)\b)",
    re.IGNORECASE,
)
_CONTINUATION = re.compile(
    rf"\s*$|[ \t]*[\r\n]|\s*(?![-'’]\w)[^\w\s]|{_CJK_SUFFIX}|\s*(?:因为|由于|是正确|正确)"
    rf"|\s+(?:{_CONTINUATION_WORDS})(?!\w)",
    re.IGNORECASE,
)

# Step 4: implicit forms.
# Applied to each of str.splitlines() (so \r\n and other line breaks count), hence \s inside.
_LINE_LABEL = re.compile(
    rf"\s*(?:[-•>]\s+)?(?:{_OPEN}\s*([A-Za-z])\s*{_CLOSE}[.:]?"
    # "C." (not "A.I." / "e.g."), "C:", "C)", or a letter alone on its line.
    r"|([A-Za-z])(?:\.(?![A-Za-z]\.)|[:)）](?!\w)|[!;,；，。、]?(?=\s*$)|\s+[-–—](?=\s|$)))"
)
# The whole reply is a letter with a bare prefix: "Option C", "Answer C", "Final answer (c)".
_PREFIXED_LETTER = re.compile(
    rf"\s*(?:final\s+)?(?:answer|option|choice)\s*(?:{_OPEN}+\s*)?([A-Za-z]){_CLOSE}*[.!。]?\s*", re.IGNORECASE
)
_LEADING_ASSERT = re.compile(
    rf"\s*{_OPEN}*([A-Za-z]){_CLOSE}*(?:\s+|\s*,\s*)(?:because|since|as\s|not\s+{_OPEN}*(?-i:[A-Z]){_CLOSE}*(?!\w)"
    r"|is\s+(?:the\s+)?(?:correct|right|best|answer)|seems\s+(?:to\s+be\s+)?(?:the\s+)?(?:correct|right|best))",
    re.IGNORECASE,
)
# A letter offered as an alternative ("or maybe C", "perhaps D"): it makes other letters ambiguous and
# is never an answer by itself ("maybe A" alone stays unparseable).
_HEDGED_LETTER = re.compile(
    rf"(?<!\w)(?i:or|maybe|perhaps|possibly)\s+(?:(?i:maybe|perhaps|possibly|option)\s+)?{_OPEN}?([A-Z]){_CLOSE}?(?!\w)"
)
# Words that make an explanation after an answer line a second candidate ("or maybe C").
_HEDGE = re.compile(
    r"(?<!\w)(?:or|maybe|perhaps|possibly|alternatively|also|might|could|either|unsure|not\s+sure)(?!\w)", re.IGNORECASE
)
# upper case only; Chinese "因此 B。" / "所以C" (therefore) too (opencompass first_option_postprocess)
_TRAILING = re.compile(rf"(?:[,;:，；：]|因此|所以)\s*{_OPEN}*([A-Z]){_CLOSE}*[.!。]?\s*$")
_PAREN_IN_PROSE = re.compile(r"(?<![\w/\\])[(（]\s*([A-Z])\s*[)）](?!\w)")  # upper case only
_LETTER_RUN = re.compile(
    r"(?<!\w)([A-Z])(?!\w)\s*(?:,|/|&|\b[Oo][Rr]\b|\b[Aa][Nn][Dd]\b)\s*(?:[Oo]ption\s+)?([A-Z])(?!\w)"
)
# fullmatch; after the letter, "spaces, wrappers, full stop, spaces" with one parse (see _VALUE).
_BARE_LETTER = re.compile(rf"\s*(?:{_OPEN}+\s*)?([A-Za-z])\s*(?:{_CLOSE}+[.!。]?\s*|[.!。]\s*)?")

# Step 5 and reasons.
_OPTION_NOISE = re.compile(r"[\s\-_]+")
_OPTION_EDGES = "\"'“”‘’`*()[]{}（）【】.,;:!?。，；：！？ \t\n\r"
_LEADING_ARTICLE = re.compile(r"^(?:the|a|an)\s+(?=\S)")  # only a leading article: "banana split" keeps its "a "
_REFUSAL = re.compile(
    r"\b(?:cannot|can't|can not|unable to|not able to|impossible to|sorry|don't know|do not know|"
    r"not sure|unclear|not possible|no correct answer|none of the)\b",
    re.IGNORECASE,
)

# ---------------------------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------------------------


def parse_choice(
    text: str | None, options: Sequence[str] | None = None, letters: Sequence[str] = LETTERS
) -> ChoiceParse:
    """Parse one reply to a multiple-choice question into an option letter.

    Args:
        text: the model's raw reply; None and any string are accepted and never raise.
        options: the option texts in letter order, so that a reply giving only the option's
            text parses and "C. behind" (behind = option D) is caught as a conflict.
        letters: the offered letters (default A-D, Appendix 15.1).

    Returns:
        A :class:`ChoiceParse`; ``status`` is ``UNPARSEABLE`` with a reason when no single
        offered letter can be read.

    Raises:
        ValueError: ``letters`` are not distinct single upper-case letters, or ``options`` does
            not hold one non-empty text per letter.
        TypeError: ``text`` is neither a string nor None.

    Examples:
        >>> parse_choice("C.front").letter
        'C'
        >>> parse_choice("<think>Maybe A?</think> The answer is (c).")
        ChoiceParse(letter='C', status=<ParseStatus.PARSED: 'parsed'>, reason='answer_statement')
        >>> parse_choice("front", options=["above", "under", "front", "behind"]).letter
        'C'
        >>> parse_choice("A cup is on the left.").reason
        'no_answer'
        >>> parse_choice("A or B").reason
        'ambiguous'
    """
    opts = None if options is None else _as_tuple("options", options)
    return _result(_parse(text, _choices(_as_tuple("letters", letters), opts)))


def parse_choices(
    texts: Sequence[str | None],
    options: Sequence[Sequence[str] | None] | None = None,
    letters: Sequence[str] = LETTERS,
) -> list[ChoiceParse]:
    """Parse many replies; the batch path of the VQA metric (100k predictions).

    Identical (reply, options) pairs are parsed once, and the clean forms the prompt asks for
    ("C", "C.", "(C)", "C. front", "C.front") take a precompiled fast path.

    Args:
        texts: raw replies.
        options: per-reply option texts (or None entries), or None for all.
        letters: the offered letters, shared by all replies.

    Returns:
        One :class:`ChoiceParse` per reply, in order.

    Raises:
        ValueError: ``options`` has a different length than ``texts``, or an entry is invalid.
        TypeError: a reply is neither a string nor None.

    Example:
        >>> [p.letter for p in parse_choices(["C", "b. under", "I am not sure"])]
        ['C', 'B', None]
    """
    letter_tuple = _as_tuple("letters", letters)
    if options is not None and len(options) != len(texts):
        raise ValueError(f"options has {len(options)} entries but texts has {len(texts)}")
    # Hot loop (100k replies): group by option set (one tuple hash per reply), then dedupe the
    # reply text within the group (str hashes are cached by Python).
    groups: dict[object, tuple[_Choices, dict[str | None, ChoiceParse]]] = {}
    out: list[ChoiceParse] = []
    append = out.append
    for i, (text, raw) in enumerate(zip(texts, repeat(None) if options is None else options)):
        opts = raw if raw is None or type(raw) is tuple else _as_tuple(f"options[{i}]", raw)
        group = groups.get(opts)
        if group is None:
            try:
                group = groups[opts] = (_choices(letter_tuple, opts), {})
            except ValueError as err:  # name the entry; the cached check only knows "options"
                raise ValueError(f"options[{i}]: {err}") from None
        choices, seen = group
        try:
            parse = seen.get(text)
        except TypeError:  # unhashable: let _parse raise its clear TypeError
            parse = _result(_parse(text, choices))
        if parse is None:
            parse = seen[text] = _result(_parse(text, choices))
        append(parse)
    return out


def strip_reasoning(text: str) -> tuple[str, bool]:
    """Drop ``<think>`` reasoning and return ``(answer part, unfinished)``.

    The answer is what follows the last closing tag (a chat template may have emitted the opening
    tag, so a lone ``</think>`` counts). An opening tag that never closes means the model ran out
    of tokens while reasoning: the text before it is returned with ``unfinished=True``.

    Examples:
        >>> strip_reasoning("<think>left? right?</think>\\nC. front")
        ('\\nC. front', False)
        >>> strip_reasoning("<think>the cup is")
        ('', True)
    """
    if "hink" not in text and "HINK" not in text and "▷" not in text:
        return text, False
    closes = list(_THINK_CLOSE.finditer(text))
    if closes:
        return text[closes[-1].end() :], False
    opened = _THINK_OPEN.search(text)
    if opened:
        return text[: opened.start()], True
    return text, False


# ---------------------------------------------------------------------------------------------
# Validation and the option index
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Choices:
    letters: tuple[str, ...]
    offered: frozenset[str]
    by_text: dict[str, tuple[str, ...]] | None  # normalised option text -> its letters
    by_bare_text: dict[str, tuple[str, ...]] | None  # the same without a leading article
    own_text: dict[str, str] | None  # letter -> normalised option text
    # Exact replies with a known outcome: the fast path's dict lookups. ``letter_forms`` ("C",
    # "(c)", ...) is shared by every option set with the same letters; ``label_forms`` holds the
    # prompt's own format ("C.front", "C. front", "(C) front") for this option set.
    letter_forms: dict[str, _Outcome]
    label_forms: dict[str, _Outcome]


def _as_tuple(field: str, value: object) -> tuple:
    """A sequence as a tuple (the cache key); a bare string is refused, not split into letters."""
    if type(value) is tuple:  # the batch path: skip the slower ABC check
        return value
    if type(value) is list:
        return tuple(value)
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise ValueError(f"{field} must be a sequence of strings, got {value!r}")
    return tuple(value)


def _choices(letters: tuple, options: tuple | None) -> _Choices:
    """Validated letters and option index, cached per distinct (letters, options)."""
    try:
        return _cached_choices(letters, options)
    except TypeError:  # an unhashable entry, e.g. a list inside options
        raise ValueError(f"options must be a sequence of strings, got {options!r}") from None


@lru_cache(maxsize=16384)
def _cached_choices(letters: tuple, options: tuple | None) -> _Choices:
    letter_forms = _letter_forms(letters)
    if options is None:
        return _Choices(letters, frozenset(letters), None, None, None, letter_forms, {})
    if len(options) != len(letters):
        raise ValueError(
            f"options must hold one text per letter ({len(letters)} for {'/'.join(letters)}), "
            f"got {len(options)}: {list(options)!r}"
        )
    if not all(isinstance(option, str) and option.strip() for option in options):
        raise ValueError(f"options must be non-empty strings, got {list(options)!r}")
    own = {letter: _normalise_option(o) for letter, o in zip(letters, options)}
    by_text: dict[str, tuple[str, ...]] = {}
    by_bare_text: dict[str, tuple[str, ...]] = {}
    for letter, norm in own.items():
        by_text[norm] = by_text.get(norm, ()) + (letter,)
        bare = _LEADING_ARTICLE.sub("", norm, count=1)
        by_bare_text[bare] = by_bare_text.get(bare, ()) + (letter,)
    choices = _Choices(letters, frozenset(letters), by_text, by_bare_text, own, letter_forms, {})
    for letter, option in zip(letters, options):
        if not _is_plain(option):
            continue
        outcome = _label_outcome(letter, option, choices, REASON_LETTER)
        for form in (f"{letter}.{option}", f"{letter}. {option}", f"({letter}) {option}"):
            choices.label_forms[form] = outcome
        if by_text[own[letter]] == (letter,):
            choices.label_forms[option] = (letter, REASON_OPTION_TEXT)
    return choices


def _is_plain(text: str) -> bool:
    """True for text the cascade can only read as (possibly) an option's text."""
    return _PLAIN_TEXT.fullmatch(text) is not None and _NOT_PLAIN.search(text) is None


# Formulaic letter-only replies ("C", "(c)", "The answer is C.") and the outcome reason of each.
_LETTER_FORMS = ("{}", "{}.", "({})", "{})", "[{}]", "{}:")
_STATEMENT_FORMS = (
    "Answer: {}",
    "Answer: {}.",
    "Answer: ({})",
    "The answer is {}",
    "The answer is {}.",
    "The answer is ({}).",
    "The correct answer is {}.",
    "The correct answer is ({}).",
)


@lru_cache(maxsize=64)
def _letter_forms(letters: tuple[str, ...]) -> dict[str, _Outcome]:
    """Exact letter-only replies of the fast path, for one (validated) set of letters."""
    bad = [x for x in letters if not (isinstance(x, str) and len(x) == 1 and "A" <= x <= "Z")]
    if bad or len(set(letters)) != len(letters) or len(letters) < 2:
        raise ValueError(f"letters must be at least two distinct single upper-case letters, got {list(letters)!r}")
    forms: dict[str, _Outcome] = {}
    for letter in letters:
        for case in (letter, letter.lower()):
            forms.update({form.format(case): (letter, REASON_LETTER) for form in _LETTER_FORMS})
            forms.update({form.format(case): (letter, REASON_STATEMENT) for form in _STATEMENT_FORMS})
    return forms


def _normalise_option(text: str) -> str:
    """Lower case, no surrounding quotes / markdown / punctuation, hyphens and runs of space as one."""
    return _OPTION_NOISE.sub(" ", text.strip(_OPTION_EDGES).lower()).strip()


def _option_letters(text: str, choices: _Choices) -> tuple[str, ...]:
    """Letters whose option text equals ``text`` as a whole; "mug" matches "the mug" (and back)
    only when no option matches exactly."""
    if choices.by_text is None or choices.by_bare_text is None:
        return ()
    hit = choices.by_text.get(text.lower())  # the common case: the option verbatim
    if hit is not None:
        return hit
    norm = _normalise_option(_EMPHASIS_CHARS.sub("", text))
    hit = choices.by_text.get(norm)
    if hit is None:
        hit = choices.by_bare_text.get(_LEADING_ARTICLE.sub("", norm, count=1))
    return hit or ()


def _label_outcome(letter: str, rest: str, choices: _Choices, reason: str) -> _Outcome:
    """A letter followed by text on the same line: a conflict if the text is another option's."""
    letter = letter.upper()
    if letter not in choices.offered:
        return None, REASON_INVALID_LETTER
    if choices.own_text is not None and rest.strip(_OPTION_EDGES):
        named = _option_letters(rest, choices)
        if named and letter not in named:
            return None, REASON_CONFLICT
    return letter, reason


_RESULTS: dict[_Outcome, ChoiceParse] = {}


def _result(outcome: _Outcome) -> ChoiceParse:
    """Intern results: a frozen parse per (letter, reason) keeps the batch path allocation-free."""
    parse = _RESULTS.get(outcome)
    if parse is None:
        letter, reason = outcome
        status = ParseStatus.PARSED if letter is not None else ParseStatus.UNPARSEABLE
        parse = _RESULTS[outcome] = ChoiceParse(letter, status, reason)
    return parse


# ---------------------------------------------------------------------------------------------
# The cascade
# ---------------------------------------------------------------------------------------------


def _parse(text: str | None, choices: _Choices) -> _Outcome:
    if text is None:
        return None, REASON_EMPTY
    if not isinstance(text, str):
        raise TypeError(f"text must be a string or None, got {type(text).__name__}: {text!r:.80}")
    fast = _fast_path(text, choices)
    return fast if fast is not None else _cascade(text, choices)


def _cascade(text: str, choices: _Choices) -> _Outcome:
    """Steps 1-5 of the module docstring (the fast path is their shortcut for clean replies)."""
    body, unfinished = strip_reasoning(text)
    if body is not text and not unfinished and (fast := _fast_path(body, choices)) is not None:
        return fast  # a clean answer after the reasoning block
    body = _strip_emphasis(body)
    if not body.strip():
        return None, REASON_UNFINISHED if unfinished else REASON_EMPTY
    outcome = _from_containers(body, choices)
    if outcome is None:
        outcome = _from_body(body, choices)
    if outcome == (None, REASON_NO_ANSWER) and _REFUSAL.search(body):
        return None, REASON_REFUSAL
    return outcome


def _fast_path(text: str, choices: _Choices) -> _Outcome | None:
    """The clean forms; returns None to fall through to the full cascade."""
    hit = choices.letter_forms.get(text) or choices.label_forms.get(text)
    if hit is None and (text[:1].isspace() or text[-1:].isspace()):
        text = text.strip()
        hit = choices.letter_forms.get(text) or choices.label_forms.get(text)
    if hit is not None:
        return hit
    m = _FAST_LETTER.fullmatch(text)
    if m:
        letter = (m.group(1) or m.group(2) or m.group(3)).upper()
        return (letter, REASON_LETTER) if letter in choices.offered else (None, REASON_INVALID_LETTER)
    if choices.by_text is None:
        m = _FAST_STATEMENT.fullmatch(text)
        if m and m.group(3) is None:
            return _label_outcome(m.group(1) or m.group(2), "", choices, REASON_STATEMENT)
        return None
    m = _FAST_LABEL.fullmatch(text)
    if m and _is_plain(m.group(3)) and _option_letters(m.group(3), choices):
        return _label_outcome(m.group(1) or m.group(2), m.group(3), choices, REASON_LETTER)
    m = _FAST_STATEMENT.fullmatch(text)
    if m and (m.group(3) is None or (_is_plain(m.group(3)) and _option_letters(m.group(3), choices))):
        return _label_outcome(m.group(1) or m.group(2), m.group(3) or "", choices, REASON_STATEMENT)
    stripped = text.strip().rstrip(".")
    if _is_plain(stripped):
        named = _option_letters(stripped, choices)
        if len(named) == 1:
            return named[0], REASON_OPTION_TEXT
    return None


def _strip_emphasis(text: str) -> str:
    text = _EMPHASIS_CHARS.sub("", text)
    text = _HTML_EMPHASIS.sub("", text)
    return _UNDERSCORE_PAIR.sub(r"\2", text) if "_" in text else text


def _from_body(body: str, choices: _Choices) -> _Outcome:
    """Steps 3-5 on text without containers (also used on a container's content)."""
    outcome = _from_statements(body, choices)
    if outcome is None:
        outcome = _from_implicit(body, choices)
    if outcome is None:
        named = _option_letters(body, choices)
        if len(named) == 1:
            return named[0], REASON_OPTION_TEXT
        outcome = (None, REASON_AMBIGUOUS) if named else (None, REASON_NO_ANSWER)
    return outcome


def _from_containers(body: str, choices: _Choices) -> _Outcome | None:
    """Step 2. None when there is no container markup at all."""
    found: list[tuple[int, str, bool]] = []  # (position, content, closed)
    if "answer" in body.lower():
        tags = _collect_tags(body)
        if tags is False:
            return None, REASON_MALFORMED
        found.extend(tags)
    if ":" in body:
        found.extend((m.start(), m.group(1), True) for m in _JSON_FIELD.finditer(body))
    if "\\boxed" in body:
        boxes = _collect_boxes(body)
        if boxes is False:
            return None, REASON_MALFORMED
        found.extend(boxes)
    if not found:
        return None
    _, content, closed = max(found, key=lambda item: item[0])
    if not closed:
        # "<answer> c" cut off at the end: only a clean letter counts ("<answer>B</wrong>" does not).
        m = _BARE_LETTER.fullmatch(content)
        if not m:
            return None, REASON_MALFORMED
        return _label_outcome(m.group(1), "", choices, REASON_CONTAINER)
    if not content.strip():
        return None, REASON_EMPTY
    letter, reason = _from_body(content, choices)
    return (letter, REASON_CONTAINER) if letter is not None else (None, reason)


def _collect_tags(body: str) -> list[tuple[int, str, bool]] | bool:
    """<answer>..</answer> pairs in order; False when tags nest or a closing tag is stray."""
    out: list[tuple[int, str, bool]] = []
    open_at: int | None = None
    for m in _TAG.finditer(body):
        closing = m.group(1) is not None
        if closing:
            if open_at is None:
                return False
            out.append((open_at, body[open_at : m.start()], True))
            open_at = None
        else:
            if open_at is not None:
                return False
            open_at = m.end()
    if open_at is not None:
        out.append((open_at, body[open_at:], False))
    return out


def _collect_boxes(body: str) -> list[tuple[int, str, bool]] | bool:
    """\\boxed{..} contents (\\text{..} unwrapped); False when a box is unclosed or nested."""
    out: list[tuple[int, str, bool]] = []
    for m in _BOXED.finditer(body):
        depth, i = 1, m.end()
        while i < len(body) and depth:
            depth += {"{": 1, "}": -1}.get(body[i], 0)
            i += 1
        if depth:
            return False
        content = body[m.end() : i - 1]
        if "\\boxed" in content:
            return False
        out.append((m.start(), _LATEX_TEXT.sub(r"\1", content), True))
    return out


def _from_statements(body: str, choices: _Choices) -> _Outcome | None:
    """Step 3: the last explicit statement decides, valid or not."""
    last_anchor = None
    for last_anchor in _ANCHOR.finditer(body):
        pass
    last_assert = None  # the last "option C is correct" / "C is correct" / "选项 C 正确"
    for pattern in (_OPTION_ASSERT, _LETTER_ASSERT):
        for m in pattern.finditer(body):
            if pattern is _LETTER_ASSERT and not body[: m.start()].strip():
                continue  # "C is correct" opening the reply is step 4's leading assertion (reason "letter")
            if last_assert is None or m.start() > last_assert.start():
                last_assert = m
    # An anchor inside the assertion ("B是正确答案" holds 答案) does not outrank it.
    if last_assert is not None and (last_anchor is None or last_anchor.start() < last_assert.end()):
        letter = next(group for group in last_assert.groups() if group)
        return _label_outcome(letter, "", choices, REASON_STATEMENT)
    if last_anchor is None:
        return None
    return _read_value(body[last_anchor.end() :], choices)


def _read_value(after: str, choices: _Choices) -> _Outcome:
    """What follows an answer anchor: a letter, alternatives, an option's text, or nothing usable."""
    line = _first_line(after.lstrip())
    m = _VALUE.match(after)
    if m:
        letter = m.group(1).upper()
        tail = after[m.end() :]
        alt = _ALTERNATIVE.match(tail)
        if alt and alt.group(1).upper() != letter:
            return None, REASON_AMBIGUOUS
        if _CONTINUATION.match(tail) or _WRAPPED.fullmatch(m.group(0)):
            # "(B) 8/11" (MathVista): a bracketed letter is no article, whatever follows it.
            return _label_outcome(letter, _first_line(tail), choices, REASON_STATEMENT)
    # No letter token, or a letter that may be an article ("the answer is a cup"): the whole line
    # as an option's text, then the letter followed by an option's text ("(C) front").
    named = _option_letters(line, choices)
    if len(named) == 1:
        return named[0], REASON_OPTION_TEXT
    if named:
        return None, REASON_AMBIGUOUS
    if m:
        rest = _first_line(after[m.end() :])
        if _option_letters(rest, choices):
            return _label_outcome(m.group(1), rest, choices, REASON_STATEMENT)
    return None, REASON_NO_ANSWER


def _first_line(text: str) -> str:
    lines = text.splitlines()
    return lines[0] if lines else ""


def _leading_answer_line(body: str, choices: _Choices) -> _Outcome | None:
    """Step 4a: a first line that is only an answer ("B", "(B).", or "B. <option B's text>") decides
    when the lines after it are an explanation: no other line label or letter assertion, no hedge.

    "B. right\n\nExplanation: A and C describe the mug" reads B; "B\nD", "A. Red\nB. Green" and
    "B\nor maybe C" stay with the other implicit forms (ambiguous).
    """
    first, _, rest = body.lstrip().partition("\n")
    if not rest.strip():
        return None  # a one-line reply: the other forms read it
    first = first.strip()
    m = _BARE_LETTER.fullmatch(first)
    if m:
        outcome = _label_outcome(m.group(1), "", choices, REASON_LETTER)
    else:
        m = _LINE_LABEL.match(first)
        label = m and (m.group(1) or m.group(2))
        if not label or choices.own_text is None:
            return None
        text = first[m.end() :]
        if _option_letters(text, choices) != (label.upper(),):
            return None  # a label with text that is not its own option's: no answer line
        outcome = _label_outcome(label, text, choices, REASON_LETTER)
    if outcome[0] is None or _HEDGE.search(rest):
        return None
    for line in rest.splitlines():
        if _LINE_LABEL.match(line) or _LEADING_ASSERT.match(line):
            return None
    return outcome


def _from_implicit(body: str, choices: _Choices) -> _Outcome | None:
    """Step 4: collect every implicit letter; they must agree (after the answer-line rule, 4a)."""
    lead = _leading_answer_line(body, choices)
    if lead is not None:
        return lead
    found: set[str] = set()
    invalid = conflict = False

    def take(letter: str, rest: str = "") -> None:
        nonlocal invalid, conflict
        got, reason = _label_outcome(letter, rest, choices, REASON_LETTER)
        if got is not None:
            found.add(got)
        elif reason == REASON_CONFLICT:
            conflict = True
        else:
            invalid = True

    m = _PREFIXED_LETTER.fullmatch(body)
    if m:
        take(m.group(1))
    for line in body.splitlines():
        m = _LINE_LABEL.match(line)
        if m:
            rest = line[m.end() :]
            take(m.group(1) or m.group(2), rest)
            inner = _BARE_LETTER.fullmatch(rest)
            if inner and rest.strip():  # "A: C" (a Q/A transcript) names two letters
                take(inner.group(1))
    m = _LEADING_ASSERT.match(body)
    if m:
        take(m.group(1))
    m = _TRAILING.search(body)
    if m:
        take(m.group(1))
    for m in _PAREN_IN_PROSE.finditer(body):
        take(m.group(1))
    for m in _LETTER_RUN.finditer(body):
        for letter in m.groups():
            if letter in choices.offered:  # "A and I think" – the pronoun is no option
                found.add(letter)
    if found:
        found.update(m.group(1) for m in _HEDGED_LETTER.finditer(body) if m.group(1) in choices.offered)
    if len(found) > 1:
        return None, REASON_AMBIGUOUS
    if conflict:
        return None, REASON_CONFLICT
    if found:
        return found.pop(), REASON_LETTER
    if invalid:
        return None, REASON_INVALID_LETTER
    return None
