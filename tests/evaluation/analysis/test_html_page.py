"""The leaderboard page's markup, read back with the stdlib HTML parser (the browser test covers behaviour)."""

from __future__ import annotations

from html.parser import HTMLParser

from bspatial.evaluation.analysis.html import NO_RUNS, Cell, Page, Row, RunCard, TableSection, render_page


class _Cells(HTMLParser):
    """Every <td> with its attributes and text; every <script> and external reference."""

    def __init__(self) -> None:
        super().__init__()
        self.cells: list[tuple[dict, str]] = []
        self.scripts: list[dict] = []
        self.refs: list[str] = []
        self._open: dict | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "td":
            self._open, self._text = attrs, []
        if tag == "script":
            self.scripts.append(attrs)
        self.refs += [attrs[k] for k in ("src", "href") if k in attrs]

    def handle_endtag(self, tag):
        if tag == "td" and self._open is not None:
            self.cells.append((self._open, "".join(self._text)))
            self._open = None

    def handle_data(self, data):
        if self._open is not None:
            self._text.append(data)


def _page(rows, runs=()) -> _Cells:
    table = TableSection("t", "T", "caption.", "Run", (("x", "X"), ("y", "Y")), tuple(rows))
    parser = _Cells()
    parser.feed(render_page(Page("title", "intro", (table,), runs=tuple(runs))))
    return parser


def test_numbers_keep_every_digit_in_data_value_and_show_their_interval():
    parser = _page([Row("ours", {"x": Cell(200 / 3, (20.77, 93.85)), "y": Cell(7)})])
    x = next(a for a, _ in parser.cells if a.get("data-column") == "x")
    assert float(x["data-value"]) == 200 / 3
    assert next(t for a, t in parser.cells if a.get("data-column") == "x") == "66.7 [20.8, 93.8]"
    y = next(a for a, _ in parser.cells if a.get("data-column") == "y")
    assert y["data-value"] == "7"


def test_missing_and_non_finite_cells_are_empty_without_a_value():
    parser = _page([Row("ours", {"x": Cell(None), "y": Cell(float("nan"))})])
    for column in ("x", "y"):
        attrs, text = next((a, t) for a, t in parser.cells if a.get("data-column") == column)
        assert "data-value" not in attrs and text == "—" and attrs["class"] == "empty"


def test_run_names_are_escaped_not_markup():
    name = '<img src=x onerror="alert(1)">'
    parser = _page([Row(name, {"x": Cell(1.0)})], [RunCard(name, "rollout", "/runs/x", {"k": name})])
    (label,) = [t for a, t in parser.cells if a.get("data-column") == "label"]
    assert label == name                       # shown as text
    assert "x" not in parser.refs              # never an <img src=x>
    assert all(not s.get("src") for s in parser.scripts)   # inline script only, nothing fetched


def test_a_table_without_our_rows_says_no_runs():
    page = render_page(Page("t", "i", (TableSection("t5", "Table 5", "Pooled.", "Writer", (("s", "S"),),
                                                    (Row("GPT-6", {"s": Cell(47.3)}, reference=True),)),)))
    assert f"Pooled. Ours: {NO_RUNS}." in page
    assert 'class="reference" data-row="paper:GPT-6"' in page and '<span class="badge">paper</span>' in page
