"""recframe.report_page and ``recframe report --out FILE.html``: the self-contained evaluation page
holds summary's numbers to the printed precision, real tables, no network reference, escaped
values, and works without matplotlib."""

from __future__ import annotations

import hashlib
import html
import os
import re
import stat
import sys
from html.parser import HTMLParser

import polars as pl
import pytest

import recframe
from recframe import conventions
from recframe.cli import main
from recframe.data import load_sample

RECS, TRUTH = load_sample()
OPTIONS = {"score": "score", "relevance": "rating", "threshold": 4, "by": "model"}


class Tables(HTMLParser):
    """Every <table> of a fragment as a list of rows of cell texts."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self.cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: object) -> None:
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self.cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self.cell is not None:
            self.tables[-1][-1].append("".join(self.cell).strip())
            self.cell = None

    def handle_data(self, data: str) -> None:
        if self.cell is not None:
            self.cell.append(data)


def tables(fragment: str) -> list[list[list[str]]]:
    parser = Tables()
    parser.feed(fragment)
    return parser.tables


def section(page: str, anchor: str) -> str:
    match = re.search(rf'<section id="{anchor}">(.*?)</section>', page, re.S)
    assert match is not None, f"no section {anchor!r}"
    return match.group(1)


def network_references(page: str) -> list[str]:
    """Every http(s) address in the page that is not an SVG namespace declaration."""
    found = []
    for match in re.finditer(r"https?://", page):
        before = page[max(0, match.start() - 20) : match.start()]
        if not re.search(r'xmlns(:\w+)?="$', before):
            found.append(page[max(0, match.start() - 30) : match.end() + 30])
    return found


@pytest.fixture(scope="module")
def page() -> str:
    return recframe.report_page(RECS, truth=TRUTH, baseline="popular", seed=0, **OPTIONS)


def test_the_page_holds_the_summary_numbers_to_the_printed_precision(page):
    summary = recframe.summary(RECS, truth=TRUTH, k=10, ci=0.95, seed=0, **OPTIONS)
    table = tables(section(page, "summary"))[0]
    header, rows = table[0], {row[0]: row[1:] for row in table[1:]}
    assert header[1:] == ["personal", "popular"]
    metrics = [c for c in summary.columns if c.endswith("@10") or c == "r_precision"]
    assert len(metrics) == 10 and set(metrics) <= set(rows)
    for j, model in enumerate(header[1:]):
        want = summary.filter(pl.col("model") == model).row(0, named=True)
        assert rows["n_users"][j] == str(want["n_users"]) and rows["n_skipped"][j] == str(want["n_skipped"])
        for metric in metrics:
            cell = rows[metric][j]
            assert cell.startswith(f"{want[metric]:.3f}"), (metric, model, cell)
            assert cell.endswith(f"[{want[metric + '_lo']:.3f}, {want[metric + '_hi']:.3f}]"), (metric, model, cell)
    # personal is significantly better than popular on every metric: ▲, on its column only
    assert all("▲" in rows[m][0] and "▼" not in rows[m][0] and "▲" not in rows[m][1] for m in metrics)


def test_the_namespace_writes_the_same_page(page):
    again = RECS.recmetrics.report_page(truth=TRUTH, baseline="popular", seed=0, **OPTIONS)
    assert tables(section(again, "summary")) == tables(section(page, "summary"))


def test_the_page_holds_the_comparison_the_counts_and_the_conventions(page):
    per_user = recframe.per_user(RECS, truth=TRUTH, k=10, **OPTIONS)
    comparison = recframe.compare(per_user, baseline="popular")
    shown = {row[1]: row for row in tables(section(page, "comparison_table"))[0][1:]}
    for row in comparison.iter_rows(named=True):
        assert shown[row["metric"]][5].startswith(f"{row['delta']:.3f}")
        assert shown[row["metric"]][5].endswith(f"[{row['delta_lo']:.3f}, {row['delta_hi']:.3f}]")
    # how many users score 0, per model
    zeros = per_user.group_by("model").agg((pl.col("ndcg@10") == 0).sum().alias("zero"), pl.col("ndcg@10").count().alias("n"))
    distribution = {(r[0], r[1]): r for r in tables(section(page, "distributions"))[0][1:]}
    for model, zero, n in zeros.iter_rows():
        assert distribution["ndcg@10", model][3] == f"{zero:,} ({zero / n:.0%})"
    evaluated = section(page, "evaluated")
    text = html.unescape(evaluated)
    assert all(f"<td>{name}</td>" in evaluated for name in conventions.CHOICES)  # every convention, with its value
    assert "rating >= 4" in text and "no NaN score in 'score'" in text
    counts = tables(evaluated)[3]  # after the provenance's side inputs and versions, and the inputs
    assert counts[0] == ["model", "n_users", "n_skipped", "n_unranked", "n_no_relevant", "n_no_truth"]
    assert counts[2] == ["popular", "287", "13", "5", "13", "0"]
    assert f"recframe {recframe.__version__}" in page and " UTC" in page


def test_the_page_is_self_contained(page):
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert network_references(page) == []
    assert not re.search(r"<(script|link|iframe|object|embed|img)\b", page) and "@import" not in page
    assert "<?xml" not in page and "<!DOCTYPE svg" not in page
    assert page.count("<svg") == 3 and page.count("<table>") >= 8
    # the ids of the inline SVGs are unique in the document
    ids = re.findall(r'\bid="([^"]+)"', page)
    assert len(ids) == len(set(ids))
    assert 'id="examples"' in page and page.count('class="rf-user"') == 9  # worst, disagree, random: 3 users each


def test_without_matplotlib_the_page_draws_the_same_figures(monkeypatch, page):
    """The page writes its SVG itself: without matplotlib it has every figure and table, and the
    same page as with it (but for the time it was made)."""
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib raises ImportError
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    without = recframe.report_page(RECS, truth=TRUTH, baseline="popular", seed=0, **OPTIONS)
    assert without.count("<svg") == 3 and "recframe[plot]" not in without

    def timeless(text: str) -> str:
        return re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", "", text)

    def drawn(text: str) -> list[list[str]]:  # each figure's elements and words (a coordinate may move by 0.01 px:
        # the per-user values' last bit depends on the order of parallel sums)
        return [re.findall(r"<([a-z]+) |>([^<]+)</text>", svg) for svg in re.findall(r"<svg.*?</svg>", text, re.S)]

    assert re.sub(r"<svg.*?</svg>", "", timeless(without), flags=re.S) == re.sub(r"<svg.*?</svg>", "", timeless(page), flags=re.S)
    assert drawn(without) == drawn(page)


def test_a_figure_draws_every_row_of_its_frame(page):
    """The comparison figure has a labelled row, a point and a mark per row of the comparison
    table; the curve figure a line per model in each panel."""
    figure = re.search(r'<section id="comparison">.*?(<svg.*?</svg>)', page, re.S)
    assert figure is not None
    rows = tables(section(page, "comparison_table"))[0][1:]
    drawn = html.unescape(figure.group(1))
    caption = html.unescape(re.sub(r"<[^>]+>", "", section(page, "comparison")))
    shown = [row for row in rows if f">{row[0]}: {row[1]}</text>" in drawn]
    # every row is drawn, but a metric not bounded by 1 (dcg), which the caption names
    assert all(f"{row[1]} (not bounded by 1): in the table only" in caption for row in rows if row not in shown)
    assert len(shown) >= len(rows) - 2 and drawn.count("<circle") == len(shown) + 2  # and the legend's two points
    for glyph in ("▲", "▼"):
        marked = sum(glyph in cell for row in shown for cell in row)
        assert drawn.count(f">{glyph}</text>") == marked + (marked > 0)  # and the legend's
    curves = re.search(r'<section id="curves">.*?(<svg.*?</svg>)', page, re.S)
    assert curves is not None and curves.group(1).count("<polyline") == 2 * 2  # two models, two panels


def test_segments_folds_beyond_accuracy_and_item_groups_have_their_sections():
    folds = [RECS.with_columns(fold=pl.lit(f)) for f in (1, 2)]
    recs = pl.concat(folds)
    truth = pl.concat([TRUTH.with_columns(fold=pl.lit(f)) for f in (1, 2)])
    users = (
        TRUTH.select("user_id")
        .unique()
        .with_columns(segment=pl.when(pl.col("user_id") % 3 == 0).then(pl.lit("new")).otherwise(pl.lit("returning")))
    )
    train = TRUTH.select("user_id", "item_id")
    items = pl.DataFrame({"item_id": pl.concat([RECS["item_id"], TRUTH["item_id"]]).unique()}).with_columns(
        genre=pl.col("item_id").str.slice(1).cast(pl.Int64) % 3
    )
    page = recframe.report_page(
        recs, truth=truth, baseline="popular", k=[5, 10], metrics=["ndcg", "recall"], train=train, items=items,
        users=users, item_group="genre", seed=0, n_resamples=200, **{**OPTIONS, "by": ["model", "fold", "segment"]},
    )  # fmt: skip
    for anchor in (
        "evaluated",
        "summary",
        "comparison",
        "curves",
        "distributions",
        "segment-segment",
        "fold-fold",
        "beyond",
        "fairness",
    ):
        section(page, anchor)
    gaps = tables(section(page, "segment-segment"))[0]
    assert gaps[0][:3] == ["model", "fold", "metric"] and len(gaps) == 1 + 2 * 2 * 2  # model x fold x metric
    # each model against the baseline within each segment (and fold): compare's rows, in its order
    within = tables(section(page, "segment-segment"))[1]
    assert within[0][:4] == ["fold", "segment", "model", "metric"] and len(within) == 1 + 2 * 2 * 4  # fold x segment x metric@k
    assert [row[:4] for row in within[1:3]] == [["1", "new", "personal", "ndcg@5"], ["1", "new", "personal", "ndcg@10"]]
    beyond = tables(section(page, "beyond"))[0]  # turned: a row per metric, a column per model and fold
    assert {"catalog_coverage@10", "gini@10", "novelty@10"} <= {row[0] for row in beyond[1:]}
    assert beyond[0] == ["", "personal / 1", "personal / 2", "popular / 1", "popular / 2"]
    assert "Keys: model keys: model; truth keys (folds): fold; user attributes (segments): segment." in page
    folds = html.unescape(section(page, "fold-fold"))  # the caption in plain words
    assert "Each fold is evaluated on its own; mean: the average of its means (one per fold, n_fold of them)" in folds
    assert network_references(page) == []


SEGMENTS = TRUTH.select("user_id").unique().with_columns(segment=pl.format("s{}", pl.col("user_id") % 4))


def test_the_segment_view_is_the_headline_mean_per_group_and_model_with_the_within_group_marks():
    page = recframe.report_page(
        RECS, truth=TRUTH, users=SEGMENTS, baseline="popular", metrics=["ndcg", "recall"], ci=None, seed=0,
        **{**OPTIONS, "by": ["model", "segment"]},
    )  # fmt: skip
    header, *rows = tables(section(page, "segments-segment"))[0]
    assert header == ["segment", "personal", "popular", "best"] and [row[0] for row in rows] == ["s0", "s1", "s2", "s3"]
    per_user = recframe.per_user(
        RECS, truth=TRUTH, users=SEGMENTS, metrics=["ndcg", "recall"], **{**OPTIONS, "by": ["model", "segment"]}
    )
    means = per_user.group_by("segment", "model").agg(pl.col("ndcg@10").mean())
    within = recframe.compare(per_user, by=["model", "segment"], baseline="popular").filter(pl.col("metric") == "ndcg@10")
    for row in rows:
        for j, model in enumerate(("personal", "popular")):
            mean = means.filter((pl.col("segment") == row[0]) & (pl.col("model") == model))["ndcg@10"].item()
            assert row[1 + j].startswith(f"{mean:.3f}")
        significant = within.filter(pl.col("segment") == row[0])["significant"].item()
        assert ("▲" in row[1]) == significant and "▲" not in row[2] and row[3] == "as overall"  # personal, the verdict's best
    # the main part comes first, then the appendix, whose sections the navigation lists apart
    assert (
        page.index('<section id="segments-segment">')
        < page.index('<div class="appendix"')
        < page.index('<section id="evaluated">')
    )
    assert page.index('<section id="summary">') < page.index('<section id="segments-') < page.index('<section id="comparison">')


def test_sections_choose_what_the_page_shows_and_computes(monkeypatch, tmp_path, capsys):
    from recframe.reporting._page import data

    def refuse(*args, **kwargs):
        raise AssertionError("a section left out is not computed")

    with monkeypatch.context() as patched:
        for name in ("_agreement", "_examples", "_curves", "_distribution", "_disparity", "_sides"):
            patched.setattr(data, name, refuse)
        brief = recframe.report_page(
            RECS, truth=TRUTH, users=SEGMENTS, baseline="popular", metrics=["ndcg"], ci=None, sections="brief",
            **{**OPTIONS, "by": ["model", "segment"]},
        )  # fmt: skip
    found = re.findall(r'<section id="([^"]+)">', brief)
    assert found == ["summary", "segments-segment", "comparison"] and 'class="appendix"' not in brief
    assert (
        'class="verdict"' in brief and 'href="#summary"' in brief and 'href="#pairs"' not in brief
    )  # no link to a missing table
    # without a baseline the brief page's comparison is the letter table, which the p-values link to
    letters = recframe.report_page(RECS, truth=TRUTH, metrics=["ndcg"], ci=None, sections="brief", **OPTIONS)
    assert re.findall(r'<section id="([^"]+)">', letters) == ["summary", "letters"]
    assert '<a href="#letters">p_adjusted' in letters and 'href="#pairs"' not in letters
    chosen = recframe.report_page(RECS, truth=TRUTH, metrics=["ndcg"], ci=None, sections=["examples", "summary"], **OPTIONS)
    assert re.findall(r'<section id="([^"]+)">', chosen) == ["summary", "examples"]  # in the page's order
    everything = recframe.report_page(RECS, truth=TRUTH, metrics=["ndcg"], ci=None, sections="all", **OPTIONS)
    default = recframe.report_page(RECS, truth=TRUTH, metrics=["ndcg"], ci=None, **OPTIONS)
    anchors = re.findall(r'<section id="([^"]+)">', default)
    assert re.findall(r'<section id="([^"]+)">', everything) == anchors and anchors[:2] == ["summary", "letters"]
    assert {"evaluated", "pairs", "curves", "distributions", "examples", "glossary"} <= set(anchors)
    with pytest.raises(
        recframe.RecframeError, match=r"sections=\['summary', 'tables'\] names no section of the page \('tables'\)"
    ):
        recframe.report_page(RECS, truth=TRUTH, sections=["summary", "tables"], **OPTIONS)
    # the command line: --brief, --sections, --headline; with a table format they are refused
    recs, truth, out = tmp_path / "recs.parquet", tmp_path / "truth.parquet", tmp_path / "page.html"
    RECS.write_parquet(recs)
    TRUTH.write_parquet(truth)
    flags = ["--truth", str(truth), "--relevance", "rating", "--threshold", "4", "--by", "model", "--score", "score"]
    assert (
        main(
            [
                "report",
                str(recs),
                *flags,
                "--metrics",
                "ndcg,recall",
                "--brief",
                "--headline",
                "recall",
                "--out",
                str(out),
                "--quiet",
            ]
        )
        == 0
    )
    written = out.read_text()
    assert re.findall(r'<section id="([^"]+)">', written) == ["summary", "letters"] and "Verdict</strong> on <strong>" in written
    assert "recall@10</a></strong> (the headline" in written
    assert (
        main(["report", str(recs), *flags, "--metrics", "ndcg", "--sections", "summary,glossary", "--out", str(out), "--quiet"])
        == 0
    )
    assert re.findall(r'<section id="([^"]+)">', out.read_text()) == ["summary", "glossary"]
    capsys.readouterr()
    assert main(["report", str(recs), *flags, "--metrics", "ndcg", "--brief", "--format", "markdown"]) == 2
    assert "--brief shapes the page, and --format markdown writes a table" in capsys.readouterr().err


def test_values_are_escaped_and_out_writes_the_page(tmp_path):
    hostile = "<script>alert(1)</script>"
    recs = RECS.with_columns(pl.col("model").replace("personal", hostile))
    out = tmp_path / "page.html"
    page = recframe.report_page(
        recs, truth=TRUTH, baseline="popular", metrics=["ndcg"], seed=0, out=out,
        inputs=[{"input": "recs", "file": '"><img src=x onerror=alert(1)>.parquet', "rows": recs.height}], **OPTIONS,
    )  # fmt: skip
    assert "<script" not in page and "<img" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert out.read_text(encoding="utf-8") == page


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/null and /dev/full")
def test_out_writes_a_device_in_place_and_a_full_disk_is_refused():
    recframe.report_page(RECS, truth=TRUTH, metrics=["ndcg"], out="/dev/null", **OPTIONS)
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)  # written through, never replaced by a file
    with pytest.raises(recframe.RecframeError, match=r"out='/dev/full': could not write it .*Hint"):
        recframe.report_page(RECS, truth=TRUTH, metrics=["ndcg"], out="/dev/full", **OPTIONS)


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        ({"out": 3}, "out=3"),
        ({"out": "."}, "out='.' is a folder"),
        ({"out": "no/such/folder/page.html"}, "does not exist"),
        ({"inputs": "recs.parquet"}, "inputs="),
        ({"inputs": [{"input": "recs", "path": "x"}]}, "inputs="),
        ({"inputs": [{"input": "recs", "rows": -1}]}, "inputs="),
        ({"precision": 40}, "precision=40"),
        ({"k": 0}, "k=0"),
        ({"ci": 2.0}, "ci="),
        ({"colour": "red"}, "report_page() has no option 'colour'"),
        ({"baseline": "nobody"}, "baseline='nobody'"),
        ({"baseline": "popular", "by": None}, "baseline='popular'"),
    ],
)
def test_hostile_input_is_refused_naming_the_argument(arguments, named):
    kwargs = {**OPTIONS, "metrics": ["ndcg"], **arguments}
    with pytest.raises(recframe.RecframeError, match=re.escape(named)):
        recframe.report_page(RECS, truth=TRUTH, **kwargs)


def test_the_command_line_writes_the_page_for_an_html_out(tmp_path, capsys):
    recs, truth = tmp_path / "recs.parquet", tmp_path / "truth.parquet"
    RECS.write_parquet(recs)
    TRUTH.write_parquet(truth)
    flags = ["--truth", str(truth), "--relevance", "rating", "--threshold", "4", "--by", "model", "--score", "score"]
    out = tmp_path / "report.html"
    code = main(
        ["report", str(recs), *flags, "--metrics", "ndcg", "--seed", "0", "--baseline", "popular", "--out", str(out), "--quiet"]
    )
    assert code == 0, capsys.readouterr().err
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    files = {row[1]: row for row in tables(section(page, "evaluated"))[2][1:]}  # after the provenance's two
    assert files[str(recs)] == ["recs", str(recs), f"{RECS.height:,}", hashlib.sha256(recs.read_bytes()).hexdigest()]
    assert files[str(truth)][2] == f"{TRUTH.height:,}"
    # --format html stays the bare table; --format page writes the page whatever the suffix
    assert main(["report", str(recs), *flags, "--metrics", "ndcg", "--format", "html", "--out", str(out), "--quiet"]) == 0
    assert out.read_text().startswith("<table>")
    assert "now called --format table-html" in capsys.readouterr().err  # html: table-html's old name
    txt = tmp_path / "page.txt"
    assert main(["report", str(recs), *flags, "--metrics", "ndcg", "--format", "page", "--out", str(txt), "--quiet"]) == 0
    assert txt.read_text().startswith("<!DOCTYPE html>")
    # bad input: exit 2, one line
    code = main(["report", str(recs), *flags[:-4], "--score", "score", "--baseline", "popular", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "--baseline popular names a model" in err


def test_title_names_the_page_in_python_and_on_the_command_line(page, tmp_path, capsys):
    assert "<title>recframe evaluation</title>" in page and "<h1>recframe evaluation</h1>" in page  # the default
    titled = recframe.report_page(RECS, truth=TRUTH, metrics=["ndcg"], ci=None, title="Ranking <May>", **OPTIONS)
    assert "<title>Ranking &lt;May&gt;</title>" in titled and "<h1>Ranking &lt;May&gt;</h1>" in titled
    with pytest.raises(recframe.RecframeError, match=r"title=3 is not a text"):
        recframe.report_page(RECS, truth=TRUTH, metrics=["ndcg"], title=3, **OPTIONS)
    recs, truth, out = tmp_path / "recs.parquet", tmp_path / "truth.parquet", tmp_path / "page.html"
    RECS.write_parquet(recs)
    TRUTH.write_parquet(truth)
    flags = ["--truth", str(truth), "--relevance", "rating", "--threshold", "4", "--by", "model", "--score", "score"]
    code = main(["report", str(recs), *flags, "--metrics", "ndcg", "--title", "Spring models", "--out", str(out), "--quiet"])
    assert code == 0, capsys.readouterr().err
    assert "<title>Spring models</title>" in out.read_text() and "<h1>Spring models</h1>" in out.read_text()
    code = main(["report", str(recs), *flags, "--title", "x", "--format", "markdown"])
    err = capsys.readouterr().err
    assert code == 2 and "--title names the page" in err


def provenance_of(page: str) -> tuple[str, dict[str, list[str]], dict[str, str]]:
    """The call shown, the side inputs (name: [given, what for]) and the versions of a page."""
    block = re.search(r"<h3>Provenance</h3>(.*?)<h3>Inputs</h3>", page, re.S)
    assert block is not None
    call = html.unescape(re.search(r'<pre class="call"><code>(.*?)</code></pre>', block.group(1), re.S).group(1))
    sides, versions = tables(block.group(1))
    return call, {row[0]: row[1:] for row in sides[1:]}, {row[0]: row[1] for row in versions[1:]}


def conventions_of(page: str) -> dict[str, tuple[str, str]]:
    """option: (value, set by) of the conventions tables."""
    found = tables(section(page, "evaluated"))
    return {row[0]: (row[1], row[2]) for t in found if t[0] == ["option", "value", "set by"] for row in t[1:]}


def _content_hash(frame: pl.DataFrame) -> str:
    """The sha256 of a frame's schema and its rows' hashes in order, as the page computes it."""
    digest = hashlib.sha256(repr(list(frame.schema.items())).encode())
    digest.update(frame.hash_rows(seed=0).to_numpy().tobytes())
    return digest.hexdigest()


def test_provenance_holds_the_call_the_side_inputs_and_the_versions():
    import platform

    import narwhals

    exclude = TRUTH.head(10).select("user_id", "item_id")
    page = recframe.report_page(
        RECS.to_pandas(), truth=TRUTH, baseline="popular", k=[5, 10], metrics=["ndcg"], exclude=exclude, seed=0,
        gain="linear", **OPTIONS,
    )  # fmt: skip
    call, sides, versions = provenance_of(page)
    # each frame with its rows and the start of its content hash
    recs, truth, excluded = (_content_hash(frame)[:12] for frame in (RECS, TRUTH, exclude))
    assert call == (
        f"recframe.report_page(<frame: {RECS.height:,} rows, sha256 {recs}>, truth=<frame: {TRUTH.height:,} rows, "
        f"sha256 {truth}>, baseline='popular', k=[5, 10], metrics=['ndcg'], exclude=<frame: 10 rows, sha256 "
        f"{excluded}>, seed=0, gain='linear', score='score', relevance='rating', threshold=4, by='model')"
    )
    files = {row[0]: row for row in tables(section(page, "evaluated"))[2][1:]}  # the inputs, after side inputs and versions
    assert files["recs"] == ["recs", f"{RECS.height:,}", _content_hash(RECS)]  # (the pandas frame read into Polars)
    assert files["exclude"] == ["exclude", "10", _content_hash(exclude)]
    # the hash is of the content: the same rows hash the same however they are held, another row differently
    from recframe.reporting._page.data import frame_hash

    rebuilt = pl.concat([RECS.head(100), RECS.tail(-100)], rechunk=False)
    assert frame_hash(rebuilt) == frame_hash(RECS) == _content_hash(RECS) != frame_hash(RECS.head(-1))
    assert frame_hash(RECS.with_columns(pl.col("score") + 1e-9)) != frame_hash(RECS)
    assert frame_hash(RECS.rename({"score": "s"})) != frame_hash(RECS)  # (the names are content too)
    assert sides["exclude="][0] == "10 rows" and sides["truth="][0] == f"{TRUTH.height:,} rows"
    assert sides["train="][0] == sides["items="][0] == sides["users="][0] == sides["item_group="][0] == "not given"
    assert sides["baseline="][0] == "'popular'"
    pandas = __import__("pandas")
    assert versions == {
        "Python": platform.python_version(), "recframe": recframe.__version__, "Polars": pl.__version__,
        "narwhals": narwhals.__version__, "numpy": __import__("numpy").__version__, "scipy": __import__("scipy").__version__,
        "engine of recs": f"pandas {pandas.__version__} (read into Polars once for the page)",
    }  # fmt: skip
    shown = conventions_of(page)
    assert shown["k"] == ("5, 10", "given") and shown["gain"] == ("linear", "given") and shown["seed"] == ("0", "given")
    assert shown["profile"] == ("recframe", "default") and shown["ci (interval coverage)"] == ("0.95", "default")
    assert shown["ap_denominator"] == ("min_k_relevant", "default") and shown["n_resamples"] == ("1000", "default")
    # a profile the caller passes sets its conventions; the caller's own win
    page = recframe.report_page(RECS, truth=TRUTH, metrics=["ndcg"], profile="trec_eval", gain="exp2", **OPTIONS)
    shown = conventions_of(page)
    assert shown["profile"] == ("trec_eval", "given") and shown["gain"] == ("exp2", "given")
    assert shown["ap_denominator"] == ("relevant", "profile trec_eval")


def test_the_command_line_page_records_the_command_and_calls_no_default_given(tmp_path, capsys):
    recs, truth, out = tmp_path / "recs.parquet", tmp_path / "truth.parquet", tmp_path / "page.html"
    RECS.write_parquet(recs)
    TRUTH.write_parquet(truth)
    argv = ["report", str(recs), "--truth", str(truth), "--relevance", "rating", "--threshold", "4", "--by", "model",
            "--score", "score", "--metrics", "ndcg", "--gain", "exp2", "--out", str(out), "--quiet"]  # fmt: skip
    assert main(argv) == 0, capsys.readouterr().err
    page = out.read_text(encoding="utf-8")
    call, sides, versions = provenance_of(page)
    assert call == "recframe " + " ".join(argv) and "<p>Command line:</p>" in page
    assert versions["engine of recs"] == f"polars {pl.__version__}"
    given = {option for option, (_, by) in conventions_of(page).items() if by == "given"}
    assert given == {"metrics", "relevant", "ranking", "gain"}  # what was typed; every other one "default"


def verdict_of(page: str) -> str:
    """The verdict's text, as a reader sees it: its sentences, then its table's rows (cells joined by " | ")."""
    found = re.search(r'<div class="verdict" id="verdict">(.*?)</div>\n', page, re.S)
    assert found is not None, "no verdict"
    body = re.sub(r"</p>|</tr>", "\n", found.group(1))
    body = re.sub(r"</t[dh]><t[dh][^>]*>", " | ", body)
    lines = [html.unescape(re.sub(r"<[^>]+>", "", line)).strip() for line in body.split("\n")]
    return "\n".join(line for line in lines if line)


def _p_text(p: float) -> str:
    return "p_adjusted < 0.001" if p < 0.001 else f"p_adjusted {p:.3f}"


def test_the_verdict_comes_first_and_names_the_best_model_and_the_significant_ones(page):
    assert page.index('class="verdict"') < page.index("<nav>")  # at the top, before any section
    summary = recframe.summary(RECS, truth=TRUTH, k=10, **OPTIONS)
    per_user = recframe.per_user(RECS, truth=TRUTH, k=10, **OPTIONS)
    compared = recframe.compare(per_user, baseline="popular")
    pairs = recframe.compare(per_user, by="model")  # every pair: the best against the runner-up
    mean = {m: dict(summary.select("model", m).iter_rows()) for m in summary.columns if "@" in m or m == "r_precision"}
    row = compared.filter(pl.col("metric") == "ndcg@10").row(0, named=True)
    pair = pairs.filter(pl.col("metric") == "ndcg@10").row(0, named=True)
    assert row["significant"] and pair["significant"] and mean["ndcg@10"]["personal"] > mean["ndcg@10"]["popular"]
    want = [
        "Verdict on ndcg@10 (the headline; every pair of models, paired t test, Holm's correction over every pair and "
        f"metric, alpha 0.05): personal is best ({mean['ndcg@10']['personal']:.3f}).",
        f"Best against the runner-up: personal is significantly better than popular ({_p_text(pair['p_adjusted'])}).",
        f"Against the baseline popular ({mean['ndcg@10']['popular']:.3f}): significantly better: personal "
        f"({row['model_mean']:.3f}, {_p_text(row['p_adjusted'])}).",
        "other metric | best | runner-up | best against runner-up (p_adjusted)",
    ]
    # the other metrics, one row each, in the summary's order: personal is best on every one of them
    for metric in [m for m in mean if m != "ndcg@10"]:
        pair = pairs.filter(pl.col("metric") == metric).row(0, named=True)
        assert pair["significant"], metric
        want.append(
            f"{metric} | as the headline: {mean[metric]['personal']:.3f} | {mean[metric]['popular']:.3f} popular | "
            f"better: {_p_text(pair['p_adjusted'])[len('p_adjusted ') :]}"
        )
    assert verdict_of(page).split("\n") == want
    # the numbers link to their tables: the means to the summary, the p-values to the pairs
    verdict = page[page.index('<div class="verdict"') : page.index("<nav>")]
    assert f'<a href="#summary">{mean["ndcg@10"]["personal"]:.3f}</a>' in verdict and '<a href="#pairs">' in verdict


def test_the_verdict_names_ties_as_ties_and_reads_the_headline_asked_for():
    """A copy of personal's lists reordered at random has the same items: the same precision,
    recall, F1 and hit rate for every user, a tie the verdict names; nDCG tells them apart, and is
    the headline by default."""
    shuffled = RECS.filter(pl.col("model") == "personal").with_columns(
        pl.col("score").shuffle(seed=0).over("user_id"), model=pl.lit("shuffled")
    )
    recs = pl.concat([RECS, shuffled])
    page = recframe.report_page(recs, truth=TRUTH, ci=None, seed=0, **OPTIONS)
    summary = recframe.summary(recs, truth=TRUTH, k=10, **OPTIONS)
    mean = {m: dict(summary.select("model", m).iter_rows()) for m in ("ndcg@10", "precision@10", "recall@10", "f1@10")}
    lines = verdict_of(page).split("\n")
    assert lines[0].endswith(f"personal is best ({mean['ndcg@10']['personal']:.3f}).") and "Verdict on ndcg@10" in lines[0]
    assert lines[1].startswith("Best against the runner-up: personal is significantly better than shuffled (p_adjusted")
    for metric in ("precision@10", "recall@10", "f1@10"):
        assert f"{mean[metric]['personal']:.12g}" == f"{mean[metric]['shuffled']:.12g}"
        row = next(line for line in lines if line.startswith(metric + " |"))
        assert row.startswith(
            f"{metric} | {mean[metric]['personal']:.3f} personal, shuffled (tie) | {mean[metric]['popular']:.3f} popular |"
        )
    # headline= chooses the metric: a tie is named first, with why
    page = recframe.report_page(recs, truth=TRUTH, ci=None, seed=0, headline="recall", **OPTIONS)
    first = verdict_of(page).split("\n")[0]
    value = f"{mean['recall@10']['personal']:.3f}"
    assert first.endswith(f"personal ({value}), shuffled ({value}) tie for best (means equal to 12 significant digits).")
    assert "Verdict on recall@10" in first
    # two models not distinguishable by the test tie too: personal's lists, one user's reversed
    one = RECS["user_id"].unique().sort()[5]
    reversed_ = RECS.filter(pl.col("model") == "personal").with_columns(
        score=pl.when(pl.col("user_id") == one).then(-pl.col("score")).otherwise(pl.col("score")), model=pl.lit("nearly")
    )
    recs = pl.concat([RECS, reversed_])
    page = recframe.report_page(recs, truth=TRUTH, ci=None, seed=0, metrics=["ndcg"], **OPTIONS)
    per_user = recframe.per_user(recs, truth=TRUTH, metrics=["ndcg"], **OPTIONS)
    pair = recframe.compare(per_user, by="model").filter(pl.col("model_a").is_in(["nearly", "personal"]))
    pair = pair.filter(pl.col("model_b").is_in(["nearly", "personal"])).row(0, named=True)
    assert not pair["significant"] and pair["mean_a"] != pair["mean_b"]
    first = verdict_of(page).split("\n")[0]
    assert f"tie for best (not distinguishable by the test: {_p_text(pair['p_adjusted'])})." in first, first
    assert "nearly (" in first and "personal (" in first
    with pytest.raises(recframe.RecframeError, match="headline='ndcg@5' is not among the page's metric columns"):
        recframe.report_page(recs, truth=TRUTH, ci=None, headline="ndcg@5", **OPTIONS)
    with pytest.raises(recframe.RecframeError, match="headline=3 is not a metric"):
        recframe.report_page(recs, truth=TRUTH, ci=None, headline=3, **OPTIONS)


def test_the_verdict_on_the_three_model_workflow_data(workflow_page):
    page, per_user = workflow_page
    compared = recframe.compare(per_user, by="model", baseline="popular")
    pairs = recframe.compare(per_user, by="model")
    text = verdict_of(page)
    means = per_user.group_by("model").agg(pl.col("ndcg@20").mean()).sort("ndcg@20", descending=True)
    assert means["model"][0] == "popular"  # the notebook's finding: popular is best on every metric
    runner = means["model"][1]
    pair = pairs.filter(pl.col("model_a").is_in(["popular", runner]) & pl.col("model_b").is_in(["popular", runner]))
    pair = pair.filter(pl.col("metric") == "ndcg@20").row(0, named=True)
    assert "ndcg@20 (the headline; every pair" in text and f"popular is best ({means['ndcg@20'][0]:.3f})." in text
    said = "significantly better" if pair["significant"] else "not significantly better"
    assert f"Best against the runner-up: popular is {said} than {runner} ({_p_text(pair['p_adjusted'])})." in text
    worse = compared.filter((pl.col("metric") == "ndcg@20") & pl.col("significant") & (pl.col("delta") < 0))
    assert worse["model"].sort().to_list() == ["category", "itemknn"]
    listed = ", ".join(f"{r['model']} ({r['model_mean']:.3f}, {_p_text(r['p_adjusted'])})" for r in worse.iter_rows(named=True))
    assert f"Against the baseline popular ({means['ndcg@20'][0]:.3f}): significantly worse: {listed}." in text
    # two models without a baseline: their pair is tested all the same (the best against the runner-up)
    from page_workflow import workflow

    recs, options = workflow()
    options = {name: value for name, value in options.items() if name not in ("users", "train", "items")}
    recs = recs.filter(pl.col("model") != "category")
    page = recframe.report_page(recs, ci=None, metrics=["ndcg"], **{**options, "k": 20, "by": "model"})
    two = per_user.filter(pl.col("model") != "category")
    pair = recframe.compare(two, by="model").filter(pl.col("metric") == "ndcg@20").row(0, named=True)
    means = two.group_by("model").agg(pl.col("ndcg@20").mean()).sort("ndcg@20", descending=True).rows()
    assert verdict_of(page) == (
        "Verdict on ndcg@20 (the headline; every pair of models, paired t test, Holm's correction over every pair and "
        f"metric, alpha 0.05): {means[0][0]} is best ({means[0][1]:.3f}).\n"
        f"Best against the runner-up: {means[0][0]} is significantly better than {means[1][0]} ({_p_text(pair['p_adjusted'])})."
    )


@pytest.fixture(scope="module")
def workflow_page() -> tuple[str, pl.DataFrame]:
    """The three-model workflow page (no segment or side input beyond exclude=), and its per-user frame."""
    from page_workflow import workflow

    recs, options = workflow()
    options = {**options, "k": 20, "by": "model", "metrics": ["ndcg", "recall"]}
    for name in ("users", "train", "items"):
        options.pop(name)
    page = recframe.report_page(recs, baseline="popular", seed=0, ci=None, **options)
    return page, recframe.per_user(recs, **options)


def test_marks_say_their_direction_and_every_mark_and_bold_cell_is_captioned(workflow_page):
    page, _ = workflow_page
    summary = section(page, "summary")
    # popular is best: its cells bold and unmarked; the two others significantly worse, ▼, never ▲
    header, *body = tables(summary)[0]
    assert header[1:] == ["category", "itemknn", "popular"]
    rows = {row[0]: dict(zip(header[1:], row[1:])) for row in body}
    for metric in ("ndcg@20", "recall@20"):
        assert (
            "▼" not in rows[metric]["popular"] and rows[metric]["category"].count("▼") == rows[metric]["itemknn"].count("▼") == 1
        )
    assert "▲" not in summary[: summary.index("</table>")] and "†" not in summary
    assert summary.count('title="significantly worse than the baseline popular">▼</sup>') == 4
    captions = html.unescape(summary)
    assert "▲ / ▼ beside a mean: significantly better / worse than the baseline popular" in captions
    assert "Bold: the best value of the row" in captions and "n_users: counted in the means" in captions
    comparison = section(page, "comparison_table")
    table_part = comparison[comparison.index("<table>") : comparison.index("</table>")]
    assert table_part.count("▼") == 4 and "▲" not in table_part and "†" not in table_part
    captions = html.unescape(comparison[comparison.index("</table>") :])
    assert "▲ / ▼ beside a delta" in captions and "Bold: the best delta of each metric" in captions
    # the sample: personal better than popular, ▲
    sample = recframe.report_page(RECS, truth=TRUTH, baseline="popular", metrics=["ndcg"], ci=None, **OPTIONS)
    cells = {row[0]: row[1:] for row in tables(section(sample, "summary"))[0][1:]}
    assert "▲" in cells["ndcg@10"][0] and "▲" in tables(section(sample, "comparison_table"))[0][1][5]


def test_example_users_disclose_ties_and_show_their_values_per_model(workflow_page, page):
    workflow, per_user = workflow_page
    examples = workflow[workflow.index('<section id="examples">') :]  # (the users' blocks are sections too)
    # 201 users score 0 on every model: the three worst are drawn from them, and the page says so
    means = per_user.group_by("user_id").agg(pl.col("ndcg@20").mean()).drop_nulls()
    tied = means.filter(pl.col("ndcg@20") == 0).height
    assert tied == 201
    assert f"{tied} users tie at ndcg@20 = 0; 3 of them shown, chosen with seed 0." in examples
    worst = examples[examples.index("<h3>Worst") : examples.index("<h3>Disagree")]
    shown = [int(u) for u in re.findall(r"<h3>user_id (\d+)", worst)]
    assert len(shown) == 3 and set(shown) <= set(means.filter(pl.col("ndcg@20") == 0)["user_id"].to_list())
    # each model's list is headed by the user's value of the choosing metric
    disagree = examples[examples.index("<h3>Disagree") : examples.index("<h3>Random")]
    user = int(re.search(r"<h3>user_id (\d+)", disagree).group(1))
    for model, value in per_user.filter(pl.col("user_id") == user).select("model", "ndcg@20").iter_rows():
        assert re.search(rf"<h4>{model} .*?<span class=\"rf-value\">ndcg@20 {value:.3f}</span></h4>", disagree), model
    # the sample: its two users at 0 are fewer than the three worst shown (no tie), and the gap of
    # 1 between the models (one at 1, the other at 0) is shared by more users than shown
    sample = page[page.index('<section id="examples">') :]
    assert "users tie at ndcg@10" not in sample
    per_user = recframe.per_user(RECS, truth=TRUTH, k=10, **OPTIONS)
    gaps = per_user.group_by("user_id").agg((pl.col("ndcg@10").max() - pl.col("ndcg@10").min()).alias("gap"))
    assert f"{gaps.filter(pl.col('gap') == 1).height} users tie at the gap in ndcg@10 = 1; 3 of them shown" in sample


def test_a_user_shown_who_is_left_out_of_the_means_is_said_so():
    per_user = recframe.per_user(RECS, truth=TRUTH, metrics=["ndcg"], **OPTIONS)
    skipped = per_user.filter(pl.col("ndcg@10").is_null())["user_id"].unique().sort()
    counted = per_user.filter(pl.col("ndcg@10").is_not_null())["user_id"].unique().sort()
    assert skipped.len() > 0  # (no relevant held-out item: summary's n_no_relevant)
    shown = recframe.inspect(RECS, truth=TRUTH, users=[skipped[0], counted[0]], **OPTIONS)
    text = recframe.side_by_side(shown, values=per_user.select("model", "user_id", "ndcg@10")).to_html()
    blocks = text.split('<section class="rf-user">')[1:]
    assert "left out of the means (no relevant held-out item)" in blocks[0] and "left out" not in blocks[1]
    # users chosen by the metric carry its values: the same sentence without values=
    worst = recframe.inspect(RECS, truth=TRUTH, select="worst", n=2, **OPTIONS)
    assert "left out of the means" not in recframe.side_by_side(worst).to_html()  # (worst users have a value)


def test_side_by_side_ends_long_lists_with_n_more_and_shows_relevance_values(tmp_path, capsys):
    history = pl.DataFrame({"user_id": [1] * 25, "item_id": [f"h{i:02}" for i in range(25)], "rating": [5, 2] + [3] * 23})
    recs = pl.DataFrame({"model": ["A", "A", "B"], "user_id": [1, 1, 1], "item_id": ["x", "y", "y"], "rank": [1, 2, 1]})
    truth = pl.DataFrame({"user_id": [1, 1], "item_id": ["y", "z"], "rating": [4.5, 1]})
    options = {"truth": truth, "train": history, "relevance": "rating", "threshold": 4, "by": "model"}
    out = recframe.inspect(recs, users=[1], **options)
    assert out.filter(pl.col("source") == "held_out").select("item_id", "relevant", "relevance").rows() == [
        ("y", True, 4.5), ("z", False, 1.0),
    ]  # fmt: skip
    per_user = recframe.per_user(recs, k=10, metrics=["ndcg"], **options)
    text = recframe.side_by_side(out, values=per_user.select("model", "user_id", "ndcg@10")).to_html()
    # the 25-item history shows 20, then says what is left (none of it relevant: 3 < 4)
    history_column = text[text.index('class="rf-col rf-history"') : text.index('class="rf-col rf-recommended"')]
    assert history_column.count('<li class="rf-') == 21 and '<li class="rf-more">… 5 more</li>' in history_column
    # ✓ with the relevance value beside it; a judged miss shows its value alone
    assert re.search(
        r'<span class="rf-mark" aria-label="relevant">✓</span><span class="rf-item">[^<]+</span> <span class="rf-grade">rel 4.5</span>',
        text,
    )
    assert '<span class="rf-mark"></span><span class="rf-item">z</span> <span class="rf-grade">rel 1</span>' in text
    assert re.search(
        r'<span class="rf-mark" aria-label="relevant">✓</span><span class="rf-item">h00[^<]*</span> <span class="rf-grade">rel 5</span>',
        text,
    )
    # each model's list headed by the user's value of the metric
    want = dict(per_user.select("model", "ndcg@10").iter_rows())
    for model in ("A", "B"):
        assert re.search(rf"<h4>{model} .*?<span class=\"rf-value\">ndcg@10 {want[model]:.3f}</span></h4>", text)
    assert '<li class="rf-more">' not in recframe.side_by_side(out, max_items=None).to_html()
    with pytest.raises(recframe.RecframeError, match="max_items=0 must be a whole number"):
        recframe.side_by_side(out, max_items=0)
    # recframe inspect writes the same view
    files = {name: tmp_path / f"{name}.parquet" for name in ("recs", "truth", "train")}
    for name, frame in (("recs", recs), ("truth", truth), ("train", history)):
        frame.write_parquet(files[name])
    page_file = tmp_path / "users.html"
    argv = ["inspect", str(files["recs"]), "--truth", str(files["truth"]), "--train", str(files["train"]), "--relevance",
            "rating", "--threshold", "4", "--by", "model", "--users", "1", "--out", str(page_file), "--quiet"]  # fmt: skip
    assert main(argv) == 0, capsys.readouterr().err
    written = page_file.read_text(encoding="utf-8")
    assert '<li class="rf-more">… 5 more</li>' in written and '<span class="rf-grade">rel 4.5</span>' in written


def test_many_models_wrap_into_summary_blocks_and_long_headers_may_break():
    copies = [RECS.filter(pl.col("model") == "personal").with_columns(model=pl.lit(f"copy{i}")) for i in range(3)]
    recs = pl.concat([RECS, *copies])
    page = recframe.report_page(recs, truth=TRUTH, baseline="popular", metrics=["ndcg"], ci=None, **OPTIONS)
    summary = tables(section(page, "summary"))
    assert [t[0] for t in summary] == [["", "copy0", "copy1", "copy2", "personal"], ["", "popular"]]  # four a table
    assert [row[0] for row in summary[1][1:]] == ["n_users", "n_skipped", "ndcg@10"]  # every row in each block
    assert "<th>n_<wbr>pairs</th>" in section(page, "comparison_table") and "@media print" in page and "size: A4" in page


def test_the_glossary_is_the_registry_documentation_linked_from_the_tables(page):
    import recframe.metrics.beyond
    from recframe.metrics import REGISTRY

    glossary = section(page, "glossary")
    # the entry of ndcg is summary's own formula; every metric of the page has one, and every link lands on one
    ndcg = re.search(r'<dt id="g-ndcg"><code>ndcg</code></dt><dd>(.*?) <span class="note">(.*?)</span></dd>', glossary)
    notes = recframe.summary.__doc__.split("Notes")[1]
    formula = " ".join(notes[notes.index("- ndcg@k") + 2 : notes.index("With ``score``")].split()).replace("``", "")
    assert html.unescape(ndcg.group(1)) == formula and ndcg.group(2).startswith("higher is better")
    ids, links = set(re.findall(r'id="g-([^"]+)"', page)), re.findall(r'href="#g-([^"]+)"', page)
    assert set(links) == ids == {"precision", "recall", "f1", "hit_rate", "r_precision", "ap", "rr", "dcg", "ndcg"}
    assert '<td><a href="#g-ndcg">ndcg@10</a></td>' in section(page, "summary")  # the summary's row
    assert '<td><a href="#g-ndcg">ndcg@10</a></td>' in section(page, "comparison_table")  # the comparison's metric cell
    # a beyond-accuracy metric: its module's bullet and what the registry says (lower is better, needs train=)
    train = TRUTH.select("user_id", "item_id")
    items = pl.DataFrame({"item_id": pl.concat([RECS["item_id"], TRUTH["item_id"]]).unique()})
    beyond = recframe.report_page(RECS, truth=TRUTH, metrics=["ndcg"], train=train, items=items, ci=None, **OPTIONS)
    entry = re.search(r'<dt id="g-popularity">.*?<dd>(.*?) <span class="note">(.*?)</span></dd>', beyond)
    assert html.unescape(entry.group(1)).startswith("popularity@k = (1/n) * sum of u(i)")
    assert "popularity@k" in recframe.metrics.beyond.__doc__ and not REGISTRY["popularity"].higher_is_better
    assert entry.group(2).startswith("lower is better;") and entry.group(2).endswith("needs train=.")
    assert '<td><a href="#g-gini">gini@10</a></td>' in section(beyond, "beyond")


def test_every_metric_of_the_registry_has_its_formula_in_the_glossary():
    """A metric defined inside a bullet of several (``set_recall`` in set_precision's, the
    ``_X`` families of trec_eval) has that bullet, never the placeholder."""
    from recframe.metrics import REGISTRY
    from recframe.reporting._page import glossary

    formulas = glossary.formulas()
    assert sorted(set(REGISTRY) - set(formulas)) == []
    assert "set_recall = num_rel_ret / R" in formulas["set_recall"]
    assert formulas["iprec_at_recall"].startswith("iprec_at_recall_X (X = 0, 10, ..., 100")
    assert "rbp_residual@k = (1 - q)" in formulas["rbp_residual"]


def test_report_page_takes_the_summary_options_typed_and_keeps_its_ci_default(page, workflow_page):
    import typing

    from recframe.options import SummaryOptions, Unpack

    hints = typing.get_type_hints(recframe.report_page)
    assert hints["options"] == Unpack[SummaryOptions]
    assert not {"truth", "baseline", "train", "items", "ci"} & set(hints)  # all in **options now
    # ci not passed: the page's 0.95 intervals; ci=None passed: none
    assert "[lo, hi]: the 95% interval of the mean." in html.unescape(section(page, "summary"))
    assert "interval of the mean" not in html.unescape(section(workflow_page[0], "summary"))


def test_models_with_one_user_each_are_said_untested_not_a_raw_error():
    """One user per model: the all-pairs test has no p-value (fewer than two paired users), and
    the verdict once formatted that missing p-value (a raw TypeError); it now names the models
    not tested against the best one. A frame whose every list is skipped is refused, saying so."""
    frame = pl.DataFrame(
        {
            "model": ["a"] * 3 + ["b"] * 3 + ["c"] * 3,
            "user_id": [1] * 9,
            "item_id": [1, 2, 3, 2, 3, 1, 3, 1, 2],
            "rank": [1, 2, 3] * 3,
            "relevance": [1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0],
        }
    )
    page = recframe.report_page(frame, k=2, by="model")
    said = verdict_of(page)
    assert re.search(
        r"Best against the runner-up: a is not tested against [bc] \(fewer than two users with values of both\)\.", said
    )
    with pytest.raises(recframe.RecframeError, match="per_user_frame has no row to compare, so no pair of models"):
        recframe.report_page(frame.with_columns(pl.lit(None, pl.Float64).alias("relevance")), k=2, by="model")


@pytest.mark.parametrize("k", [300, sys.maxsize])
def test_a_deep_k_builds_the_page_at_the_cost_of_the_data(k, tmp_path, capsys):
    """Issue 58, items 7 and 10: report_page(k=300) raised RecursionError (the agreement's chain
    of one condition per depth; `recframe report --k 300` exited 1, "a bug"), and k=sys.maxsize
    never returned (its depth table was O(k^2) in Python). The page's agreement row is
    recframe.agreement's mean at that k, which past the longest list reads the whole list."""
    import time
    import warnings

    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", recframe.CappedWarning)  # the curve stops at the longest list
        page = recframe.report_page(RECS, truth=TRUTH, baseline="popular", seed=0, k=k, metrics=["ndcg"], ci=None, **OPTIONS)
    assert time.perf_counter() - start < 60
    rows = recframe.agreement(RECS, k=k, score="score", by="model")
    assert tables(section(page, "agreement"))[0][1][:6] == [
        "personal", "popular", f"{rows.height}", f"{rows['overlap'].mean():.3f}", f"{rows['jaccard'].mean():.3f}",
        f"{rows['rbo'].mean():.3f}",
    ]  # fmt: skip
    if k == 300:
        recs, truth, out = tmp_path / "recs.parquet", tmp_path / "truth.parquet", tmp_path / "page.html"
        RECS.write_parquet(recs)
        TRUTH.write_parquet(truth)
        flags = ["--truth", str(truth), "--relevance", "rating", "--threshold", "4", "--by", "model", "--score", "score"]
        code = main(["report", str(recs), *flags, "--metrics", "ndcg", "--k", "300", "--out", str(out), "--quiet"])
        assert code == 0, capsys.readouterr().err
        assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
