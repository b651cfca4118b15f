"""Execute every notebook in ``notebooks/`` and fail on any cell error.

Each notebook is its own test. The notebooks are run in a fresh ``python3`` kernel with the
notebooks folder as working directory; the executed copy is thrown away (the stored notebooks
keep the outputs they were committed with).
"""

from __future__ import annotations

from pathlib import Path

import pytest

nbformat = pytest.importorskip(
    "nbformat", reason="nbformat (the test-slow extra) is needed to read the notebooks: they run in the slow pass"
)
nbclient = pytest.importorskip("nbclient", reason="nbclient (the test-slow extra) is needed to execute the notebooks")
pytest.importorskip("ipykernel", reason="ipykernel (the test-slow extra) is needed for the notebooks' python3 kernel")

NOTEBOOK_DIR = Path(__file__).parent.parent / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
CELL_TIMEOUT = 120  # seconds per cell


def test_notebooks_are_found() -> None:
    assert NOTEBOOKS, f"no notebooks found in {NOTEBOOK_DIR}"


# each notebook starts a kernel (engines.ipynb a JVM too: ~20 s) and together they cost some
# 50 s of the README's four-minute command: they run with the Spark checks (slow_engine), in
# .ci/run's second pass, beside the static checks
CASES = [pytest.param(p, id=p.name, marks=[pytest.mark.slow_engine]) for p in NOTEBOOKS]


@pytest.mark.parametrize("path", CASES)
def test_notebook_runs_without_errors(path: Path) -> None:
    notebook = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        notebook,
        kernel_name="python3",
        timeout=CELL_TIMEOUT,
        resources={"metadata": {"path": str(NOTEBOOK_DIR)}},
    )
    # Raises nbclient.exceptions.CellExecutionError, with the failing cell and its traceback,
    # on the first cell that errors.
    client.execute()
