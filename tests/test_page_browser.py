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
      return {width: r.width, height: r.height, drawn: drawn, outside: outside};
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
    page = {"baseline": "popular", "by": ["model", "segment"], "item_group": "category", "seed": 0, "n_resamples": 200}
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
    comparison = headers(workflow_page, "comparison")
    assert comparison == ["model", "metric", "n_pairs", "baseline_mean", "model_mean", "delta", "rel_delta", "p_value",
                          "p_adjusted"]  # fmt: skip
    assert "".join(comparison) in flat
    beyond = headers(workflow_page, "beyond")
    assert beyond == ["", "category", "itemknn", "popular"] and "Beyondaccuracy" + "".join(beyond) in flat
    for metric in ("n_users_ndcg", "ndcg@20", "novelty@20", "popularity@20", "catalog_coverage@20", "gini@20"):
        assert metric in flat, metric  # the rows of the turned table
    assert "".join(headers(workflow_page, "fairness")) in flat
