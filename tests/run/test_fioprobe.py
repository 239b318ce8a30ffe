"""fio's probe spoken by storbench (storbench.run.fioprobe): the command fio's client sends, its
reply as fio's client prints it; checked by hand here and against real fio servers in
tests/run/test_multihost.py."""

from __future__ import annotations

import struct

from storbench.run.fioprobe import HEADER_BYTES, PROBE, SERVER_VERSIONS, crc16, probe_command, probe_line, replies


def test_crc16_is_crc16_arc():
    # CRC-16/ARC's check value (poly 0x8005 reflected, init 0): fio's crc/crc16.c
    assert crc16(b"123456789") == 0xBB3D and crc16(b"") == 0


def test_the_probe_command_is_fios():
    cmd = probe_command(97, "127.0.0.1")
    version, opcode, flags, tag, length, head_crc, pdu_crc = struct.unpack_from("<HHIQIHH", cmd)
    assert (version, opcode, flags, tag, length) == (97, PROBE, 0, 0, 136) and len(cmd) == HEADER_BYTES + 136
    assert head_crc == crc16(cmd[:20]) and pdu_crc == crc16(cmd[HEADER_BYTES:])
    assert cmd[HEADER_BYTES + 8 : HEADER_BYTES + 17] == b"127.0.0.1" and SERVER_VERSIONS["fio-3.33"] == 97


def _reply(hostname=b"vm", be=0, version=b"fio-3.33", os=1, arch=1, bpp=8, cpus=2, flags=1) -> bytes:
    pdu = struct.pack("<64sB32sBBBIQ", hostname, be, version, os, arch, bpp, cpus, flags)
    head = struct.pack("<HHIQI", 97, PROBE, 0, 0, len(pdu))
    return head + struct.pack("<HH", crc16(head), crc16(pdu)) + pdu


def test_a_reply_reads_as_fios_client_prints_it():
    found, rest = replies(_reply() + b"\x00" * 5)
    assert rest == b"\x00" * 5 and [op for op, _ in found] == [PROBE]
    assert probe_line(found[0][1]) == "hostname=vm, be=0, 64-bit, os=Linux, arch=x86-64, fio=fio-3.33, flags=1"
    (odd,) = replies(_reply(hostname=b"nas", os=3, arch=13, be=1, flags=0))[0]
    assert probe_line(odd[1]) == "hostname=nas, be=1, 64-bit, os=FreeBSD, arch=aarch64, fio=fio-3.33, flags=0"
    assert probe_line(odd[1][:50]) is None
    assert replies(_reply()[:30]) == ([], _reply()[:30])  # cut: nothing yet
