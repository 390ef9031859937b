"""An open corpus file (the experiment's ``dataset.corpus``): a JSON array, or JSON lines, of
``{"title", "text"}`` objects, a paragraph's id being its position (0, 1, ...). Search runs over
the whole corpus instead of a task's own paragraphs (its index, and each task's gold supporting
paragraphs found in it by exact title and text, are retrieval's: vreact.qa.tools; docs/corpus.md)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from vreact.inputs import InputFileError, read_text
from vreact.qa.dataset import DatasetError, Paragraph


class CorpusError(DatasetError):
    """A corpus that cannot be used: ``FILE:LINE: field: message``, or a task's gold paragraph
    that is not in it."""


def _objects(path: Path, text: str) -> list[tuple[int, Any]]:
    """The file's values with the line each starts on: a JSON array's items, else one value per
    non-blank line (JSON lines)."""
    start = len(text) - len(text.lstrip())
    if text[start : start + 1] != "[":
        out = []
        for lineno, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    out.append((lineno, json.loads(line)))
                except json.JSONDecodeError as e:
                    if not out:
                        _not_lines(path, text)
                    raise CorpusError(f"{path}:{lineno}: (line): not JSON: {e.msg}") from None
                except RecursionError:
                    raise CorpusError(f"{path}:{lineno}: (line): JSON nested too deeply") from None
        return out
    decoder, items, pos = json.JSONDecoder(), [], start + 1
    at = [1, 0]  # the line of the last offset asked about, and that offset (offsets only grow)

    def line_at(offset: int) -> int:
        at[0] += text.count("\n", at[1], offset)
        at[1] = offset
        return at[0]

    def skip(offset: int) -> int:
        while offset < len(text) and text[offset] in " \t\r\n":
            offset += 1
        return offset

    pos = skip(pos)
    if text[pos : pos + 1] == "]":
        return []
    while True:
        try:
            value, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as e:
            raise CorpusError(f"{path}:{e.lineno}: (file): not JSON: {e.msg}") from None
        except RecursionError:
            raise CorpusError(f"{path}:{line_at(pos)}: (file): JSON nested too deeply") from None
        items.append((line_at(pos), value))
        pos = skip(end)
        if text[pos : pos + 1] == "]":
            if text[skip(pos + 1) :]:
                raise CorpusError(
                    f"{path}:{line_at(skip(pos + 1))}: (file): not JSON: extra data after the array"
                )
            return items
        if text[pos : pos + 1] != ",":
            raise CorpusError(f"{path}:{line_at(pos)}: (file): not JSON: expected ',' or ']' in the array")
        pos = skip(pos + 1)


def _not_lines(path: Path, text: str) -> None:
    """A file that is one JSON value but neither an array nor JSON lines is refused as such."""
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return
    raise CorpusError(
        f"{path}:1: (file): a corpus is a JSON array, or JSON lines, of {{title, text}} objects,"
        f" not one {type(value).__name__}"
    )


def read_corpus(source: str | Path) -> tuple[list[Paragraph], str]:
    """The corpus file's paragraphs, ``idx`` their position in it, and the file's sha256 (a
    run's identity holds it: ids are positions). Every item must be an object with a string
    ``title`` and a string ``text`` (other keys are ignored). A file that is missing, not a
    regular file, over ``VREACT_MAX_FILE_MB`` (default 1024), empty, not UTF-8 (a BOM is
    accepted) or holding a NUL byte is refused with one ``FILE:LINE: field: message`` line."""
    path = Path(source)
    if not path.exists() and not path.is_symlink():
        raise CorpusError(f"{path}: no such corpus file (give a JSON array or JSON lines of {{title, text}})")
    try:
        raw, text = read_text(path)
    except InputFileError as e:
        raise CorpusError(f"{path}:{e.line}: (file): {e.message}") from None
    paragraphs = []
    for i, (lineno, item) in enumerate(_objects(path, text)):
        if not isinstance(item, dict):
            raise CorpusError(f"{path}:{lineno}: [{i}]: a paragraph is an object {{title, text}}")
        for key in ("title", "text"):
            if not isinstance(item.get(key), str):
                what = "missing" if key not in item else f"not a string ({type(item[key]).__name__})"
                raise CorpusError(f"{path}:{lineno}: [{i}].{key}: {what}")
        paragraphs.append(Paragraph.model_construct(idx=i, title=item["title"], paragraph_text=item["text"]))
    if not paragraphs:
        raise CorpusError(f"{path}: the corpus has no paragraph")
    return paragraphs, hashlib.sha256(raw).hexdigest()
