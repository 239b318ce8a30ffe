"""Readers of fio's output formats, all returning :class:`storbench.model.FioResult`.

May import: model and errors only (pure); every stage above reads fio's output through it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import FioParseError

if TYPE_CHECKING:
    from ..model import FioResult


def parse_output(text: str) -> FioResult:
    """Parse fio output in any format fio writes: JSON (and json+), terse, or classic text.

    Raises :class:`FioParseError` with one line when the text is none of them.
    """
    from .json import looks_like_fio_json, parse_fio_json
    from .terse import looks_like_fio_terse, parse_fio_terse
    from .text import looks_like_fio_text, parse_fio_text

    if not text or not text.strip():
        raise FioParseError("not fio output: the text is empty")
    if looks_like_fio_json(text):
        return parse_fio_json(text)
    if looks_like_fio_terse(text):
        return parse_fio_terse(text)
    if looks_like_fio_text(text):
        return parse_fio_text(text)
    raise FioParseError("not fio output: found no fio JSON, terse or classic text result in it")
