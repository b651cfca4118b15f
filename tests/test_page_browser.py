"""The evaluation page in a real headless Chromium (the Debian package): every figure draws, no
table or box is cut off or needs a sideways scroll bar (the sample page at 1280 px, the
three-model workflow page at 1024 and 1280 px), every column prints on A4, nothing is fetched
and nothing is logged to the console.

The page itself has no script: the test adds one to a copy, which records errors (failed
loads, ``console.error``) from the start and, once the page has loaded, writes what it
measured into the DOM, which ``--dump-dom`` prints. Chromium's own log (``--enable-logging``)
is read too: any console line fails. Skipped when Chromium is absent, except under CI."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import recframe
from recframe.data import load_sample

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)
WIDTH = 1280

if CHROMIUM is None:
    if os.environ.get("CI"):
        pytest.fail("CI is set but Chromium is missing: .ci/run installs the Debian package chromium", pytrace=False)
    pytest.skip(
        "Chromium is not installed (apt-get install chromium); CI installs it and runs this test", allow_module_level=True
    )

CHECK = """<script>
window.__errors = [];
window.addEventListener("error", function (e) {
  window.__errors.push("error: " + (e.message || (e.target && (e.target.src || e.target.href)) || "a resource"));
}, true);
console.error = function () { window.__errors.push("console.error: " + Array.prototype.join.call(arguments, " ")); };
// two lines of text drawn over each other: every text node's line boxes (outside figures), swept by top
function overlaps() {
  var boxes = [], walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT), node;
  while ((node = walker.nextNode())) {
    if (!node.textContent.trim() || node.parentElement.closest("svg, script, style, pre#page-check")) continue;
    var range = document.createRange();
    range.selectNodeContents(node);
    Array.prototype.forEach.call(range.getClientRects(), function (r) {
      if (r.width > 0.5 && r.height > 0.5) boxes.push({l: r.left, r: r.right, t: r.top, b: r.bottom, text: node.textContent.trim().slice(0, 30)});
    });
  }
  boxes.sort(function (a, b) { return a.t - b.t; });
  var found = [];
  for (var i = 0; i < boxes.length && found.length < 20; i++) {
    for (var j = i + 1; j < boxes.length && boxes[j].t < boxes[i].b - 2; j++) {
      var a = boxes[i], b = boxes[j];
      if (Math.min(a.r, b.r) - Math.max(a.l, b.l) > 2 && Math.min(a.b, b.b) - Math.max(a.t, b.t) > 2) {
        found.push(a.text + " / " + b.text);
      }
    }
  }
  return found;
}
window.addEventListener("load", function () {
  function all(selector, f) { return Array.prototype.map.call(document.querySelectorAll(selector), f); }
  var out = {
    innerWidth: window.innerWidth,
    scrollWidth: document.documentElement.scrollWidth,
    figures: all("figure svg", function (s) {
      var r = s.getBoundingClientRect();
      var drawn = Array.prototype.filter.call(s.querySelectorAll("path, use, line, circle, rect, polyline, text"), function (p) {
        var b = p.getBBox(); return b.width > 0 || b.height > 0;
      }).length;
      // a label drawn past the figure's own edge is cut off by it
      var outside = Array.prototype.filter.call(s.querySelectorAll("text"), function (t) {
        var b = t.getBoundingClientRect();
        return b.left < r.left - 1 || b.right > r.right + 1 || b.top < r.top - 1 || b.bottom > r.bottom + 1;
      }).map(function (t) { return t.textContent; });
      // two of its (unrotated) words drawn over each other
      var boxes = Array.prototype.filter.call(s.querySelectorAll("text"), function (t) { return !t.getAttribute("transform"); })
        .map(function (t) { var b = t.getBoundingClientRect(); return {l: b.left, r: b.right, t: b.top, b: b.bottom, text: t.textContent}; });
      var crossed = [];
      boxes.forEach(function (a, i) {
        boxes.slice(i + 1).forEach(function (b) {
          if (Math.min(a.r, b.r) - Math.max(a.l, b.l) > 1 && Math.min(a.b, b.b) - Math.max(a.t, b.t) > 1) crossed.push(a.text + " / " + b.text);
        });
      });
      return {width: r.width, height: r.height, drawn: drawn, outside: outside, crossed: crossed.slice(0, 10)};
    }),
    // every box whose content is wider than the box: cut off, or behind a sideways scroll bar
    // (the inside of a figure is checked with the figures: an SVG's parts have no box of their own)
    cut: Array.prototype.filter.call(document.querySelectorAll("body *"), function (e) {
      return !e.ownerSVGElement && e.clientWidth > 0 && e.scrollWidth > e.clientWidth + 1;
    }).map(function (e) {
      return {tag: e.tagName, cls: String(e.className), scroll: e.scrollWidth, client: e.clientWidth,
              text: (e.textContent || "").trim().slice(0, 60)};
    }),
    tables: all("table", function (t) {
      var box = t.parentElement, r = t.getBoundingClientRect();
      return {right: r.right, scroll: box.scrollWidth, client: box.clientWidth, head: t.rows[0].textContent.slice(0, 60)};
    }),
    // every table cell inside the window (a cell past its right edge is cut off or scrolled to)
    cells: Array.prototype.filter.call(document.querySelectorAll("td, th"), function (c) {
      var r = c.getBoundingClientRect();
      return r.width > 0 && (r.left < -1 || r.right > window.innerWidth + 1);
    }).map(function (c) { return (c.textContent || "").trim().slice(0, 40); }),
    overlaps: overlaps(),
    // the heights of the summary's rows (a mark must not make its row taller)
    summaryRows: all("#summary table tbody tr", function (tr) { return Math.round(tr.getBoundingClientRect().height * 10) / 10; }),
    errors: window.__errors,
    fetched: performance.getEntriesByType("resource").map(function (e) { return e.name; })
  };
  var pre = document.createElement("pre");
  pre.id = "page-check";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"""


def measure(page: str, folder: Path, width: int = WIDTH) -> tuple[dict, list[str]]:
    """Open `page` (with the check added) in Chromium `width` px wide: what the check measured,
    and Chromium's console log lines."""
    path = folder / f"page-{width}.html"
    path.write_text(page.replace("<head>", "<head>\n" + CHECK, 1), encoding="utf-8")
    args = [
        str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
        f"--user-data-dir={folder / 'profile'}", f"--window-size={width},4000", "--run-all-compositor-stages-before-draw",
        "--virtual-time-budget=5000", "--enable-logging=stderr", "--v=0", "--dump-dom", path.as_uri(),
    ]  # fmt: skip
    done = subprocess.run(args, capture_output=True, text=True, timeout=60)
    found = re.search(r'<pre id="page-check">(.*?)</pre>', done.stdout, re.S)
    assert found is not None, f"Chromium printed no measurement (exit {done.returncode}): {done.stderr[-2000:]}"
    console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line]
    return json.loads(html.unescape(found.group(1))), console


def problems(measured: dict, console: list[str]) -> list[str]:
    """What looks wrong: an empty figure, a table wider than its box or the window, a page wider
    than the window, an error, a fetch or a console line."""
    out = []
    if measured["scrollWidth"] > measured["innerWidth"]:
        out.append(f"the page is {measured['scrollWidth']} px wide in a {measured['innerWidth']} px window")
    for i, figure in enumerate(measured["figures"]):
        if figure["width"] < 100 or figure["height"] < 60 or figure["drawn"] < 20:
            out.append(f"figure {i + 1} renders empty: {figure}")
        if figure["outside"]:
            out.append(f"figure {i + 1} has labels cut off at its edge: {figure['outside']}")
        if figure.get("crossed"):
            out.append(f"figure {i + 1} draws text over text: {figure['crossed']}")
    for table in measured["tables"]:
        if table["scroll"] > table["client"] + 1 or table["right"] > measured["innerWidth"]:
            out.append(f"table cut off: {table}")
    out += [f"box cut off or scrolling sideways: {box}" for box in measured["cut"]]
    out += [f"table cell outside the window: {cell!r}" for cell in measured.get("cells", [])]
    out += [f"text drawn over other text: {pair!r}" for pair in measured.get("overlaps", [])]
    out += measured["errors"] + [f"fetched {name}" for name in measured["fetched"]] + console
    return out


def test_the_sample_page_renders_in_chromium(tmp_path):
    recs, truth = load_sample()
    page = recframe.report_page(
        recs, truth=truth, baseline="popular", score="score", relevance="rating", threshold=4, by="model", seed=0
    )
    measured, console = measure(page, tmp_path)
    assert problems(measured, console) == []
    assert len(measured["figures"]) == page.count("<svg") >= 3
    assert len(measured["tables"]) >= 8
    # rows with a ▲ and rows without (n_users, n_skipped) are one height
    assert len(measured["summaryRows"]) == 12 and len(set(measured["summaryRows"])) == 1, measured["summaryRows"]


def test_the_check_sees_an_empty_figure_a_cut_label_a_cut_off_table_a_cut_box_and_a_console_error(tmp_path):
    """The harness itself: a page with each defect fails, each for its reason."""
    wide = "<table><tr>" + "<td>0.123456789 [0.1, 0.2]</td>" * 80 + "</tr></table>"
    page = (
        '<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>'
        '<figure><svg xmlns="http://www.w3.org/2000/svg" width="400" height="300" viewBox="0 0 400 300"></svg></figure>'
        '<figure><svg xmlns="http://www.w3.org/2000/svg" width="200" height="100" viewBox="0 0 200 100">'
        '<text x="150" y="50">a label past the edge</text></svg></figure>'
        f"{wide}<div style='width:200px;overflow:hidden;white-space:nowrap'>{'a list item that is too long ' * 5}</div>"
        "<script>console.log('hello')</script></body></html>"
    )
    found = problems(*measure(page, tmp_path))
    assert any("renders empty" in p for p in found)
    assert any("labels cut off at its edge" in p and "a label past the edge" in p for p in found)
    assert any("table cut off" in p for p in found) and any("px wide" in p for p in found)
    assert any("box cut off" in p and "a list item that is too long" in p for p in found)
    assert any("hello" in p for p in found)


@pytest.fixture(scope="module")
def workflow_page() -> str:
    """The page an analyst builds on the bundled workflow data: three models, a segment,
    train= and items=, item groups (tests/page_workflow.py)."""
    from page_workflow import workflow

    recs, options = workflow()
    page = {
        "baseline": "popular",
        "by": ["model", "segment"],
        "item_group": "category",
        "seed": 0,
        "n_resamples": 200,
        "sections": "all",
    }  # (every section, printed too)
    return recframe.report_page(recs, **page, **options)  # (200 resamples: the same layout, in less time)


# the three-model page takes three browser runs and its own evaluation (~20 s of a worker): it
# runs in .ci/run's second pass, beside the Spark checks, whose JVMs leave the cores idle
@pytest.mark.slow_engine
@pytest.mark.parametrize("width", [1024, 1280])
def test_the_three_model_workflow_page_fits_the_window(workflow_page, tmp_path, width):
    measured, console = measure(workflow_page, tmp_path, width)
    assert problems(measured, console) == []
    assert measured["innerWidth"] == width and len(measured["tables"]) >= 12


def headers(page: str, anchor: str) -> list[str]:
    """The column headers of the first table of a section, as a reader sees them."""
    body = page[page.index(f'<section id="{anchor}">') :]
    head = body[body.index("<thead>") : body.index("</thead>")]
    return [html.unescape(re.sub(r"<[^>]+>", "", h)) for h in re.findall(r"<th>(.*?)</th>", head)]


@pytest.mark.slow_engine
def test_the_workflow_page_prints_every_column_on_a4(workflow_page, tmp_path):
    """Printed (A4, the page's print stylesheet), every column header of the comparison and the
    beyond-accuracy tables is in the PDF's text, in order (a column cut off the paper is not)."""
    pdftotext = shutil.which("pdftotext")
    if pdftotext is None:
        pytest.skip("pdftotext (poppler-utils) is not installed")
    path, pdf = tmp_path / "page.html", tmp_path / "page.pdf"
    path.write_text(workflow_page, encoding="utf-8")
    args = [
        str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", f"--user-data-dir={tmp_path / 'profile'}",
        "--no-pdf-header-footer", "--virtual-time-budget=5000", f"--print-to-pdf={pdf}", path.as_uri(),
    ]  # fmt: skip
    done = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert pdf.exists(), f"Chromium printed no PDF (exit {done.returncode}): {done.stderr[-2000:]}"
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True).stdout if shutil.which("pdfinfo") else ""
    assert not info or "(A4)" in info
    text = subprocess.run([pdftotext, str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    flat = re.sub(r"\s+", "", text)  # a header may wrap after "_": "baseline_" / "mean"
    comparison = headers(workflow_page, "comparison_table")
    assert comparison == ["model", "metric", "n_pairs", "baseline_mean", "model_mean", "delta", "rel_delta", "p_value",
                          "p_adjusted"]  # fmt: skip
    assert "".join(comparison) in flat
    beyond = headers(workflow_page, "beyond")
    assert beyond == ["", "category", "itemknn", "popular"] and "Beyondaccuracy" + "".join(beyond) in flat
    for metric in ("n_users_ndcg", "ndcg@20", "novelty@20", "popularity@20", "catalog_coverage@20", "gini@20"):
        assert metric in flat, metric  # the rows of the turned table
    assert "".join(headers(workflow_page, "fairness")) in flat


# ---------------------------------------------------------------------------- long names, folds, print

#: three model names of 40 characters (one with no hyphen to break at)
LONG_NAMES = {
    "personal": "personalised-matrix-factorisation-mod-v2",
    "popular": "most-popular-items-baseline-last-30-days",
    "shuffled": "personalised_model_shuffled_within_listx",
}


def long_names_page(**options: object) -> str:
    """The page a manager gets: three models (the sample's two and personal's lists reordered at
    random), four segments, two weekly folds, names of 40 characters, a baseline."""
    import polars as pl

    recs, truth = load_sample()
    shuffled = recs.filter(pl.col("model") == "personal").with_columns(
        pl.col("score").shuffle(seed=0).over("user_id"), model=pl.lit("shuffled")
    )
    recs = pl.concat([recs, shuffled]).with_columns(pl.col("model").replace_strict(LONG_NAMES))
    recs = pl.concat([recs.with_columns(fold=pl.lit(week)) for week in ("week 1", "week 2")])
    truth = truth.with_columns(
        fold=pl.when(pl.col("item_id").hash(0) % 2 == 0).then(pl.lit("week 1")).otherwise(pl.lit("week 2"))
    )
    users = truth.select("user_id").unique().with_columns(segment=pl.format("segment-{}", pl.col("user_id") % 4))
    return recframe.report_page(
        recs, truth=truth, users=users, score="score", relevance="rating", threshold=4, by=["model", "fold", "segment"],
        baseline=LONG_NAMES["popular"], seed=0, n_resamples=200, **options,
    )  # fmt: skip


@pytest.fixture(scope="module")
def long_names() -> str:
    return long_names_page()


@pytest.mark.slow_engine
@pytest.mark.parametrize("width", [800, 1024, 1280])
def test_three_models_four_segments_two_folds_with_long_names_fit_from_800_px(long_names, tmp_path, width):
    """Every table cell inside the window, no table or box scrolling sideways, no two lines of text
    over each other (the table of contents among them)."""
    assert all(len(name) == 40 for name in LONG_NAMES.values())
    measured, console = measure(long_names, tmp_path, width)
    assert problems(measured, console) == []
    assert measured["innerWidth"] == width and len(measured["tables"]) >= 12


def test_the_check_sees_a_cell_outside_the_window_and_text_over_text(tmp_path):
    """The harness: a table wider than the window and two boxes drawn over each other each fail."""
    page = (
        '<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>'
        "<table><tr>" + "<td>a_very_long_unbreakable_model_name_of_forty</td>" * 30 + "</tr></table>"
        '<p style="position:absolute;top:0;left:0">first words here</p>'
        '<p style="position:absolute;top:2px;left:4px">second words here</p>'
        '<figure><svg xmlns="http://www.w3.org/2000/svg" width="300" height="100" viewBox="0 0 300 100">'
        '<text x="10" y="50">a legend entry</text><text x="20" y="54">a wrapped label</text></svg></figure></body></html>'
    )
    found = problems(*measure(page, tmp_path, 800))
    assert any("table cell outside the window" in p for p in found)
    assert any("text drawn over other text" in p and "first words here" in p for p in found)
    assert any("draws text over text" in p and "a legend entry / a wrapped label" in p for p in found)


def print_pdf(page: str, folder: Path) -> Path:
    """The page printed by Chromium (A4, the page's print stylesheet)."""
    path, pdf = folder / "page.html", folder / "page.pdf"
    path.write_text(page, encoding="utf-8")
    args = [
        str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", f"--user-data-dir={folder / 'profile'}",
        "--no-pdf-header-footer", "--virtual-time-budget=5000", f"--print-to-pdf={pdf}", path.as_uri(),
    ]  # fmt: skip
    done = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert pdf.exists(), f"Chromium printed no PDF (exit {done.returncode}): {done.stderr[-2000:]}"
    return pdf


def printed_lines(pdf: Path) -> list[tuple[float, float, list[tuple[float, float, float, float, str]]]]:
    """Per printed page: its width, height and lines, each a list of words (x0, y0, x1, y1, text) in
    points (pdftotext -bbox-layout: the positions of the text in the PDF)."""
    out = subprocess.run(["pdftotext", "-bbox-layout", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    word = r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)</word>'
    pages = []
    for width, height, body in re.findall(r'<page width="([\d.]+)" height="([\d.]+)">(.*?)</page>', out, re.S):
        lines = [
            [(float(a), float(b), float(c), float(d), html.unescape(t)) for a, b, c, d, t in re.findall(word, line)]
            for line in re.findall(r"<line [^>]*>(.*?)</line>", body, re.S)
        ]
        pages.append((float(width), float(height), [line for line in lines if line]))
    return pages


#: A4 in points, the page's margins (12 mm top and bottom, 10 mm at the sides), and 7 pt text
A4, TOP, SIDE = (595.0, 842.0), 12 / 25.4 * 72, 10 / 25.4 * 72
#: a word's box is about 1.09 times its font size (poppler's ascent + descent for the page's fonts)
SEVEN_POINTS = 7 * 1.09


@pytest.mark.slow_engine
def test_the_long_names_page_prints_its_main_part_on_three_a4_pages(long_names, tmp_path):
    """Printed: the default page is its main part (verdict, summary, segments, comparison) on three
    pages at most; with every section asked (sections="all"), the main part on the first three
    pages and the appendix from the fourth; every word inside the margins; no page ends on a heading; every
    word at 7 pt or more, the figures' too (none is wider than prints its text at 7 pt); the brief
    page (sections="brief") is three pages at most."""
    if shutil.which("pdftotext") is None:
        pytest.skip("pdftotext (poppler-utils) is not installed")
    # the default page prints its main part alone (the appendix is on screen only)
    assert len(printed_lines(print_pdf(long_names, tmp_path))) <= 3
    pages = printed_lines(print_pdf(long_names_page(sections="all"), tmp_path))
    texts = [[" ".join(w[4] for w in line) for line in lines] for _, _, lines in pages]
    appendix = next(i for i, lines in enumerate(texts) if "Appendix" in lines)
    assert appendix <= 3, f"the main part takes {appendix} pages"
    headings = {
        " ".join(html.unescape(re.sub(r"<[^>]+>", "", h)).split())
        for h in re.findall(r"<h[23][^>]*>(.*?)</h[23]>", long_names, re.S)
    }
    for number, (width, height, lines) in enumerate(pages, start=1):
        assert (round(width), round(height)) == A4
        words = [w for line in lines for w in line]
        outside = [w[4] for w in words if w[0] < SIDE - 1 or w[2] > width - SIDE + 1 or w[1] < TOP - 1 or w[3] > height - TOP + 1]
        assert outside == [], (number, outside[:5])
        last = max(lines, key=lambda line: max(w[3] for w in line))
        text = " ".join(w[4] for w in last)
        # a heading alone at the foot: the start of a heading's text, in a heading's size (h2 12.5 pt, h3 10.5 pt)
        larger = min(w[3] - w[1] for w in last) > 10.5 * 1.07
        assert not (larger and any(h.startswith(text) for h in headings if text)), (number, text)
        small = [w[4] for w in words if w[3] - w[1] < SEVEN_POINTS]  # the figures' words too
        assert small == [], (number, small[:5])
    brief = printed_lines(print_pdf(long_names_page(sections="brief"), tmp_path))
    assert len(brief) <= 3
