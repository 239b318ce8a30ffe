"""Sizes and durations: parsing, fio forms, human forms."""

from __future__ import annotations

import pytest

from storbench.errors import UsageError
from storbench.units import (
    fio_duration,
    fio_size,
    format_bytes,
    format_duration,
    is_fio_native_size,
    parse_duration,
    parse_size,
    read_size,
)

KiB, MiB, GiB, TiB = 1024, 1024**2, 1024**3, 1024**4


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("16G", 16 * GiB),
        ("16g", 16 * GiB),
        ("16GB", 16 * GiB),
        ("16GiB", 16 * GiB),
        ("16gib", 16 * GiB),
        ("1.5GiB", 1536 * MiB),
        ("1.5g", 1536 * MiB),
        ("512M", 512 * MiB),
        ("4k", 4 * KiB),
        ("4K", 4 * KiB),
        ("4KB", 4 * KiB),
        ("4KiB", 4 * KiB),
        ("4096", 4096),
        ("4096B", 4096),
        ("1m", MiB),
        ("8MiB", 8 * MiB),
        ("1T", TiB),
        ("1p", 1024**5),
        (" 2 m ", 2 * MiB),
        ("0", 0),
        (".5k", 512),
        (4096, 4096),
    ],
)
def test_parse_size(text, expected):
    assert parse_size(text) == expected


@pytest.mark.parametrize("text", ["", "k", "4q", "4 kb b", "-1", "1.5", "0.3k", "4x", "1e3", "16 G i", "4kk", True, None, [1]])
def test_parse_size_rejects(text):
    with pytest.raises(UsageError) as err:
        parse_size(text)
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith("invalid size ")
    if isinstance(text, str) and text:
        assert repr(text) in message


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("4096", 4096), ("4096k", 4 * MiB), ("8.00MiB", 8 * MiB), ("128M", 128 * MiB), ("0.00B", 0), ("512B", 512),
        ("1.5G", 3 * GiB // 2), ("0.3k", 307), (" 2 TiB ", 2 * TiB), (16, 16),
        ("-", None), ("", None), ("4q", None), ("1,5G", None), (None, None), (True, None), ("-4k", None),
    ],
)  # fmt: skip
def test_read_size_reads_tool_output_leniently(text, expected):
    """The one size parser's lenient side: what lsblk, zfs or xfs_info printed, rounded, None if not a size."""
    assert read_size(text) == expected


def test_parse_size_message_says_what_is_allowed():
    with pytest.raises(UsageError, match=r"^invalid size '4q': use a whole number of bytes or a number with a unit k, m, g, t or p \(binary: 1k = 1024 bytes"):
        parse_size("4q")
    with pytest.raises(UsageError, match="not a whole number of bytes"):
        parse_size("0.3k")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("16G", "16g"),
        ("16g", "16g"),
        ("1.5GiB", "1536m"),
        ("8MiB", "8m"),
        ("4096", "4k"),
        ("1000", "1000"),
        ("1T", "1t"),
        ("1536k", "1536k"),
        ("0", "0"),
        (1048576, "1m"),
    ],
)
def test_fio_size(text, expected):
    assert fio_size(text) == expected


def test_fio_size_rejects_bad_values():
    with pytest.raises(UsageError, match="invalid size '12 apples'"):
        fio_size("12 apples")


@pytest.mark.parametrize(("text", "native"), [("16G", True), ("4k", True), ("1MB", True), ("4096", True), ("1MiB", False), ("1.5g", False)])
def test_is_fio_native_size(text, native):
    # fio reads "1MiB" as 1,000,000 bytes under its default kb_base=1024, so it is not native
    assert is_fio_native_size(text) is native


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("30", 30.0),
        ("30s", 30.0),
        ("2m", 120.0),
        ("1h", 3600.0),
        ("500ms", 0.5),
        ("1.5s", 1.5),
        ("250us", 0.00025),
        ("1d", 86400.0),
        ("2min", 120.0),
        (" 45 s ", 45.0),
        (30, 30.0),
        (1.5, 1.5),
    ],
)
def test_parse_duration(text, expected):
    assert parse_duration(text) == pytest.approx(expected)


@pytest.mark.parametrize("text", ["", "s", "30x", "-5", "1..5s", "5 seconds", True, float("nan"), -1])
def test_parse_duration_rejects(text):
    with pytest.raises(UsageError) as err:
        parse_duration(text)
    assert str(err.value).startswith("invalid duration ")
    assert "\n" not in str(err.value)


def test_parse_duration_message_says_what_is_allowed():
    with pytest.raises(UsageError, match=r"^invalid duration '30x': use a number of seconds or a number with a unit us, ms, s, m, h or d"):
        parse_duration("30x")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("30", "30"),
        ("30s", "30s"),
        ("2m", "2m"),
        ("1.5s", "1500ms"),
        ("1.5", "1500ms"),
        ("0.5ms", "500us"),
        ("1.5m", "90s"),
        (30, "30"),
        (2.0, "2s"),
    ],
)
def test_fio_duration(text, expected):
    assert fio_duration(text) == expected


def test_fio_duration_rejects_sub_microsecond():
    with pytest.raises(UsageError, match="finest time unit is 1 us"):
        fio_duration("1.5us")


@pytest.mark.parametrize(
    ("n", "expected"),
    [(0, "0 B"), (512, "512 B"), (1024, "1.0 KiB"), (1536, "1.5 KiB"), (GiB, "1.0 GiB"), (16 * GiB, "16.0 GiB"), (3 * TiB, "3.0 TiB")],
)
def test_format_bytes(n, expected):
    assert format_bytes(n) == expected


@pytest.mark.parametrize(
    ("n", "kwargs", "expected"),
    [
        (None, {}, "-"),  # a figure not recorded, as tables show it
        (None, {"missing": "?"}, "?"),  # a size the storage description does not know
        (64 * 1024**2, {"exact": True}, "64 MiB"),
        (64 * 1024**2, {}, "64.0 MiB"),
        (1536, {"exact": True}, "1.5 KiB"),
        (-1536, {}, "-1.5 KiB"),
        (2 * 1024**5, {}, "2.0 PiB"),  # the report's formatter stopped at TiB: "2048.0 TiB"
        (512.6, {}, "513 B"),  # a rate in bytes per second, rounded
    ],
)
def test_format_bytes_is_the_one_byte_formatter(n, kwargs, expected):
    """Tables, checks, the storage description and the report all format bytes through it."""
    assert format_bytes(n, **kwargs) == expected


@pytest.mark.parametrize(
    ("s", "expected"),
    [(0, "0 s"), (0.0005, "500 us"), (0.5, "500 ms"), (1.5, "1.5 s"), (30, "30 s"), (60, "1 m"), (90, "1 m 30 s"), (3600, "1 h"), (3725, "1 h 2 m 5 s")],
)
def test_format_duration(s, expected):
    assert format_duration(s) == expected


# --------------------------------------------------------------------------- intervals as printed


def test_an_interval_of_a_positive_quantity_is_in_one_unit_and_never_below_zero():
    from storbench.units import fmt_interval

    # the case: "95% CI -9811184 ns … 13.82 ms" (n = 3, very spread)
    assert fmt_interval(-9_811_184.0, 13_820_000.0, "clat_p99_ns", 3) == "0.00 … 13.82 ms (clipped at 0: too few or too spread runs)"
    assert fmt_interval(-2096.4, 4771.0, "iops", 2) == "none (n < 3)"  # t(0.975, 1) = 12.7: says nothing
    assert fmt_interval(950_000.0, 1_250_000.0, "lat_mean_ns", 5) == "0.95 … 1.25 ms"
    assert fmt_interval(900.0, 1_500.0, "lat_mean_ns", 5) == "0.9 … 1.5 µs"
    assert fmt_interval(9_500.0, 10_400.0, "iops", 4) == "9.5 … 10.4k IOPS"
    assert fmt_interval(-2096.4, 4771.0, "iops", 3) == "0 … 4771 IOPS (clipped at 0: too few or too spread runs)"
    assert fmt_interval(1.5 * 2**20, 2.5 * 2**30, "bw_bytes", 3) == "0.0 … 2.5 GiB/s"
