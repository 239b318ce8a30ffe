"""Bad input, fuzzed: every input is either accepted (and then survives the whole way,
into a real SQLite store and back) or refused with ONE line of a storbench error.

Never another exception, never a hang (each example runs under a SIGALRM guard).
Seeds are the real fio outputs in tests/data and the built-in suite files; the
mutations are what damaged files look like: truncated, lines reordered or cut,
garbage before and after, huge numbers, keys renamed.  Budget: about a minute
for the whole file.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
import re
import signal
import tempfile
from importlib import resources
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from storbench.commands.common import overrides_from
from storbench.errors import FioParseError, StorbenchError, SuiteError, TargetError, UsageError
from storbench.fio import parse_output
from storbench.jobs.jobfile import build_job
from storbench.model import Overrides, Target
from storbench.record import ResultRecord
from storbench.store import Store
from storbench.suites import builtin_catalog, empty_catalog, fio_option_table, parse_suite_text
from storbench.units import fio_duration, fio_size, is_fio_native_size, parse_duration, parse_size

from conftest import DATA, Cli

FUZZ = settings(deadline=None, suppress_health_check=list(HealthCheck), database=None)


def fuzz(max_examples: int) -> settings:
    """``max_examples`` for the ~1 minute budget; ``STORBENCH_FUZZ_SCALE=20`` digs deeper."""
    return settings(FUZZ, max_examples=max_examples * int(os.environ.get("STORBENCH_FUZZ_SCALE", "1")))


class Hang(BaseException):
    """An example ran past its time limit (BaseException: no parser may swallow it)."""


@contextlib.contextmanager
def time_limit(seconds: float = 5.0):
    def alarm(signum, frame):
        raise Hang(f"took more than {seconds} s")

    old = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def one_line(exc: BaseException) -> None:
    text = str(exc)
    assert text and "\n" not in text and "\r" not in text, repr(text)


# --------------------------------------------------------------------------- mutations


_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
_JSON_KEY = re.compile(r'"([^"\n\\]{1,40})"\s*:')
_WORD = re.compile(r"[A-Za-z_][A-Za-z_]{1,20}")
HUGE = ["nan", "inf", "-nan", "1e400", "-1e400", "1" + "0" * 30, "9" * 400, "-1", "-0", "0.0000000001", "18446744073709551616",
        "NaN", "Infinity", "-Infinity", "1.7976931348623157e308", "4.9e-324", "0x10", "1_000"]
GARBAGE = [
    "fio: pid=1234, err=5/file:io_u.c:1845, func=io_u error, error=Input/output error\n",
    "Jobs: 1 (f=1): [r(1)][50.0%][r=10.0MiB/s][r=2560 IOPS][eta 00m:01s]\r",
    "{", "}", "[", "]", '"jobs": [', "\x00", "\ufeff", "\u2028", "\r\n", ";;;;", "3;fio-3.33;x;0;0;",
    'x: (groupid=0, jobs=1): err= 0: pid=1: Mon Nov 30 12:00:00 2026\n', '"\\ud800"', "\\", "\t",
]


def _cut(draw, text: str) -> str:
    i = draw(st.integers(0, len(text)))
    j = draw(st.integers(i, min(len(text), i + 400)))
    return text[:i] + text[j:]


def _truncate(draw, text: str) -> str:
    return text[: draw(st.integers(0, len(text)))]


def _reorder(draw, text: str) -> str:
    lines = text.splitlines(keepends=True)
    if len(lines) < 2:
        return text
    i = draw(st.integers(0, len(lines) - 2))
    j = draw(st.integers(i + 1, min(len(lines), i + 12)))
    window = draw(st.permutations(lines[i:j]))
    return "".join(lines[:i] + list(window) + lines[j:])


def _delete_lines(draw, text: str) -> str:
    lines = text.splitlines(keepends=True)
    if not lines:
        return text
    i = draw(st.integers(0, len(lines) - 1))
    j = draw(st.integers(i + 1, min(len(lines), i + 40)))
    return "".join(lines[:i] + lines[j:])


def _duplicate_line(draw, text: str) -> str:
    lines = text.splitlines(keepends=True)
    if not lines:
        return text
    i = draw(st.integers(0, len(lines) - 1))
    return "".join(lines[: i + 1] + [lines[i]] + lines[i + 1 :])


_junk_text = st.text(st.characters(exclude_categories=("Cs",)), max_size=60)


def _garbage_around(draw, text: str) -> str:
    before = draw(st.one_of(st.sampled_from(GARBAGE), _junk_text, st.just("")))
    after = draw(st.one_of(st.sampled_from(GARBAGE), _junk_text, st.just("")))
    return before + text + after


def _insert_garbage(draw, text: str) -> str:
    i = draw(st.integers(0, len(text)))
    return text[:i] + draw(st.one_of(st.sampled_from(GARBAGE), _junk_text)) + text[i:]


def _huge_number(draw, text: str) -> str:
    found = list(_NUMBER.finditer(text))
    if not found:
        return text
    m = draw(st.sampled_from(found))
    return text[: m.start()] + draw(st.sampled_from(HUGE)) + text[m.end() :]


def _rename_key(draw, text: str) -> str:
    found = list(_JSON_KEY.finditer(text)) or list(_WORD.finditer(text))
    if not found:
        return text
    m = draw(st.sampled_from(found))
    start, end = (m.start(1), m.end(1)) if m.re is _JSON_KEY else (m.start(), m.end())
    old = text[start:end]
    new = draw(st.sampled_from([old.upper(), old + "_x", old[:-1], "jobs", "read", "write", "client_stats",
                                "\\ud800", "\\u0000", "fio version", "clat_ns", "percentile", ""]))
    return text[:start] + new + text[end:]


MUTATIONS = [_cut, _truncate, _reorder, _delete_lines, _duplicate_line, _garbage_around, _insert_garbage,
             _huge_number, _huge_number, _rename_key, _rename_key]


@st.composite
def mutated(draw, seeds: list[str]) -> str:
    text = draw(st.sampled_from(seeds))
    for _ in range(draw(st.integers(1, 3))):
        text = draw(st.sampled_from(MUTATIONS))(draw, text)
    return text


def _seed_files(*dirs: str) -> list[Path]:
    files = []
    for d in dirs:
        for p in sorted((DATA / d).rglob("*")):
            if p.is_file() and p.suffix in (".json", ".stdout", ".txt") and p.name not in ("README.md",):
                files.append(p)
    return files


def _texts(files: list[Path]) -> list[str]:
    return [p.read_bytes().decode("utf-8", errors="replace") for p in files]


JSON_SEEDS = _texts(_seed_files("fio-json"))
TEXT_SEEDS = _texts([p for p in _seed_files("fio-text") if p.suffix == ".txt" and p.name != "SOURCES.md"])
TERSE_SEEDS = _texts(_seed_files("fio-terse"))


# --------------------------------------------------------------------------- fio output -> store


@pytest.fixture
def store(tmp_path: Path):
    with Store.open(f"sqlite:///{tmp_path / 'fuzz.sqlite'}") as s:
        yield s


def _parse_then_store(store: Store, text: str) -> None:
    """Refused with one line, or stored and read back equal."""
    try:
        with time_limit(5):
            result = parse_output(text)
    except FioParseError as exc:
        one_line(exc)
        return
    run = store.create_run("fuzz", "import")
    name = result.jobs[0].name if result.jobs else "fuzz"
    record = ResultRecord(run_id=run, workload=name, target=None, fio=result, raw_output=text, label="fuzz",
                          source="/fuzz", options=dict(result.jobs[0].options) if result.jobs else {},
                          created_at="2024-01-01T00:00:00Z")
    with time_limit(5):
        rid = store.add_result(record)
        [back] = store.results(run)
    expected = dataclasses.replace(record, result_id=rid)
    assert back == expected or repr(back) == repr(expected)  # repr: NaN (fio's "stdev=nan") is equal to itself


def test_fio_seeds_themselves_parse_and_round_trip(store) -> None:
    """The unmutated seeds: every one is fio output, so every one must be accepted or refused cleanly."""
    assert len(JSON_SEEDS) > 30 and len(TEXT_SEEDS) > 15 and len(TERSE_SEEDS) > 5
    for text in JSON_SEEDS + TEXT_SEEDS + TERSE_SEEDS:
        _parse_then_store(store, text)


@fuzz(250)
@given(text=mutated(JSON_SEEDS))
def test_fuzzed_fio_json_parses_and_round_trips_or_is_refused(store, text: str) -> None:
    _parse_then_store(store, text)


@fuzz(200)
@given(text=mutated(TEXT_SEEDS))
def test_fuzzed_fio_text_parses_and_round_trips_or_is_refused(store, text: str) -> None:
    _parse_then_store(store, text)


@fuzz(200)
@given(text=mutated(TERSE_SEEDS))
def test_fuzzed_fio_terse_parses_and_round_trips_or_is_refused(store, text: str) -> None:
    _parse_then_store(store, text)


@fuzz(40)
@given(data=st.one_of(mutated(JSON_SEEDS + TEXT_SEEDS + TERSE_SEEDS).map(lambda t: t.encode("utf-8", "replace")),
                      st.binary(max_size=300)))
def test_import_of_fuzzed_files_is_exit_0_or_2_with_one_line(tmp_path: Path, data: bytes) -> None:
    """``storbench import FILE``: imported (and then showable as JSON) or one error line, exit 2."""
    with tempfile.TemporaryDirectory(dir=tmp_path) as work:
        cli = Cli(Path(work))
        path = Path(work) / "fio-output.txt"
        path.write_bytes(data)
        with time_limit(20):
            res = cli("import", str(path))
        assert "Traceback" not in res.err and "internal error" not in res.err, res.err
        if res.code == 0:
            # what import says on success: how many outputs it found, and what it skipped or could not read
            said = res.err.splitlines()
            assert all(re.match(r"^fio-output\.txt: (\d+ fio outputs? -> run \d+|lines? [\d-]+ .*skipped: |line \d+ \(in the output at line \d+\) not read: |\d+ summary fragments? )", ln)
                       for ln in said), res.err  # fmt: skip
            found = int(said[0].split()[1]) if said else 1
            with time_limit(20):
                shown = cli("show", "last", "--json")
                exported = cli("export", "last", "--format", "json")
                listed = cli("export", "last", "--format", "csv")
            assert shown.code == exported.code == listed.code == 0, shown.err + exported.err + listed.err
            assert len(json.loads(shown.out)) == len(json.loads(exported.out)) == found
        else:
            assert res.code == 2, res.err
            assert res.err.count("\n") == 1 and res.err.startswith("storbench: error: "), res.err


def test_import_of_text_with_nan_and_huge_values_then_show_json(tmp_path: Path) -> None:
    """fio's classic text does print ``stdev=nan``; the JSON views print it as null, never crash."""
    seed = next(t for t in TEXT_SEEDS if re.search(r"clat \(usec\):.*stdev=\s*[0-9.]+", t) and '"jobs"' not in t)
    text = re.sub(r"(clat \(usec\):.*?stdev=)\s*[0-9.]+", r"\1nan", seed, count=1)
    path = tmp_path / "nan.txt"
    path.write_text(text)
    cli = Cli(tmp_path)
    assert cli("import", str(path)).code == 0
    # a latency of 400 digits is no latency: refused in one line, nothing more stored
    huge = tmp_path / "huge.txt"
    huge.write_text(re.sub(r"(clat \(usec\): min=)\s*[0-9]+", r"\g<1>" + "9" * 400, text, count=1))
    res = cli("import", str(huge))
    assert res.code == 2 and "clat min is inf, not a finite number" in res.err, res.err
    for args in (("show", "last", "--json"), ("export", "last", "--format", "json")):
        res = cli(*args)
        assert res.code == 0, res.err
        assert "NaN" not in res.out and "Infinity" not in res.out
        json.loads(res.out)


# --------------------------------------------------------------------------- sizes and durations


SIZE_EXAMPLES = ["16G", "1.5GiB", "4k", "4KiB", "512MB", "0", "1", ".5k", "1.5", "0.3k", "16 g", " 8m ", "1p",
                 "99999999999999999999p", "1e3", "-4k", "4kk", "k", "", " ", "4 KiB", "1.0000000001g", "16G\n"]
DURATION_EXAMPLES = ["30s", "2m", "30", "500ms", "1.5s", "0", "0s", "0.0001", "0.0004s", "1us", "1h", "1d",
                     "9" * 400, "1e3", "-1", "2 m", "2mins", "", "soon", "1.5m", "0.5ms", "10usec", "1.0000001s"]
sizes = st.one_of(
    st.sampled_from(SIZE_EXAMPLES),
    st.from_regex(r"\A\s?-?[0-9]{0,25}(\.[0-9]{0,6})?\s?[kKmMgGtTpPxX]?[iI]?[bB]?\s?\Z"),
    _junk_text,
)
durations = st.one_of(
    st.sampled_from(DURATION_EXAMPLES),
    st.from_regex(r"\A\s?-?[0-9]{0,400}(\.[0-9]{0,8})?\s?(us|usec|ms|msec|s|sec|m|min|h|hour|d|day|x)?\s?\Z"),
    _junk_text,
)


@fuzz(400)
@given(size=st.one_of(st.none(), sizes), runtime=st.one_of(st.none(), durations))
def test_cli_sizes_and_durations_accepted_exactly_or_refused(size, runtime) -> None:
    try:
        with time_limit(2):
            ov = overrides_from(size, runtime)
    except UsageError as exc:
        one_line(exc)
        return
    if size is not None:
        assert is_fio_native_size(ov.size) and parse_size(ov.size) == parse_size(size) > 0, (size, ov.size)
        assert fio_size(ov.size) == ov.size
    if runtime is not None:
        seconds = parse_duration(runtime)
        fio_seconds = parse_duration(ov.runtime)
        assert fio_seconds > 0, f"--runtime {runtime!r} became {ov.runtime!r}: fio reads 0 as 'no limit'"
        assert math.isfinite(fio_seconds) and abs(fio_seconds - seconds) <= 0.0005 + 1e-9 * seconds
        assert fio_duration(ov.runtime)


@fuzz(40)
@given(size=sizes, runtime=durations)
def test_cli_run_dry_run_with_fuzzed_size_and_runtime(tmp_path: Path, size: str, runtime: str) -> None:
    assume("\x00" not in size + runtime)  # argv cannot carry NUL
    with tempfile.TemporaryDirectory(dir=tmp_path) as work:
        cli = Cli(Path(work))
        with time_limit(20):
            res = cli("run", "--workload", "rnd4k-q1t1-read", "--target", work, "--size", size, "--runtime", runtime,
                      "--dry-run")
        assert "Traceback" not in res.err and "internal error" not in res.err, res.err
        if res.code == 0:
            assert "[rnd4k-q1t1-read]\n" in res.out
        else:
            assert res.code == 2 and res.err.count("\n") == 1 and res.err.startswith("storbench: error: "), res.err


# --------------------------------------------------------------------------- suite files

OPTION_NAMES = sorted(fio_option_table().options)
INJECTION = ["\n", "\r", "[", "]", "=", ";", "#", "$", "${HOME}", "$ncpus", "\n[evil]\nfilename=/etc/passwd",
             "\x00", "\t", " ", "\\", '"', "'", "%", ":", ","]
names = st.one_of(
    st.from_regex(r"\A[a-z0-9][a-z0-9._-]{0,20}\Z"),
    st.sampled_from(["global", "quick", "rnd4k-q1t1-read", "a" * 65, "UPPER", "with space", "x]", "[x", "é"]),
    _junk_text.filter(bool),
)
scalar_text = st.one_of(
    st.sampled_from(["4k", "16G", "1.5GiB", "randread", "libaio", "auto", "1", "0", "30s", "50%", "true", "exec",
                     "1:4", "4k-64k", "4k,8k", "$ncpus", "0x10", "-1", "1e3"]),
    st.lists(st.one_of(st.sampled_from(INJECTION), st.sampled_from(["4k", "read", "1", "x"])), max_size=5).map("".join),
    _junk_text,
)
values = st.recursive(
    st.one_of(scalar_text, st.integers(-(2**70), 2**70), st.floats(allow_nan=True, allow_infinity=True), st.booleans()),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(["a", "rw"]), inner, max_size=2)),
    max_leaves=4,
)
option_keys = st.one_of(st.sampled_from(OPTION_NAMES), st.sampled_from(["filename", "exec_prerun", "iodeph", "RW",
                                                                         "rw ", "a=b", "x;y"]), names)


def toml_key(k: str) -> str:
    return k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else toml_str(k)


def toml_str(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


def toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf") if math.isinf(v) else repr(v)
    if isinstance(v, str):
        return toml_str(v)
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    return "{ " + ", ".join(f"{toml_key(k)} = {toml_value(x)}" for k, x in v.items()) + " }"


@st.composite
def suite_documents(draw) -> str:
    out = []
    workload_names = draw(st.lists(names, max_size=3, unique=True))
    for name in workload_names:
        out.append(f"[workload.{toml_key(name)}]")
        if draw(st.booleans()):
            out.append(f"description = {toml_value(draw(st.one_of(scalar_text, values)))}")
        if draw(st.integers(0, 4)) == 0:
            out.append(f"headline = {toml_value(draw(st.one_of(st.sampled_from(['iops', 'bw', 'lat', 'IOPS']), values)))}")
        if draw(st.integers(0, 9)):
            fio = draw(st.dictionaries(option_keys, st.one_of(scalar_text, values), max_size=6))
            out.append(f"fio = {toml_value(fio)}")
        if draw(st.integers(0, 9)) == 0:
            out.append(f"{toml_key(draw(names))} = {toml_value(draw(values))}")
    for name in draw(st.lists(names, max_size=2, unique=True)):
        out.append(f"[suite.{toml_key(name)}]")
        out.append(f"description = {toml_value(draw(scalar_text))}")
        members = draw(st.lists(st.one_of(st.sampled_from(workload_names or ["x"]), st.sampled_from(["gitlab", "rnd4k-q1t1-read"]), names), max_size=4))
        out.append(f"workloads = {toml_value(members)}")
    if draw(st.integers(0, 9)) == 0:
        out.append(f"[{toml_key(draw(names))}]")
    return "\n".join(out) + "\n"


BUILTIN_SUITE_TEXTS = [f.read_text(encoding="utf-8") for f in resources.files("storbench.suites").iterdir()
                       if f.name.endswith(".toml")]
_OPTION_LINE = re.compile(r"^[a-z0-9][a-z0-9_-]*(=[^\n;#$\[\]]*)?$")


def _check_suite_text(text: str, base) -> None:
    try:
        with time_limit(5):
            catalog = parse_suite_text(text, "fuzz.toml", base)
    except SuiteError as exc:
        one_line(exc)
        assert str(exc).startswith("fuzz.toml"), str(exc)
        return
    target = Target(kind="dir", path="/srv/bench")
    for workload in catalog.workloads.values():
        if workload.origin != "fuzz.toml":
            continue
        for overrides in (Overrides(), Overrides(size="16m", runtime="1")):
            try:
                spec = build_job(workload, target, overrides, ioengine="libaio")
            except (SuiteError, TargetError, UsageError) as exc:
                one_line(exc)
                continue
            lines = spec.job_text.splitlines()
            # one section, one line per option, filename last and storbench's
            assert lines[0] == f"[{workload.name}]" and len(lines) == 1 + len(spec.options), spec.job_text
            assert all(_OPTION_LINE.match(ln) for ln in lines[1:]), spec.job_text
            assert [ln for ln in lines if ln.startswith(("filename=", "directory=", "name="))] == [
                "filename=/srv/bench/storbench.testfile"
            ], spec.job_text
            assert lines[-1] == "filename=/srv/bench/storbench.testfile"


@fuzz(300)
@given(text=suite_documents())
def test_generated_suite_files_load_safely_or_are_refused_in_one_line(text: str) -> None:
    _check_suite_text(text, builtin_catalog())


@fuzz(200)
@given(text=mutated(BUILTIN_SUITE_TEXTS))
def test_mutated_builtin_suite_files_load_safely_or_are_refused_in_one_line(text: str) -> None:
    _check_suite_text(text, empty_catalog())


def test_storbench_errors_are_the_only_refusals() -> None:
    """The refusals above are all StorbenchError subclasses with one-line messages (a sanity check of the premise)."""
    for cls in (FioParseError, SuiteError, TargetError, UsageError):
        assert issubclass(cls, StorbenchError)
