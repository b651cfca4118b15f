"""The README and the documentation pages are tested documents.

- Every python block of the README and of docs/ runs pasted alone into a fresh interpreter in
  an empty folder: it may write the files it needs, never lean on another block.
- Their python and bash blocks also run as written, in order (README, then the pages in DOCS
  order), in one empty folder (bash blocks with `bash -e`, the `recframe` command on PATH), as
  a reader following the pages in one session.

A block preceded by `<!-- readme-test: skip (reason) -->` is not run; the reason is in the
Markdown source."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
# the pages whose examples continue the README's (conventions.md shows option calls on a `df`
# of the reader's: its blocks are marked)
DOCS = [
    *("README.md", "docs/evaluation.md", "docs/reporting.md", "docs/cli.md", "docs/engines.md", "docs/conventions.md"),
    "docs/ir.md",
    "docs/fairness.md",
]
BLOCK = re.compile(r"(?:<!-- readme-test: skip \((?P<reason>[^)]*)\) -->\n)?```(?P<lang>python|bash)\n(?P<code>.*?)```", re.S)

DRIVER = """
import os, subprocess, sys, json
import matplotlib
matplotlib.use("Agg")  # plots in the README are drawn headless here
blocks = json.loads(sys.stdin.read())
namespace = {"__name__": "__readme__"}
for i, (lang, code) in enumerate(blocks):
    if lang == "python":
        exec(compile(code, f"README block {i} (python)", "exec"), namespace)
    else:
        subprocess.run(["bash", "-e", "-c", code], check=True)
print("ran", len(blocks), "blocks")
"""


def blocks() -> list[tuple[str, str, str | None]]:
    text = "\n".join((ROOT / page).read_text() for page in DOCS)
    return [(m["lang"], m["code"], m["reason"]) for m in BLOCK.finditer(text)]


def python_blocks() -> list[pytest.param]:
    """Every python block of the README and of docs/, as a test case named page:line."""
    cases = []
    for page in ["README.md", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md"))]:
        text = (ROOT / page).read_text()
        for m in BLOCK.finditer(text):
            if m["lang"] == "python":
                line = text[: m.start()].count("\n") + 1
                marks = [pytest.mark.skip(reason=m["reason"])] if m["reason"] is not None else []
                cases.append(pytest.param(m["code"], id=f"{page}:{line}", marks=marks))
    return cases


@pytest.mark.parametrize("code", python_blocks())
def test_each_python_block_runs_pasted_alone(code: str, tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
        env={**os.environ, "MPLBACKEND": "Agg"}, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]


def test_every_skipped_block_says_why_and_most_run():
    found = blocks()
    assert all(reason and reason.strip() for _, _, reason in found if reason is not None)
    assert sum(reason is None for _, _, reason in found) >= 7


# every page's blocks in order, as one reader's session: 60-70 s in one process, the longest test
# of the README's four-minute command (each python block also runs alone there, above): it runs
# in .ci/run's second pass with the Spark checks (slow_engine)
@pytest.mark.slow_engine
def test_the_readme_runs_as_written(tmp_path):
    import json

    runnable = [(lang, code) for lang, code, reason in blocks() if reason is None]
    bindir = os.path.dirname(sys.executable)  # the `recframe` command of this environment
    env = {**os.environ, "PATH": bindir + os.pathsep + os.environ.get("PATH", ""), "MPLBACKEND": "Agg"}
    result = subprocess.run(
        [sys.executable, "-c", DRIVER], input=json.dumps(runnable), capture_output=True, text=True,
        cwd=tmp_path, env=env, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    assert f"ran {len(runnable)} blocks" in result.stdout
    assert (tmp_path / "exports" / "truth.parquet").exists() and (tmp_path / "metrics.parquet").exists()
