"""The one Markdown and CSV table writer of every report, card and benchmark.

Example:
    >>> print(markdown_table(("policy", "n", "strict"), [("random", 95, "8.4")], right_aligned_from=1))
    | policy | n | strict |
    |---|---:|---:|
    | random | 95 | 8.4 |
    >>> csv_table(("policy", "n"), [{"policy": "random", "n": 95}])
    'policy,n\\nrandom,95\\n'
"""

from __future__ import annotations

import csv
import io
from typing import Iterable, Mapping, Sequence


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[object]], *,
                   right_aligned_from: int | None = None) -> str:
    """A GitHub-flavoured pipe table, one line per row (cells through ``str``), without a final newline; columns
    from index ``right_aligned_from`` on are right-aligned (numbers)."""
    rules = ["---:" if right_aligned_from is not None and i >= right_aligned_from else "---" for i in range(len(header))]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(rules) + "|"]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def csv_table(columns: Sequence[str], rows: Iterable[Mapping[str, object]]) -> str:
    """A CSV text with a header line, ``\\n`` line ends, one line per row (keys outside ``columns`` refused)."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(columns), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()
