"""Pure: a Phoronix Test Suite result file (``composite.xml``) -> typed, frozen records.

What each element means, and what varies between PTS versions, is in
``../shared/fixtures/pts/README.md`` (from PTS's own writer, ``pts_result_file::get_xml``,
and its schema ``result-file.xsd``).  In short: ``<Generated>`` describes the file, each
``<System>`` is one test run of one machine (its ``Identifier`` is the user's name for it),
each ``<Result>`` is one test with one set of options and one reported figure (``Scale``,
``Proportion``: HIB/LIB), and each of its ``<Entry>`` elements is one system's value, with
the value of every trial joined by ``:`` in ``RawString`` (empty when there was one trial or
all were equal; PTS 5/6 wrote the value itself).

The file is parsed with :mod:`defusedxml` (a result file is foreign input: no entity
expansion, no external entities).  Nothing here judges numbers; :mod:`storbench.pts.mapping`
turns a parsed file into storbench results.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from xml.etree.ElementTree import Element, ParseError

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import fromstring

from storbench.jsontypes import JSONMapping

from ..errors import FioParseError

__all__ = [
    "PtsEntry",
    "PtsResult",
    "PtsResultFile",
    "PtsSystem",
    "looks_like_pts",
    "parse_description_fields",
    "parse_result_file",
]


@dataclass(frozen=True)
class PtsSystem:
    """One ``<System>``: one machine's test run, named by ``identifier``."""

    identifier: str
    hardware: tuple[
        tuple[str, str], ...
    ]  # ("Processor", "Intel Xeon @ 2.30GHz (4 Cores / 8 Threads)"), ...
    software: tuple[
        tuple[str, str], ...
    ]  # ("OS", "Ubuntu 18.04"), ("File-System", "ext4"), ...
    user: str = ""
    timestamp: str = ""  # run start, "Y-m-d H:i:s" local time of the tested machine
    client_version: str = ""  # the PTS that ran it (empty in merged files)
    notes: str = ""
    attributes: JSONMapping = field(
        default_factory=dict
    )  # <JSON>: disk-scheduler, disk-mount-options, ...


@dataclass(frozen=True)
class PtsEntry:
    """One ``<Entry>``: one system's value of one result."""

    system: str  # a PtsSystem.identifier
    value: str  # as PTS wrote it ("54.080", "PASS")
    raw: tuple[
        str, ...
    ]  # the trials' values (RawString split on ":"), () when RawString is empty
    run_times_s: tuple[
        float, ...
    ] = ()  # wall-clock seconds of each trial (JSON test-run-times), when given


@dataclass(frozen=True)
class PtsResult:
    """One ``<Result>``: one test, option set and reported figure."""

    test: (
        str  # the test profile, "pts/fio-1.15.0"; empty for results written by modules
    )
    title: str  # "Flexible IO Tester"
    app_version: str
    arguments: str  # what PTS passed to the test script
    description: str  # the options as "Name: Value - Name: Value"
    scale: str  # the unit: "MB/s", "IOPS", "Final Score", "Seconds"
    proportion: str  # "HIB", "LIB", or "" / "ABSTRACT" (not said)
    display_format: str  # "BAR_GRAPH", "PASS_FAIL", "LINE_GRAPH", ...
    entries: tuple[PtsEntry, ...]
    annotation: str = ""

    @property
    def higher_is_better(self) -> bool | None:
        return {"HIB": True, "LIB": False}.get(self.proportion.strip().upper())

    @property
    def test_base(self) -> str:
        """The test profile without its version (``pts/fio``), as PTS identifies results."""
        return re.sub(r"-\d+(\.\d+)*$", "", self.test)


@dataclass(frozen=True)
class PtsResultFile:
    title: str
    description: str
    test_client: str  # the PTS that last wrote the file
    last_modified: str
    systems: tuple[PtsSystem, ...]
    results: tuple[PtsResult, ...]

    def system(self, identifier: str) -> PtsSystem | None:
        return next((s for s in self.systems if s.identifier == identifier), None)


_HEAD = re.compile(
    r"\A\ufeff?\s*(<\?xml[^>]*\?>\s*)?(<!--.*?-->\s*|<\?xml-stylesheet[^>]*\?>\s*|<!DOCTYPE[^\[>]*(\[.*?\])?\s*>\s*)*"
    r"<PhoronixTestSuite\b",
    re.DOTALL,
)


def looks_like_pts(text: str) -> bool:
    """True when ``text`` is an XML document whose root is PTS's ``<PhoronixTestSuite>``."""
    return bool(_HEAD.match(text[:4096]))


def _text(parent: Element | None, tag: str) -> str:
    if parent is None:
        return ""
    child = parent.find(tag)
    return (child.text or "") if child is not None else ""


# "Type: value, Type: value": a new field starts at ", " followed by a name and ": "
_FIELD_START = re.compile(r",\s+(?=[A-Z][\w .+/()-]{0,40}?:\s)")


def parse_description_fields(text: str) -> tuple[tuple[str, str], ...]:
    """PTS's ``Processor: X, Memory: Y, ...`` hardware/software string as (name, value) pairs
    (a part without a ``Name:`` is kept under the name ``""``)."""
    out: list[tuple[str, str]] = []
    for part in _FIELD_START.split(text.strip()):
        name, sep, value = part.partition(": ")
        if not part:
            continue
        out.append((name.strip(), value.strip()) if sep else ("", part.strip()))
    return tuple(out)


def _json(text: str, where: str) -> JSONMapping:
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError:
        return {
            "unreadable": text
        }  # kept, not judged: PTS writes it, storbench only shows it
    return data if isinstance(data, dict) else {"value": data}


def _floats(text: str) -> tuple[float, ...]:
    try:
        return tuple(float(x) for x in text.split(":") if x.strip())
    except ValueError:
        return ()


def parse_result_file(text: str) -> PtsResultFile:
    """Parse a PTS result file; :class:`FioParseError` in one line for anything else."""
    try:
        root = fromstring(text.encode("utf-8") if isinstance(text, str) else text)
    except DefusedXmlException as exc:
        raise FioParseError(
            f"not a Phoronix Test Suite result file: the XML uses {type(exc).__name__}, which storbench refuses"
        ) from None
    except ParseError as exc:
        raise FioParseError(
            f"not a readable Phoronix Test Suite result file: XML error at line {exc.position[0]}, column {exc.position[1]}"
        ) from None
    if root.tag != "PhoronixTestSuite":
        raise FioParseError(
            f"not a Phoronix Test Suite result file: its root element is <{root.tag}>, not <PhoronixTestSuite>"
        )
    if root.find("Result") is None and root.find("System") is None:
        kinds = ", ".join(sorted({c.tag for c in root})) or "nothing"
        raise FioParseError(
            f"a Phoronix Test Suite file, but not a result file: it holds {kinds} (a result file is "
            "test-results/NAME/composite.xml, with <System> and <Result> elements)"
        )
    gen = root.find("Generated")
    systems = []
    for el in root.findall("System"):
        systems.append(
            PtsSystem(
                identifier=_text(el, "Identifier"),
                hardware=parse_description_fields(_text(el, "Hardware")),
                software=parse_description_fields(_text(el, "Software")),
                user=_text(el, "User"),
                timestamp=_text(el, "TimeStamp"),
                client_version=_text(el, "TestClientVersion"),
                notes=_text(el, "Notes"),
                attributes=_json(_text(el, "JSON"), "System"),
            )
        )
    results = []
    for el in root.findall("Result"):
        entries = []
        data = el.find("Data")
        for e in data.findall("Entry") if data is not None else ():
            raw = _text(e, "RawString")
            attrs = _json(_text(e, "JSON"), "Entry")
            times = attrs.get("test-run-times")
            entries.append(
                PtsEntry(
                    system=_text(e, "Identifier"),
                    value=_text(e, "Value").strip(),
                    raw=tuple(x.strip() for x in raw.split(":")) if raw.strip() else (),
                    run_times_s=_floats(times) if isinstance(times, str) else (),
                )
            )
        results.append(
            PtsResult(
                test=_text(el, "Identifier").strip(),
                title=_text(el, "Title").strip(),
                app_version=_text(el, "AppVersion").strip(),
                arguments=_text(el, "Arguments"),
                description=_text(el, "Description").strip(),
                scale=_text(el, "Scale").strip(),
                proportion=_text(el, "Proportion"),
                display_format=_text(el, "DisplayFormat").strip() or "BAR_GRAPH",
                entries=tuple(entries),
                annotation=_text(el, "Annotation"),
            )
        )
    return PtsResultFile(
        title=_text(gen, "Title").strip(),
        description=_text(gen, "Description").strip(),
        test_client=_text(gen, "TestClient").strip(),
        last_modified=_text(gen, "LastModified").strip(),
        systems=tuple(systems),
        results=tuple(results),
    )
