"""Compare recframe.off_policy with Open Bandit Pipeline's estimators on OBP's own synthetic data.

Usage (from the repository root)::

    pip download obp==0.5.7 --no-deps --no-binary :all: --ignore-requires-python -d /tmp/obp
    tar xzf /tmp/obp/obp-0.5.7.tar.gz -C /tmp/obp
    PYTHONPATH=src python tests/peers/obp_differential.py /tmp/obp/obp-0.5.7 [--rounds 10000] [--seeds 5]

OBP 0.5.7 does not install on Python 3.11 (it pins Python < 3.11, pandas 1.5.2, scipy 1.9.3 and
scikit-learn 1.1.3, and imports torch, which the package mirror does not hold). Its estimators
and synthetic data need only numpy, scipy and scikit-learn: this script loads those modules
from the unpacked source, without the package's ``__init__`` (which imports the policy learners)
and with a stand-in for torch (``obp.utils`` imports it for tensor type checks only).

On ``SyntheticBanditDataset`` (its default reward function, a softmax logging policy), a target
policy with full support (a softmax of the true expected rewards) and a reward model that is
the true expected reward plus noise, IPS, SNIPS, clipped IPS (OBP's IPS with ``lambda_``),
DM, DR, SNDR and switch-DR must equal OBP's ``estimate_policy_value`` within 1e-10 (relative);
on ``SyntheticSlateBanditDataset`` (a tenth of the rounds, as slates of 3), so must the standard,
independent and reward-interaction slate IPS. Exit code: the number of differences.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import types
from pathlib import Path

import numpy as np
import polars as pl

import recframe


def _load_obp(source: Path) -> dict[str, types.ModuleType]:
    """obp.ope.estimators(_slate) and obp.dataset.synthetic(_slate) from the unpacked source."""
    torch = types.ModuleType("torch")
    torch.Tensor = type("Tensor", (), {})  # type: ignore[attr-defined]
    torch.tensor = torch.Tensor  # type: ignore[attr-defined]
    sys.modules.setdefault("torch", torch)
    for package in ("obp", "obp.ope", "obp.dataset"):
        module = types.ModuleType(package)
        module.__path__ = [str(source / package.replace(".", "/"))]  # type: ignore[attr-defined]
        sys.modules[package] = module

    def load(name: str) -> types.ModuleType:
        spec = importlib.util.spec_from_file_location(name, source / (name.replace(".", "/") + ".py"))
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        return module

    names = ("obp.ope.estimators", "obp.ope.estimators_slate", "obp.dataset.synthetic", "obp.dataset.synthetic_slate")
    return {name.rsplit(".", 1)[1]: load(name) for name in names}


def _compare(estimators: types.ModuleType, synthetic: types.ModuleType, rounds: int, seed: int) -> int:
    dataset = synthetic.SyntheticBanditDataset(n_actions=10, dim_context=5, beta=-1.0, random_state=seed)
    bandit = dataset.obtain_batch_bandit_feedback(n_rounds=rounds)
    n, actions = np.arange(rounds), bandit["action"]
    rng = np.random.default_rng(seed)
    target = np.exp(3 * bandit["expected_reward"])
    target /= target.sum(axis=1, keepdims=True)
    action_dist = target[:, :, None]
    q_hat = np.clip(bandit["expected_reward"] + rng.normal(0, 0.1, bandit["expected_reward"].shape), 0, 1)[:, :, None]
    max_weight, tau = 1.5, 2.0  # (weights reach 3 to 5 here: both bite)
    obp = {
        "ips": estimators.InverseProbabilityWeighting(),
        "snips": estimators.SelfNormalizedInverseProbabilityWeighting(),
        "clipped_ips": estimators.InverseProbabilityWeighting(lambda_=max_weight),
        "dm": estimators.DirectMethod(),
        "dr": estimators.DoublyRobust(),
        "sndr": estimators.SelfNormalizedDoublyRobust(),
        "switch_dr": estimators.SwitchDoublyRobust(lambda_=tau),
    }
    inputs = dict(reward=bandit["reward"], action=actions, pscore=bandit["pscore"], action_dist=action_dist,
                  estimated_rewards_by_reg_model=q_hat, position=np.zeros(rounds, dtype=int))  # fmt: skip
    logs = pl.DataFrame(
        {
            "context_id": n,
            "item_id": actions,
            "propensity": bandit["pscore"],
            "reward": bandit["reward"].astype(float),
            "target": target[n, actions],
            "q": q_hat[n, actions, 0],
            "qe": (target * q_hat[:, :, 0]).sum(axis=1),
        }
    )
    ours = recframe.off_policy(logs, list(obp), target="target", predicted="q", target_predicted="qe", position=None,
                               max_weight=max_weight, switch_threshold=tau)  # fmt: skip
    differences = 0
    for name, estimator in obp.items():
        theirs = estimator.estimate_policy_value(**inputs)
        mine = ours.filter(pl.col("estimator") == name).item(0, "value")
        close = abs(mine - theirs) <= 1e-10 * max(1.0, abs(theirs))
        differences += not close
        print(f"seed {seed} {name:12s} recframe {mine:.15f}  OBP {theirs:.15f}  {'ok' if close else 'DIFFERENT'}")
    return differences


def _compare_slates(estimators: types.ModuleType, synthetic: types.ModuleType, rounds: int, seed: int) -> int:
    """OBP's slate data (items drawn without replacement by a softmax over linear logits, rewards
    by its cascade-additive structure), a target of random logits. recframe's SIPS and RIPS read
    each position's probability given the items above it (the chain rule: their products are
    OBP's joint and cascade propensities), its IIPS the position's marginal probability."""
    positions = 3
    dataset = synthetic.SyntheticSlateBanditDataset(
        n_unique_action=6, len_list=positions, dim_context=2, reward_type="binary",
        behavior_policy_function=synthetic.linear_behavior_policy_logit, random_state=seed,
    )  # fmt: skip
    bandit = dataset.obtain_batch_bandit_feedback(n_rounds=rounds)
    logits = np.random.default_rng(seed).normal(0, 1, (rounds, 6))
    target_joint, target_marginal, target_cascade = dataset.obtain_pscore_given_evaluation_policy_logit(bandit["action"], logits)

    def given_above(cascade: np.ndarray) -> np.ndarray:
        prefix = cascade.reshape(rounds, positions)
        return np.concatenate([prefix[:, :1], prefix[:, 1:] / prefix[:, :-1]], axis=1).ravel()

    logs = pl.DataFrame(
        {
            "context_id": bandit["slate_id"],
            "position": bandit["position"] + 1,
            "reward": bandit["reward"].astype(float),
            "propensity": given_above(bandit["pscore_cascade"]),
            "target": given_above(target_cascade),
            "propensity_marginal": bandit["pscore_item_position"],
            "target_marginal": target_marginal,
        }
    )
    ours = recframe.off_policy(logs, ["sips", "rips"], target="target")
    ours = pl.concat([ours, recframe.off_policy(logs, ["iips"], target="target_marginal", propensity="propensity_marginal")])
    common = dict(slate_id=bandit["slate_id"], reward=bandit["reward"], position=bandit["position"])
    theirs = {
        "sips": estimators.SlateStandardIPS(len_list=positions).estimate_policy_value(
            **common, pscore=bandit["pscore"], evaluation_policy_pscore=target_joint
        ),
        "iips": estimators.SlateIndependentIPS(len_list=positions).estimate_policy_value(
            **common,
            pscore_item_position=bandit["pscore_item_position"],
            evaluation_policy_pscore_item_position=target_marginal,
        ),  # fmt: skip
        "rips": estimators.SlateRewardInteractionIPS(len_list=positions).estimate_policy_value(
            **common, pscore_cascade=bandit["pscore_cascade"], evaluation_policy_pscore_cascade=target_cascade
        ),
    }
    differences = 0
    for name, value in theirs.items():
        mine = ours.filter(pl.col("estimator") == name).item(0, "value")
        close = abs(mine - value) <= 1e-10 * max(1.0, abs(value))
        differences += not close
        print(f"seed {seed} {name:12s} recframe {mine:.15f}  OBP {value:.15f}  {'ok' if close else 'DIFFERENT'}")
    return differences


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, help="the unpacked obp-0.5.7 source (the folder holding obp/)")
    parser.add_argument("--rounds", type=int, default=10_000)
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args()
    obp = _load_obp(args.source)
    single = sum(_compare(obp["estimators"], obp["synthetic"], args.rounds, seed) for seed in range(args.seeds))
    slates = sum(
        _compare_slates(obp["estimators_slate"], obp["synthetic_slate"], args.rounds // 10, seed) for seed in range(args.seeds)
    )
    return single + slates


if __name__ == "__main__":
    sys.exit(main())
