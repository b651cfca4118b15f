"""Calls a type checker must reject: the options of per_user, summary, curve, compare_recommendations and report_page are typed
(recframe.options), so a misspelled or mistyped option fails before anything runs.
`.ci/run` type-checks this file and requires each marked line to be reported; pytest never
imports it."""

import polars as pl

import recframe

df = pl.DataFrame({"user_id": [1], "item_id": [1], "rank": [1], "relevance": [1.0]})

recframe.per_user(df, thresold=4)  # error: misspelled
recframe.summary(df, gain="exp3")  # error: not a gain
recframe.summary(df, head_share="0.2")  # error: a string, not a float
recframe.curve(df, by=3)  # error: not a column name
recframe.summary(df, ci=0.9, n_resamples=10, threshold=4.0, by="model")  # fine
recframe.compare_recommendations(df, "A", ties="random")  # error: not a tie policy
recframe.report_page(df, baseline="A", treshold=4)  # error: misspelled
recframe.compare_recommendations(df, "A", k=5, threshold=4.0, by=["model", "fold"])  # fine
