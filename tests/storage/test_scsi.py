"""The caching mode page read from real MODE SENSE(6) answers of tgt 1.0.85 (write cache on, off)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from storbench.storage.scsi import CachingPage, parse_caching_page

DATA = Path(__file__).resolve().parent.parent / "data" / "storage" / "tgt-1.0.85-modesense6-caching.txt"


def test_tgt_answers():
    on, off = (bytes.fromhex(line) for line in DATA.read_text().splitlines() if not line.startswith("#"))
    assert parse_caching_page(on) == CachingPage(write_cache=True, read_cache_disabled=False)
    assert parse_caching_page(off) == CachingPage(write_cache=False, read_cache_disabled=False)


@pytest.mark.parametrize(("data", "words"), [
    (b"", "not MODE SENSE(6) data"),
    (bytes.fromhex("17001000"), "its length byte says 24 bytes, it has 4"),
    (bytes.fromhex("0500100000"), "its length byte says 6 bytes, it has 5"),
    (bytes.fromhex("0b0010000a0a000000000000"), "mode page 0x0a, not the caching page"),
])  # fmt: skip
def test_what_is_not_a_caching_page_is_said(data, words):
    with pytest.raises(ValueError, match=re.escape(words)):
        parse_caching_page(data)
