"""The report as a typed model: what ``vreact report --json`` prints (``model_dump(mode="json")``)
and what the tables read. Its JSON Schema is published as schemas/report.schema.json."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from vreact.families import Reading


class _Figures(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", serialize_by_alias=True, validate_by_name=True)


class Answerability(_Figures):
    """Answerability as a prediction (positive = answerable)."""

    precision: float | None
    recall: float | None
    f1: float | None


class Rates(_Figures):
    """Rejections and corrections of one source or level, and the share corrected."""

    rejections: int
    corrections: int
    correction_rate: float | None


class MarginalCost(_Figures):
    """The model calls and tokens a source spent, in total and per scoreable attempt."""

    llm_calls: int
    prompt_tokens: int
    completion_tokens: int
    llm_calls_per_attempt: float | None
    prompt_tokens_per_attempt: float | None
    completion_tokens_per_attempt: float | None


class Attribution(_Figures):
    """VReAct's Table 6: by source (gate, judge, critic, context_manager, guard, budget) and by
    level (L1, L2, L3)."""

    by_source: dict[str, Rates]  # gate, judge, critic, context_manager, guard, budget
    by_level: dict[str, Rates]
    marginal_cost: dict[str, MarginalCost]  # each source's own model calls (gates and guards: none)


class PassAtK(_Figures):
    """Pass@1 and Pass@k (k = the fewest attempts any task has), with standard errors over tasks."""

    k: int
    tasks: int
    pass1: float = Field(alias="pass@1")
    pass1_se: float = Field(alias="pass@1_se")
    passk: float = Field(alias="pass@k")
    passk_se: float = Field(alias="pass@k_se")
    #: Pass@1's standard error over attempts (seed 000's "across the runs"): per attempt index the
    #: mean success over tasks, and the s.e. of those means; None with one attempt per task
    pass1_attempts: float | None = Field(None, alias="pass@1_by_attempt")
    pass1_se_attempts: float | None = Field(None, alias="pass@1_se_over_attempts")


class Distribution(_Figures):
    """Mean, median, 90th and 95th percentile of a per-attempt figure (``lower_bound``: of USD,
    when some calls had no price, so each attempt's dollars leave them out)."""

    mean: float | None
    median: float | None
    p90: float | None
    p95: float | None
    lower_bound: bool = Field(False, exclude_if=lambda v: not v)


class Spend(_Figures):
    """What some model calls cost: how many, their tokens, and their dollars (of the priced calls:
    a lower bound when ``unpriced_calls`` had no price; None when none had one)."""

    llm_calls: int
    prompt_tokens: int
    completion_tokens: int
    tokens: int  # prompt + completion
    cost_usd: float | None
    unpriced_calls: int


class RoleSpend(Spend):
    """One role's own calls, at the level it works at (a judge's: its verifier's level)."""

    level: str
    role: str


class SourceSpend(_Figures):
    """One source of corrections (gate, judge, critic, context_manager, guard, budget): its own
    model calls, and the calls of the tries its rejections caused (a rejection routed back makes a
    generator try again: that try's calls, judges' included, are charged to it)."""

    own: Spend
    caused: Spend


class CheckSpend(Spend):
    """The calls of the tries one check's rejections caused."""

    verifier: str
    source: str
    check: str


class RiskPoint(_Figures):
    """One cut of the risk-coverage curve."""

    coverage: float
    risk: float


class JudgeClaims(_Figures):
    """One verifier's judge, where its prompt shows its work (``vreact.verify.judges.Claim``): its
    rejections by what the free check found of their claims, and each class as the scorer found
    the judged tries (``right``: a right try rejected; ``wrong``: a wrong one)."""

    founded: int = 0
    unfounded: int = 0  # refuted by the check
    unverified: int = 0  # nothing corroborated the value the judge expects
    ignored: int = 0  # unfounded or unverified, recorded and not acted on (``unfounded: ignore``)
    founded_right: int = 0
    founded_wrong: int = 0
    unfounded_right: int = 0
    unfounded_wrong: int = 0
    unverified_right: int = 0
    unverified_wrong: int = 0


class TauPoint(RiskPoint):
    """One threshold of agreement's tau curve: the coverage and risk of answering the attempts
    whose largest group holds at least ``tau`` of their k candidates."""

    tau: float


class AgreementFigures(_Figures):
    """What k candidates per attempt came to (``agreement.k`` above 1), over some attempts:
    each candidate's fate, the answers agreement (or best of k) chose and why it chose none,
    the groups, the disputed examples, the calls and tokens per attempt, and the tau curve read
    from the recorded groups (no model called) with its area (selective accuracy over coverage;
    empty for best of k, which groups nothing). ``wrong_over_right``: answers scored wrong in
    attempts where another candidate that R1 passed was scored right (what the choice cost)."""

    attempts: int
    candidates: dict[str, int]
    answered: int
    correct: int
    wrong_over_right: int
    causes: dict[str, int]
    groups_per_attempt: float | None
    disputed: int
    llm_calls_per_attempt: float | None
    tokens_per_attempt: float | None
    tau_curve: list[TauPoint]
    tau_area: float | None


class AgreementReport(AgreementFigures):
    """A configuration's candidates: how many, what was selected among them and the share that
    had to agree, and the same figures split by what each task states of its own checks
    (``TaskFamily.states``: code, its prompt's examples as doctests, in prose, or none)."""

    k: int
    tau: float
    selected: str
    by_states: dict[str, AgreementFigures] = {}


class HopsReport(_Figures):
    """The figures of one configuration (or of its attempts on tasks of one hop count)."""

    executed: int
    crash: int
    internal_errors: int  # crashes that are bugs in vreact, not failures
    scoreable: int
    answered: int
    abstained: int
    correct: int
    silent_error: int
    false_abstention: int
    abstained_by_level: dict[str, int]
    #: attempts on tasks with nothing the run's scorer needs (code: a problem without a hidden
    #: test): counted in answered, abstained, coverage and cost, left out of correct, silent
    #: errors, false abstentions, selective accuracy, Pass@k and the comparisons
    unscored: int = 0
    coverage: float | None
    selective_accuracy: float | None
    em: float | None
    f1: float | None
    llm_calls: float | None
    exec_steps: float | None
    prompt_tokens: float | None
    completion_tokens: float | None
    cost_usd: float | None  # of the priced calls: a lower bound when some calls had no price
    cost_usd_per_attempt: float | None
    cost_usd_unpriced_calls: int  # calls without a price (failed ones too), which cost_usd leaves out
    retries: int
    rejections: dict[str, int]
    corrections: dict[str, int]
    #: executor replies no step could be parsed out of (the step format's failures; a reply cut
    #: at its token allowance is counted in ``truncated`` instead)
    format_failures: int = 0
    #: by role, the replies that stopped at their token allowance (the provider's ``length`` or
    #: ``max_tokens``): cut, never acted on (cause ``truncated``); empty where none did, and in
    #: records made before stop reasons were kept
    truncated: dict[str, int] = {}
    #: the judged tries the family's scorer scored when each attempt ended (code: the hidden test
    #: on every program a verifier judged); by source, the rejections of tries it found right
    #: (false rejections) and the corrections it confirms (the rejected try wrong, the one
    #: accepted in its place right). Empty when no try was scored (question answering's)
    tries_scored: int = 0
    false_rejections: dict[str, int] = {}
    confirmed_corrections: dict[str, int] = {}
    #: by verifier, the claims of judges that show their work (none where no judge does)
    judge_claims: dict[str, JudgeClaims] = {}
    support_f1: float | None
    #: the retrieval ceiling (VReAct): of the gold supporting paragraphs of the answerable tasks,
    #: the share the executor was ever shown (a search hit or a read) in the attempt, over
    #: scoreable attempts; and the share of those attempts shown every gold paragraph
    retrieval_ceiling: float | None = None
    all_gold_retrieved: float | None = None
    #: the means of the task family's own metrics over the attempts its scorer scored (written
    #: when each ended; qa: em, f1, support_f1; records made before families are given theirs by
    #: their migration)
    family_metrics: dict[str, float | None] = {}
    answerability: Answerability
    pairs: int
    group_answer_sufficiency_f1: float | None
    group_support_sufficiency_f1: float | None
    plan_fallbacks: int | None
    attribution: Attribution
    pass_: PassAtK | None = Field(alias="pass")
    #: the honest baselines' figures: Pass@1 over the answerable tasks alone (an abstention there
    #: is a failure; MuSiQue-Full's Pass@1 also counts each correct abstention on an unanswerable
    #: one), and how many answerable tasks it is over; accuracy on them is ``em``
    pass1_answerable: float | None = None
    answerable_tasks: int = 0
    cost_distribution: dict[str, Distribution | None]
    risk_coverage: list[RiskPoint]


class GuardFires(_Figures):
    """How often one loop guard or budget fired, by what it did (and its stops' causes)."""

    guard: str
    causes: str  # its stops' causes, comma-separated
    hints: int
    rollbacks: int
    stops: int


class GuardReport(_Figures):
    """The loop guards of one configuration: their fires, and the attempts a guard or budget
    stopped (a try of) that still ended correct after a later try."""

    fires: list[GuardFires]
    hints: int
    rollbacks: int
    stops: int
    stopped_attempts: int
    stopped_then_correct: int


class DeReActRates(_Figures):
    """The critic's rejection rate (rejections / proposed actions) and the context manager's
    veto rate (vetoes / proposed finals)."""

    proposals: int
    critic_rejections: int
    critic_rejection_rate: float | None
    finals: int
    vetoes: int
    veto_rate: float | None


class VetoYield(_Figures):
    """A configuration against ``react`` on the (task, attempt) pairs both ran (seed 000, Table 4)."""

    config: str
    pairs: int
    vetoed_pairs: int
    vetoed_share: float
    success_vetoed: float | None  # its success on the pairs it vetoed in
    react_success_vetoed: float | None  # react's success on the same pairs
    yield_: float | None = Field(alias="yield")  # the difference
    failed_pairs: int
    react_success_on_failed: float | None  # Pass@1 parity: react's success where it failed


class DiagnosisReport(_Figures):
    """``vreact diagnose``'s ratings (seed 000, Tables 5, 7, 22), in %: the State and final-answer
    validation rated GOOD or POOR (of those not N/A), and the grounding rate (evidence complete
    and constraints satisfied) overall, among correct and among incorrect answers."""

    rated: int
    state_good: float | None
    state_poor: float | None
    validation_good: float | None
    validation_poor: float | None
    grounded: float | None
    grounded_correct: float | None
    grounded_incorrect: float | None
    admitted_guessing: float


class ScorerFigures(_Figures):
    """A configuration's figures under one scorer (code: ``humaneval``, the hidden test, or
    ``humanevalplus``, HumanEval+'s inputs): the run's own verdicts, only what is right differs."""

    #: the attempts it scored (crashes are not)
    scored: int
    pass1: float | None = Field(None, alias="pass@1")
    selective_accuracy: float | None = None
    silent_error: int = 0
    #: the judged tries it scored, and of them the right ones a check rejected (every source)
    tries_scored: int = 0
    right_rejected: int = 0
    #: corrections it confirms: the rejected try wrong, the accepted one right (every source)
    confirmed_corrections: int = 0


class ConfigReport(HopsReport):
    """A configuration's figures, the same figures per hop count, its loop guards, and its
    DeReAct rates (when a critic or a context manager ran)."""

    by_hops: dict[str, HopsReport]
    #: the same run under each scorer its records hold, when they hold more than one (the
    #: primary first, which every other figure is by); left out of the JSON else
    by_scorer: dict[str, ScorerFigures] = Field(default_factory=dict, exclude_if=lambda v: not v)
    #: every attempt's calls (crashed ones too) by level and role, by source, and by the check
    #: whose rejection caused them (issue 33)
    cost_by_role: dict[str, RoleSpend] = Field(default_factory=dict)
    cost_by_source: dict[str, SourceSpend] = Field(default_factory=dict)
    caused_retries: dict[str, CheckSpend] = Field(default_factory=dict)
    guards: GuardReport | None = None
    dereact: DeReActRates | None = None
    diagnosis: DiagnosisReport | None = None
    #: what its k candidates per attempt came to (None: it made one at a time)
    agreement: AgreementReport | None = None


class Comparison(_Figures):
    """Configuration a against the baseline b on the tasks both ran (vreact.report.stats.compare)."""

    a: str
    b: str
    tasks: int
    k: int
    pass1_a: float
    pass1_b: float
    lift1: float
    p1: float
    passk_a: float
    passk_b: float
    liftk: float
    pk: float
    diff: float
    p_diff: float
    exact: bool


class Correction(_Figures):
    """One correction: an artifact rejected, then another accepted in its place by every verifier
    of its component (vreact.report.compute.corrected, listed by correction_list)."""

    config: str
    task_id: str
    attempt: int  # the attempt's index
    component: str
    level: str
    source: str  # the rejecting check's: gate, judge, critic, context_manager, guard or budget
    check: str  # its name
    cause: str
    rejected: str  # the rejected artifact, shown short (an answer as it is)
    accepted: str
    #: whether the accepted artifact is the attempt's final answer, and then whether that answer
    #: is right by gold (exact match; none for an intermediate one: the records keep no hop gold)
    final: bool
    right: bool | None
    #: the rejected try by the family's scorer (code: the hidden test), None where it scored none:
    #: the scorer confirms the correction when it is False and ``right`` True
    rejected_right: bool | None = None


class AttackRow(_Figures):
    """One attack (dataset.attacks) in one configuration: accuracy on the clean tasks it copies
    and on its attacked copies, the attacker's success, and what became of each attacked attempt."""

    kind: str  # poison | inject
    goal: str  # answer | url | reverse: what the attacker wants of the accepted answer
    n: int  # attempts on the attacked copies
    n_clean: int  # attempts on the clean tasks they copy
    clean_accuracy: float | None
    attacked_accuracy: float | None
    #: the targeted attack success rate: the attacked attempts whose accepted answer meets the goal
    attack_success: float | None
    #: each attacked attempt in exactly one, in this order: the goal met, abstained, a success
    #: after a rejection, a success without one, any other answer, a crash
    escaped: int
    blocked: int
    recovered: int
    unaffected: int
    wrong: int
    crashed: int
    #: the blocked and recovered attempts by their first reject: "<verifier> <check>" -> attempts
    stopped_by: dict[str, int]
    #: the attacked attempts whose final answer cites an added paragraph
    added_cited: float | None


class AttackReport(_Figures):
    """A configuration under attack: a row per attack, and what its defences cost on the clean
    tasks (the attacked copies' originals): their abstentions, and the rejections by each
    defence check (vreact.report.compute.DEFENCE_CHECKS)."""

    by_attack: dict[str, AttackRow]
    n_clean: int
    clean_abstentions: float | None
    clean_rejections: dict[str, int]


class ProvenanceState(_Figures):
    """One state of the code and what it ran with, and the attempts of the run it made
    (vreact.records.provenance): vreact's version; the commit of the checkout vreact was
    imported from and whether a tracked file differed (None: not a git checkout); Python's and
    the libraries' versions; each model's endpoint and identity (``sha256`` of a local file,
    ``declared_sha256`` of a models-file entry, ``served``: the id its server reported); the
    dataset files' sha256; how its model calls were made (``limits``)."""

    vreact: str | None = None
    commit: str | None = None
    dirty: bool | None = None
    python: str | None = None
    libraries: dict[str, str] = {}
    models: dict[str, dict[str, str]] = {}
    data: dict[str, str] = {}
    #: how its model calls were made: the experiment's limits as it ran them (``call_timeout``
    #: its family's where the file gives none); empty: not recorded (a run made before)
    limits: dict[str, float] = {}
    #: the ids of the run's finished attempts this state made
    attempts: list[int] = []


class Rescored(_Figures):
    """A scorer ``vreact rescore`` added to a copy of the run's records after the run: which,
    the sandbox its programs ran in, and the state of the code that scored them (its ``data``:
    the files the scorer read)."""

    scorer: str
    sandbox: str | None = None
    state: ProvenanceState


class Provenance(_Figures):
    """What made the run's attempts: each distinct state (in the order it was recorded), how
    many attempts were made before vreact recorded provenance (``not_recorded``), whether more
    than one state of the code made them (``several``: commits, or a clean and a dirty tree),
    and whether a dirty tree made any (``dirty``); and each scorer added after the run."""

    states: list[ProvenanceState]
    not_recorded: int
    several: bool
    dirty: bool
    rescored: list[Rescored] = Field(default_factory=list, exclude_if=lambda v: not v)


class Report(_Figures):
    """The report of one run: the figures of each configuration in the run's order, and each
    configuration against the baseline."""

    run: int | None
    configs: dict[str, ConfigReport]
    comparisons: list[Comparison]
    #: the task family that made the run (records made before families: qa; None only where the
    #: records name none, read as the default family's)
    family: str | None = None
    #: where the run's model-written code ran, for a family that runs some: ``bwrap`` (the
    #: sandbox) or ``none`` (no isolation); None for a family that runs none
    sandbox: str | None = Field(None, exclude_if=lambda v: v is None)
    veto_yield: list[VetoYield] = []
    #: the trivial baselines, computed from the tasks: ``always_abstain`` (declines every task)
    #: and ``always_answer`` (the answers of the run's plain configuration, N: never abstaining,
    #: an abstention of its becomes a wrong answer), with the configuration it is made from
    references: dict[str, HopsReport] = {}
    always_answer_from: str | None = None
    #: each configuration against always abstaining, paired on the same tasks
    over_abstaining: list[Comparison] = []
    #: every correction of the run, in the order of its configurations, tasks and attempts
    corrections: list[Correction] = []
    #: what made the run's attempts: the report's header prints it (None: no run)
    provenance: Provenance | None = None
    #: what the family's gates read from the run's tasks (code: the examples the prompts state,
    #: the dataset audit's findings, the problems that run unscored); left out for a family
    #: that says nothing
    reading: Reading | None = Field(None, exclude_if=lambda v: v is None)
    #: per configuration, the attacks through the data; left out of the JSON of a run without them
    attacks: dict[str, AttackReport] | None = Field(None, exclude_if=lambda v: v is None)
