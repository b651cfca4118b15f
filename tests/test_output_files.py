"""The files recframe writes (issue 38): a file written over keeps its permission bits and owner,
a new one gets what ``open`` would give it, and an output path no file can take (a symlink loop,
a NUL byte, too long a name, a trailing slash, a folder that is a file or does not exist) is
refused before any work, by the command line and by ``report_page`` alike, naming the argument.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

import recframe
from conftest import TWO_MODELS_RECS as RECS
from conftest import assert_refused, run_cli
from recframe import RecframeError
from recframe.reporting._atomic import write_atomic

# ---------------------------------------------------------------------------- 1. permissions


@pytest.mark.parametrize("mode", [0o600, 0o640, 0o444 | 0o200])
def test_a_rewritten_file_keeps_its_permission_bits(tmp_path: Path, mode: int) -> None:
    path = tmp_path / "private.csv"
    path.write_text("old\n")
    os.chmod(path, mode)
    write_atomic(path, lambda p: p.write_text("new\n"))
    assert path.read_text() == "new\n"
    assert stat.S_IMODE(os.stat(path).st_mode) == mode


def test_a_new_file_gets_what_open_would_give_it_under_a_restrictive_umask(tmp_path: Path) -> None:
    old = os.umask(0o077)
    try:
        write_atomic(tmp_path / "new.csv", lambda p: p.write_text("x\n"))
        with open(tmp_path / "plain.csv", "w") as handle:
            handle.write("x\n")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "new.csv").st_mode) == stat.S_IMODE(os.stat(tmp_path / "plain.csv").st_mode) == 0o600


def test_a_new_file_under_the_usual_umask_is_not_left_private(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        write_atomic(tmp_path / "new.csv", lambda p: p.write_text("x\n"))
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "new.csv").st_mode) == 0o644


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="only root can give a file to another user")
def test_a_file_owned_by_another_user_keeps_its_owner_and_group(tmp_path: Path) -> None:
    path = tmp_path / "theirs.csv"
    path.write_text("old\n")
    os.chown(path, 12345, 23456)
    os.chmod(path, 0o640)
    write_atomic(path, lambda p: p.write_text("new\n"))
    info = os.stat(path)
    assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (12345, 23456, 0o640)


def test_the_cli_keeps_a_private_results_file_private(tmp_path: Path, recs_csv: Path) -> None:
    out = tmp_path / "results.csv"
    out.write_text("old\n")
    os.chmod(out, 0o600)
    code, _, err = run_cli("evaluate", recs_csv, "--k", "1", "--by", "model", "--out", out, "--quiet")
    assert code == 0, err
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o600
    assert out.read_text().startswith("model,")


def test_report_page_keeps_a_private_page_private(tmp_path: Path) -> None:
    out = tmp_path / "page.html"
    out.write_text("old\n")
    os.chmod(out, 0o600)
    recframe.report_page(RECS, k=1, by="model", out=out)
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o600
    assert out.read_text().startswith("<!")


# ---------------------------------------------------------------------------- 7. output paths


def _bad_outputs(tmp_path: Path) -> dict[str, tuple[str, str]]:
    loop = tmp_path / "loop.csv"
    os.symlink(loop, loop)
    (tmp_path / "a_file").write_text("x\n")
    return {
        "loop": (str(loop), "loops"),
        "nul": (str(tmp_path / "a\0b.csv"), "NUL byte"),
        "too long": (str(tmp_path / ("n" * 300 + ".csv")), "too long"),
        "slash": (str(tmp_path / "new.csv") + "/", "ends with a slash"),
        "under a file": (str(tmp_path / "a_file" / "x.csv"), "is a file, not a folder"),
        "missing folder": (str(tmp_path / "nowhere" / "x.csv"), "does not exist"),
    }


@pytest.mark.parametrize("case", ["loop", "nul", "too long", "slash", "under a file", "missing folder"])
def test_the_cli_refuses_an_output_path_no_file_can_take(tmp_path: Path, recs_csv: Path, case: str) -> None:
    out, words = _bad_outputs(tmp_path)[case]
    for command in (["evaluate", recs_csv, "--k", "1"], ["report", recs_csv, "--k", "1"], ["inspect", recs_csv, "--k", "1"]):
        code, _, err = run_cli(*command, "--out", out)
        assert_refused(code, err, "--out", words)
    assert not (tmp_path / "new.csv").exists()


@pytest.mark.parametrize("case", ["loop", "nul", "too long", "slash", "under a file", "missing folder"])
def test_report_page_refuses_an_output_path_no_file_can_take(tmp_path: Path, case: str) -> None:
    out, words = _bad_outputs(tmp_path)[case]
    with pytest.raises(RecframeError, match=words) as caught:
        recframe.report_page(RECS, k=1, by="model", out=out)
    assert caught.value.argument == "out"
    assert not (tmp_path / "new.csv").exists()


def test_the_curve_plot_path_is_checked_too(tmp_path: Path, recs_csv: Path) -> None:
    pytest.importorskip("matplotlib")
    code, _, err = run_cli("curve", recs_csv, "--k", "3", "--plot", str(tmp_path / "p.png") + "/")
    assert_refused(code, err, "--plot", "ends with a slash")
