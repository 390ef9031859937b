"""Every setting is read or refused: a validation-only sweep over every combination of the
switches and every declared setting. The settings come from the declarations (``read_by`` on
each field); whether a component runs is read off what the controller and the step pipeline
really build for the configuration, so a wrong declaration fails here."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from vreact.config import CALL_ROLES, COMPONENTS, ROLE_COMPONENT, Configuration, reader_of
from vreact.controller._try import pipeline_of
from vreact.pipeline import (
    ContextManager,
    ContextProfile,
    Critic,
    RepetitionGuard,
    TextRepetitionGuard,
)
from vreact.spec import SpecError, load_file
from vreact.verify.verifier import Verifiers

SWITCHES = ("planner", "guards", "gates", "judges", "critic", "context_manager")
PROFILES = (None, "simple", "benchmark")
GUARD_MEMBERS = ({}, {"text_repeat": True})
#: k candidates (without a planner only): none, agreement, best of k
AGREEMENTS = ({}, {"k": 3}, {"k": 3, "select": "first"})


def declared(model: type[BaseModel] = Configuration, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """The path of every setting a field declares a reader for (groups walked into), and one
    ``calls.<role>`` per calling role, one ``models.<role>`` per calling role and the default."""
    for name, info in model.model_fields.items():
        here = (*path, name)
        group = info.annotation if isinstance(info.annotation, type) else None
        if name == "calls":
            yield from ((*here, role) for role in CALL_ROLES)
        elif name == "models":
            yield from ((*here, role) for role in ("default", *CALL_ROLES))
        elif reader_of(info) is None and group is not None and issubclass(group, BaseModel):
            yield from declared(group, here)
        elif reader_of(info) is not None:
            yield here


def reader(path: tuple[str, ...]) -> str:
    if path[0] in ("calls", "models"):
        return ROLE_COMPONENT.get(path[1], "own_default_model")
    model: type[BaseModel] = Configuration
    for part in path[:-1]:
        model = model.model_fields[part].annotation  # type: ignore[assignment]
    found = reader_of(model.model_fields[path[-1]])
    assert found is not None
    return found


#: A value other than the default for a setting, by path (else by the default's type).
VALUES: dict[tuple[str, ...], Any] = {
    ("guard", "text_similarity"): 0.5,
    ("dereact", "kappa_min"): 0.5,
    ("keep_last_k",): 2,
    ("limit",): 1,
    ("pipeline",): ["repetition_guard"],
    ("temperature",): 0.7,
    ("spec",): "musique",
    ("verifiers",): "musique",
    ("retry_temperature",): 0.7,
    ("agreement", "select"): "first",
    ("agreement", "temperatures"): [0.5, 1.0],
    ("agreement", "tau"): 0.8,
}


def value_for(path: tuple[str, ...]) -> Any:
    if path in VALUES:
        return VALUES[path]
    if path[0] == "calls":
        return {"temperature": 0.1}
    if path[0] == "models":
        return "mock/other"
    default = Configuration(name="x")
    for part in path:
        default = getattr(default, part)
    if isinstance(default, bool):
        return not default
    if isinstance(default, (int, float)):
        return default + 1
    raise AssertionError(f"no test value for {path}")


def nested(path: tuple[str, ...], value: Any) -> dict[str, Any]:
    out: dict[str, Any] = {path[-1]: value}
    for part in reversed(path[:-1]):
        out = {part: out}
    return out


def merged(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    out = dict(a)
    for k, v in b.items():
        out[k] = merged(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def runs(config: Configuration, spec, verifiers) -> set[str]:
    """The components this configuration really runs: the members its tries are built with,
    the judges its verifiers hold, the planner and the V's ascent as the controller takes them."""
    members = pipeline_of(config).members
    kinds = {type(m) for m in members}
    out = {"executor", "runner"}
    called = {"executor"} | ({"planner"} if config.planner else set())  # the roles it calls
    called |= {"judge"} if config.judges else set()
    called |= {"critic"} if Critic in kinds else set()
    called |= {"context_manager"} if ContextManager in kinds else set()
    a = config.agreement
    sampling = not config.planner and a.k > 1
    agreeing = sampling and a.select == "agree"
    called |= {"tester"} if agreeing and a.tester else set()
    for field in ("temperature", "max_tokens"):  # the configuration's own, unless a role's says
        if any(getattr(config.calls.get(r), field, None) is None for r in called):
            out.add(field)
    out |= {"own_default_model"} if called - set(config.models) else set()
    out |= {"candidates"} if not config.planner else set()  # Candidates runs without a planner
    out |= {"sampling"} if sampling else set()
    out |= {"agreement"} if agreeing else set()
    out |= {"tester"} if "tester" in called else set()
    out |= {"guards"} if RepetitionGuard in kinds else set()
    out |= {"text_repetition"} if TextRepetitionGuard in kinds else set()
    out |= {"critic", "critic_calls"} if Critic in kinds else set()
    out |= {"context_manager", "context_manager_calls"} if ContextManager in kinds else set()
    profiles = [m for m in members if isinstance(m, ContextProfile)]
    out |= {"profile"} if profiles else set()
    out |= {"benchmark_profile"} if any(p.profile == "benchmark" for p in profiles) else set()
    built = Verifiers(config, spec, verifiers)
    if any(j is not None for j in built.judges.values()):
        out.add("judges")
    if any(built.gates.values()) or "judges" in out:  # the verifier set is read
        out.add("verifiers")

    def checks(verifier: str) -> bool:  # a verifier with a gate or a judge can reject
        return bool(built.gates[verifier]) or built.judges[verifier] is not None

    if config.planner:
        out |= {"planner"} | ({"plan_verifier"} if checks("plan") else set())
    if config.verified and not sampling:  # Controller.run takes the V's path: R1 re-tries, R2 and R3 check
        out.add("R1")
        out |= {"R3"} if checks("R3") else set()
        out |= {"R2"} if config.planner and checks("R2") else set()
    return out


def bases() -> Iterator[dict[str, Any]]:
    for flags in itertools.product((False, True), repeat=len(SWITCHES)):
        switches = dict(zip(SWITCHES, flags, strict=True))
        for profile in PROFILES:
            for members in GUARD_MEMBERS if switches["guards"] else ({},):
                for agreement in ({},) if switches["planner"] else AGREEMENTS:
                    base = {
                        "name": "C",
                        **switches,
                        "profile": profile,
                        **({"guard": members} if members else {}),
                    }
                    yield {**base, **({"agreement": agreement} if agreement else {})}


def test_every_field_declares_its_reader_or_is_a_switch():
    """A new setting without a reader would be accepted everywhere: each field says who reads it."""
    plain = {
        "name",
        *SWITCHES,
        "profile",
        "dereact",
        "budgets",
        "guard",
        "agreement",
        "calls",
        "models",
        "designer",
    }
    for name, info in Configuration.model_fields.items():
        assert name in plain or reader_of(info) is not None, name
    for path in declared():
        assert reader(path) in COMPONENTS, path


def test_each_setting_is_accepted_exactly_when_its_component_runs(spec, verifiers):
    settings = list(declared())
    assert len(settings) >= 25  # every budget, guard, DeReAct, profile and call setting
    checked = refused = 0
    for base in bases():
        running = runs(Configuration.model_validate(base), spec, verifiers)
        for path in settings:
            data = merged(base, nested(path, value_for(path)))
            expected = reader(path) in running
            try:
                Configuration.model_validate(data)
                accepted = True
            except ValidationError as e:
                accepted = False
                [error] = e.errors()
                assert f"{'.'.join(path)} is read by {COMPONENTS[reader(path)].title}" in error["msg"]
                assert "which this configuration does not run" in error["msg"]
            assert accepted == expected, (path, base, running)
            checked += 1
            refused += not accepted
    assert refused > 0 and refused < checked  # both sides of the rule were exercised


def test_a_refused_setting_names_its_file_line_and_path(tmp_path):
    path = tmp_path / "x.yaml"
    path.write_text(
        "kind: experiment\nname: x\nconfigurations:\n  - name: N\n  - name: C\n"
        "    gates: true\n    budgets:\n      step_cap: 4\n      plan: 2\n"
    )
    with pytest.raises(SpecError) as e:
        load_file(path)
    assert e.value.lines == [
        f"{path}:9: configurations.1.budgets.plan: budgets.plan is read by the plan verifier"
        " (a planner, with gates or judges), which this configuration does not run"
    ]


@pytest.mark.parametrize(
    ("body", "where", "says"),
    [
        ("base_url: http://127.0.0.1:1/v1", "base_url", "is read by anthropic/ and openai/ models"),
        ("limits: {timeout: 30}", "limits.timeout", "is read by anthropic/ and openai/ models"),
        ("models: {planner: openai/x}", "models.planner", "is read by the planner, which no configuration"),
        ("models: {judge: openai/x}", "models.judge", "is read by the judges, which no configuration"),
    ],
)
def test_an_experiment_setting_nothing_reads_is_refused(tmp_path, body, where, says):
    path = tmp_path / "x.yaml"
    path.write_text(f"kind: experiment\nname: x\n{body}\nconfigurations:\n  - name: N\n")
    with pytest.raises(SpecError) as e:
        load_file(path)
    [line] = e.value.lines
    assert line.startswith(f"{path}:3: {where}: {where} {says}"), line


def test_the_same_settings_are_accepted_where_they_are_read(tmp_path):
    path = tmp_path / "x.yaml"
    path.write_text(
        "kind: experiment\nname: x\nmodels: {default: openai/x, planner: openai/y, judge: anthropic/z}\n"
        "base_url: http://127.0.0.1:1/v1\nlimits: {timeout: 30}\n"
        "configurations:\n  - {name: VPGJ, planner: true, gates: true, judges: true}\n"
    )
    assert load_file(path).models["judge"] == "anthropic/z"


def test_a_model_that_ignores_a_setting_another_reads_is_a_warning(tmp_path, capsys):
    path = tmp_path / "x.yaml"
    path.write_text(
        "kind: experiment\nname: x\nmodels: {default: openai/x, judge: anthropic/z}\n"
        "limits:\n  reasoning_only_max_tokens: 400\n"
        "configurations:\n  - {name: VGJ, gates: true, judges: true}\n"
    )
    load_file(path)
    assert capsys.readouterr().err.splitlines() == [
        f"{path}:5: limits.reasoning_only_max_tokens: warning: the judge's model anthropic/z ignores"
        " limits.reasoning_only_max_tokens"
    ]


def test_a_default_model_no_role_falls_back_to_is_refused(tmp_path):
    path = tmp_path / "x.yaml"
    path.write_text(
        "kind: experiment\nname: x\nmodels: {default: openai/a, executor: openai/b}\n"
        "configurations:\n  - name: N\n"
    )
    with pytest.raises(SpecError, match=r"models\.default: models\.default is read by no role"):
        load_file(path)
    path.write_text(path.read_text().replace("  - name: N\n", "  - {name: NP, planner: true}\n"))
    called = load_file(path)._role_models()["NP"]
    assert {r: (c.model, c.source) for r, c in called.items()} == {
        "executor": ("openai/b", "experiment"),
        "planner": ("openai/a", "default"),  # the planner takes the default
    }


def test_a_window_that_would_drop_the_newest_steps_is_refused():
    with pytest.raises(ValidationError, match=r"initial \(5\) must be less than dereact\.window \(3\)"):
        Configuration(name="C", context_manager=True, dereact={"window": 3})
    assert Configuration(name="C", context_manager=True, dereact={"window": 3, "initial": 1})
    with pytest.raises(ValidationError, match=r"dereact\.window is read by the DeReAct context manager"):
        Configuration(name="C", dereact={"window": 3})  # without a CM: the rule, not the cross-check


def test_aliases_resolve_through_the_models_file(tmp_path):
    models = tmp_path / "models.yaml"
    models.write_text(
        "kind: models\nmodels:\n  local: {model: llamacpp/smollm2-135m}\n  big: {model: openai/x}\n"
    )
    path = tmp_path / "x.yaml"
    for default, ok in (("local", False), ("big", True)):
        path.write_text(
            f"kind: experiment\nname: x\nmodels_file: {models}\nmodels: {{default: {default}}}\n"
            "base_url: http://127.0.0.1:1/v1\nconfigurations:\n  - name: N\n"
        )
        if ok:
            load_file(path)
        else:
            with pytest.raises(SpecError, match="base_url is read by"):
                load_file(path)


def test_every_shipped_experiment_validates_under_the_rule():
    from vreact.spec import builtin_dir

    files = sorted(builtin_dir("experiments").glob("*.yaml"))
    assert len(files) >= 5
    for f in files:
        load_file(f)


def test_a_configuration_wide_call_setting_no_role_takes_is_refused():
    with pytest.raises(ValidationError, match="temperature is read by the roles without calls"):
        Configuration(name="N", temperature=0.9, calls={"executor": {"temperature": 0.0}})
    # a role that takes it: the planner of NP
    Configuration(name="NP", planner=True, temperature=0.9, calls={"executor": {"temperature": 0.0}})
    Configuration(name="N", max_tokens=300, calls={"executor": {"temperature": 0.0}})


def test_a_pipeline_member_is_checked_and_counts_as_running():
    """A member's arguments are bound at validation (not in every attempt), and a DeReAct member
    named in ``pipeline:`` runs, so its settings and its role's call settings are read."""
    with pytest.raises(ValidationError, match="pipeline member 'repetition_guard': got an unexpected"):
        Configuration(name="C", pipeline=[{"name": "repetition_guard", "args": {"bogus": 1}}])
    with pytest.raises(ValidationError, match="unknown pipeline member 'critc'; did you mean 'critic'"):
        Configuration(name="C", pipeline=["critc"])
    named = Configuration(name="C", pipeline=["critic"], calls={"critic": {"temperature": 0.1}})
    assert COMPONENTS[ROLE_COMPONENT["critic"]].runs(named)
    # the named member takes its own arguments: the switched-on critic's threshold is not read
    with pytest.raises(ValidationError, match=r"dereact\.kappa_min is read by the DeReAct critic"):
        Configuration(name="C", pipeline=["critic"], dereact={"kappa_min": 0.5})
    Configuration(name="C", pipeline=[{"name": "critic", "args": {"kappa_min": 0.5}}])


#: Each way an experiment gives an explicit temperature: (its body, where the refusal points).
TEMPERATURES = (
    (
        "configurations:\n  - {name: VG, guards: true, gates: true, temperature: 0.5}\n",
        "configurations.0.temperature",
    ),
    (
        "configurations:\n  - {name: N, calls: {executor: {temperature: 0.5}}}\n",
        "configurations.0.calls.executor.temperature",
    ),
    (
        "configurations:\n  - {name: VG, guards: true, gates: true, retry_temperature: 0.5}\n",
        "configurations.0.retry_temperature",
    ),
    ("calls: {default: {temperature: 0.5}}\nconfigurations:\n  - name: N\n", "calls.default.temperature"),
    ("calls: {executor: {temperature: 0.5}}\nconfigurations:\n  - name: N\n", "calls.executor.temperature"),
)


@pytest.mark.parametrize("provider", ["openai", "anthropic", "llamacpp"])
@pytest.mark.parametrize("body, where", TEMPERATURES)
def test_an_explicit_temperature_is_accepted_exactly_where_the_provider_sends_it(
    tmp_path, provider, body, where
):
    """Per-provider settings: a temperature is refused, naming why, for a provider whose models
    are never sent one (the provider's own declaration: ``refused_by``), and accepted elsewhere;
    the seed is never refused."""
    from vreact.model import refused_by

    path = tmp_path / "x.yaml"
    path.write_text(f"kind: experiment\nname: x\nmodels: {{default: {provider}/m}}\nseed: 3\n{body}")
    why = refused_by(f"{provider}/m", "temperature")
    if why is None:
        assert load_file(path).seed == 3
        return
    with pytest.raises(SpecError) as e:
        load_file(path)
    [line] = e.value.lines
    assert f": {where}: " in line and line.endswith(f"takes no temperature: {why}"), line
