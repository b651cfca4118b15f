"""The HTML of :func:`recframe.inspect`'s users (:func:`side_by_side`): one block per user, a
column per list, with inline CSS and no script; the page's example users use it too."""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

import polars as pl

from recframe.engine import _frames
from recframe.engine._validate import whole
from recframe.errors import RecframeError, fix, ref
from recframe.reporting import _inspect
from recframe.reporting._page.html import document, escape

_CSS = """
.rf-inspect{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;font-size:13px;color:#1f2328;
  background:#fff;line-height:1.35}
.rf-inspect .rf-legend{color:#57606a;margin:0 0 8px}
.rf-inspect .rf-ties{color:#1f2328;margin:0 0 8px}
.rf-inspect .rf-user{border:1px solid #d0d7de;border-radius:6px;margin:0 0 12px;padding:8px 10px}
.rf-inspect .rf-user h3{font-size:14px;margin:0 0 8px;font-weight:600}
.rf-inspect .rf-user h3 .rf-attr{font-weight:normal;color:#57606a;margin-left:8px}
.rf-inspect .rf-cols{display:flex;flex-wrap:wrap;gap:12px;align-items:flex-start}
.rf-inspect .rf-col{flex:1 1 190px;max-width:320px;min-width:0}
.rf-inspect .rf-col h4{font-size:12px;margin:0 0 4px;padding-bottom:2px;border-bottom:2px solid #0969da;
  overflow-wrap:anywhere}
.rf-inspect .rf-history h4{border-color:#8c959f}
.rf-inspect .rf-held_out h4{border-color:#1a7f37}
.rf-inspect .rf-count{font-weight:normal;color:#57606a}
.rf-inspect ol{margin:0;padding-left:28px}
.rf-inspect li.rf-more{list-style:none;color:#57606a;font-style:italic}
.rf-inspect .rf-grade{color:#57606a;font-size:11px}
.rf-inspect .rf-left-out{color:#9a6700}
.rf-inspect .rf-value{font-weight:normal;color:#1f2328;display:block}
.rf-inspect li{margin:1px 0;padding:1px 3px;border-radius:3px;overflow-wrap:anywhere}
.rf-inspect li.rf-hit{background:#dafbe1}
.rf-inspect li.rf-unjudged{color:#6e7781}
.rf-inspect .rf-mark{display:inline-block;width:1.2em;color:#1a7f37;font-weight:bold}
.rf-inspect .rf-item{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.rf-inspect .rf-meta{color:#57606a}
.rf-inspect .rf-empty{color:#6e7781;font-style:italic;list-style:none}
.rf-inspect img.rf-img{display:block;max-width:64px;max-height:96px;margin:2px 0}
"""
_LABELS = {"history": "History", "recommended": "Recommended", "held_out": "Held out"}
_URL_PREFIXES = ("http://", "https://", "//")


def _text(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _number(value: Any) -> str:
    """A relevance or metric value as text: 4 as "4", 4.5 as "4.5", 0.43127 as "0.431"."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return f"{value:.3f}".rstrip("0").rstrip(".") if isinstance(value, float) else str(value)


def _shown_value(value: Any) -> str | None:
    """An item column's value as text; None for a null or a URL (never shown as text: with
    ``image=`` as an image, else not at all, so that the page makes no network reference)."""
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        parts = [str(x) for x in value if x is not None]
        return ", ".join(parts) if parts else None
    if isinstance(value, float):
        return f"{value:.4g}"
    text = str(value)
    return None if text.strip().lower().startswith(_URL_PREFIXES) else text


def _chosen_label(metric: str, column: str) -> str:
    """The heading of a chosen user's value: "mean ndcg@10", "gap in ndcg@10"."""
    return f"gap in {metric}" if column.endswith(_inspect.CHOSEN_SUFFIX["disagree"]) else f"mean {metric}"


@dataclass(frozen=True)
class SideBySide:
    """The lists of :func:`inspect`'s users side by side: ``to_html()`` gives a self-contained
    HTML fragment (inline CSS, no script, nothing fetched unless ``image=`` was given), which
    Jupyter shows through ``_repr_html_``."""

    table: pl.DataFrame
    keys: tuple[str, ...]
    user: str
    item: str
    item_columns: tuple[str, ...]
    image: str | None = None
    max_users: int | None = None
    max_items: int | None = 20
    graded: bool = True  # the frame has inspect's relevance column
    values: pl.DataFrame | None = None  # per (user, list keys): the metric values shown in a list's heading
    chosen: tuple[str, str] | None = None  # (metric, the column of the value users were chosen by) of the frame

    @property
    def users(self) -> list[Any]:
        """The users shown, in order."""
        ids = self.table[self.user].unique(maintain_order=True).to_list()
        return ids if self.max_users is None else ids[: self.max_users]

    def __repr__(self) -> str:
        return f"SideBySide({len(self.users)} users, {self.table.height} rows; .to_html() for the view)"

    def _repr_html_(self) -> str:
        return self.to_html()

    def to_html(self) -> str:
        """The view as an HTML fragment: one block per user, a column per list (history, each
        model's recommendations, held out), the items in rank order, relevant ones marked ✓."""
        # each user's rows (and values), split once: a filter per user and list is a pass each
        users = self.users
        parts = self.table.partition_by(self.user, as_dict=True, maintain_order=True)
        shown = values = None
        if self.values is not None:
            shown = self.values.filter(pl.col(self.user).is_in(users))  # (a null user: no values, as a filter finds)
            values = shown.partition_by(self.user, as_dict=True) if shown.height else {}
        blocks = [
            self._block(
                user,
                self._rows_of(self.table, parts, user),
                None if shown is None or values is None else self._rows_of(shown, values, user),
            )
            for user in users
        ]
        legend = (
            '<p class="rf-legend"><span class="rf-mark">✓</span> relevant (judged at or above the threshold), '
            "with its relevance value after it (rel 4.5); a judged item below the threshold shows its value alone; grey: "
            "not judged. "
            "Lists in rank order" + (f", the first {self.max_items} of each" if self.max_items is not None else "") + ".</p>"
        )
        if not blocks:
            blocks = ['<p class="rf-legend">No user to show.</p>']
        ties = "".join(f'<p class="rf-ties">{_text(t)}</p>' for t in self.ties)
        return f'<div class="rf-inspect"><style>{_CSS}</style>{legend}{ties}{"".join(blocks)}</div>'

    @property
    def ties(self) -> list[str]:
        """Where users were chosen by a metric ("worst", "best", "disagree") and more users share
        a chosen value than are shown, in words: "3 users tie at ndcg@10 = 0; 1 of them shown,
        chosen in a seeded random order." (per segment when there are several)."""
        if self.chosen is None:
            return []
        return _inspect.frame_ties(self.table, self.user, list(self.keys), users=self.users)

    def to_page(self, title: str = "recframe: users' lists") -> str:
        """A whole HTML page holding :meth:`to_html` (what ``recframe inspect --out x.html`` writes)."""
        heading = f'<h1 style="font-family:system-ui,sans-serif;font-size:18px">{escape(title)}</h1>'
        return document(title, "body{margin:16px;background:#fff}", f"{heading}\n{self.to_html()}")

    def _rows_of(self, frame: pl.DataFrame, parts: dict[Any, pl.DataFrame], user: Any) -> pl.DataFrame:
        """`user`'s rows of `frame`, split by user into `parts` (a float NaN id, which no dict
        key equals, is filtered for, as a filter finds it)."""
        found = parts.get((user,))
        return found if found is not None else frame.filter(pl.col(self.user) == user)

    def _block(self, user: Any, rows: pl.DataFrame, values: pl.DataFrame | None) -> str:
        """The block of `user`, whose rows of the table are `rows` and of ``self.values`` `values`."""
        constant = [b for b in self.keys if rows[b].n_unique() == 1 and rows[b].null_count() == 0]
        varying = [b for b in self.keys if b not in constant]
        attrs = "".join(f'<span class="rf-attr">{_text(b)}: {_text(rows[b][0])}</span>' for b in constant)
        if self.chosen is not None and rows.height and rows[self.chosen[1]][0] is not None:
            metric, column = self.chosen
            tied = rows[_inspect.TIED][0]
            attrs += (
                f'<span class="rf-attr rf-chosen">{_text(_chosen_label(metric, column))} {_number(float(rows[column][0]))}'
                + (f" (tied with {tied - 1:,} other user{'s' if tied > 2 else ''})" if tied > 1 else "")
                + "</span>"
            )
        attrs += self._left_out(rows, values)
        columns = []
        for (source, *keys), part in rows.partition_by(["source", *varying], as_dict=True, maintain_order=True).items():
            # a model's column is named by its value ("A"); other keys by name and value ("fold 2")
            named = [(key, value) for key, value in zip(varying, keys) if value is not None]
            words = [
                str(value) if i == 0 and source == "recommended" else f"{key} {value}" for i, (key, value) in enumerate(named)
            ]
            if source != "recommended" or not words:
                words.insert(0, _LABELS.get(str(source), str(source)))
            label = " · ".join(words)
            value = self._value(values, dict(named), part) if source == "recommended" else ""
            columns.append(self._column(str(source), label, part, value))
        if "history" not in rows["source"] and "history" in self.table["source"]:
            # train= was given and this user has no row in it (a cold-start user): an empty history
            columns.insert(0, self._column("history", _LABELS["history"], rows.clear()))
        return (
            f'<section class="rf-user"><h3>{_text(self.user)} {_text(user)}{attrs}</h3>'
            f'<div class="rf-cols">{"".join(columns)}</div></section>'
        )

    def _left_out(self, rows: pl.DataFrame, values: pl.DataFrame | None) -> str:
        """A user whose every shown value is null is left out of the means: said, with why."""
        if self.values is not None and values is not None:
            metrics = [c for c in values.columns if c != self.user and c not in self.keys]
            empty = values.height > 0 and bool(metrics) and all(values[m].null_count() == values.height for m in metrics)
        elif self.chosen is not None:
            shown = rows.filter(pl.col("source") == "recommended")[self.chosen[0]]
            empty = shown.len() > 0 and shown.null_count() == shown.len()
        else:
            return ""
        if not empty:
            return ""
        held = rows.filter(pl.col("source") == "held_out")
        why = "no held-out item" if not held.height else "no relevant held-out item" if not held["relevant"].any() else "no value"
        return f'<span class="rf-attr rf-left-out">left out of the means ({why})</span>'

    def _column(self, source: str, label: str, part: pl.DataFrame, value: str = "") -> str:
        rows = part.sort("rank", nulls_last=True).to_dicts()  # (a list's few rows: in Python from here)
        count = f"{sum(row['relevant'] is True for row in rows)} relevant of {len(rows)}"
        shown = rows if self.max_items is None else rows[: self.max_items]
        items = [self._item(row) for row in shown]
        if len(rows) > len(shown):
            hidden = sum(row["relevant"] is True for row in rows[len(shown) :])
            items.append(
                f'<li class="rf-more">… {len(rows) - len(shown)} more' + (f" ({hidden} relevant)" if hidden else "") + "</li>"
            )
        body = "".join(items) or '<li class="rf-empty">nothing</li>'
        value_html = f'<span class="rf-value">{_text(value)}</span>' if value else ""
        return (
            f'<div class="rf-col rf-{_text(source)}"><h4>{_text(label)} <span class="rf-count">({count})</span>'
            f"{value_html}</h4><ol>{body}</ol></div>"
        )

    def _value(self, values: pl.DataFrame | None, keys: dict[str, Any], part: pl.DataFrame) -> str:
        """The metric values of ``self.values`` for this user's list (``"ndcg@20 0.431"``; its
        rows of them: `values`), else the value of the metric users were chosen by that the
        frame holds, or ""."""
        if self.values is None:
            if self.chosen is None or not part.height:
                return ""
            value = part[self.chosen[0]][0]
            return f"{self.chosen[0]} {'–' if value is None else format(value, '.3f')}"
        if values is None:
            return ""
        found = values
        for key, value in keys.items():
            if key in found.columns:
                found = found.filter(pl.col(key) == value)
        metrics = [c for c in found.columns if c != self.user and c not in self.keys]
        if found.height != 1:
            return ""
        return " · ".join(f"{m} {'–' if found[m][0] is None else format(found[m][0], '.3f')}" for m in metrics)

    def _item(self, row: dict[str, Any]) -> str:
        relevant = row["relevant"]
        cls = "rf-hit" if relevant is True else "rf-unjudged" if relevant is None else "rf-miss"
        mark = "✓" if relevant is True else ""
        grade = row.get("relevance") if self.graded else None
        # after the item, worded: a grade before an id ("3 937") reads, and copies, as one number
        grade_html = f' <span class="rf-grade">rel {_text(_number(grade))}</span>' if grade is not None else ""
        image = ""
        if self.image is not None and row.get(self.image):
            image = f'<img class="rf-img" src="{_text(row[self.image])}" alt="" loading="lazy">'
        meta = [t for c in self.item_columns if c != self.image for t in [_shown_value(row[c])] if t]
        meta_html = f' <span class="rf-meta">{_text(" · ".join(meta))}</span>' if meta else ""
        rank = row["rank"]
        value = f' value="{int(rank)}"' if rank is not None else ""
        label = ' aria-label="relevant"' if mark else ""
        return (
            f'<li class="{cls}"{value}>{image}<span class="rf-mark"{label}>{mark}</span>'
            f'<span class="rf-item">{_text(row[self.item])}</span>{grade_html}{meta_html}</li>'
        )


def _layout(columns: list[str]) -> tuple[int, bool, tuple[str, str] | None, tuple[str, ...]]:
    """Where the columns of a frame of inspect are: the index of ``source``; whether it has
    ``relevance``; the metric's columns of users chosen by it; the columns of ``items=``."""
    at = columns.index("source") if "source" in columns else -1
    if at < 1 or columns[at + 1 : at + 4 : 2] != ["rank", "relevant"]:
        raise RecframeError(
            f"{ref('inspected')} is not a frame from recframe.inspect (its columns: {', '.join(columns)}).",
            "pass what recframe.inspect(...) returned, with its columns in their order.",
        )
    graded = columns[at + 4 : at + 5] == ["relevance"]  # (a frame of an older inspect has no relevance)
    chosen = _inspect.chosen_columns(columns, at + 4) if graded else None
    item_columns = tuple(columns[at + 5 + (3 if chosen else 0) :] if graded else columns[at + 4 :])
    return at, graded, chosen, item_columns


def _check_view(image: Any, item_columns: tuple[str, ...], max_users: Any, max_items: Any) -> None:
    """image= names an item column; max_users= and max_items= are whole numbers >= 1 (or None)."""
    if image is not None and image not in item_columns:
        raise RecframeError(
            f"{ref('image', image)} is not a column of {ref('items')} in this frame (it has {', '.join(item_columns) or 'none'}).",
            f"pass the column of image URLs, e.g. {fix('image', item_columns[0] if item_columns else 'poster_url')}, "
            "and give inspect that items= frame.",
        )
    for name, limit in (("max_users", max_users), ("max_items", max_items)):
        if limit is not None and (whole(limit) or 0) < 1:
            raise RecframeError(f"{ref(name, limit)} must be a whole number >= 1.", f"e.g. {fix(name, 5)}, or leave it out.")


@_frames.engine_call
def side_by_side(
    inspected: Any,
    *,
    image: str | None = None,
    max_users: int | None = None,
    max_items: int | None = 20,
    values: Any = None,
) -> SideBySide:
    """The frame of :func:`inspect` as HTML: one block per user, a column per list.

    Parameters
    ----------
    inspected : frame
        What :func:`inspect` returned (any frame type it returns; a lazy one is collected).
    image : str, optional
        A column of ``items=`` holding image URLs, shown as ``<img>`` beside each item. Only
        when given: images need the network, and URLs are otherwise never put in the page
        (an item column holding URLs is left out of the text).
    max_users : int, optional
        Show the first this many users of the frame (default: all).
    max_items : int or None, default 20
        Show the first this many items of each list; a longer list ends with "… N more" (and
        how many of those are relevant). None: every item.
    values : frame, optional
        A :func:`recframe.per_user` frame (its user column, the model keys, and the metric
        columns to show): each model's list is headed by that user's values, e.g.
        ``ndcg@10 0.431``. Not needed for users inspect chose by a metric (``"worst"``,
        ``"best"``, ``"disagree"``): the frame holds that metric's values, and they head the lists.

    Returns
    -------
    SideBySide
        ``.to_html()`` gives a self-contained fragment (inline CSS, no script); in Jupyter the
        object shows itself. For each user: a column for the history (``train=``), one per
        model (and fold), one for the held-out items, items in rank order with the columns of
        ``items=`` beside them, relevant items marked ✓ (class ``rf-hit``) and every judged
        item with its relevance value, unjudged ones grey.
        When the frame has history rows (``train=``), a user without any (a cold-start user)
        gets an empty history column ("nothing"). All text is escaped.
        For users chosen by a metric (the frame has inspect's ``ndcg@10``, ``ndcg@10_mean`` or
        ``_gap`` and ``tied_users`` columns), each model's list is headed by its value
        (``ndcg@10 0.431``), each user by the value it was chosen by ("mean ndcg@10 0 (tied
        with 200 other users)"), and where more users share a chosen value than are shown, a
        sentence says so above the users ("201 users tie at ndcg@10 = 0; 3 of them shown,
        chosen in a seeded random order."; per segment; also ``.ties``).

    Examples
    --------
    >>> import polars as pl
    >>> import recframe
    >>> recs = pl.DataFrame({"model": ["A", "A", "B"], "user_id": [1, 1, 1], "item_id": ["x", "y", "y"],
    ...                      "rank": [1, 2, 1]})
    >>> truth = pl.DataFrame({"user_id": [1], "item_id": ["y"], "rating": [5]})
    >>> items = pl.DataFrame({"item_id": ["x", "y"], "title": ["Alien", "Heat <1995>"]})
    >>> out = recframe.inspect(recs, users=[1], truth=truth, items=items, relevance="rating", by="model")
    >>> view = recframe.side_by_side(out)
    >>> html = view.to_html()
    >>> "Heat &lt;1995&gt;" in html, html.count('class="rf-hit"'), "<img" in html
    (True, 3, False)

    Users chosen by a metric show its values; here users 1 and 2 both score 0 and one is shown:

    >>> recs = pl.DataFrame({"user_id": [1, 2, 3], "item_id": ["x", "x", "y"], "rank": [1, 1, 1]})
    >>> truth = pl.DataFrame({"user_id": [1, 2, 3], "item_id": ["y", "y", "y"], "rating": [5, 5, 5]})
    >>> worst = recframe.inspect(recs, k=1, select="worst", n=1, truth=truth, relevance="rating")
    >>> view = recframe.side_by_side(worst)
    >>> view.ties
    ['2 users tie at ndcg@1 = 0; 1 of them shown, chosen in a seeded random order.']
    >>> "ndcg@1 0.000" in view.to_html(), "mean ndcg@1 0 (tied with 1 other user)" in view.to_html()
    (True, True)
    """
    lf, _ = _frames.lazy(inspected, "inspected")
    table = lf.collect().to_polars()
    columns = table.columns
    at, graded, chosen, item_columns = _layout(columns)
    _check_view(image, item_columns, max_users, max_items)
    shown_values = None
    if values is not None:
        shown_values = _frames.lazy(values, "values")[0].collect().to_polars()
        if columns[at - 1] not in shown_values.columns:
            raise RecframeError(
                f"{ref('values')} has no column {columns[at - 1]!r}, the user column of the lists.",
                "pass the per_user frame of the same call (recframe.per_user(..., by=...)).",
            )
    return SideBySide(
        table=table,
        keys=tuple(columns[: at - 1]),
        user=columns[at - 1],
        item=columns[at + 2],
        item_columns=item_columns,
        image=image,
        max_users=None if max_users is None else int(max_users),
        max_items=None if max_items is None else int(max_items),
        graded=graded,
        values=shown_values,
        chosen=chosen,
    )
