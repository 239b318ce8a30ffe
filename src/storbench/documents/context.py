"""What a document says about each fio output (pure): the command line printed before it, the
nearest heading or label line, and the host a shell prompt names.

* **Command line**: the nearest line before the output (after the previous output) that runs
  ``fio`` with options, with its ``\\`` continuation lines; a prompt before it (``$``, ``#``,
  ``[root@lab data]#``, ``user@host:~$``) is taken off and names the host; typographic dashes
  and quotes a blog engine put in (``–rw=randread``, ``“…”``) are read as ``--`` and ``"``;
  its ``--key=value`` options become the result's options (fio's own output options such as
  ``--output-format`` are left out).
* **Heading**: the nearest line before the command (or the output) that is a heading
  (``# ...``, ``## ...``, an HTML heading, a line underlined with ``===``/``---``) or a short
  label line ("XFS results", "# Write cache DISABLED"), not prose and not fio's.
"""

from __future__ import annotations

import functools
import re
import shlex
from dataclasses import dataclass

from .source import Line

#: how far back from an output its command line and heading are looked for
LOOKBACK_LINES = 25
#: a label line is at most this long and does not end like a sentence
MAX_LABEL_CHARS = 72

_DASHES = re.compile(r"(?<![\w-])[\u2013\u2014\u2212\u2012\u2015]{1,2}(?=[A-Za-z])")
_QUOTES = str.maketrans({"\u201c": '"', "\u201d": '"', "\u201e": '"', "\u2018": "'", "\u2019": "'", "\u00ab": '"', "\u00bb": '"'})
_PROMPTS = (
    re.compile(r"^\[(?P<user>[\w.-]+)@(?P<host>[\w.-]+)(?:\s[^\]]*)?\]\s*[#$]\s*"),  # [root@lab data]#
    re.compile(r"^(?P<user>[\w.-]+)@(?P<host>[\w.-]+):[^\s$#]*\s*[#$]\s*"),  # user@host:~$
    re.compile(r"^(?:PS )?[A-Za-z]:\\[^>]*>\s*"),  # C:\Users\me> / PS C:\> (Windows)
    re.compile(r"^(?:\(\S+\)\s*)?[\w.-]*\s*[#$%>]\s+"),  # $ / # / (venv) $ / host> / root #
)
_FIO_CMD = re.compile(r"(?:^|[\s;&|(>])(?:sudo\s+(?:-\S+\s+)*)?(?:\S*/)?fio(?:\s|$)")
#: fio's command-line options about its own output and mode, not the job
CLI_ONLY = frozenset({
    "output", "output-format", "eta", "eta-newline", "eta-interval", "minimal", "append-terse", "terse-version",
    "status-interval", "parse-only", "section", "client", "server", "daemonize", "debug", "readonly", "alloc-size",
    "max-jobs", "warnings-fatal", "trigger", "trigger-file", "trigger-timeout", "idle-prof", "inflate-log",
    "showcmd", "crctest", "cpuclock-test", "enghelp", "cmdhelp", "help", "version", "latency-log", "bandwidth-log",
})  # fmt: skip
_HEADING = re.compile(r"^\s*(?:#{1,6}\s+|\*\*|={2,}\s*|__)(?P<text>.+?)(?:\*\*|__|\s*={2,})?\s*:?\s*$")
_UNDERLINE = re.compile(r"^\s*(?:={3,}|-{3,})\s*$")


@dataclass(frozen=True)
class Command:
    """A fio command line as the document printed it, read."""

    line: int
    text: str  # normalised: prompt off, dashes and quotes fixed, continuations joined
    options: tuple[tuple[str, str | None], ...]
    job_files: tuple[str, ...] = ()
    host: str | None = None


@dataclass(frozen=True)
class Context:
    """What the document says about one output."""

    heading: str | None = None
    heading_line: int | None = None
    command: Command | None = None


def normalise(text: str) -> str:
    """Typographic dashes before an option name as ``--``, curly quotes as straight ones."""
    return _DASHES.sub("--", text.translate(_QUOTES))


def strip_prompt(text: str) -> tuple[str, str | None]:
    """A command line without its shell prompt, and the host the prompt names (or None)."""
    for pattern in _PROMPTS:
        m = pattern.match(text)
        if m:
            host = m.groupdict().get("host")
            return text[m.end():], host
    return text, None


def parse_command(text: str, line: int) -> Command | None:
    """A fio command line -> :class:`Command`; None when ``text`` does not run fio."""
    body, host = strip_prompt(normalise(text.strip()))
    m = _FIO_CMD.search(body)
    if m is None:
        return None
    rest = body[m.end():]
    tokens = list(_tokens(rest))
    options: list[tuple[str, str | None]] = []
    files: list[str] = []
    for tok in tokens:
        if tok in ("|", ">", ">>", "2>&1", "&&", ";", "|&") or tok.startswith((">", "|", "2>")):
            break  # the rest is the shell's: a pipe or a redirection
        if tok.startswith("--") and len(tok) > 2:
            key, eq, value = tok[2:].partition("=")
            if key in CLI_ONLY:
                continue
            options.append((key, value if eq else None))
        elif tok.startswith("-") and len(tok) > 1:
            continue  # fio's single-dash forms are CLI switches (-v, -h)
        else:
            files.append(tok)
    if not options and not files:
        return None
    return Command(line=line, text=f"fio {rest.strip()}".strip(), options=tuple(options), job_files=tuple(files), host=host)


@functools.lru_cache(maxsize=1024)
def _tokens(rest: str) -> tuple[str, ...]:
    """A command line's words as a shell reads them (a log appended to with ``>>`` repeats one
    command before every output: split once)."""
    try:
        return tuple(shlex.split(rest, comments=False, posix=True))
    except ValueError:
        return tuple(rest.split())


def _is_label(text: str) -> str | None:
    s = text.strip()
    if not s or s.startswith(("```", "~~~")):  # a Markdown code fence names nothing
        return None
    m = _HEADING.match(s)
    if m and s[0] in "#*=_":
        return m.group("text").strip().rstrip(":").strip() or None
    if len(s) <= MAX_LABEL_CHARS and not s.endswith((".", ",", ";", "?", "!")) and not s.startswith(("$", "[", "<", "{", "|", "-")):
        words = s.rstrip(":").strip()
        if words and len(words.split()) <= 10 and not _FIO_CMD.search(" " + words):
            return words
    return None


def section_headings(lines: list[Line], is_fio_line) -> list[tuple[str, int] | None]:
    """For every line, the section heading at or above it (an underlined line or a ``#``/``=``
    heading): (text, line number), or None.  One pass over the document, so that finding the
    section of each of many outputs stays linear."""
    out: list[tuple[str, int] | None] = []
    current: tuple[str, int] | None = None
    for k, line in enumerate(lines):
        text = line.text
        if _UNDERLINE.match(text) and k - 1 >= 0 and lines[k - 1].text.strip() and not is_fio_line(lines[k - 1].text.strip()):
            current = (lines[k - 1].text.strip(), lines[k - 1].number)
        else:
            m = _HEADING.match(text)
            if m and text.lstrip()[:1] in "#=" and not is_fio_line(text.strip()):
                current = (m.group("text").strip().rstrip(":").strip(), line.number)
        out.append(current)
    return out


def context_before(lines: list[Line], index: int, floor: int, is_fio_line,
                   sections: list[tuple[str, int] | None] | None = None) -> Context:
    """The command line and heading before ``lines[index]`` (an output's first line), looking no
    further back than ``floor`` (where the previous output ended) and :data:`LOOKBACK_LINES`;
    ``sections`` is :func:`section_headings` of ``lines`` (computed here when not given)."""
    lo = max(floor, index - LOOKBACK_LINES)
    command = None
    j = index - 1
    while j >= lo:
        text = lines[j].text
        if text.strip() and not is_fio_line(text.strip()):
            # gather a command with its continuation lines (the first of them ends with "\")
            start = j
            while start - 1 >= lo and lines[start - 1].text.rstrip().endswith("\\"):
                start -= 1
            joined = " ".join(lines[k].text.rstrip().rstrip("\\").strip() for k in range(start, j + 1))
            found = parse_command(joined, lines[start].number)
            if found is not None:
                command = found
                j = start - 1
                break
        j -= 1
    search_from = (j if command is not None else index - 1)
    heading = heading_line = None
    k = search_from
    while k >= lo:
        text = lines[k].text
        if _UNDERLINE.match(text) and k - 1 >= lo and lines[k - 1].text.strip():
            heading, heading_line = lines[k - 1].text.strip(), lines[k - 1].number
            break
        if text.strip() and not is_fio_line(text.strip()) and parse_command(text, lines[k].number) is None:
            label = _is_label(text)
            if label is not None:
                heading, heading_line = label, lines[k].number
                break
        k -= 1
    if heading is None:
        # no label in the gap before it: the section it is in (the last heading above it)
        k = min(lo, search_from)
        if k >= 0:
            if sections is None:
                sections = section_headings(lines[: k + 1], is_fio_line)
            section = sections[k]
            if section is not None:
                heading, heading_line = section
    if command is None and heading is None:
        return Context()
    return Context(heading=heading, heading_line=heading_line, command=command)
