"""The static leaderboard page: tables, figures and run cards as one self-contained HTML file.

The page needs no server and no network: its CSS and a small vanilla-JS column sort are inlined (no
CDN, no fonts, no external script), figures and logs are relative links into the site folder, so it
works opened from the file system (``file://``).

Conventions a reader (or a test) can rely on:

* each table is ``<table id="<key>" class="sortable">``; each row carries ``data-row`` (its label, the
  paper's rows prefixed ``paper:``) and each cell ``data-column`` (the column key);
* a number cell carries ``data-value`` (the number as a plain decimal; what the sort compares); the
  interval, when there is one (Wilson for rollout rates, scene-clustered CR1 for VLM accuracies), follows in a
  ``<span class="ci">``; an empty cell shows an em dash and has no ``data-value`` (sorted last);
* the paper's reference rows have ``class="reference"`` and a "paper" badge in their first cell;
* a table with no rows of ours says so ("no runs") in its caption and keeps the paper's rows.

This module renders only (data in, text out); :mod:`.site` gathers the data and writes the folder.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

REFERENCE_PREFIX = "paper:"
"""``data-row`` prefix of the paper's reference rows (their labels may equal a run's)."""
NO_RUNS = "no runs"
"""Caption text of a table none of the given runs contributes to."""


@dataclass(frozen=True)
class Cell:
    """One table cell: a number (``value``; shown with ``digits`` decimals) or text, with an optional
    interval ``(low, high)`` shown after the number."""

    value: float | int | str | None
    interval: tuple[float, float] | None = None
    digits: int = 1

    @property
    def is_number(self) -> bool:
        return isinstance(self.value, (int, float)) and not isinstance(self.value, bool)


@dataclass(frozen=True)
class Row:
    """A table row: its label (first column), cells by column key, and whether it is the paper's."""

    label: str
    cells: dict[str, Cell]
    reference: bool = False

    @property
    def key(self) -> str:
        return (REFERENCE_PREFIX if self.reference else "") + self.label


@dataclass(frozen=True)
class TableSection:
    """One table: its key (the HTML id), title, caption, columns (key, header) after the label column."""

    key: str
    title: str
    caption: str
    label_header: str
    columns: tuple[tuple[str, str], ...]
    rows: tuple[Row, ...]

    @property
    def ours(self) -> tuple[Row, ...]:
        return tuple(r for r in self.rows if not r.reference)


@dataclass(frozen=True)
class FigureLink:
    """A figure in the site folder: title, caption and the relative paths of its PNG and SVG."""

    title: str
    caption: str
    png: str
    svg: str


@dataclass(frozen=True)
class RunCard:
    """A run's fingerprint and the relative links to its logs in the site folder."""

    label: str
    kind: str
    source: str
    fingerprint: dict
    logs: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Page:
    """Everything the page shows."""

    title: str
    intro: str
    tables: tuple[TableSection, ...]
    figures: tuple[FigureLink, ...] = ()
    runs: tuple[RunCard, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)


def _esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def _number_text(value: float | int, digits: int) -> str:
    return str(value) if isinstance(value, int) else f"{value:.{digits}f}"


def _data_value(value: float | int) -> str:
    # repr keeps every digit the table was given: a test (or a user's script) reads the exact number.
    return repr(value) if isinstance(value, float) else str(value)


def render_cell(column: str, cell: Cell | None) -> str:
    """One ``<td>`` (module docstring: ``data-column``, ``data-value``, the interval span)."""
    if cell is None or cell.value is None or (cell.is_number and not math.isfinite(cell.value)):
        return f'<td data-column="{_esc(column)}" class="empty">—</td>'
    if not cell.is_number:
        return f'<td data-column="{_esc(column)}">{_esc(cell.value)}</td>'
    text = _number_text(cell.value, cell.digits)
    ci = ""
    if cell.interval is not None:
        low, high = cell.interval
        ci = f' <span class="ci">[{low:.{cell.digits}f}, {high:.{cell.digits}f}]</span>'
    return (f'<td data-column="{_esc(column)}" class="num" data-value="{_data_value(cell.value)}">'
            f'{_esc(text)}{ci}</td>')


def render_table(section: TableSection) -> str:
    """A ``<section>`` with the title, caption and the sortable table."""
    caption = section.caption
    if not section.ours:
        caption = f"{caption} Ours: {NO_RUNS}." if caption else f"Ours: {NO_RUNS}."
    head = "".join(f'<th data-column="{_esc(k)}" data-sort="none" tabindex="0">{_esc(h)}</th>'
                   for k, h in (("label", section.label_header), *section.columns))
    body = []
    for row in section.rows:
        badge = ' <span class="badge">paper</span>' if row.reference else ""
        cls = ' class="reference"' if row.reference else ""
        cells = "".join(render_cell(k, row.cells.get(k)) for k, _ in section.columns)
        body.append(f'<tr{cls} data-row="{_esc(row.key)}"><td data-column="label" class="label">'
                    f'{_esc(row.label)}{badge}</td>{cells}</tr>')
    if not section.rows:
        body.append(f'<tr class="none"><td colspan="{len(section.columns) + 1}">{NO_RUNS}</td></tr>')
    return (f'<section id="section-{_esc(section.key)}"><h2>{_esc(section.title)}</h2>'
            f'<p class="caption">{_esc(caption)}</p>'
            f'<table id="{_esc(section.key)}" class="sortable"><thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(body)}</tbody></table></section>')


def render_figures(figures: Sequence[FigureLink]) -> str:
    if not figures:
        return ""
    items = "".join(
        f'<figure><a href="{_esc(f.svg)}"><img src="{_esc(f.png)}" alt="{_esc(f.title)}"></a>'
        f'<figcaption><b>{_esc(f.title)}</b> {_esc(f.caption)} '
        f'(<a href="{_esc(f.png)}">PNG</a>, <a href="{_esc(f.svg)}">SVG</a>)</figcaption></figure>'
        for f in figures)
    return f'<section id="section-figures"><h2>Figures</h2>{items}</section>'


def render_runs(runs: Sequence[RunCard]) -> str:
    if not runs:
        return ""
    cards = []
    for run in runs:
        links = " · ".join(f'<a href="{_esc(href)}">{_esc(name)}</a>' for name, href in run.logs) or "no logs"
        cards.append(f'<details class="run" data-run="{_esc(run.label)}"><summary><b>{_esc(run.label)}</b> '
                     f'({_esc(run.kind)}, from <code>{_esc(run.source)}</code>)</summary>'
                     f'<p class="logs">Logs: {links}</p>'
                     f'<pre class="fingerprint">{_esc(json.dumps(run.fingerprint, indent=2, sort_keys=True))}</pre>'
                     f'</details>')
    return f'<section id="section-runs"><h2>Runs: fingerprints and per-sample logs</h2>{"".join(cards)}</section>'


def render_page(page: Page) -> str:
    """The whole HTML document (UTF-8), CSS and script inline."""
    toc = "".join(f'<li><a href="#section-{_esc(t.key)}">{_esc(t.title)}</a></li>' for t in page.tables)
    notes = "".join(f"<li>{_esc(n)}</li>" for n in page.notes)
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        # No external fetches at all: a favicon request from file:// would log a console error.
        "<link rel=\"icon\" href=\"data:,\">"
        f"<title>{_esc(page.title)}</title><style>{_CSS}</style></head><body>"
        f"<header><h1>{_esc(page.title)}</h1><p>{_esc(page.intro)}</p>"
        '<p class="legend"><span class="badge">paper</span> rows are the paper\'s published numbers '
        "(reference, not our runs). Click a column header to sort.</p>"
        + (f'<details class="notes"><summary>Notes ({len(page.notes)})</summary><ul>{notes}</ul></details>'
           if notes else "")
        + f"<nav><ul>{toc}</ul></nav></header><main>"
        + "".join(render_table(t) for t in page.tables)
        + render_figures(page.figures) + render_runs(page.runs)
        + f"</main><script>{_SORT_JS}</script></body></html>\n"
    )


_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0 auto;max-width:1200px;padding:1rem 2rem;color:#222}
h1{font-size:1.6rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #ddd}
table{border-collapse:collapse;font-size:.85rem;margin:.5rem 0}
th,td{border:1px solid #ddd;padding:.25rem .5rem}
th{background:#f3f3f3;cursor:pointer;user-select:none;white-space:nowrap}
th[data-sort=ascending]::after{content:" \\25B2"}th[data-sort=descending]::after{content:" \\25BC"}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.empty{text-align:center;color:#999}
.ci{color:#777;font-size:.75rem}
tr.reference{background:#fff8e6;color:#555;font-style:italic}
.badge{display:inline-block;font-style:normal;font-size:.7rem;background:#e0a800;color:#fff;border-radius:.3rem;padding:0 .35rem;margin-left:.3rem}
.caption{color:#555;font-size:.85rem;max-width:70rem}
figure{display:inline-block;vertical-align:top;margin:.5rem;max-width:100%}
figure img{max-width:560px;width:100%;border:1px solid #eee}
figcaption{font-size:.8rem;max-width:560px}
pre.fingerprint{background:#f7f7f7;padding:.5rem;font-size:.75rem;overflow-x:auto}
details.run{margin:.3rem 0}
nav ul{columns:3;font-size:.85rem}
"""

# Sort a table by the clicked column: numbers by data-value, text by its content; empty cells last in
# both directions; a second click reverses. Stable (ties keep their order), so sorting by one column
# then another groups as a user expects.
_SORT_JS = """
(function(){
  function key(td){
    if(!td||td.classList.contains('empty'))return null;
    var v=td.getAttribute('data-value');
    return v===null?td.textContent.trim().toLowerCase():parseFloat(v);
  }
  function sortBy(th){
    var table=th.closest('table'),body=table.tBodies[0],col=th.getAttribute('data-column');
    var dir=th.getAttribute('data-sort')==='ascending'?'descending':'ascending';
    table.querySelectorAll('th').forEach(function(h){h.setAttribute('data-sort','none');});
    th.setAttribute('data-sort',dir);
    var rows=Array.prototype.slice.call(body.rows).map(function(r,i){
      return {row:r,i:i,k:key(r.querySelector('td[data-column="'+col+'"]'))};});
    rows.sort(function(a,b){
      if(a.k===null||b.k===null){return a.k===b.k?a.i-b.i:(a.k===null?1:-1);}
      var c=(typeof a.k===typeof b.k)?(a.k<b.k?-1:a.k>b.k?1:0):(typeof a.k==='number'?-1:1);
      return c===0?a.i-b.i:(dir==='ascending'?c:-c);});
    rows.forEach(function(r){body.appendChild(r.row);});
  }
  document.querySelectorAll('table.sortable th').forEach(function(th){
    th.addEventListener('click',function(){sortBy(th);});
    th.addEventListener('keydown',function(e){if(e.key==='Enter'){sortBy(th);}});
  });
})();
"""


__all__ = ["Cell", "FigureLink", "NO_RUNS", "Page", "REFERENCE_PREFIX", "Row", "RunCard", "TableSection",
           "render_cell", "render_page", "render_table"]
