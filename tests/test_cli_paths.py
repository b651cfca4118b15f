"""What the ``recframe`` command writes: never one of its inputs, and devices, FIFOs and symlinks
stay what they were.

Every command that writes a file (evaluate, compare, curve and report with --out; curve with
--plot) refuses an output that is one of its inputs, the same file however it is spelled or
linked, with exit 2 and the input's bytes unchanged. Each refusal comes before anything is read,
so these cases cost a parse of the command line each; the writes that go through evaluate the
bundled sample once per case.
"""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from conftest import run_cli
from recframe.data import HERE

FLAGS = ["--relevance", "rating", "--threshold", "4", "--by", "model", "--k", "3", "--metrics", "ndcg", "--quiet"]
# (command, its extra flags, the output flag): every file a command writes
WRITERS = [
    ("evaluate", [], "--out"),
    ("compare", ["--baseline", "popular"], "--out"),
    ("curve", ["--k-max", "2"], "--out"),
    ("curve", ["--k-max", "2"], "--plot"),
    ("report", [], "--out"),
]
SPELLINGS = ["same", "dotted", "symlink", "hardlink"]


@pytest.fixture
def inputs(tmp_path: Path) -> dict[str, Path]:
    """The sample's files, and the train= and items= side inputs, in a folder of their own."""
    files = {"recs": tmp_path / "recs.csv", "--truth": tmp_path / "truth.csv", "--train": tmp_path / "train.csv"}
    files["recs"].write_bytes((HERE / "recs.csv").read_bytes())
    files["--truth"].write_bytes((HERE / "truth.csv").read_bytes())
    files["--train"].write_text("user_id,item_id\n1,i001\n")
    return files


def spelled(path: Path, how: str) -> str:
    """Another name for the same file."""
    if how == "dotted":
        (path.parent / "sub").mkdir(exist_ok=True)
        return str(path.parent / "sub" / ".." / path.name)
    if how in ("symlink", "hardlink"):
        other = path.parent / f"{how}-{path.name}"
        other.unlink(missing_ok=True)
        (os.symlink if how == "symlink" else os.link)(path, other)
        return str(other)
    return str(path)


@pytest.mark.parametrize(("command", "extra", "out_flag"), WRITERS, ids=[f"{c}{o}" for c, _, o in WRITERS])
def test_no_command_writes_over_one_of_its_inputs(inputs, command, extra, out_flag):
    for role, path in inputs.items():
        before = path.read_bytes()
        for how in SPELLINGS:
            target = spelled(path, how)
            argv = [command, str(inputs["recs"]), "--truth", str(inputs["--truth"]), "--train", str(inputs["--train"])]
            code, _, err = run_cli(*argv, *FLAGS, *extra, out_flag, target)
            assert code == 2, (role, how, err)
            input_flag = "RECS" if role == "recs" else role
            assert f"{out_flag} {target!r} is the input file of {input_flag}" in err, err
            assert "Hint:" in err and len(err.strip().splitlines()) == 1
            assert path.read_bytes() == before, (role, how)


def test_trec_inputs_are_guarded_too(tmp_path):
    run_file, qrels = tmp_path / "run.txt", tmp_path / "qrels.txt"
    run_file.write_text("q1 Q0 d1 1 2.0 tag\n")
    qrels.write_text("q1 0 d1 1\n")
    for out in (run_file, qrels):
        code, _, err = run_cli("evaluate", "--format", "trec", "--run", run_file, "--qrels", qrels, "--out", out)
        assert code == 2 and "is the input file of --" in err
    assert run_file.read_text() == "q1 Q0 d1 1 2.0 tag\n" and qrels.read_text() == "q1 0 d1 1\n"


def evaluate_to(inputs: dict[str, Path], out: str, *extra: str) -> tuple[int, str]:
    code, _, err = run_cli("evaluate", inputs["recs"], "--truth", inputs["--truth"], *FLAGS, "--out", out, *extra)
    return code, err


def test_a_symlink_stays_a_link_and_its_target_gets_the_output(inputs, tmp_path):
    target, link = tmp_path / "target.csv", tmp_path / "link.csv"
    target.write_text("old\n")
    link.symlink_to(target)
    assert evaluate_to(inputs, str(link))[0] == 0
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text().startswith("model,n_users")
    # a dangling link: its target is created
    target.unlink()
    assert evaluate_to(inputs, str(link))[0] == 0
    assert link.is_symlink() and target.read_text().startswith("model,n_users")


def test_a_fifo_gets_the_output_and_stays_a_fifo(inputs, tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    code, err = evaluate_to(inputs, str(fifo), "--format", "csv")
    reader.join(timeout=30)
    assert code == 0, err
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert received and received[0].startswith(b"model,n_users")


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_dev_null_stays_a_device(inputs, fmt):
    assert evaluate_to(inputs, "/dev/null", "--format", fmt)[0] == 0
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")
def test_a_full_device_is_exit_2_and_stays_a_device(inputs):
    code, err = evaluate_to(inputs, "/dev/full", "--format", "csv")
    assert code == 2 and "--out '/dev/full': could not write it (No space left on device)" in err
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)
