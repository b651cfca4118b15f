"""recframe.off_policy against Open Bandit Pipeline (OBP 0.5.7) on the same logged rounds in memory
(issue 61: "against OBP on 1M rounds in memory, the arrays prepared outside the timing: faster").

    pip download obp==0.5.7 --no-deps --no-binary :all: --ignore-requires-python -d /tmp/obp
    tar xzf /tmp/obp/obp-0.5.7.tar.gz -C /tmp/obp
    python bench/off_policy_obp.py /tmp/obp/obp-0.5.7                  # 1M rounds
    python bench/off_policy_obp.py /tmp/obp/obp-0.5.7 --rounds 100000 --repeat 5

OBP does not install on Python 3.11: its estimators are loaded from the unpacked source, as
tests/peers/obp_differential.py does (which also checks the conventions on OBP's own synthetic
data). The rounds: 20 actions, a softmax logging policy over random logits, a Bernoulli reward,
a target policy with full support and a reward model ``q``. OBP's inputs (``reward``,
``action``, ``pscore``, ``action_dist`` of shape (n, 20, 1), ``estimated_rewards_by_reg_model``
of the same shape) and recframe's Polars frame (one row per round: the logged action's
propensity, reward, target probability, q and the target's expected q) are built before any
timing. Timed: OBP's ``estimate_policy_value`` of IPS, SNIPS and DR (values only, its input
checks on) against one ``recframe.off_policy(logs, ["ips", "snips", "dr"], ...)`` call (values,
standard errors, intervals and diagnostics, every data check on). The three values are compared
to 1e-10 (relative) before any time is printed; a disagreement is printed instead of the ratio.
Times are the best of --repeat runs in this process. Run on demand, never in the test suite:
the machine's other load moves every figure, so the load average is printed with them.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests" / "peers"))

ACTIONS = 20
ESTIMATORS = ("ips", "snips", "dr")


def rounds(n: int, seed: int = 0) -> tuple[dict[str, np.ndarray], Any]:
    """OBP's input arrays and recframe's frame of the same n logged rounds."""
    import polars as pl

    rng = np.random.default_rng(seed)
    logits = rng.normal(0, 1, (n, ACTIONS))
    logging = np.exp(logits)
    logging /= logging.sum(axis=1, keepdims=True)
    action = (logging.cumsum(axis=1) > rng.random((n, 1))).argmax(axis=1)
    expected = 1 / (1 + np.exp(-rng.normal(0, 1, (n, ACTIONS))))
    reward = (rng.random(n) < expected[np.arange(n), action]).astype(int)
    target = np.exp(2 * expected)
    target /= target.sum(axis=1, keepdims=True)
    q_hat = np.clip(expected + rng.normal(0, 0.1, expected.shape), 0, 1)
    index = np.arange(n)
    obp = dict(
        reward=reward,
        action=action,
        pscore=logging[index, action],
        action_dist=target[:, :, None],
        estimated_rewards_by_reg_model=q_hat[:, :, None],
        position=np.zeros(n, dtype=int),
    )
    logs = pl.DataFrame(
        {
            "context_id": index,
            "propensity": logging[index, action],
            "reward": reward.astype(float),
            "target": target[index, action],
            "q": q_hat[index, action],
            "qe": (target * q_hat).sum(axis=1),
        }
    )
    return obp, logs


def best(run: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """The best wall time of `repeat` runs (after one untimed warm-up) and the last result."""
    out = run()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        out = run()
        times.append(time.perf_counter() - start)
    return min(times), out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, help="the unpacked obp-0.5.7 source (the folder holding obp/)")
    parser.add_argument("--rounds", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    import obp_differential
    import polars as pl

    import recframe

    estimators = obp_differential._load_obp(args.source)["estimators"]
    theirs_of = {
        "ips": estimators.InverseProbabilityWeighting(),
        "snips": estimators.SelfNormalizedInverseProbabilityWeighting(),
        "dr": estimators.DoublyRobust(),
    }
    inputs, logs = rounds(args.rounds)
    call = dict(target="target", predicted="q", target_predicted="qe", position=None)

    def ours() -> Any:
        return recframe.off_policy(logs, list(ESTIMATORS), **call)

    def theirs() -> dict[str, float]:
        return {name: float(e.estimate_policy_value(**inputs)) for name, e in theirs_of.items()}

    ours_s, ours_out = best(ours, args.repeat)
    theirs_s, theirs_out = best(theirs, args.repeat)
    load = os.getloadavg()[0]
    print(f"{args.rounds:,} rounds, {ACTIONS} actions; best of {args.repeat}; load average {load:.1f}")
    differences = 0
    for name in ESTIMATORS:
        mine = ours_out.filter(pl.col("estimator") == name).item(0, "value")
        close = abs(mine - theirs_out[name]) <= 1e-10 * max(1.0, abs(theirs_out[name]))
        differences += not close
        print(f"  {name:6s} recframe {mine:.15f}  OBP {theirs_out[name]:.15f}  {'ok' if close else 'DIFFERENT'}")
    if differences:
        print("the two disagree: no time is printed")
        return 1
    print(f"  recframe.off_policy (values, se, intervals, diagnostics, checks): {ours_s:.3f} s")
    print(f"  OBP estimate_policy_value x 3 (values):                          {theirs_s:.3f} s")
    print(f"  ratio recframe / OBP: {ours_s / theirs_s:.2f}x ({'faster' if ours_s < theirs_s else 'SLOWER'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
