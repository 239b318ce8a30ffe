"""A document as lines (pure): plain text, a saved HTML page, a mail; each line keeps its line number.

* **HTML** (a page saved from a browser or a blog): the text of the page, ``<pre>`` blocks
  verbatim, a line break at every block element, headings (``<h1>``-``<h6>``) as ``# text``
  lines, entities decoded; scripts and styles dropped.  Line numbers are the page's own.
* **Mail**: quoted lines (``> ``, ``> > ``) lose their quote marks: no line of fio's output
  starts with ``>``.
* Everywhere: non-breaking and other odd spaces and tabs are spaces, ``\\r\\n`` and lone
  ``\\r`` end lines, and :func:`unwrap` joins a value a mail client carried onto the next
  line back to its key.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html.parser import HTMLParser


@dataclass(frozen=True)
class Line:
    """One line of a document: its number in the file (1-based) and its text."""

    number: int
    text: str


_SPACES = str.maketrans({"\u00a0": " ", "\u202f": " ", "\u2007": " ", "\u2009": " ", "\t": " ", "\ufeff": ""})
#: mail quote marks: ">" followed by a space, the end of the line or another ">" (so that a
#: wrapped-over ">=64=0.0%" keeps its ">")
_ODD = tuple(chr(k) for k in _SPACES)
_QUOTE = re.compile(r"^(?:[ ]?>(?: |$|(?=>)))+")
_HTML_SNIFF = re.compile(r"<\s*(?:!doctype\s+html|html|body|pre|div|p|h[1-6])\b", re.I)


def is_html(text: str) -> bool:
    head = text[:4096]
    return _HTML_SNIFF.search(head) is not None and "</" in text


def document_lines(text: str) -> list[Line]:
    """The document's lines, from whatever form it is in (see the module's docstring)."""
    raw = _html_lines(text) if is_html(text) else [Line(i, t) for i, t in enumerate(split_lines(text), 1)]
    odd = any(c in text for c in _ODD)
    out = []
    for ln in raw:
        t = ln.text.translate(_SPACES) if odd else ln.text
        if t[:2].lstrip().startswith(">"):
            t = _QUOTE.sub("", t)
        out.append(Line(ln.number, t.rstrip()))
    return out


def split_lines(text: str) -> list[str]:
    """The lines of a plain-text document as :func:`document_lines` numbers them (CR LF and a lone CR end a line too)."""
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


_BLOCK = {"p", "div", "br", "pre", "li", "ul", "ol", "tr", "table", "h1", "h2", "h3", "h4", "h5", "h6",
          "blockquote", "section", "article", "header", "footer", "hr", "dt", "dd", "code-block"}  # fmt: skip


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.lines: list[Line] = []
        self._cur: list[str] = []
        self._cur_line = 1
        self._skip = 0
        self._pre = 0
        self._heading = 0

    def _flush(self) -> None:
        text = "".join(self._cur)
        if text.strip() or self._pre:
            self.lines.append(Line(self._cur_line, ("# " + " ".join(text.split())) if self._heading else text))
        self._cur = []

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style"):
            self._skip += 1
        if tag in _BLOCK:
            self._flush()
            self._cur_line = self.getpos()[0]
        if tag == "pre":
            self._pre += 1
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self._heading += 1

    def handle_endtag(self, tag):
        if tag in ("script", "style"):
            self._skip = max(0, self._skip - 1)
        if tag in _BLOCK:
            self._flush()
            self._cur_line = self.getpos()[0]
        if tag == "pre":
            self._pre = max(0, self._pre - 1)
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self._heading = max(0, self._heading - 1)

    def handle_data(self, data):
        if self._skip:
            return
        if not self._pre:
            data = re.sub(r"\s+", " ", data)
            if not self._cur:
                self._cur_line = self.getpos()[0]
            self._cur.append(data)
            return
        line = self.getpos()[0]
        parts = data.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        for i, part in enumerate(parts):
            if i:
                self._flush()
                line += 1
                self._cur_line = line
            elif not self._cur:
                self._cur_line = line
            self._cur.append(part)


def _html_lines(text: str) -> list[Line]:
    parser = _Text()
    parser.feed(text)
    parser.close()
    parser._flush()
    return parser.lines


# --------------------------------------------------------------------------- wrapped pastes

#: a line that a mail client cut in the middle of a value: a key list ending in a comma,
#: ``=`` or a ``(T)``/``(W)``/``(R)`` block-size marker
_CUT_END = re.compile(r"(?:,|=|\[\s*|\((?:R|W|T)\))$")
#: what the carried-over rest starts with: a value or ``key=``, never a new fio line
_CARRIED = re.compile(r"^(?:[\d.]+[kKMG]?\]|[\d.]+\s*[kKMG]?[Bi]*(?:-|,|\]|$)|[a-z_]+=|>=\d+=|\(T\)|\(W\)|\d+B-|[\d.]+%|[\d.]+th=\[|\()")
#: the end of a job header's date carried over: "11:52:30 2021", "2021"
_TIME_REST = re.compile(r"^(?:\d{1,2}:\d\d(?::\d\d)?(?:\s+\d{4})?|\d{4})$")
_FIO_WORD = re.compile(r"\bfio\b")
#: a wrapped line is at least this long (mail clients wrap at 72-78 columns, before a long word)
MIN_WRAPPED_CHARS = 40


def _continues(prev: str, prev_is_fio: bool, raw: str, raw_is_fio: bool) -> bool:
    if raw_is_fio or not raw or raw.lstrip()[:1] in ('"', "{", "}", "]", ""):
        return False  # a fio line of its own, a blank line, JSON
    p = prev.rstrip()
    open_bracket = "[" in p and p.count("[") > p.count("]")
    cut = p.endswith((",", "=", "[", ")")) and "=" in p
    at_width = prev_is_fio and len(p) >= MIN_WRAPPED_CHARS and not raw[:1].isspace()
    if not (open_bracket or cut or at_width):
        return False
    s = raw.strip()
    if "--" in s or _FIO_WORD.search(s):
        return False  # fio prints no "--": that is a command line
    if open_bracket and "]" in s.split("[")[0]:
        return True  # "... 20.00th=[" + "43], 30.00th=[ 44]," or "[eta" + "00m:00s]"
    if cut and _CUT_END.search(p) and _CARRIED.match(s):
        return True
    # a fio line cut at a space: the rest starts at column 0, and is a value list or a date
    first = s.split()[0]
    return (at_width
            and (any(c in first for c in "=%]") or first.startswith("(") or _TIME_REST.match(s) is not None))  # fmt: skip


def unwrap(lines: list[Line], is_fio_line) -> list[Line]:
    """Join lines a mail client wrapped: a fio line cut after ``20.00th=[``, a ``,``, ``=``, a
    ``(T)`` marker or at any space near the wrap width, whose rest starts the next line at
    column 0 (``43],``, ``stdev=..., samples=...``, ``4096B-4096B, ioengine=...``,
    ``>=64=0.0%``, ``00m:00s]``, ``2021``).  ``is_fio_line`` says whether a line is a fio line
    of its own (then it is not a rest)."""
    out: list[Line] = []
    prev_is_fio = False
    for ln in lines:
        prev = out[-1] if out else None
        stripped = ln.text.strip()
        is_fio = bool(stripped) and is_fio_line(stripped)
        if prev is not None and _continues(prev.text, prev_is_fio, ln.text, is_fio):
            glue = "" if prev.text.rstrip().endswith(("[", "=")) else " "
            out[-1] = Line(prev.number, prev.text.rstrip() + glue + stripped)
            prev_is_fio = is_fio_line(out[-1].text.strip())
            continue
        out.append(ln)
        prev_is_fio = is_fio
    return out
