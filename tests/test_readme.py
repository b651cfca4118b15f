"""The README and the documentation pages are tested documents: their python and bash blocks run
as written, in order (README, then the pages in DOCS order), in one empty folder (python blocks
share one namespace, as a reader pasting them into one session; bash blocks run with
`bash -e`, the `recframe` command on PATH). A block preceded by
`<!-- readme-test: skip (reason) -->` is not run; the reason is in the Markdown source."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[1]
# the pages whose examples continue the README's (conventions.md shows option calls on a `df`
# of the reader's: its blocks are marked)
DOCS = [
    *("README.md", "docs/evaluation.md", "docs/reporting.md", "docs/cli.md", "docs/engines.md", "docs/conventions.md"),
    "docs/ir.md",
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


def test_every_skipped_block_says_why_and_most_run():
    found = blocks()
    assert all(reason and reason.strip() for _, _, reason in found if reason is not None)
    assert sum(reason is None for _, _, reason in found) >= 7


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
