"""Write notebooks/off_policy.ipynb from the cells below (nbformat), then execute it in place
(nbclient), so that it is stored with its outputs as the other notebooks are.

    PYTHONPATH=src python notebooks/build_off_policy.py
"""

from __future__ import annotations

from pathlib import Path

import nbclient
import nbformat

HERE = Path(__file__).parent

CELLS = [
    (
        "markdown",
        """# Off-policy evaluation on a log with a known true value

A logged bandit: each request comes from one of four user segments, the logging policy shows
one of six items with a known probability, and the user clicks with a probability that depends
on the segment and the item. We know every probability, so the **true value** of a new policy
(its expected click rate) is a sum we compute exactly. Then we draw logs, estimate that value
from them with `recframe.off_policy`, and see:

1. one log's estimates, with their intervals and diagnostics, against the truth;
2. 200 logs at once (`by="seed"`: one call): which estimators are unbiased, how far each one
   spreads, how often the 95% intervals cover the truth;
3. clipping's trade: the cap on the weights against the bias and the spread it buys.

Every claim in the text is checked by an `assert` in the cell above it.""",
    ),
    (
        "code",
        """import numpy as np
import polars as pl

import recframe

pl.Config.set_tbl_cols(12)
pl.Config.set_tbl_width_chars(160)
SEGMENTS, ITEMS = 4, 6
rng = np.random.default_rng(7)
mu = rng.uniform(0.05, 0.5, (SEGMENTS, ITEMS))  # the true click probability of each (segment, item)
share = np.full(SEGMENTS, 1 / SEGMENTS)  # segments are equally frequent


def softmax(x: np.ndarray, temperature: float) -> np.ndarray:
    e = np.exp((x - x.max(axis=1, keepdims=True)) / temperature)
    return e / e.sum(axis=1, keepdims=True)


logging = softmax(rng.normal(0, 1.5, (SEGMENTS, ITEMS)), 1.0)  # the policy that wrote the logs
target = softmax(mu, 0.05)  # the new policy: mostly each segment's best item, every item possible
q_hat = np.clip(mu + rng.normal(0, 0.05, mu.shape), 0, 1)  # a reward model, wrong by about 0.05

truth = float((share[:, None] * target * mu).sum())  # the new policy's expected click rate, exactly
on_policy = float((share[:, None] * logging * mu).sum())  # the logging policy's
dm_expected = float((share[:, None] * target * q_hat).sum())  # what the reward model alone says
print(f"true value {truth:.4f} (logging policy: {on_policy:.4f}); the reward model says {dm_expected:.4f}")
print(f"largest possible weight target / logging: {(target / logging).max():.1f}")""",
    ),
    (
        "markdown",
        """A log of `n` requests: the segment, the logged item drawn from the logging policy, its
propensity, the click, the new policy's probability of the logged item (`target`), the reward
model's prediction for the logged item (`q`) and its expected prediction under the new policy
(`qe`, the direct method's term).""",
    ),
    (
        "code",
        """def simulate(n: int, seeds: range) -> pl.DataFrame:
    frames = []
    for seed in seeds:
        r = np.random.default_rng(seed)
        segment = r.integers(0, SEGMENTS, n)
        # the logged item: the inverse of the segment's cumulative probabilities at a uniform draw
        item = np.minimum((r.random(n)[:, None] > logging[segment].cumsum(axis=1)).sum(axis=1), ITEMS - 1)
        frames.append(
            pl.DataFrame(
                {
                    "seed": seed,
                    "context_id": np.arange(n),
                    "item_id": item,
                    "propensity": logging[segment, item],
                    "reward": (r.random(n) < mu[segment, item]).astype(float),
                    "target": target[segment, item],
                    "q": q_hat[segment, item],
                    "qe": (target * q_hat).sum(axis=1)[segment],
                }
            )
        )
    return pl.concat(frames)


ALL = ["ips", "snips", "clipped_ips", "dm", "dr", "sndr", "switch_dr"]
OPTIONS = dict(target="target", position=None, predicted="q", target_predicted="qe", max_weight=10.0, switch_threshold=10.0)

one = simulate(2000, range(1))
estimates = recframe.off_policy(one, ALL, **OPTIONS)
print(f"truth {truth:.4f}")
estimates.select("estimator", "value", "se", "lo", "hi", "on_policy", "ess", "largest_weight", "supported")""",
    ),
    (
        "code",
        """row = {r["estimator"]: r for r in estimates.iter_rows(named=True)}
assert all(r["n"] == 2000 and r["supported"] == 1.0 for r in row.values())  # full support: every row counts
assert row["ips"]["ess"] < 2000 / 3  # the weights leave the information of fewer than a third of the rows
assert abs(row["dm"]["value"] - dm_expected) < 0.01  # DM: the model's answer, near dm_expected on any log
assert abs(row["ips"]["on_policy"] - on_policy) < 0.03  # the logs' own click rate, near the logging policy's""",
    ),
    (
        "markdown",
        """Every estimator has `supported = 1` (the new policy gives every item some probability),
but the effective sample size is well below the 2,000 rows: the new policy favours items the
logging policy rarely shows, and those few rows carry large weights. DM is the reward model's
answer whatever the log says.

Now 200 logs of 2,000 requests in one call, `by="seed"`: each estimator's mean over the logs,
its spread (the standard deviation over logs), its bias, and how often the interval covers the
truth.""",
    ),
    (
        "code",
        """SEEDS = 200
many = recframe.off_policy(simulate(2000, range(SEEDS)), ALL, by="seed", **OPTIONS)
over_logs = (
    many.group_by("estimator", maintain_order=True)
    .agg(
        pl.col("value").mean().alias("mean"),
        pl.col("value").std().alias("sd over logs"),
        pl.col("se").mean().alias("mean se"),
        ((pl.col("lo") <= truth) & (truth <= pl.col("hi"))).mean().alias("coverage"),
        ((pl.col("value") - truth) ** 2).mean().sqrt().alias("rmse"),
    )
    .with_columns((pl.col("mean") - truth).alias("bias"))
)
over_logs""",
    ),
    (
        "code",
        """stat = {r["estimator"]: r for r in over_logs.iter_rows(named=True)}
# IPS and DR are unbiased: their means over 200 logs lie within 3 standard errors of the truth
for name in ("ips", "dr"):
    assert abs(stat[name]["mean"] - truth) < 3 * stat[name]["sd over logs"] / SEEDS**0.5, name
# SNIPS and SNDR are consistent: a bias of order 1/n, within 3 standard errors here too
for name in ("snips", "sndr"):
    assert abs(stat[name]["mean"] - truth) < 3 * stat[name]["sd over logs"] / SEEDS**0.5, name
# DM carries the model's error: its mean is the model's answer, not the truth
assert abs(stat["dm"]["mean"] - dm_expected) < 0.002 and abs(dm_expected - truth) > 0.01
assert stat["dm"]["coverage"] == 0.0  # its narrow intervals sit around the wrong answer
# the reward model takes most of the spread out of IPS: DR spreads less
assert stat["dr"]["sd over logs"] < stat["ips"]["sd over logs"]
# the se predicts the spread over logs
assert abs(stat["ips"]["mean se"] / stat["ips"]["sd over logs"] - 1) < 0.2
# the 95% intervals of the unbiased estimators cover the truth at about their rate (binomial error of 200 logs)
for name in ("ips", "dr", "snips"):
    assert abs(stat[name]["coverage"] - 0.95) < 3 * (0.95 * 0.05 / SEEDS) ** 0.5, name
# clipping at 10 and switching to the model above a weight of 10 buy a smaller spread with a bias
assert stat["clipped_ips"]["bias"] < -0.01 and stat["switch_dr"]["bias"] > 0.01
assert stat["switch_dr"]["sd over logs"] < stat["dr"]["sd over logs"] / 1.5
assert min(stat, key=lambda name: stat[name]["rmse"]) == "switch_dr\"""",
    ),
    (
        "markdown",
        """IPS, SNIPS, DR and SNDR all centre on the truth; DM centres on the model's answer
instead, and with it its intervals (their se is tiny) never cover the truth: a precise wrong
answer. DR keeps IPS's lack of bias and spreads less, because the weights multiply only the
model's errors. The intervals of the unbiased estimators cover the truth about 95% of the
time. Clipped IPS (weights capped at 10) and switch-DR (the model alone where a weight exceeds
10) take a bias for a smaller spread: clipping's is downwards, switch-DR's is the model's own
error on the rows it switches. Switch-DR has the smallest error of all here, because the model
is good; the intervals of both, centred off the truth, cover it less often.

## Clipping: bias for variance

Clipped IPS caps every weight at `max_weight`. Its expectation is computable exactly too:
`sum_s share_s sum_a logging(a|s) min(w, M) mu(s, a)`. A low cap removes the spread and adds a
bias that more data does not remove; a cap above the largest weight is plain IPS.""",
    ),
    (
        "code",
        """logs = simulate(2000, range(SEEDS))
weights = target / logging
rows = []
for cap in [1.0, 2.0, 5.0, 10.0, 20.0, float(weights.max())]:
    values = recframe.off_policy(logs, ["clipped_ips"], by="seed", **{**OPTIONS, "max_weight": cap})["value"]
    expected = float((share[:, None] * logging * np.minimum(weights, cap) * mu).sum())
    rows.append({"max_weight": cap, "expected": expected, "bias": expected - truth, "mean over logs": values.mean(),
                 "sd over logs": values.std(), "rmse": float(np.sqrt(((values.to_numpy() - truth) ** 2).mean()))})
clipping = pl.DataFrame(rows)
clipping""",
    ),
    (
        "code",
        """c = clipping.to_dicts()
# the exact expectation: the simulated means agree within 3 standard errors
assert all(abs(r["mean over logs"] - r["expected"]) < 3 * r["sd over logs"] / SEEDS**0.5 + 1e-12 for r in c)
# a lower cap: more bias (downwards, the rewards are positive), less spread
assert all(a["bias"] <= b["bias"] and a["sd over logs"] <= b["sd over logs"] for a, b in zip(c, c[1:]))
assert abs(c[-1]["bias"]) < 1e-12  # the largest weight as the cap: IPS, unbiased
best = min(c, key=lambda r: r["rmse"])
print(f"the smallest error over these logs: max_weight {best['max_weight']:g} (rmse {best['rmse']:.4f}, IPS's {c[-1]['rmse']:.4f})")""",
    ),
    (
        "markdown",
        """Lowering the cap trades the spread of IPS for a bias downwards; the expected value of
each cap, computed exactly, is what the 200 logs average to. Where the best trade lies depends
on the log's size: the bias stays as the log grows, the spread shrinks, so a larger log wants
a higher cap. The diagnostics (`ess`, `largest_weight`) say when a cap or a self-normalized
or doubly robust estimator is worth it: see [the docs page](../docs/off-policy.md).""",
    ),
]


def build() -> nbformat.NotebookNode:
    """The notebook from CELLS, with the kernel of the other notebooks."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
    nb.metadata["language_info"] = {"name": "python"}
    for kind, source in CELLS:
        nb.cells.append(nbformat.v4.new_markdown_cell(source) if kind == "markdown" else nbformat.v4.new_code_cell(source))
    return nb


if __name__ == "__main__":
    notebook = build()
    nbclient.NotebookClient(notebook, kernel_name="python3", timeout=120, resources={"metadata": {"path": str(HERE)}}).execute()
    nbformat.write(notebook, HERE / "off_policy.ipynb")
    print("wrote", HERE / "off_policy.ipynb")
