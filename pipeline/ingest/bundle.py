"""Incident bundles (``.tar.gz`` / ``.tgz`` / ``.zip``) among the inputs, issue 4 item 7.

A driver-side step before Spark lists anything: every archive given, or
found under a local input folder, is extracted into its own folder under a
work directory, and Spark reads the extracted files in its place. Nothing
is trusted:

* a member whose normalised path is absolute or climbs out of the target
  (``..``), a symbolic or hard link, a device, FIFO or any other non-regular
  member, a duplicate name, an encrypted zip member, is refused;
* each member may hold at most ``member_limit`` bytes and the bundle at most
  ``total_limit`` bytes (default 4 GiB); the bytes are counted as they are
  written, not taken from the (forgeable) header;
* an archive that cannot be read (corrupt, truncated) keeps what was
  extracted before the damage and reports the rest as one refusal.

The tables name an extracted file ``<archive>!/<member>`` (the observer and
cluster folders inside the member path still count). The archive itself
gets a ``bundle`` row in file_stats whose "lines" are its members: read =
members (directories not counted), quarantined = refused members (each a
QUARANTINE row, line 0, with the reason), ignored = the members extracted
(each accounted in its own row). Archives inside a bundle are not expanded
(they are read as they are: ``unrecognised``).
"""

from __future__ import annotations

import os
import posixpath
import shutil
import stat
import tarfile
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import IO

KIND = "bundle"
SUFFIXES = (".tar.gz", ".tgz", ".zip")
DEFAULT_TOTAL_LIMIT = 4 << 30
DEFAULT_MEMBER_LIMIT = 1 << 30
_CHUNK = 1 << 20
#: Hadoop glob metacharacters, escaped in the explicit paths we hand Spark.
_GLOB = set("*?[]{}\\")


@dataclass
class Bundle:
    archive: str  # as Spark spells a file: file:/abs/path
    target: Path  # the folder it was extracted into
    members: int = 0
    refused: list[tuple[str, str]] = field(default_factory=list)  # (member, reason)

    @property
    def prefix(self) -> str:
        """How Spark spells the files extracted here (``file:/target/``)."""
        return "file:" + self.target.as_posix().rstrip("/") + "/"


def is_archive(name: str) -> bool:
    return name.lower().endswith(SUFFIXES)


def _local(path: str) -> Path | None:
    if path.startswith("file:"):
        path = path[len("file:") :]
        while path.startswith("//"):
            path = path[1:]
    elif "://" in path:
        return None
    return Path(path)


def _hidden(name: str) -> bool:
    """Spark's readers drop files so named even when listed (lines.list_files); so do we."""
    return name.startswith(("_", "."))


def _escape(path: str) -> str:
    return "".join("\\" + c if c in _GLOB else c for c in path)


def expand(
    paths: list[str],
    work_dir: str | None = None,
    total_limit: int = DEFAULT_TOTAL_LIMIT,
    member_limit: int = DEFAULT_MEMBER_LIMIT,
) -> tuple[list[str], list[Bundle]]:
    """(paths for Spark, bundles). Without an archive among the inputs the
    paths come back unchanged; a local folder holding one is replaced by
    the explicit list of its other files (escaped for Hadoop's globbing)."""
    out: list[str] = []
    bundles: list[Bundle] = []
    root: Path | None = None

    def extract_one(archive: Path) -> str:
        nonlocal root
        if root is None:
            root = Path(tempfile.mkdtemp(prefix="bundles-", dir=work_dir)).resolve()
        target = root / str(len(bundles))
        target.mkdir()
        bundle = Bundle("file:" + archive.resolve().as_posix(), target)
        extract(archive, bundle, total_limit, member_limit)
        bundles.append(bundle)
        return str(target)

    for given in paths:
        local = _local(given)
        if local is None or not local.exists():
            out.append(given)
        elif local.is_file():
            out.append(extract_one(local) if is_archive(local.name) else given)
        else:
            files: list[Path] = []
            archives: list[Path] = []
            for dirpath, dirnames, filenames in os.walk(local):
                # as lines.list_files: ``__cluster_metadata-0/`` is walked
                dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
                for name in sorted(filenames):
                    if not _hidden(name):
                        (archives if is_archive(name) else files).append(Path(dirpath) / name)
            if not archives:
                out.append(given)
                continue
            out += [_escape(str(f)) for f in files]
            out += [extract_one(a) for a in archives]
    return out, bundles


def _safe_name(name: str) -> str | None:
    """The member's normalised relative path, or None if it escapes."""
    name = name.replace("\\", "/")
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        return None
    norm = posixpath.normpath(name)
    if norm in ("", ".") or norm == ".." or norm.startswith("../"):
        return None
    return norm


class _Limit(Exception):
    pass


def _copy(src: IO[bytes], dest: Path, budget: int) -> int:
    """Copy at most ``budget`` bytes; raise _Limit (and remove dest) beyond."""
    written = 0
    with open(dest, "xb") as out:
        while chunk := src.read(_CHUNK):
            written += len(chunk)
            if written > budget:
                break
            out.write(chunk)
    if written > budget:
        dest.unlink()
        raise _Limit
    return written


def _tar_member(tf: tarfile.TarFile, member: tarfile.TarInfo) -> IO[bytes]:
    """A regular member's bytes (``extractfile`` gives None for any other)."""
    src = tf.extractfile(member)
    if src is None:
        raise tarfile.TarError(f"{member.name}: not a regular file")
    return src


def extract(archive: Path, bundle: Bundle, total_limit: int, member_limit: int) -> None:
    total = 0
    target = bundle.target

    def place(member: str, size: int, opener: Callable[[], IO[bytes]]) -> None:
        nonlocal total
        bundle.members += 1
        safe = _safe_name(member)
        if safe is None:
            bundle.refused.append((member, "member path escapes the extraction folder"))
            return
        dest = target / safe
        if not dest.resolve().is_relative_to(target):
            bundle.refused.append((member, "member path escapes the extraction folder"))
            return
        if dest.exists():
            bundle.refused.append((member, "duplicate member"))
            return
        if size > member_limit:
            bundle.refused.append((member, f"member larger than {member_limit} bytes"))
            return
        if total + size > total_limit:
            bundle.refused.append((member, f"bundle larger than {total_limit} bytes"))
            return
        dest.parent.mkdir(parents=True, exist_ok=True)
        budget = min(member_limit, total_limit - total)
        try:
            with opener() as src:
                total += _copy(src, dest, budget)
        except _Limit:
            bundle.refused.append((member, f"member larger than {budget} bytes (as read)"))
        except (OSError, RuntimeError, EOFError, tarfile.TarError, zipfile.BadZipFile) as e:
            bundle.refused.append((member, f"unreadable member: {type(e).__name__}: {e}"[:300]))

    try:
        if archive.name.lower().endswith(".zip"):
            with zipfile.ZipFile(archive) as zf:
                for info in zf.infolist():
                    if info.is_dir():
                        continue
                    # Unix type bits, when the writer set any: only regular files.
                    kind = stat.S_IFMT(info.external_attr >> 16)
                    if kind not in (0, stat.S_IFREG):
                        bundle.members += 1
                        bundle.refused.append((info.filename, "link or special member"))
                        continue
                    place(info.filename, info.file_size, partial(zf.open, info))
        else:
            with tarfile.open(archive, "r:*") as tf:
                for m in tf:
                    if m.isdir():
                        continue
                    if not m.isreg():
                        bundle.members += 1
                        bundle.refused.append((m.name, "link or special member"))
                        continue
                    place(m.name, m.size, partial(_tar_member, tf, m))
    except (OSError, EOFError, tarfile.TarError, zipfile.BadZipFile) as e:
        bundle.refused.append(("", f"unreadable archive: {type(e).__name__}: {e}"[:300]))
        bundle.members += 1


def cleanup(bundles: list[Bundle]) -> None:
    for b in bundles:
        shutil.rmtree(b.target, ignore_errors=True)
