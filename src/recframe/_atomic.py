"""Files written so that no reader ever sees a part of them (the command line's outputs and
``report_page(out=...)``)."""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Callable
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

    An OSError (a full disk, a read-only folder) is the caller's to word.
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
        os.chmod(temporary, 0o666 & ~_umask())  # the permissions a plain open() would give, not 0600
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


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
