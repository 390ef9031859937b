"""The report's tables, declared once (title, note, columns: header, where the value is, how it is
shown) and drawn three ways: rich on a terminal and Markdown here, HTML in vreact.report.html."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from vreact.families import Reading
from vreact.records import provenance
from vreact.report.compute import ALWAYS_ANSWER, DEFENCE_CHECKS, family_named
from vreact.report.model import ConfigReport, Provenance, ProvenanceState, Report
from vreact.terminal import Fitted
from vreact.v import ABSTAIN_LEVELS

if TYPE_CHECKING:
    from vreact.records import RunSummary

#: Columns of labels (not figures): left-aligned.
LEFT = (
    *("config", "by", "vs", "figure", "guard", "stop causes"),
    *("task", "component", "source", "check", "cause", "rejected", "accepted", "right"),
    *("attack", "stopped by", "level", "role", "metric"),
)


@dataclass(frozen=True)
class Column:
    """One column: ``path`` is the value's attribute path from the row's ``root`` (``{name}``
    placeholders filled from the row's ``params``); a pair of paths is two figures one cell
    shows. ``style`` says how a terminal shows it: "" plain, "pm" a pair mean ± se in %,
    "points" a signed difference in points, "p" a p-value, "yesno" a flag, "usd" a pair of
    dollars and the calls they leave out (a lower bound, ``>= $``, when some had no price),
    "counts" a mapping of counts, most first ("R3 multi_hop ×2, R1 max_words ×1"), "predicted"
    a figure or, where there is none, "not predicted". ``size`` marks a column that says how
    much was measured."""

    header: str
    path: str | tuple[str, str]
    style: str = ""
    #: how much was measured (tasks, k, n), not a measurement: a table whose other figures are
    #: all zero says only that nothing happened, whatever its sizes (:func:`all_zero`)
    size: bool = False


@dataclass(frozen=True)
class Row:
    """One row: its leading labels, the model its columns read, and where that model sits in the
    JSON report (``config`` names the configuration, ``key`` the path under it, or for a
    comparison under the report)."""

    config: str
    labels: tuple[Any, ...]
    root: BaseModel
    params: dict[str, str] = field(default_factory=dict)
    key: str = ""


@dataclass(frozen=True)
class Table:
    """One table: ``title`` may name the run ({run}); ``note`` is shown in HTML; ``rows`` yields
    the rows of a report; with ``optional`` the table is left out when it has no rows."""

    title: str
    note: str
    labels: tuple[str, ...]
    columns: tuple[Column, ...]
    rows: Callable[[Report], Iterator[Row]]
    optional: bool = False


def resolve(root: Any, path: str) -> tuple[Any, str]:
    """The value at an attribute path of a report model, and its dotted path in the JSON report
    (field aliases, such as ``pass@1``); None past a missing part."""
    obj, keys = root, []
    for part in path.split("."):
        if isinstance(obj, BaseModel):
            info = type(obj).model_fields[part]  # a KeyError: a table names a field that is not there
            keys.append(info.alias or part)
            obj = getattr(obj, part)
        else:
            keys.append(part)
            obj = obj.get(part) if isinstance(obj, dict) else None
    return obj, ".".join(keys)


def cell(row: Row, column: Column) -> tuple[Any, str | None]:
    """A cell's value and its JSON path, or for a pair of paths its two values and None."""
    if isinstance(column.path, tuple):
        return tuple(resolve(row.root, p.format(**row.params))[0] for p in column.path), None
    value, key = resolve(row.root, column.path.format(**row.params))
    return value, row.key + key


# --- the tables -------------------------------------------------------------------------------


def _configs(report: Report) -> Iterator[tuple[str, ConfigReport]]:
    yield from report.configs.items()


def _per_config(report: Report) -> Iterator[Row]:
    for n, r in _configs(report):
        yield Row(n, (n,), r)


def _of_family(table: str, rows: Callable[[Report], Iterator[Row]]) -> Callable[[Report], Iterator[Row]]:
    """Rows of one of the tables a family may have (``TaskFamily.report_tables``): none for a
    run whose family does not declare ``table``."""

    def declared(report: Report) -> Iterator[Row]:
        if table in family_named(report.family).report_tables:
            yield from rows(report)

    return declared


def _family_metrics(report: Report) -> Iterator[Row]:
    """A family's own metrics, a row each (a family whose tables show them has none: qa's EM, F1
    and support F1)."""
    for n, r in _configs(report):
        for metric in r.family_metrics:
            yield Row(n, (n, metric), r, {"metric": metric})


def _official(report: Report) -> Iterator[Row]:
    """HotpotQA's and 2Wiki's official figures: a row for each configuration whose attempts the
    family scored by them (``vreact.qa.formats.official``)."""
    for n, r in _configs(report):
        if "sp_f1" in r.family_metrics:
            yield Row(n, (n,), r)


def _scored_tries(report: Report) -> Iterator[Row]:
    """Per configuration whose tries its family scored, a row per source that rejected (gates
    always)."""
    for n, r in _configs(report):
        if r.tries_scored:
            for source in r.false_rejections:
                if source == "gate" or r.rejections.get(source):
                    yield Row(n, (n, source), r, {"s": source})


def _judge_claims(report: Report) -> Iterator[Row]:
    """Per configuration, a row per verifier whose judge shows its work."""
    for n, r in _configs(report):
        for verifier, claims in r.judge_claims.items():
            yield Row(n, (n, verifier), claims, key=f"judge_claims.{verifier}.")


def _truncated(report: Report) -> Iterator[Row]:
    """Per configuration, a row per role whose replies stopped at their token allowance."""
    for n, r in _configs(report):
        for role in r.truncated:
            yield Row(n, (n, role), r, {"role": role})


def _by_scorer(report: Report) -> Iterator[Row]:
    """Per configuration, a row per scorer its records hold (none when they hold one)."""
    for n, r in _configs(report):
        for scorer in r.by_scorer:
            yield Row(n, (n, scorer), r, {"s": scorer})


def _per_hop(report: Report) -> Iterator[Row]:
    for n, r in _configs(report):
        for h, hr in r.by_hops.items():
            yield Row(n, (n, h), hr, key=f"by_hops.{h}.")


def _with_pass(report: Report) -> Iterator[Row]:
    for n, r in _configs(report):
        if r.pass_ is not None:
            yield Row(n, (n,), r.pass_, key="pass.")


def _over_attempts(report: Report) -> Iterator[Row]:
    for n, r in _configs(report):
        if r.pass_ is not None and r.pass_.pass1_se_attempts is not None:
            yield Row(n, (n,), r.pass_, key="pass.")


def _comparisons(report: Report) -> Iterator[Row]:
    for i, c in enumerate(report.comparisons):
        yield Row(f"{c.a} vs {c.b}", (c.a, c.b), c, key=f"comparisons.{i}.")


def _baselines(report: Report) -> Iterator[Row]:
    """Each configuration, then the reference rows (``always answer`` names the configuration
    whose answers it takes)."""
    yield from _per_config(report)
    for n, r in report.references.items():
        label = n.replace("_", " ") + (f" ({report.always_answer_from})" if n == ALWAYS_ANSWER else "")
        yield Row(n, (label,), r, key=f"references.{n}.")


def _over_abstaining(report: Report) -> Iterator[Row]:
    for i, c in enumerate(report.over_abstaining):
        yield Row(f"{c.a} vs {c.b}", (c.a,), c, key=f"over_abstaining.{i}.")


def _distributions(report: Report) -> Iterator[Row]:
    for n, r in _configs(report):
        for k, d in r.cost_distribution.items():
            if d is not None and k != "cost_usd":
                yield Row(n, (n, k), d, key=f"cost_distribution.{k}.")


def _usd_distributions(report: Report) -> Iterator[Row]:
    for n, r in _configs(report):
        d = r.cost_distribution.get("cost_usd")
        if d is not None:  # none priced: no dollars to show
            yield Row(n, (n,), d, key="cost_distribution.cost_usd.")


def _by_role(report: Report) -> Iterator[Row]:
    for n, r in _configs(report):
        for role, spent in r.cost_by_role.items():
            yield Row(n, (n, spent.level, role), spent, key=f"cost_by_role.{role}.")


def _by_source(report: Report) -> Iterator[Row]:
    for n, r in _configs(report):
        for source, spent in r.cost_by_source.items():
            if spent.own.llm_calls or spent.caused.llm_calls:  # a source that cost nothing: no row
                yield Row(n, (n, source), spent, key=f"cost_by_source.{source}.")


def _by_check(report: Report) -> Iterator[Row]:
    for n, r in _configs(report):
        for charge, spent in r.caused_retries.items():
            yield Row(
                n,
                (n, spent.source, f"{spent.verifier} {spent.check}"),
                spent,
                key=f"caused_retries.{charge}.",
            )


def _attribution(report: Report) -> Iterator[Row]:
    for n, r in _configs(report):
        a = r.attribution
        groups = (("by_source", a.by_source), ("by_level", a.by_level))
        for group, figures in groups:
            for by in figures:
                if by in ("critic", "context_manager") and not (
                    figures[by].rejections or a.marginal_cost[by].llm_calls
                ):
                    continue  # a DeReAct member the configuration did not run
                yield Row(n, (n, by), r, {"group": group, "by": by})


def _guard_fires(report: Report) -> Iterator[Row]:
    for n, r in _configs(report):
        for i, f in enumerate(r.guards.fires if r.guards else []):
            yield Row(n, (n, f.guard), f, key=f"guards.fires.{i}.")


def _guarded(report: Report) -> Iterator[Row]:
    for n, r in _configs(report):
        if r.guards is not None:
            yield Row(n, (n,), r.guards, key="guards.")


def _dereact(report: Report) -> Iterator[Row]:
    for n, r in _configs(report):
        if r.dereact is not None:
            yield Row(n, (n,), r.dereact, key="dereact.")


def _candidates(report: Report) -> Iterator[Row]:
    """A configuration's candidates over all its attempts, then split by what its tasks state."""
    for n, r in _configs(report):
        a = r.agreement
        if a is not None:
            yield Row(n, (n, "all"), a, key="agreement.")
            for said, figures in a.by_states.items():
                yield Row(n, (n, said), figures, key=f"agreement.by_states.{said}.")


def _tau_curve(report: Report) -> Iterator[Row]:
    for n, r in _configs(report):
        a = r.agreement
        if a is None:
            continue
        for said, figures in {"all": a, **a.by_states}.items():
            key = "agreement." if said == "all" else f"agreement.by_states.{said}."
            for i, p in enumerate(figures.tau_curve):
                yield Row(n, (n, said, p.tau), p, key=f"{key}tau_curve.{i}.")


def _corrections(report: Report) -> Iterator[Row]:
    for i, c in enumerate(report.corrections):
        yield Row(c.config, (c.config, c.task_id, c.attempt), c, key=f"corrections.{i}.")


def _diagnosed(report: Report) -> Iterator[Row]:
    for n, r in _configs(report):
        if r.diagnosis is not None:
            yield Row(n, (n,), r.diagnosis, key="diagnosis.")


def _attacks(report: Report) -> Iterator[Row]:
    for n, a in (report.attacks or {}).items():
        for name, row in a.by_attack.items():
            yield Row(n, (n, name), row, key=f"attacks.{n}.by_attack.{name}.")


def _defences(report: Report) -> Iterator[Row]:
    for n, a in (report.attacks or {}).items():
        yield Row(n, (n,), a, key=f"attacks.{n}.")


def _veto_yield(report: Report) -> Iterator[Row]:
    for i, y in enumerate(report.veto_yield):
        yield Row(y.config, (y.config,), y, key=f"veto_yield.{i}.")


def _accounting() -> tuple[Column, ...]:
    return (
        Column("exec", "executed"),
        Column("score", "scoreable"),
        Column("crash", "crash"),
        Column("answer", "answered"),
        Column("abstain", "abstained"),
        *(Column(lv, f"abstained_by_level.{lv}") for lv in ABSTAIN_LEVELS),
    )


#: A comparison's columns: its lifts and their paired tests.
_LIFTS = (
    Column("tasks", "tasks", size=True),
    Column("k", "k", size=True),
    Column("lift@1", "lift1", "points"),
    Column("p", "p1", "p"),
    Column("lift@k", "liftk", "points"),
    Column("p", "pk", "p"),
    Column("Diff", "diff", "points"),
    Column("p", "p_diff", "p"),
    Column("exact", "exact", "yesno"),
)
_MARGINAL = "attribution.marginal_cost.{by}."
_RATES = "attribution.{group}.{by}."

TABLES: tuple[Table, ...] = (
    Table(
        "Execution accounting (run {run})",
        "Every attempt ends in exactly one outcome; abstentions by the level they named.",
        ("config",),
        _accounting(),
        _per_config,
    ),
    Table(
        "Outcomes",
        "correct counts right answers and correct abstentions; coverage = answered / scoreable.",
        ("config",),
        (
            Column("correct", "correct"),
            Column("silent err", "silent_error"),
            Column("false abst", "false_abstention"),
            Column("coverage", "coverage"),
            Column("sel acc", "selective_accuracy"),
            Column("EM", "em"),
            Column("F1", "f1"),
        ),
        _per_config,
    ),
    Table(
        "Official metrics (HotpotQA, 2Wiki: means over the attempts, an abstention 0)",
        "As the datasets' own scripts score them (vreact report --predictions DIR writes their input):"
        " answer EM and F1 (2Wiki's without aliases, which ship only with its id-bearing release);"
        " support over paragraphs (sup F1, MuSiQue's); sp: the sentence-level support of every sentence"
        " of each cited paragraph (vreact cites paragraphs: a bound, its recall the most and its"
        " precision the least of any choice of sentences within them); joint, HotpotQA's. 2Wiki's"
        " evidence triples, and so its joint figures, are not predicted. A crashed attempt has no score"
        " (the scripts count it 0).",
        ("config",),
        (
            Column("ans EM", "family_metrics.em"),
            Column("ans F1", "family_metrics.f1"),
            Column("sup F1", "family_metrics.support_f1"),
            Column("sp EM", "family_metrics.sp_em"),
            Column("sp F1", "family_metrics.sp_f1"),
            Column("joint EM", "family_metrics.joint_em", "predicted"),
            Column("joint F1", "family_metrics.joint_f1", "predicted"),
        ),
        _of_family("official", _official),
        optional=True,
    ),
    Table(
        "Family metrics (means over the attempts its scorer scored)",
        "Each attempt is scored by its family's scorer when it ends; a metric's mean is over the "
        "attempts that scorer gave it for.",
        ("config", "metric"),
        (Column("mean", "family_metrics.{metric}"),),
        _of_family("metrics", _family_metrics),
        optional=True,
    ),
    Table(
        "Pass@1 and Pass@k (%, mean ± standard error over tasks; success = a correct outcome)",
        "k is the fewest attempts any task has.",
        ("config",),
        (
            Column("tasks", "tasks", size=True),
            Column("k", "k", size=True),
            Column("Pass@1", ("pass1", "pass1_se"), "pm"),
            Column("Pass@k", ("passk", "passk_se"), "pm"),
        ),
        _with_pass,
    ),
    Table(
        "Lift over the baseline (points; p: two-sided paired permutation test over tasks)",
        "Paired on the same tasks: a (config) against b (vs).",
        ("config", "vs"),
        _LIFTS,
        _comparisons,
        optional=True,
    ),
    Table(
        "Against the trivial baselines: Pass@1 over all tasks, and over the answerable alone",
        "Pass@1 counts a correct abstention on an unanswerable task as a success (MuSiQue-Full), so "
        "always abstaining scores the unanswerable share; on the answerable tasks alone an abstention "
        "fails. acc ans is exact match over the answerable tasks' scoreable attempts. always answer takes "
        "the plain configuration's answers and never abstains.",
        ("config",),
        (
            Column("tasks", "pass_.tasks", size=True),
            Column("Pass@1", "pass_.pass1"),
            Column("ans tasks", "answerable_tasks", size=True),
            Column("P@1 ans", "pass1_answerable"),
            Column("acc ans", "em"),
            Column("coverage", "coverage"),
            Column("silent err", "silent_error"),
        ),
        _baselines,
    ),
    Table(
        "Lift over always abstaining (points; p: two-sided paired permutation test over tasks)",
        "Each configuration against declining every task, on the same tasks and attempts.",
        ("config",),
        _LIFTS,
        _over_abstaining,
        optional=True,
    ),
    Table(
        "Support F1, answerability (positive = answerable), MuSiQue-Full pairs",
        "Group figures count complete pairs (an answerable and an unanswerable member) only.",
        ("config",),
        (
            Column("sup F1", "support_f1"),
            Column("ans P", "answerability.precision"),
            Column("ans R", "answerability.recall"),
            Column("ans F1", "answerability.f1"),
            Column("pairs", "pairs"),
            Column("grp ans F1", "group_answer_sufficiency_f1"),
            Column("grp sup F1", "group_support_sufficiency_f1"),
            Column("plan fb", "plan_fallbacks"),
        ),
        _of_family("support", _per_config),
        optional=True,
    ),
    Table(
        "Retrieval ceiling: gold paragraphs the executor was shown",
        "Of the answerable tasks' gold supporting paragraphs, the share an attempt's searches and "
        "reads showed the executor (ceiling), and the share of attempts shown every one (all gold); "
        "no answer can cite a paragraph it was never shown.",
        ("config",),
        (
            Column("ceiling", "retrieval_ceiling"),
            Column("all gold", "all_gold_retrieved"),
            Column("sup F1", "support_f1"),
        ),
        _of_family("support", _per_config),
        optional=True,
    ),
    Table(
        "Cost per scoreable attempt (means); money and retries over all attempts",
        "Transport retries are counted apart from the calls. USD counts the calls that have a price: "
        "with '>=' it is a lower bound, some calls had none (cost_usd_unpriced_calls).",
        ("config",),
        (
            Column("LLM calls", "llm_calls"),
            Column("exec steps", "exec_steps"),
            Column("prompt tok", "prompt_tokens"),
            Column("compl tok", "completion_tokens"),
            Column("USD", ("cost_usd", "cost_usd_unpriced_calls"), "usd"),
            Column("retries", "retries"),
        ),
        _per_config,
    ),
    Table(
        "Cost distribution per attempt, over scoreable attempts",
        "Percentiles interpolate linearly between closest ranks.",
        ("config", "figure"),
        (
            Column("mean", "mean"),
            Column("median", "median"),
            Column("P90", "p90"),
            Column("P95", "p95"),
        ),
        _distributions,
    ),
    Table(
        "USD per attempt, over all attempts",
        "Of the priced calls: with '>=' a lower bound, some calls had no price.",
        ("config",),
        (
            Column("mean", ("mean", "lower_bound"), "usd"),
            Column("median", ("median", "lower_bound"), "usd"),
            Column("P90", ("p90", "lower_bound"), "usd"),
            Column("P95", ("p95", "lower_bound"), "usd"),
        ),
        _usd_distributions,
        optional=True,
    ),
    Table(
        "Cost by level and role (all attempts)",
        "Each role's own model calls: the planner and the plan judge at L2, the executor and the R1 "
        "judge at L3, the critic (L3), the R2 judge (L2), the R3 judge and the context manager (L1). "
        "USD with '>=' is a lower bound: some calls had no price.",
        ("config", "level", "role"),
        (
            Column("LLM calls", "llm_calls"),
            Column("prompt tok", "prompt_tokens"),
            Column("compl tok", "completion_tokens"),
            Column("USD", ("cost_usd", "unpriced_calls"), "usd"),
        ),
        _by_role,
        optional=True,
    ),
    Table(
        "Cost by source: its own model calls, and the retries its rejections caused",
        "A rejection routed back makes a generator try again (a new try, plan or descent): every call "
        "of that try, its judges' included, is charged to the check that rejected (caused retries, "
        "apart from the transport retries of the cost table). Gates, guards and budgets make no "
        "calls of their own.",
        ("config", "source"),
        (
            Column("own calls", "own.llm_calls"),
            Column("own tok", "own.tokens"),
            Column("own USD", ("own.cost_usd", "own.unpriced_calls"), "usd"),
            Column("caused calls", "caused.llm_calls"),
            Column("caused tok", "caused.tokens"),
            Column("caused USD", ("caused.cost_usd", "caused.unpriced_calls"), "usd"),
        ),
        _by_source,
        optional=True,
    ),
    Table(
        "Caused retries by check: the calls of the tries each check's rejections caused",
        "Most first.",
        ("config", "source", "check"),
        (
            Column("calls", "llm_calls"),
            Column("prompt tok", "prompt_tokens"),
            Column("compl tok", "completion_tokens"),
            Column("USD", ("cost_usd", "unpriced_calls"), "usd"),
        ),
        _by_check,
        optional=True,
    ),
    Table(
        "Attribution: by source and level; model calls and tokens, total and per attempt",
        "Rejections, corrections and correction rate; each source's model cost (gates, guards and "
        "budgets are free). The critic and the context manager are sources of their own.",
        ("config", "by"),
        (
            Column("rej", _RATES + "rejections"),
            Column("corr", _RATES + "corrections"),
            Column("rate", _RATES + "correction_rate"),
            Column("calls", _MARGINAL + "llm_calls"),
            Column("p tok", _MARGINAL + "prompt_tokens"),
            Column("c tok", _MARGINAL + "completion_tokens"),
            Column("calls/a", _MARGINAL + "llm_calls_per_attempt"),
            Column("p tok/a", _MARGINAL + "prompt_tokens_per_attempt"),
            Column("c tok/a", _MARGINAL + "completion_tokens_per_attempt"),
        ),
        _attribution,
    ),
    Table(
        "Rejections checked by the scorer: right tries rejected, corrections it confirms",
        "The family's scorer runs on every try a verifier judged when the attempt ends (code: the "
        "hidden test, which no gate or judge reads). right rej: rejections of a try it found right "
        "(false rejections); confirmed: corrections whose rejected try it found wrong and whose "
        "accepted one right. format fail: executor replies no step could be parsed out of.",
        ("config", "source"),
        (
            Column("tries", "tries_scored", size=True),
            Column("rej", "rejections.{s}"),
            Column("right rej", "false_rejections.{s}"),
            Column("corr", "corrections.{s}"),
            Column("confirmed", "confirmed_corrections.{s}"),
            Column("format fail", "format_failures"),
        ),
        _scored_tries,
        optional=True,
    ),
    Table(
        "Judges that show their work: each rejection's claim as the free check found it",
        "A rejecting judge whose prompt shows its work names an input, what the artifact returns there "
        "and what it should; the check runs it. founded: it does so and something other than the judge "
        "corroborates it (acted on); refuted: the run says otherwise; unverified: nothing corroborates "
        "the value the judge expects; ignored: refuted or unverified and not acted on (unfounded: "
        "ignore). f, r, u right/wrong: the founded, refuted and unverified ones on tries the scorer found "
        "right or wrong.",
        ("config", "verifier"),
        (
            Column("founded", "founded"),
            Column("refuted", "unfounded"),
            Column("unverified", "unverified"),
            Column("ignored", "ignored"),
            Column("f right", "founded_right"),
            Column("f wrong", "founded_wrong"),
            Column("r right", "unfounded_right"),
            Column("r wrong", "unfounded_wrong"),
            Column("u right", "unverified_right"),
            Column("u wrong", "unverified_wrong"),
        ),
        _judge_claims,
        optional=True,
    ),
    Table(
        "Replies cut at their token allowance (the provider's length or max_tokens)",
        "A reply that stopped at its max_tokens is cut, whatever it parses as, and never acted on: the "
        "executor's stops its try (cause truncated: a verdict of the parses gate where the run verifies, "
        "else the abstention's cause), a judge's rejects, a planner's is no plan. Give the role more "
        "(calls.<role>.max_tokens; the code family's executor takes 768 where a file says none).",
        ("config", "role"),
        (Column("cut", "truncated.{role}"),),
        _truncated,
        optional=True,
    ),
    Table(
        "The run under each scorer: the same answers, judged right by each",
        "Each scorer its records hold (code: humaneval, HumanEval's hidden test; humanevalplus, "
        "HumanEval+'s inputs, compared as EvalPlus compares), the primary first: every other table is "
        "by the primary. Only what counts as right changes; the verdicts are the run's own. n: attempts "
        "scored; silent: wrong answers given; right rej: right tries a check rejected; confirmed: "
        "corrections from a wrong try to a right one.",
        ("config", "scorer"),
        (
            Column("n", "by_scorer.{s}.scored", size=True),
            Column("Pass@1", "by_scorer.{s}.pass1"),
            Column("sel acc", "by_scorer.{s}.selective_accuracy"),
            Column("silent", "by_scorer.{s}.silent_error"),
            Column("right rej", "by_scorer.{s}.right_rejected"),
            Column("confirmed", "by_scorer.{s}.confirmed_corrections"),
        ),
        _by_scorer,
        optional=True,
    ),
    Table(
        "Execution accounting by hop count",
        "The same accounting over the tasks of each hop count.",
        ("config", "hops"),
        _accounting(),
        _of_family("hops", _per_hop),
        optional=True,
    ),
    Table(
        "Quality by hop count",
        "",
        ("config", "hops"),
        (
            Column("correct", "correct"),
            Column("Pass@1", "pass_.pass1"),
            Column("EM", "em"),
            Column("F1", "f1"),
            Column("sup F1", "support_f1"),
            Column("ceiling", "retrieval_ceiling"),
            Column("ans F1", "answerability.f1"),
        ),
        _of_family("hops", _per_hop),
        optional=True,
    ),
    Table(
        "Loop guards and budgets: hints and rollbacks (events), stops (verdicts)",
        "Hints and rollbacks never write memory or count as rejections; a stop is a verdict, "
        "routed like an R1 reject.",
        ("config", "guard"),
        (
            Column("hints", "hints"),
            Column("rollbacks", "rollbacks"),
            Column("stops", "stops"),
            Column("stop causes", "causes"),
        ),
        _guard_fires,
        optional=True,
    ),
    Table(
        "Loop guards: fires, and the attempts a guard or budget stopped that still ended correct",
        "A stop ends one try; the attempt goes on with a new try while its budget lasts.",
        ("config",),
        (
            Column("hints", "hints"),
            Column("rollbacks", "rollbacks"),
            Column("stops", "stops"),
            Column("stopped att", "stopped_attempts"),
            Column("then correct", "stopped_then_correct"),
        ),
        _guarded,
        optional=True,
    ),
    Table(
        "DeReAct: critic rejections per proposed action, context-manager vetoes per proposed final",
        "Every proposal the critic decided on, and every finish or abstain the context manager decided on.",
        ("config",),
        (
            Column("proposals", "proposals"),
            Column("critic rej", "critic_rejections"),
            Column("rate", "critic_rejection_rate"),
            Column("finals", "finals"),
            Column("vetoes", "vetoes"),
            Column("rate", "veto_rate"),
        ),
        _dereact,
        optional=True,
    ),
    Table(
        "Veto yield over (task, attempt) pairs matched with react",
        "On the pairs with a veto: this configuration's success and react's (yield = the "
        "difference); on the pairs it failed, react's success (Pass@1 parity).",
        ("config",),
        (
            Column("pairs", "pairs", size=True),
            Column("vetoed", "vetoed_pairs"),
            Column("share", "vetoed_share"),
            Column("success", "success_vetoed"),
            Column("react", "react_success_vetoed"),
            Column("yield", "yield_"),
            Column("failed", "failed_pairs"),
            Column("react on failed", "react_success_on_failed"),
        ),
        _veto_yield,
        optional=True,
    ),
    Table(
        "Candidates: k per attempt, and what was chosen among them",
        "Each attempt made k candidates (fresh tries) and answered by agreement among them or by "
        "the first every gate passed (best of k); by what each task states of its own checks.",
        ("config", "by"),
        (
            Column("attempts", "attempts", size=True),
            Column("answered", "answered"),
            Column("correct", "correct"),
            Column("wrong over right", "wrong_over_right"),
            Column("groups/att", "groups_per_attempt"),
            Column("disputed", "disputed"),
            Column("calls/att", "llm_calls_per_attempt"),
            Column("tokens/att", "tokens_per_attempt"),
            Column("tau area", "tau_area"),
            Column("none chosen", "causes", style="counts"),
            Column("candidates", "candidates", style="counts"),
        ),
        _candidates,
        optional=True,
    ),
    Table(
        "Agreement's tau curve: coverage and risk as the share that must agree varies",
        "Read from the recorded groups, no model called: at each tau, the attempts whose largest "
        "group (decided, two or more) holds at least tau of its k candidates are answered.",
        ("config", "by", "tau"),
        (Column("coverage", "coverage"), Column("risk", "risk")),
        _tau_curve,
        optional=True,
    ),
    Table(
        "Diagnosis (vreact diagnose): State and final-answer validation, grounding (%)",
        "An independent judge, blind to the gold answer and the outcome, rated sampled trajectories; "
        "grounded = evidence complete and constraints satisfied.",
        ("config",),
        (
            Column("rated", "rated", size=True),
            Column("State GOOD", "state_good"),
            Column("POOR", "state_poor"),
            Column("valid GOOD", "validation_good"),
            Column("POOR", "validation_poor"),
            Column("grounded", "grounded"),
            Column("correct", "grounded_correct"),
            Column("incorrect", "grounded_incorrect"),
            Column("guessing", "admitted_guessing"),
        ),
        _diagnosed,
        optional=True,
    ),
    Table(
        "Pass@1 (%) with its standard error over attempts and over tasks",
        "Over attempts: per attempt index, the mean success over tasks; the s.e. of those means "
        "(seed 000's across the runs). Over tasks: as in the Pass@1 table.",
        ("config",),
        (
            Column("k", "k", size=True),
            Column("over attempts", ("pass1_attempts", "pass1_se_attempts"), "pm"),
            Column("over tasks", ("pass1", "pass1_se"), "pm"),
        ),
        _over_attempts,
        optional=True,
    ),
    Table(
        "Attacks through the data: accuracy on the clean tasks and under attack, attack success",
        "Per attack, its attacked copies (n attempts) against the clean tasks they copy (clean n). "
        "attack succ: the share of attacked attempts whose accepted answer is what the attacker "
        "wanted; added cited: the share whose answer cites a paragraph the attack added.",
        ("config", "attack"),
        (
            Column("n", "n", size=True),
            Column("clean n", "n_clean", size=True),
            Column("clean acc", "clean_accuracy"),
            Column("acc attacked", "attacked_accuracy"),
            Column("attack succ", "attack_success"),
            Column("added cited", "added_cited"),
        ),
        _attacks,
        optional=True,
    ),
    Table(
        "Attacked attempts: what became of each, and the check that first stopped it",
        "Each attacked attempt is the first of: escaped (the attacker's goal met), blocked (abstained), "
        "recovered (right after a rejection), unaffected (right without one), wrong, crashed. stopped by "
        "counts the blocked and recovered attempts by their first rejection.",
        ("config", "attack"),
        (
            *(Column(f, f) for f in ("blocked", "recovered", "escaped", "unaffected", "wrong", "crashed")),
            Column("stopped by", "stopped_by", "counts"),
        ),
        _attacks,
        optional=True,
    ),
    Table(
        "Defences on clean tasks: abstentions, and rejections by each defence check",
        "On the clean tasks the attacked copies were made of: what the defences cost where there is "
        "no attack.",
        ("config",),
        (
            Column("clean n", "n_clean", size=True),
            Column("clean abst", "clean_abstentions"),
            *(Column(check, f"clean_rejections.{check}") for check in DEFENCE_CHECKS),
        ),
        _defences,
        optional=True,
    ),
)

#: Every correction of a run: ``vreact report --corrections`` prints it, the page shows it.
CORRECTIONS = Table(
    "Corrections: a rejected artifact, then another accepted in its place (run {run})",
    "The check credited is the last rejection before the accepted artifact; right is the accepted "
    "answer against gold, for a final answer (an intermediate one has no gold in the records); rej "
    "right is the rejected try by the family's scorer, where it scores tries (code: the hidden test).",
    ("config", "task", "#"),
    (
        Column("component", "component"),
        Column("level", "level"),
        Column("source", "source"),
        Column("check", "check"),
        Column("cause", "cause"),
        Column("rejected", "rejected"),
        Column("accepted", "accepted"),
        Column("right", "right", "right"),
        Column("rej right", "rejected_right", "right"),
    ),
    _corrections,
    optional=True,
)

# --- the folder's runs, above the tables -------------------------------------------------------


def runs_heading(runs: list[RunSummary]) -> str:
    """What the list of a folder's runs is headed with (how to see the others, when it has some)."""
    if len(runs) == 1:
        return "1 run in this folder:"
    return f"{len(runs)} runs in this folder (--run ID for one, --run all for each):"


def run_lines(runs: list[RunSummary], shown: set[int | None]) -> list[str]:
    """One line a run of the folder: its id, when it started, its status, its finished
    attempts and its configurations; in a folder of several runs, those whose tables follow
    (``shown``) say so."""
    out = []
    for run in runs:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(run.started)) if run.started else "-"
        names = ", ".join(run.configs) or "no configuration yet"
        mark = " (shown)" if len(runs) > 1 and run.id in shown else ""
        done = f"{run.attempts} attempt{'' if run.attempts == 1 else 's'}"
        out.append(f"run {run.id} · {when} · {run.status or '-'} · {done} · {names}{mark}")
    return out


# --- terminal and Markdown ----------------------------------------------------------------------


@dataclass(frozen=True)
class TableData:
    """One table of the report as text cells, before it is drawn (rich on a terminal, or Markdown);
    its first ``labels`` columns name a row."""

    title: str
    columns: tuple[str, ...]
    rows: list[tuple[Any, ...]]
    labels: int = 1


def fmt(x: Any) -> str:
    return "-" if x is None else f"{x:.2f}" if isinstance(x, float) else str(x)


def styled(value: Any, style: str) -> Any:
    """A value as a terminal shows it in a column of ``style``."""
    if style == "pm":
        mean, se = value
        return "-" if mean is None else f"{100 * mean:.1f} ± {100 * (se or 0):.1f}"
    if style == "points":
        return f"{100 * value:+.1f}"
    if style == "p":
        return "-" if value is None else f"{value:.3f}"
    if style == "yesno":
        return "yes" if value else "no"
    if style == "predicted":  # a figure of what the run may not predict (2Wiki's joint)
        return "not predicted" if value is None else value
    if style == "right":  # by gold, or not known
        return "-" if value is None else "yes" if value else "no"
    if style == "counts":
        return ", ".join(f"{k} ×{n}" for k, n in sorted(value.items(), key=lambda kn: -kn[1])) or "-"
    if style == "usd":
        usd, unpriced = value
        return "-" if usd is None else f"{'>= ' if unpriced else ''}${usd:.4f}"
    return value


#: Styles of what is said of a figure, not a figure: a test's p-value, whether it was exact.
_ABOUT_FIGURES = ("p", "yesno")


def _zero(value: Any) -> bool:
    """Whether a cell's value says nothing happened: none, zero, empty, or made of such."""
    if value is None or isinstance(value, bool):
        return value is None or not value
    if isinstance(value, int | float):
        return value == 0
    if isinstance(value, tuple | list):
        return all(_zero(v) for v in value)
    if isinstance(value, dict):
        return all(_zero(v) for v in value.values())
    if isinstance(value, str):
        return not value.strip()
    return False


def all_zero(report: Report, table: Table) -> bool:
    """Whether every figure of ``table`` in ``report`` is zero or none (its sizes, p-values and
    flags aside; a table without rows too): a table that says only that nothing happened."""
    return all(
        _zero(cell(row, c)[0])
        for row in table.rows(report)
        for c in table.columns
        if not c.size and c.style not in _ABOUT_FIGURES
    )


def zero_tables(report: Report, which: tuple[Table, ...] = TABLES) -> list[Table]:
    """The tables of ``which`` that :func:`tables` shows but whose figures are all zero."""
    return [t for t in which if (not t.optional or any(True for _ in t.rows(report))) and all_zero(report, t)]


def tables(report: Report, which: tuple[Table, ...] = TABLES) -> list[TableData]:
    """The report's tables (``which``; default: every table but the corrections): accounting
    (VReAct Table 4), outcomes, Pass@k and lifts with paired permutation tests (DeReAct Tables 1,
    11-18), the trivial baselines, support and answerability, cost means (VReAct Table 5) and
    distributions (DeReAct Tables 13, 20), attribution (VReAct Table 6), the accounting and
    quality by hop count, and the attacks through the data with their defences' cost."""
    out = []
    for t in which:
        rows = [
            (*row.labels, *(styled(cell(row, c)[0], c.style) for c in t.columns)) for row in t.rows(report)
        ]
        if rows or not t.optional:
            headers = (*t.labels, *(c.header for c in t.columns))
            out.append(TableData(t.title.format(run=report.run), headers, rows, len(t.labels)))
    return out


def render(report: Report, which: tuple[Table, ...] = TABLES) -> list[Fitted]:
    """The report's tables for a terminal, each laid out at the width it is printed at (whole,
    in parts beside its labels, or a block per row: ``vreact.terminal.Fitted``), no name cut."""
    return [
        Fitted(
            t.title,
            t.columns,
            [[fmt(x) for x in row] for row in t.rows],
            t.labels,
            frozenset(c for c in t.columns if c not in LEFT),
        )
        for t in tables(report, which)
    ]


def sandbox_line(report: Report) -> str | None:
    """Where the run's model-written code ran, for a family that runs some (every report says
    it; None for a run without such code)."""
    if report.sandbox is None:
        return None
    if report.sandbox == "none":
        return "sandbox: none: this run's model-written code ran WITHOUT isolation (the experiment said so)"
    return (
        f"sandbox: {report.sandbox}: model-written code ran isolated (no network, read-only system, limits)"
    )


def reading_lines(reading: Reading | None) -> list[str]:
    """What the family's gates read from the run's tasks, then each finding of the dataset audit
    on them, indented (empty: the family says nothing)."""
    if reading is None:
        return []
    return [*reading.lines, *(f"  {f.task}: {f.read}: {f.gold}" for f in reading.findings)]


def provenance_lines(report: Report) -> list[str]:
    """What made the run's attempts, for the report's header: the state of the code (vreact's
    version, the commit and whether it was clean, Python), the libraries, the models and the
    data files; when more than one state made them, or a dirty tree, it says so first, with
    which attempts each made. Empty for a report without a run."""
    p = report.provenance
    if p is None:
        return []
    if not p.states:
        return ["provenance: not recorded (the run was made before vreact recorded it)", *_rescored(p)]
    lines = []
    if p.several or p.not_recorded:
        count = len(p.states) + (1 if p.not_recorded else 0)
        lines.append(
            f"provenance: this run's attempts were made by {count} states of the code (a resume under"
            " another commit or tree):"
        )
        if p.not_recorded:
            lines.append(f"  {p.not_recorded} attempt(s): not recorded (made before vreact recorded it)")
        lines += [f"  attempts {id_ranges(s.attempts) or 'none yet'}: {_code(s)}" for s in p.states]
    else:
        lines.append(f"provenance: {_code(p.states[0])}")
    if p.dirty:
        lines.append(
            "  dirty: a tracked file differed from its commit, so the commit alone does not say what ran"
        )
    latest = p.states[-1]
    if latest.libraries:
        lines.append("  libraries: " + ", ".join(f"{k} {v}" for k, v in latest.libraries.items()))
    for name, m in latest.models.items():
        lines.append(f"  model {name}: " + ", ".join(_model_identity(m)))
    for path, digest in latest.data.items():
        lines.append(f"  data {path}: sha256 {digest}")
    return lines + _rescored(p)


def _rescored(p: Provenance) -> list[str]:
    """A line for each scorer added after the run, and the files it read."""
    lines = []
    for r in p.rescored:
        lines.append(f"rescored by {r.scorer} (sandbox {r.sandbox or '?'}): {_code(r.state)}")
        lines += [f"  data {path}: sha256 {digest}" for path, digest in r.state.data.items()]
    return lines


def _code(state: ProvenanceState) -> str:
    return f"{provenance.summary(state.model_dump())}, Python {state.python or '?'}"


def _model_identity(m: dict[str, str]) -> list[str]:
    out = [m.get("endpoint", "?").partition("#")[0]]
    if "sha256" in m:
        out.append(f"sha256 {m['sha256']}")
    if "declared_sha256" in m:
        out.append(f"declared sha256 {m['declared_sha256']}")
    if "served" in m:
        out.append(f"served as {m['served']}")
    return out


def id_ranges(ids: list[int]) -> str:
    """Sorted ids as ranges: ``1-4, 7, 9-12``."""
    parts: list[str] = []
    start = prev = None
    for i in sorted(ids):
        if start is None:
            start = prev = i
        elif i == prev + 1:  # type: ignore[operator]
            prev = i
        else:
            parts.append(f"{start}" if start == prev else f"{start}-{prev}")
            start = prev = i
    if start is not None:
        parts.append(f"{start}" if start == prev else f"{start}-{prev}")
    return ", ".join(parts)


def render_markdown(report: Report, which: tuple[Table, ...] = TABLES) -> str:
    """The report as Markdown tables (for a paper draft, a pull request or a notebook)."""
    parts = [f"# vreact report, run {report.run}"]
    line = sandbox_line(report)
    if line:
        parts += ["", f"**{line}**" if report.sandbox == "none" else line, ""]
    for said in (reading_lines(report.reading), provenance_lines(report)):
        if said:
            parts += ["", *(f"- {x.strip()}" if x.startswith("  ") else x for x in said), ""]
    for t in tables(report, which):
        parts.append(f"## {t.title}")
        parts.append("| " + " | ".join(t.columns) + " |")
        parts.append("|" + "|".join("---" if c in LEFT else "--:" for c in t.columns) + "|")
        parts.extend("| " + " | ".join(fmt(x).replace("|", "\\|") for x in row) + " |" for row in t.rows)
        parts.append("")
    return "\n".join(parts)
