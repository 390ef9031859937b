"""Input files, whatever they hold (a dataset, a corpus, a declarative file): refused before
they are opened when they are no regular file or too big, read as UTF-8 text, and every refusal
an ``InputFileError`` with the line it is on, which its reader turns into one FILE:LINE line."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

#: The largest dataset or corpus file read, in megabytes; ``VREACT_MAX_FILE_MB`` changes it.
MAX_FILE_MB = 1024.0


class InputFileError(Exception):
    """A file that cannot be read as text: ``line`` (0: the file as a whole) and the message."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


class DatasetError(ValueError):
    """A dataset that cannot be read as its family's records, or whose filter keeps nothing:
    ``FILE:LINE: field: message`` (one line)."""


def cap_mb(env: str, default: float) -> float:
    """The size cap (megabytes) that ``env`` sets, else ``default``."""
    raw = os.environ.get(env, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise InputFileError(0, f"{env}={raw!r}: expected a positive number of megabytes")
    return value


def check_file(path: Path, env: str = "VREACT_MAX_FILE_MB", default_mb: float = MAX_FILE_MB) -> None:
    """Refuse, before opening it, what is not a regular file of at most the cap's size (a
    missing file, a directory, a symlink loop, a FIFO or a device, a file too big)."""
    try:
        st = path.stat()
    except OSError as e:
        raise InputFileError(0, f"cannot read: {e.strerror or e}") from None
    if stat.S_ISDIR(st.st_mode):
        raise InputFileError(0, "cannot read: a directory, not a file")
    if not stat.S_ISREG(st.st_mode):
        raise InputFileError(0, "cannot read: not a regular file (a FIFO, a socket or a device)")
    cap = cap_mb(env, default_mb)
    if st.st_size > cap * 2**20:
        raise InputFileError(
            0, f"too big: {st.st_size:,} bytes, over the cap of {cap:g} MB (raise it: {env}=MB)"
        )


def decode_text(raw: bytes, first_line: int = 1) -> str:
    """``raw`` as UTF-8 text (a byte-order mark dropped), refusing other encodings and NUL
    bytes with the line they are on."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = first_line + raw.count(b"\n", 0, e.start)
        raise InputFileError(
            line, f"not UTF-8 text (byte 0x{raw[e.start]:02x}: {e.reason}); save the file as UTF-8"
        ) from None
    nul = text.find("\0")
    if nul >= 0:
        raise InputFileError(first_line + text.count("\n", 0, nul), "a NUL byte: not a text file")
    return text.removeprefix("\ufeff") if first_line == 1 else text


def read_text(
    path: Path, env: str = "VREACT_MAX_FILE_MB", default_mb: float = MAX_FILE_MB
) -> tuple[bytes, str]:
    """A whole input file: its bytes and its text (:func:`check_file`, :func:`decode_text`);
    an empty (or blank) file is refused."""
    check_file(path, env, default_mb)
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise InputFileError(0, f"cannot read: {e.strerror or e}") from None
    text = decode_text(raw)
    if not text.strip():
        raise InputFileError(1, "the file is empty")
    return raw, text


def json_records(path: Path) -> Iterator[tuple[str, int, Any]]:
    """A dataset file's records, JSON lines or one JSON array, each with where it is
    (``FILE:LINE``, or in an array, ``FILE: record N``) and its number (its line, 1-based, blank
    lines counted; in an array, its place); a file that cannot be read is one ``DatasetError``
    line naming where."""
    try:
        check_file(path)
    except InputFileError as e:
        if not path.exists() and not path.is_symlink():
            raise DatasetError(f"{path}: no such dataset file") from None
        raise DatasetError(f"{path}:{e.line}: (file): {e.message}") from None
    raw = path.read_bytes().removeprefix(b"\xef\xbb\xbf")
    try:
        text = decode_text(raw, 1)
    except InputFileError as e:
        raise DatasetError(f"{path}:{e.line}: (file): {e.message}") from None
    if not text.strip():
        raise DatasetError(f"{path}:1: (file): the file is empty")
    if text.lstrip().startswith("["):
        try:
            items = json.loads(text)
        except json.JSONDecodeError as e:
            raise DatasetError(f"{path}:{e.lineno}: (file): not JSON: {e.msg} (column {e.colno})") from None
        except RecursionError:
            raise DatasetError(f"{path}:1: (file): JSON nested too deeply") from None
        for i, item in enumerate(items if isinstance(items, list) else [items], 1):
            yield f"{path}: record {i}", i, item
        return
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            yield f"{path}:{lineno}", lineno, json.loads(line)
        except json.JSONDecodeError as e:
            raise DatasetError(f"{path}:{lineno}: (line): not JSON: {e.msg} (column {e.colno})") from None
        except RecursionError:
            raise DatasetError(f"{path}:{lineno}: (line): JSON nested too deeply") from None
