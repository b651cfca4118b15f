"""Run the test suite in a fresh virtual environment, on the versions you choose.

    python tests/try_versions.py              # the pinned versions: constraints/tested.txt
    python tests/try_versions.py --newest     # the newest release of every dependency
    python tests/try_versions.py --minimum    # the lower bounds pyproject.toml declares
    python tests/try_versions.py --newest --extras test,test-slow -- -m slow_engine
    python tests/try_versions.py --newest --freeze constraints/tested.txt   # refresh the pins

Each run makes a new virtual environment (in a temporary folder, removed after unless --keep),
installs this checkout with the extras asked for (`test` by default) through the chosen
constraints, prints the versions it resolved, then runs ``python -m pytest`` there with any
arguments given after ``--``. It exits with pytest's exit code, so a red run is a failed command.
Not part of CI: the newest releases change from day to day, and that is what it is for.

`--freeze FILE` writes every resolved package's exact version (all extras named) to FILE once
the suite has passed: how constraints/tested.txt is refreshed (see README, "Development").
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONSTRAINTS = {"pinned": ROOT / "constraints" / "tested.txt", "minimum": ROOT / "constraints" / "minimum.txt", "newest": None}
# the versions printed first: the runtime dependencies, then the engines and tools the suite leans on
SHOWN = ("polars", "pandas", "pyarrow", "narwhals", "numpy", "duckdb", "scipy", "matplotlib", "pytest", "hypothesis")
# test-only peers that no release installs beside the declared minimum versions: left out of that
# run (their tests skip, saying so), not a reason to raise a bound users are promised
LEFT_OUT = {"minimum": {"fairlearn": "every release from 0.13 needs numpy >= 1.24.4, above the declared numpy >= 1.24"}}


def _run(command: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    print("+", " ".join(command), flush=True)
    return subprocess.run(command, check=False, text=True, **kwargs)  # type: ignore[call-overload,no-any-return]


def _versions(python: Path) -> dict[str, str]:
    out = subprocess.run([str(python), "-m", "pip", "list", "--format=freeze"], check=True, capture_output=True, text=True)
    pairs = (line.split("==", 1) for line in out.stdout.splitlines() if "==" in line)
    return {name.lower(): version for name, version in pairs}


def _requirements(extras: str, left_out: dict[str, str]) -> list[str]:
    """This checkout with its extras; with packages left out, the checkout and the extras'
    requirements one by one, as pyproject.toml lists them, less those packages."""
    if not left_out:
        return [f"{ROOT}[{extras}]"]
    import tomllib  # Python 3.11+, as on the machines the suite runs on

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    wanted = [requirement for extra in extras.split(",") for requirement in declared[extra.strip()]]
    for name, why in left_out.items():
        print(f"try_versions: {name} left out: {why}; its tests skip")
    return [str(ROOT), *(r for r in wanted if re.split(r"[\[<>=!~; ]", r, maxsplit=1)[0].lower() not in left_out)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    which = parser.add_mutually_exclusive_group()
    which.add_argument(
        "--newest", action="store_const", dest="versions", const="newest", help="the newest release of every dependency"
    )
    which.add_argument("--minimum", action="store_const", dest="versions", const="minimum", help="the declared lower bounds")
    parser.add_argument("--extras", default="test", help="the extras to install, comma-separated (default: test)")
    parser.add_argument("--freeze", metavar="FILE", help="after a green run, write every resolved version to FILE")
    parser.add_argument("--keep", metavar="DIR", help="make the environment in DIR and keep it")
    parser.add_argument("pytest_args", nargs="*", help="arguments for pytest, after --")
    args = parser.parse_args(argv)
    versions = args.versions or "pinned"
    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix=f"recframe-{versions}-"))
    try:
        venv.create(folder, with_pip=True, clear=True)
        python = folder / "bin" / "python"
        _run([str(python), "-m", "pip", "install", "--quiet", "--upgrade", "pip"])
        install = [str(python), "-m", "pip", "install", "--quiet", *_requirements(args.extras, LEFT_OUT.get(versions, {}))]
        constraints = CONSTRAINTS[versions]
        if constraints is not None:
            install[4:4] = ["-c", str(constraints)]
        started = time.perf_counter()
        if _run(install).returncode != 0:
            print(f"try_versions: installing the {versions} versions failed (above)", file=sys.stderr)
            return 2
        resolved = _versions(python)
        print(f"\n{versions} versions, installed in {time.perf_counter() - started:.0f} s:")
        print("  " + ", ".join(f"{name} {resolved[name]}" for name in SHOWN if name in resolved))
        print(
            f"  Python {sys.version.split()[0]}; {len(resolved)} packages; all: {', '.join(f'{n}=={v}' for n, v in sorted(resolved.items()))}\n"
        )
        # the checkout's tests, run by the new environment's Python against the installed package
        env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV")}
        env["PATH"] = f"{folder / 'bin'}{os.pathsep}{env.get('PATH', '')}"
        code = _run([str(python), "-m", "pytest", *args.pytest_args], cwd=ROOT, env=env).returncode
        print(f"\ntry_versions: pytest exited {code} on the {versions} versions", flush=True)
        if code == 0 and args.freeze:
            pins = sorted(
                f"{name}=={version}" for name, version in resolved.items() if name not in ("recframe", "pip", "setuptools")
            )
            header = f"# every package of the extras [{args.extras}], as last run green by tests/try_versions.py\n"
            Path(args.freeze).write_text(header + "\n".join(pins) + "\n")
            print(f"try_versions: wrote {len(pins)} pins to {args.freeze}")
        return code
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
