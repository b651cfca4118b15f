"""Command line: ``python -m recframe demo`` evaluates the bundled sample data."""

from __future__ import annotations

import argparse
import sys

import polars as pl

import recframe
from recframe.data import load_sample


def demo() -> int:
    recs, truth = load_sample()
    print(
        f"Bundled sample: {recs['model'].n_unique()} models, {recs['user_id'].n_unique()} users with lists, "
        f"{truth.height} held-out ratings (1-5); relevant = rating >= 4.\n"
    )
    table = recframe.summary(
        recs,
        truth=truth,
        k=[5, 10],
        metrics=["precision", "recall", "ndcg", "ap", "rr"],
        relevance="rating",
        threshold=4,
        by="model",
    )
    with pl.Config(tbl_rows=-1, tbl_cols=-1, float_precision=4, tbl_hide_dataframe_shape=True, tbl_hide_column_data_types=True, tbl_width_chars=200):
        print(table)
    print(
        "\nn_users: users counted in the means; n_skipped: users with no rating >= 4, left out.\n"
        "Python: recframe.summary(recs, truth=truth, k=[5, 10], relevance='rating', threshold=4, by='model')"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="recframe", description=f"recframe {recframe.__version__}: ranking metrics on DataFrames.")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("demo", help="evaluate the bundled two-model sample and print a summary by model")
    args = parser.parse_args(argv)
    if args.command == "demo":
        return demo()
    return 2  # pragma: no cover - argparse rejects unknown commands first


if __name__ == "__main__":
    sys.exit(main())
