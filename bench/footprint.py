"""A command's CPU time and peak memory, measured as its own process (bench/ir.py, bench/scale.py).

On Linux a forked child starts with its parent's peak RSS (the high-water mark is copied with
the memory map, and kept through exec), so a process started by a benchmark that has held
large frames reports at least the benchmark's own peak. A small fresh interpreter starts the
command instead, and reads its CPU time and peak RSS from the kernel when it exits.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

# runs a command, its standard output to a file, and prints its exit code, CPU seconds and peak RSS (KiB)
_LAUNCHER = """
import os, subprocess, sys
with open(sys.argv[1], "wb") as sink:
    process = subprocess.Popen(sys.argv[2:], stdout=sink)
    _, status, usage = os.wait4(process.pid, 0)
print(os.waitstatus_to_exitcode(status), usage.ru_utime + usage.ru_stime, usage.ru_maxrss)
"""


def own_process(command: list[str], out: Path) -> tuple[float, float]:
    """CPU seconds (user + system) and peak RSS in MiB of `command` run as its own process, its
    standard output written to `out`; SystemExit with its standard error when it fails."""
    launched = subprocess.run([sys.executable, "-c", _LAUNCHER, str(out), *command], capture_output=True, text=True)
    fields = launched.stdout.split()
    if launched.returncode != 0 or not fields or fields[0] != "0":
        raise SystemExit(f"{' '.join(command[:3])} ... failed:\n{launched.stderr[-3000:]}")
    return float(fields[1]), int(fields[2]) / 1024
