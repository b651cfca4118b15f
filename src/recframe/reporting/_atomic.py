"""Files written so that no reader ever sees a part of them (the command line's outputs and
``report_page(out=...)``)."""

from __future__ import annotations

import errno
import os
import shutil
import stat
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


def write_atomic(path: Path, write: Callable[[Path], object]) -> None:
    """Write `path` by calling ``write(a_path)``, so that it never holds a part of the output.

    - A regular file (or a new one): ``write`` fills a temporary file beside it, renamed onto
      it at the end. A reader (or the next scheduled job) sees the old file or the complete new
      one; on any failure the temporary file is removed and `path` is untouched.
    - A symlink to a regular file: the same beside its target, so the link stays a link and
      its target gets the new content.
    - A device, FIFO or socket (``/dev/null``, ``/dev/stdout``, a named pipe): written
      directly, never replaced by a file (as root, renaming onto ``/dev/null`` would replace
      the device node itself).

    The new file keeps the permission bits of the file it replaces (a results file kept 0600
    stays private), and its owner and group where the process may set them, as writing the file
    in place would; a new file gets what a plain ``open()`` gives it (``0o666 & ~umask``).

    An OSError (a full disk, a read-only folder) is the caller's to word; check the path first
    with :func:`path_problem`.
    """
    try:
        special = path.exists() and not stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        special = False
    if special:
        _write_through(path, write)
        return
    target = Path(os.path.realpath(path)) if path.is_symlink() else path
    with tempfile.NamedTemporaryFile(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp", delete=False) as handle:
        temporary = Path(handle.name)
    try:
        write(temporary)
        _take_mode(temporary, target)
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


@dataclass(frozen=True)
class PathProblem:
    """Why a path cannot be an output file (words that follow its name), and the way out: the
    missing folder to create, else an example path that would do."""

    problem: str
    missing_folder: str | None
    example: str


def path_problem(path: str | os.PathLike[str], name: str = "results.csv") -> PathProblem | None:
    """What makes `path` unusable as an output file, or None.

    Checked before anything is read or written, so that a bad ``out=`` costs no evaluation:
    a NUL byte, a trailing slash (a folder's name), an existing folder, a symlink loop, a name
    too long for the file system, a parent that is missing or is not a folder. `name` is the
    file name the example path suggests.

    >>> path_problem("results/", "report.html")
    PathProblem(problem='ends with a slash, which names a folder', missing_folder=None, example='results/report.html')
    >>> path_problem("report.html") is None
    True
    """
    text = os.fspath(path)
    if "\0" in text:
        return PathProblem("holds a NUL byte, which no file name can hold", None, name)
    if text.endswith(("/", os.sep)):
        return PathProblem("ends with a slash, which names a folder", None, os.path.join(text, name))
    try:
        if stat.S_ISDIR(os.stat(text).st_mode):
            return PathProblem("is a folder", None, os.path.join(text, name))
    except OSError as error:
        known = {
            errno.ELOOP: "is a symbolic link that loops (it never reaches a file)",
            errno.ENAMETOOLONG: "is a name too long for the file system",
            errno.ENOTDIR: "has a part of its folder that is a file, not a folder",
        }
        if error.errno in known:
            return PathProblem(known[error.errno], None, name)
        if error.errno != errno.ENOENT:
            return PathProblem(f"cannot be reached ({error.strerror or error})", None, name)
    folder = os.path.dirname(os.path.abspath(text))
    if not os.path.isdir(folder):
        return PathProblem(f"is in the folder {folder!r}, which does not exist", folder, name)
    return None


def _take_mode(temporary: Path, target: Path) -> None:
    """Give `temporary` the mode (and owner and group, where allowed) of the file it replaces."""
    try:
        old = os.stat(target)
    except FileNotFoundError:
        os.chmod(temporary, 0o666 & ~_umask())  # what a plain open() would give, not mkstemp's 0600
        return
    os.chmod(temporary, stat.S_IMODE(old.st_mode))
    for uid, gid in ((old.st_uid, old.st_gid), (-1, old.st_gid)):  # the group alone where the owner cannot be set
        try:
            os.chown(temporary, uid, gid)
            break
        except OSError:
            continue
    # set the mode again: chown clears the set-user-ID and set-group-ID bits
    os.chmod(temporary, stat.S_IMODE(old.st_mode))


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _write_through(path: Path, write: Callable[[Path], object]) -> None:
    """Write to a device or FIFO in place: ``write`` fills a private temporary file (a writer
    such as parquet's may seek), whose bytes are then copied into `path`, opened as it is."""
    with tempfile.TemporaryDirectory(prefix="recframe-") as folder:
        staged = Path(folder) / "output"
        write(staged)
        with open(staged, "rb") as source, open(path, "wb") as sink:
            shutil.copyfileobj(source, sink)
