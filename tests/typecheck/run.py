"""Type-check wrong_options.py and require mypy to report exactly the lines marked ``# error``
(run by .ci/run, which installs mypy; exits non-zero on any difference)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent
target = HERE / "wrong_options.py"
marked = {i for i, line in enumerate(target.read_text().splitlines(), 1) if "# error" in line}
out = subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", str(target)], capture_output=True, text=True).stdout
reported = {int(m[1]) for m in re.finditer(r"wrong_options\.py:(\d+): error", out)}
if reported != marked:
    print(out)
    sys.exit(f"mypy reported lines {sorted(reported)}, expected exactly {sorted(marked)}")
print(f"typecheck: mypy rejects the {len(marked)} wrong calls of {target.name} and accepts the rest")
