"""``vreact view``: the run as one offline HTML file, checked in headless Chromium.

A real run folder is written by the project's own runner (``run_attempt``) with scripted mock
models on real MuSiQue records: retries after gate, judge and guard rejections, abstentions at
L1, L2 and by the agent, a crash and an answer with markup in it. The page is then loaded by
the ``chromium`` binary: no console errors, one ``.verdict`` element per verdict row, summary
figures equal to ``compute()``, model strings escaped, screenshots in build/screenshots/. The
attempt pages are packed once in the file and put in the document on demand, one at a time.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import assert_records_whole
from tests.helpers import abstain, by_role, finish, judged, plan, read, search, solve
from tests.processes import run
from vreact.config import Configuration
from vreact.experiment import Job, ResolvedExperiment, run_attempt
from vreact.model import MockModel
from vreact.records import DB_NAME, Store
from vreact.report import compute
from vreact.report.html import attempt_pages, fmt, write_html
from vreact.report.html.charts import outcome_parts
from vreact.spec import builtin_configs

REPO = Path(__file__).resolve().parents[2]
SHOTS = REPO / "build" / "screenshots"
CONFIGS = {**builtin_configs(), "VGJ": Configuration(name="VGJ", guards=True, gates=True, judges=True)}
XSS = "<script>document.title='pwned'</script><img src=x onerror=alert(1)>"

# 2hop__269805_135710: "What is the country where Nissedal is located named after?"
# hop 1 -> Norway (paragraph 10), hop 2 -> north (paragraph 6); the scripts of test_whole_v
NISSEDAL = "2hop__269805_135710"
GOOD_PLAN = plan(
    ("s1", "Which country is Nissedal in?", [], "place"), ("s2", "What is #1 named after?", ["s1"], "any")
)
HOP1 = [search("Nissedal country"), read("10"), finish("Norway", ["10"])]
HOP2 = [read("6"), finish("north", ["6"])]
WHOLE = [read("10"), read("6"), finish("north", ["10", "6"])]  # both hops in one try
BAD_HOP1 = [search("Nissedal"), read("10"), finish("Tveitsund", ["10"])]


def scenarios(tasks: list[Any]) -> list[tuple[str, Any, MockModel, int, str]]:
    """(configuration, task, scripted model, attempt index, label) for every attempt of the run."""
    nissedal = next(t for t in tasks if t.id == NISSEDAL)
    answerable = [t for t in tasks if t.answerable and t.id != NISSEDAL]
    unanswerable = [t for t in tasks if not t.answerable]
    when = next(t for t in answerable if t.question.lower().startswith("when"))
    pid = str(when.question_decomposition[-1].paragraph_support_idx)
    word = next(w for w in when.paragraphs[int(pid)].paragraph_text.split() if w.isalpha() and len(w) > 5)
    one_step = plan(("s1", when.question, [], "date"))
    out: list[tuple[str, Any, MockModel, int, str]] = [
        # L2: an R2 reject sends the controller back to the planner; the second plan passes
        (
            "VPG",
            nissedal,
            by_role(planner=[GOOD_PLAN, GOOD_PLAN], executor=BAD_HOP1 + HOP2 + HOP1 + HOP2),
            0,
            "retry",
        ),
        # L2 budget spent: abstain naming L2
        ("VPG", nissedal, by_role(planner=[GOOD_PLAN] * 3, executor=(BAD_HOP1 + HOP2) * 3), 1, "abstain_l2"),
        # L1 budget spent: abstain naming L1
        (
            "VPG",
            when,
            by_role(planner=[one_step] * 3, executor=[read(pid), finish(word, [pid])] * 3),
            0,
            "abstain_l1",
        ),
        # a judge reject at R1, then a new try accepted
        (
            "VGJ",
            nissedal,
            by_role(
                executor=[read("10"), read("6"), finish("the north", ["10", "6"]), *WHOLE],
                judge=[judged("reject", reason="thin <b>evidence</b>"), judged(), judged()],
            ),
            0,
            "judge_retry",
        ),
        ("VPGJ", nissedal, by_role(planner=[GOOD_PLAN], executor=HOP1 + HOP2, judge=[judged()] * 5), 0, "ok"),
        # a repetition guard stops the executor, then it solves the task
        ("VG", nissedal, MockModel([search("Nissedal")] * 6 + WHOLE * 2), 0, "guard"),
        # the agent declines after searching
        ("VG", unanswerable[0], MockModel([search("anything"), abstain("no paragraph says")]), 0, "declined"),
        # markup in a model's answer must be shown, never run
        ("N", nissedal, MockModel([read("6"), finish(XSS, ["6"])]), 0, "xss"),
        # an empty script: the attempt crashes
        ("N", answerable[0], MockModel([]), 0, "crash"),
    ]
    for i, t in enumerate(answerable[1:5]):
        out.append(("N", t, MockModel(solve(t)), 0, f"n{i}"))
        out.append(("VG", t, MockModel(solve(t) if i % 2 else solve(t, answer="Paris") * 3), 0, f"vg{i}"))
    for t in unanswerable[1:3]:
        out.append(("N", t, MockModel(solve(t, answer="guessed")), 0, "silent"))
    return out


def build_run(out_dir: Path, tasks: list[Any], spec: Any, verifiers: Any, roles: Any) -> dict[str, int]:
    """Write a run into ``out_dir/vreact.db``; return the attempt id of each scenario label."""
    store = Store(out_dir / DB_NAME)
    plan_ = scenarios(tasks)
    resolved = {
        "configs": [CONFIGS[c].model_dump() for c in dict.fromkeys(p[0] for p in plan_)],
        "spec": spec.model_dump(),
        "verifiers": verifiers.model_dump(),
        "roles": roles.model_dump(),
        "models": {"default": "mock/scripted"},
        "dataset": "musique_full_train_80",
    }
    run_id = store.new_run(resolved, "mock/scripted", "musique_full_train_80")
    store.add_tasks([t.record() for t in {p[1].id: p[1] for p in plan_}.values()])
    ids = {}
    for config, task, model, index, label in plan_:
        experiment = ResolvedExperiment([task], [CONFIGS[config]], {"default": model}, spec, verifiers, roles)
        run_attempt(experiment, Job(CONFIGS[config], task, index, seed=index), store, run_id)
        ids[label] = next(store.query("select max(id) as id from attempts"))["id"]
    store.finish_run(run_id)
    return ids


# --- headless Chromium --------------------------------------------------------------------------

CHROMIUM = next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)
#: A console message as Chromium logs it to stderr with --enable-logging=stderr (any level):
#: [pid:tid:date:INFO:CONSOLE:12] "Uncaught Error: boom", source: file:///x.html (12)
CONSOLE = re.compile(r":CONSOLE(?:\(\d+\))?(?::\d+)?\]\s*(.*)$")


def chromium() -> str:
    if CHROMIUM is None:
        pytest.fail(
            "chromium is not installed: `make install-test` (or `make test`) installs it with "
            "apt-get install chromium; the page must be checked in a real browser",
            pytrace=False,
        )
    return CHROMIUM


def browse(url: str, profile: Path, *extra: str) -> tuple[str, list[str]]:
    """Load ``url`` in headless Chromium; return (stdout, console messages). With --dump-dom the
    stdout is the DOM after scripts ran; timers get 2 s of virtual time first. A page takes about
    2 s; headless Chromium now and then hangs at start on a loaded 2-core machine (seen twice in
    CI-like runs, on a trivial page too), so a load that times out is tried once more, in a fresh
    profile: the page is still checked, never skipped."""
    for attempt in (1, 2):
        command = [
            chromium(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--no-first-run",
            f"--user-data-dir={profile if attempt == 1 else profile.with_name(profile.name + '-again')}",
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=2000",
            *extra,
            url,
        ]
        try:
            done = run(command, capture_output=True, text=True, timeout=60)  # dies with pytest
            break
        except subprocess.TimeoutExpired:
            if attempt == 2:
                raise
    messages = [m.group(1) for line in done.stderr.splitlines() if (m := CONSOLE.search(line))]
    return done.stdout, messages


class Node:
    def __init__(self, tag: str, attrs: dict[str, str], parent: Node | None) -> None:
        self.tag, self.attrs, self.parent = tag, attrs, parent
        self.children: list[Node | str] = []

    @property
    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def all(self, pred: Any = None) -> list[Node]:
        out = []
        for c in self.children:
            if isinstance(c, Node):
                if pred is None or pred(c):
                    out.append(c)
                out += c.all(pred)
        return out

    def select(self, cls: str) -> list[Node]:
        return self.all(lambda n: cls in n.classes)

    def ancestor(self, pred: Any) -> Node | None:
        n = self.parent
        while n is not None and not pred(n):
            n = n.parent
        return n


VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class _Parser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = self.cur = Node("#document", {}, None)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: v or "" for k, v in attrs}, self.cur)
        self.cur.children.append(node)
        if tag not in VOID:
            self.cur = node

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.cur.children.append(Node(tag, {k: v or "" for k, v in attrs}, self.cur))

    def handle_endtag(self, tag: str) -> None:
        n: Node | None = self.cur
        while n is not None and n.tag != tag:
            n = n.parent
        if n is not None and n.parent is not None:
            self.cur = n.parent

    def handle_data(self, data: str) -> None:
        self.cur.children.append(data)


def dom(html: str) -> Node:
    p = _Parser()
    p.feed(html)
    return p.root


def by_id(root: Node, ident: str) -> Node:
    [node] = root.all(lambda n: n.attrs.get("id") == ident)
    return node


# --- fixtures -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, full_tasks, spec, verifiers, roles) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("run")
    ids = build_run(out, full_tasks, spec, verifiers, roles)
    assert_records_whole(out)
    page = write_html(out)
    cache: dict[str, tuple[Node, list[str], str]] = {}
    profile = tmp_path_factory.mktemp("chromium-profile")

    def load(fragment: str = "") -> tuple[Node, list[str], str]:
        if fragment not in cache:
            text, messages = browse(page.as_uri() + fragment, profile, "--dump-dom")
            cache[fragment] = (dom(text), messages, text)
        return cache[fragment]

    return {
        "dir": out,
        "page": page,
        "ids": ids,
        "load": load,
        "profile": profile,
        "store": Store(out / DB_NAME),
    }


# --- the tests ----------------------------------------------------------------------------------


def test_the_console_error_detector_flags_a_throwing_page(tmp_path):
    control = tmp_path / "control.html"
    control.write_text(
        "<!DOCTYPE html><html><body><p>control</p><script>"
        "setTimeout(function () { null.late; }, 100);"
        'throw new Error("deliberate control error");'
        "</script></body></html>"
    )
    _, messages = browse(control.as_uri(), tmp_path / "profile", "--dump-dom")
    assert any("Uncaught Error: deliberate control error" in m for m in messages), messages
    # an exception thrown later, from a timer, is caught too (virtual time runs the timers)
    assert any("Uncaught TypeError" in m for m in messages), messages


def test_the_page_is_self_contained_and_loads_without_console_errors(site):
    html = site["page"].read_text()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html), "external resource"
    assert "@import" not in html and "url(" not in html
    assert site["page"].stat().st_size < 2_000_000
    for fragment in ("", f"#attempt-{site['ids']['retry']}", f"#attempt-{site['ids']['declined']}"):
        root, messages, _ = site["load"](fragment)
        assert messages == [], f"console output on {fragment or 'the summary'}: {messages}"
        if fragment:
            [section] = root.select("attempt")  # its page only, unpacked on demand
            assert section.attrs["id"] == fragment[1:] and section.select("verdict"), "no attempt page"
        else:
            assert root.select("arow") and not root.select("attempt"), "the summary did not load"


def _db_verdicts(store: Store, attempt_id: int) -> list[tuple[int, str, str, str]]:
    rows = store.query("select * from verdicts where attempt_id = ? order by seq", [attempt_id])
    return [(v["seq"], v["source"], v["decision"], v["level"]) for v in rows]


@pytest.mark.parametrize("label", ["retry", "abstain_l2", "judge_retry", "guard", "abstain_l1", "declined"])
def test_each_verdict_is_one_element_at_its_level(site, label):
    aid = site["ids"][label]
    root, _, _ = site["load"](f"#attempt-{aid}")
    body = root.all(lambda n: n.tag == "body")[0]
    assert body.attrs["data-view"] == f"attempt-{aid}", "the router did not open the attempt"
    section = by_id(root, f"attempt-{aid}")
    elements = section.select("verdict")
    rows = _db_verdicts(site["store"], aid)
    assert len(elements) == len(rows) > 0
    # drawn by level (the V), so compare in seq order: one element per row, same fields
    assert (
        sorted(
            (
                int(e.attrs["data-seq"]),
                e.attrs["data-source"],
                e.attrs["data-decision"],
                e.attrs["data-level"],
            )
            for e in elements
        )
        == rows
    )
    for e in elements:
        assert e.attrs["data-attempt"] == str(aid)
        row = e.ancestor(lambda n: "vrow" in n.classes)
        assert row is not None and row.attrs["data-level"] == e.attrs["data-level"]
        assert ("reject" in e.text()) == (e.attrs["data-decision"] == "reject")
        assert e.attrs["data-source"] in e.text()
    row = next(store_row for store_row in site["store"].query("select * from attempts where id = ?", [aid]))
    named = [n.attrs["data-level"] for n in section.select("named")]
    assert named == ([row["abstain_level"]] if row["abstain_level"] in ("L1", "L2", "L3") else [])
    if label in ("retry", "judge_retry", "guard"):
        assert any(r[2] == "reject" for r in rows)
        assert any("retry" in t.text() for t in section.select("try-h"))
    if label == "declined":
        [base] = section.select("vbase")
        assert "declined" in base.text()


def test_every_verdict_of_the_run_is_drawn_once(site):
    pages = attempt_pages(site["page"].read_text())
    attempts = [r["id"] for r in site["store"].query("select id from attempts order by id")]
    assert sorted(pages) == attempts
    drawn = 0
    for aid, html in pages.items():
        [section] = dom(html).select("attempt")
        elements = section.select("verdict")
        assert {e.attrs["data-attempt"] for e in elements} <= {str(aid)}
        assert len(elements) == len(_db_verdicts(site["store"], aid))
        drawn += len(elements)
    n = next(site["store"].query("select count(*) as n from verdicts"))["n"]
    assert drawn == n > 50


def test_attempt_pages_open_on_demand_one_at_a_time(site, tmp_path):
    """In one browser session: open an attempt, follow its "next" link, go back to the list;
    each time the document holds the one page asked for (the router runs on hashchange)."""
    first, second = site["ids"]["retry"], site["ids"]["abstain_l2"]
    root, _, _ = site["load"](f"#attempt-{first}")
    [nav] = by_id(root, f"attempt-{first}").select("nav")
    assert f"#attempt-{second}" in [a.attrs.get("href") for a in nav.all(lambda n: n.tag == "a")]
    steps = (f"#attempt-{second}", "#attempts")
    for n, target in enumerate(steps, 1):
        page = tmp_path / f"walk{n}.html"
        hops = "".join(
            f"setTimeout(function(){{location.hash={h!r};}},{200 * (i + 1)});"
            for i, h in enumerate(steps[:n])
        )
        page.write_text(site["page"].read_text().replace("</body>", f"<script>{hops}</script></body>"))
        text, messages = browse(page.as_uri() + f"#attempt-{first}", site["profile"], "--dump-dom")
        assert messages == []
        root = dom(text)
        [body] = root.all(lambda n: n.tag == "body")
        if target.startswith("#attempt-"):
            assert body.attrs["data-view"] == target[1:]
            assert [s.attrs["id"] for s in root.select("attempt")] == [target[1:]]
            [head] = root.all(lambda n: n.tag == "head")
            [title] = head.all(lambda n: n.tag == "title")
            assert title.text().startswith(f"Attempt {second} ")
        else:
            assert body.attrs["data-view"] == "summary"


def _dig(r: Any, key: str) -> Any:
    """The figure at a dotted path of the JSON report (None past a missing part)."""
    for part in key.split("."):
        if isinstance(r, list) and part.isdigit():
            r = r[int(part)] if int(part) < len(r) else None
        elif isinstance(r, dict):
            r = r.get(part)
        else:
            return None
    return r


def test_summary_figures_match_the_report(site):
    typed = compute(site["store"])
    report = typed.model_dump(mode="json")
    root, _, _ = site["load"]("")
    summary = by_id(root, "summary")
    cells = summary.all(lambda n: n.tag == "td" and "data-key" in n.attrs)
    assert len(cells) > 100
    seen = set()
    for td in cells:
        key, name = td.attrs["data-key"], td.attrs["data-config"]
        if key.startswith(("comparisons.", "veto_yield.", "over_abstaining.", "corrections.")):
            top, i, field = key.split(".", 2)
            want = report[top][int(i)][field]
        elif key.startswith("references."):  # the reference rows: always abstain, always answer
            _, reference, field = key.split(".", 2)
            want = _dig(report["references"][reference], field)
        else:
            want = _dig(report["configs"][name], key)
        assert json.loads(td.attrs["data-value"]) == want, (name, key)
        assert td.text() == fmt(want, key), (name, key)
        seen.add((name, key))
    for name in report["configs"]:
        for key in ("executed", "crash", "answered", "abstained", "silent_error", "coverage", "llm_calls"):
            assert (name, key) in seen
        for lv in ("L1", "L2", "L3", "declined", "cap"):
            assert (name, f"abstained_by_level.{lv}") in seen
    # the outcome bars: four parts that sum to the attempts executed
    for name, r in report["configs"].items():
        segs = summary.all(lambda n, name=name: n.tag == "rect" and n.attrs.get("data-config") == name)
        parts = {s.attrs["data-part"]: int(s.attrs["data-count"]) for s in segs}
        assert parts == {k: v for k, v in outcome_parts(typed.configs[name]).items() if v}
        assert sum(parts.values()) == r["executed"]
    assert len(summary.select("pt")) >= len(report["configs"])


def test_model_strings_are_escaped(site):
    html = site["page"].read_text()
    assert XSS not in html and "<img src=x" not in html
    assert "&lt;script&gt;document.title=&#x27;pwned&#x27;&lt;/script&gt;" in html
    aid = site["ids"]["xss"]
    root, messages, _ = site["load"](f"#attempt-{aid}")
    assert messages == []
    [head] = root.all(lambda n: n.tag == "head")
    [title] = head.all(lambda n: n.tag == "title")
    assert "pwned" not in title.text() and title.text().startswith(f"Attempt {aid}")
    assert not root.all(lambda n: n.tag == "img")
    section = by_id(root, f"attempt-{aid}")
    assert [n.text() for n in section.select("answer")][-1] == XSS
    root, messages, _ = site["load"](f"#attempt-{site['ids']['judge_retry']}")
    assert messages == []
    judge = by_id(root, f"attempt-{site['ids']['judge_retry']}")
    assert "thin <b>evidence</b>" in judge.text() and not judge.all(
        lambda n: n.tag == "b" and n.text() == "evidence"
    )


def test_screenshots(site):
    SHOTS.mkdir(parents=True, exist_ok=True)
    for name, fragment, size in (
        ("summary", "", "1280,1600"),
        ("attempt", f"#attempt-{site['ids']['retry']}", "1280,1600"),
        ("attempt-judge", f"#attempt-{site['ids']['judge_retry']}", "1280,1200"),
    ):
        shot = SHOTS / f"{name}.png"
        shot.unlink(missing_ok=True)
        _, messages = browse(
            site["page"].as_uri() + fragment, site["profile"], f"--screenshot={shot}", f"--window-size={size}"
        )
        assert messages == []
        assert shot.is_file() and shot.stat().st_size > 10_000, shot
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_view_command(site, tmp_path):
    from click.testing import CliRunner

    from vreact.cli import cli

    result = CliRunner().invoke(cli, ["view", str(site["dir"]), "--out", str(tmp_path / "x.html")])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == str(tmp_path / "x.html")
    assert (tmp_path / "x.html").read_text().startswith("<!DOCTYPE html>")
    result = CliRunner().invoke(cli, ["view", str(tmp_path / "nowhere")])
    assert result.exit_code == 2 and "no vreact.db here" in result.output and "Traceback" not in result.output


def test_attempts_are_listed_by_configuration_then_attempt_index(site):
    root, _, _ = site["load"]("")
    order = list(compute(site["store"]).configs)
    rows = [(r.attrs["data-config"], r) for r in root.select("arow")]
    assert len(rows) == next(site["store"].query("select count(*) as n from attempts"))["n"]
    keys = [order.index(config) for config, _ in rows]
    assert keys == sorted(keys)
