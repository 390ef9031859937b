"""Load declarative YAML files with errors that name the file, line and field."""

from __future__ import annotations

import sys
from pathlib import Path
from types import UnionType
from typing import Annotated, Any, TypeVar, Union, get_args, get_origin

import yaml
from pydantic import BaseModel, ValidationError

from vreact.config import SettingError
from vreact.inputs import InputFileError, read_text
from vreact.registry import suggestion
from vreact.spec._models import KINDS

M = TypeVar("M", bound=BaseModel)
Loc = tuple[str | int, ...]

#: The largest declarative (YAML) file read, in megabytes; ``VREACT_MAX_YAML_MB`` changes it.
MAX_YAML_MB = 2.0
#: A YAML file's values (mappings, lists and scalars) counted with every alias expanded, and
#: its nesting depth, at most: checked on the parser's events, before anything is composed.
MAX_YAML_NODES = 100_000
MAX_YAML_DEPTH = 64
_CLoader = getattr(yaml, "CSafeLoader", None)
_Loader: Any = _CLoader if _CLoader is not None else yaml.SafeLoader


class SpecError(Exception):
    """One or more problems in declarative files; each line is ``FILE:LINE: field: message``."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__("\n".join(lines))
        self.lines = lines


def _value(node: yaml.Node) -> Any:
    """A composed node's value as ``yaml.safe_load`` reads it, without serializing the node
    and parsing it again (which took most of ``vreact validate``'s time)."""
    return yaml.constructor.SafeConstructor().construct_object(node, deep=True)


class _Refused(Exception):
    """A YAML file refused at a line (before or while it is turned into Python values)."""

    def __init__(self, line: int, field: str, message: str) -> None:
        super().__init__(message)
        self.line, self.field, self.message = line, field, message


def _check_shape(text: str) -> None:
    """Refuse, from the parser's events alone, a YAML file nested deeper than
    MAX_YAML_DEPTH or holding more than MAX_YAML_NODES values once its aliases are expanded (an
    alias bomb: a few lines that expand to billions of values)."""
    sizes: dict[str, int] = {}  # an anchor's value: how many values it expands to
    open_: list[list[Any]] = [[0, None]]  # per open collection: its size so far, its anchor
    total = 0
    for ev in yaml.parse(text, Loader=_Loader):
        if isinstance(ev, yaml.AliasEvent):
            n = sizes.get(ev.anchor or "", 1)
        elif isinstance(ev, yaml.ScalarEvent):
            n = 1
            if ev.anchor:
                sizes[ev.anchor] = 1
        elif isinstance(ev, yaml.CollectionStartEvent):
            open_.append([1, ev.anchor])
            total += 1
            if len(open_) - 1 > MAX_YAML_DEPTH:
                raise _Refused(_line(ev), "(yaml)", f"nested deeper than {MAX_YAML_DEPTH} levels")
            continue
        elif isinstance(ev, yaml.CollectionEndEvent) and len(open_) > 1:
            size, anchor = open_.pop()
            if anchor:
                sizes[anchor] = size
            open_[-1][0] += size
            continue
        else:
            continue
        open_[-1][0] += n
        total += n
        if total > MAX_YAML_NODES:
            raise _Refused(
                _line(ev),
                "(yaml)",
                f"more than {MAX_YAML_NODES:,} values with its aliases expanded (an alias bomb?)",
            )


def _plain(key: Any) -> bool:
    return key is None or isinstance(key, (str, int, float, bool))


def _line(ev: yaml.Event) -> int:
    return ev.start_mark.line + 1 if ev.start_mark is not None else 1


def _to_python(node: yaml.Node, loc: Loc, lines: dict[Loc, int]) -> Any:
    """Turn a composed YAML node into Python values, remembering each value's line."""
    lines[loc] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        out: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            key: Any = _value(key_node)
            where = ".".join(str(p) for p in loc) or "(file)"
            if not _plain(key):
                raise _Refused(key_node.start_mark.line + 1, where, "a key must be a plain value")
            if key in out:
                raise _Refused(
                    key_node.start_mark.line + 1,
                    _field_path((*loc, key)),
                    f"the key repeats (line {lines[(*loc, key)]} has it)",
                )
            lines[(*loc, key)] = key_node.start_mark.line + 1
            out[key] = _to_python(value_node, (*loc, key), lines)
            lines[(*loc, key)] = key_node.start_mark.line + 1
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_to_python(item, (*loc, i), lines) for i, item in enumerate(node.value)]
    try:
        return _value(node)
    except ValueError as e:  # e.g. a date that is none (2001-13-45)
        raise _Refused(node.start_mark.line + 1, _field_path(loc), _one_line(str(e))) from None


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _line_of(loc: Loc, lines: dict[Loc, int]) -> int:
    while loc and loc not in lines:
        loc = loc[:-1]
    return lines.get(loc, 1)


def _field_path(loc: Loc) -> str:
    # pydantic adds validator names ("function-after[...]") to some locations; drop them
    parts = [str(p) for p in loc if not (isinstance(p, str) and "[" in p)]
    return ".".join(parts) or "(file)"


def _guess_kind(path: Path, data: Any) -> str | None:
    if isinstance(data, dict) and isinstance(data.get("kind"), str):
        return data["kind"]
    by_folder = {"specs": "spec", "verifiers": "verifiers", "experiments": "experiment"}
    if path.parent.name in by_folder:
        return by_folder[path.parent.name]
    if path.name == "roles.yaml":
        return "roles"
    return None


def parse_overrides(pairs: list[str] | tuple[str, ...]) -> dict[str, Any]:
    """``["attempts=3", "dataset.hops=[2, 3]"]`` -> ``{"attempts": 3, "dataset.hops": [2, 3]}``
    (values are read as YAML, so numbers, booleans and lists keep their type)."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise SpecError([f"--set {pair}: expected KEY=VALUE, e.g. --set attempts=3"])
        try:
            _check_shape(value)  # an alias bomb on the command line is one too
            out[key.strip()] = yaml.safe_load(value)
        except _Refused as e:
            raise SpecError([f"--set {pair}: the value is refused: {e.message}"]) from None
        except yaml.YAMLError as e:
            raise SpecError([f"--set {pair}: the value is not valid YAML: {e}"]) from None
    return out


def _apply(data: dict[str, Any], key: str, value: Any) -> Loc:
    """Set a dotted ``key`` (list items by index: ``configurations.0.temperature``) in ``data``;
    missing mappings on the way are created."""
    parts = key.split(".")
    node: Any = data
    for i, part in enumerate(parts):
        slot: str | int
        if isinstance(node, list) and part.isdigit() and int(part) < len(node):
            slot = int(part)
        elif isinstance(node, dict):
            slot = part
        else:
            raise SpecError([f"--set {key}: {'.'.join(parts[:i])} has no item {part!r}"])
        if i == len(parts) - 1:
            node[slot] = value
        else:
            if isinstance(node, dict):
                node.setdefault(slot, {})
            node = node[slot]
    return tuple(int(p) if p.isdigit() else p for p in parts)


def load_file(
    path: str | Path,
    expect: type[M] | None = None,
    overrides: dict[str, Any] | None = None,
    context: dict[str, Any] | None = None,
) -> M | BaseModel:
    """Load and validate one declarative file; raise SpecError with FILE:LINE lines.

    ``overrides`` (dotted key -> value, from ``--set``) are applied before validation; an
    error in an overridden field names the ``--set`` instead of a line. ``context`` is the
    validation's (a spec's ``family``: the experiment's)."""
    path = Path(path)
    name = str(path)
    try:
        _, text = read_text(path, "VREACT_MAX_YAML_MB", MAX_YAML_MB)
    except InputFileError as e:
        raise SpecError([f"{name}:{e.line}: (file): {e.message}"]) from None
    lines: dict[Loc, int] = {}
    try:
        _check_shape(text)
        node = yaml.compose(text, Loader=_Loader)
        data = _to_python(node, (), lines) if node is not None else None
    except _Refused as e:
        raise SpecError([f"{name}:{e.line}: {e.field}: {e.message}"]) from None
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line = mark.line + 1 if mark else 1
        raise SpecError([f"{name}:{line}: (yaml): {_one_line(e.problem or e.context or str(e))}"]) from None
    except (yaml.YAMLError, ValueError, TypeError, RecursionError) as e:
        raise SpecError([f"{name}:1: (yaml): {_one_line(str(e)) or type(e).__name__}"]) from None
    if data is None:
        raise SpecError([f"{name}:1: (file): the file holds no fields (only comments?)"])
    if not isinstance(data, dict):
        raise SpecError([f"{name}:1: (file): expected a mapping of fields"])
    overridden = {_apply(data, k, v): k for k, v in (overrides or {}).items()}
    model: type[BaseModel]
    if expect is not None:
        model = expect
    else:
        kind = _guess_kind(path, data)
        if kind not in KINDS:
            raise SpecError(
                [
                    f"{name}:{_line_of(('kind',), lines)}: kind: must be one of "
                    f"{', '.join(KINDS)} (got {kind!r})"
                ]
            )
        model = KINDS[kind]
    try:
        loaded = model.model_validate(
            data, context={**(context or {}), "base": path.parent}
        )  # plugins: beside it
    except ValidationError as e:
        out = []
        for err in e.errors():
            loc = located(err)
            msg = err["msg"].removeprefix("Value error, ")
            if err["type"] == "extra_forbidden":
                msg = "unknown field" + _closest(model, loc)
            # an error in an overridden field, or in the field that holds it, names the --set
            by_set = next(
                (k for o, k in overridden.items() if loc[: len(o)] == o or o[: len(loc)] == loc), None
            )
            where = f"{name}: --set {by_set}" if by_set else f"{name}:{_line_of(loc, lines)}"
            out.append(f"{where}: {_field_path(loc)}: {msg}")
        raise SpecError(out) from None
    for loc, msg in getattr(loaded, "ignored_settings", list)():
        warn(f"{name}:{_line_of(loc, lines)}: {_field_path(loc)}: {msg}")
    return loaded


def field_line(path: str | Path, loc: Loc) -> int:
    """The line of the field at ``loc`` in a YAML file that loaded (of the nearest field that
    holds it, when it is not written there; 1 when the file cannot be read again)."""
    lines: dict[Loc, int] = {}
    try:
        _, text = read_text(Path(path), "VREACT_MAX_YAML_MB", MAX_YAML_MB)
        _check_shape(text)
        node = yaml.compose(text, Loader=_Loader)
        if node is not None:
            _to_python(node, (), lines)
    except (InputFileError, _Refused, yaml.YAMLError, ValueError, TypeError, RecursionError, OSError):
        return 1
    return _line_of(loc, lines)


def _fields_at(model: Any, loc: Loc) -> list[str]:
    """The fields of the model that holds the field at ``loc`` (below ``model``), read from the
    annotations (a list's, a mapping's or an optional's item), or none when they cannot be read."""
    here: Any = model
    for part in loc[:-1]:
        if isinstance(part, str) and "[" in part:
            continue  # a validator's name in the location
        here = _model_in(here)
        if isinstance(here, type) and issubclass(here, BaseModel):
            field = here.model_fields.get(str(part))
            if field is None:
                return []
            here = field.annotation
        elif get_origin(here) in (list, tuple, set, frozenset) and isinstance(part, int):
            here = (get_args(here) or (Any,))[0]
        elif get_origin(here) is dict:
            here = (get_args(here) or (Any, Any))[-1]
        else:
            return []
    here = _model_in(here)
    return list(here.model_fields) if isinstance(here, type) and issubclass(here, BaseModel) else []


def _model_in(annotation: Any) -> Any:
    """The one model (or container) an optional or ``Annotated`` annotation stands for."""
    while get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    if get_origin(annotation) in (Union, UnionType):
        members = [a for a in get_args(annotation) if a is not type(None)]
        if len(members) == 1:
            return _model_in(members[0])
    return annotation


def _closest(model: Any, loc: Loc) -> str:
    """``; did you mean 'planner'?`` for a misspelt field at ``loc``, else nothing."""
    known = _fields_at(model, loc)
    return suggestion(str(loc[-1]), known, listed=False) if loc and known else ""


def located(error: Any) -> Loc:
    """Where a validation error is: its location, and below it the setting an object refused
    (a ``SettingError`` is raised by the object holding the setting, so its own path is added)."""
    cause = (error.get("ctx") or {}).get("error")
    loc = tuple(error["loc"])
    return (*loc, *cause.path) if isinstance(cause, SettingError) else loc


def warn(line: str) -> None:
    """Where a loaded file's warnings go (one line each): standard error."""
    print(line, file=sys.stderr)


def validate_files(paths: list[str | Path]) -> list[str]:
    """Validate files and return every error line (empty when all are valid)."""
    errors: list[str] = []
    for p in paths:
        try:
            load_file(p)
        except SpecError as e:
            errors.extend(e.lines)
    return errors
