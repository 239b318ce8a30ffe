"""A SCSI logical unit's caching mode page: whether it acknowledges writes from a volatile cache.

:func:`parse_caching_page` (pure) reads the answer to MODE SENSE(6) for page 0x08 (the caching
mode page) with block descriptors disabled: byte 0 the mode data length (the answer's size
less one), byte 3 the block descriptors' length, then the page: its code (bits 0-5 of its first
byte), its length, and in its third byte WCE (bit 2: the unit acknowledges writes from its
write-back cache) and RCD (bit 0).  Held to real answers of tgt 1.0.85 with its write cache on
(``17 00 10 00 08 12 14 ...``) and off (``... 08 12 10 ...``), tests/data/storage.

:func:`iscsi_write_cache` (edge) asks an iSCSI LUN over the network, as an initiator of its own
in user space (libiscsi through ctypes: Debian's ``libiscsi7``, which qemu's iscsi driver already
needs): a login, one MODE SENSE(6), a logout, within a bounded time.  Where libiscsi is missing
or the answer is not a caching page, the reason is said instead (None).
"""

from __future__ import annotations

import ctypes
import ctypes.util
from dataclasses import dataclass

CACHING_PAGE = 0x08
WCE_BIT = 0x04
#: libiscsi's own timeout for the login and the command (seconds)
TIMEOUT_S = 10
INITIATOR = b"iqn.2026-12.org.storbench:probe"


@dataclass(frozen=True)
class CachingPage:
    write_cache: bool  # WCE: writes acknowledged from a volatile cache
    read_cache_disabled: bool  # RCD


def parse_caching_page(data: bytes) -> CachingPage:
    """MODE SENSE(6) data for page 0x08 -> :class:`CachingPage`; ValueError saying what is wrong."""
    if len(data) < 4 or data[0] + 1 != len(data):
        raise ValueError(f"not MODE SENSE(6) data: its length byte says {data[0] + 1 if data else 0} bytes, it has {len(data)}")
    start = 4 + data[3]
    if len(data) < start + 3:
        raise ValueError("no mode page after the header and block descriptors")
    code = data[start] & 0x3F
    if code != CACHING_PAGE:
        raise ValueError(f"mode page 0x{code:02x}, not the caching page (0x08)")
    return CachingPage(write_cache=bool(data[start + 2] & WCE_BIT), read_cache_disabled=bool(data[start + 2] & 0x01))


class _Sense(ctypes.Structure):  # libiscsi's struct scsi_sense as GCC lays it out (16 bytes)
    _fields_ = [("error_type", ctypes.c_ubyte), ("key", ctypes.c_int), ("ascq", ctypes.c_int),
                ("bits", ctypes.c_ubyte), ("bit_pointer", ctypes.c_ubyte), ("field_pointer", ctypes.c_uint16)]  # fmt: skip


class _Data(ctypes.Structure):
    _fields_ = [("size", ctypes.c_int), ("data", ctypes.POINTER(ctypes.c_ubyte))]


class _Task(ctypes.Structure):  # the head of libiscsi's struct scsi_task (1.19), up to datain
    _fields_ = [("status", ctypes.c_int), ("cdb_size", ctypes.c_int), ("xfer_dir", ctypes.c_int), ("expxferlen", ctypes.c_int),
                ("cdb", ctypes.c_ubyte * 16), ("residual_status", ctypes.c_int), ("residual", ctypes.c_size_t),
                ("sense", _Sense), ("datain", _Data)]  # fmt: skip


def iscsi_write_cache(portal: str, iqn: str, lun: int) -> tuple[CachingPage | None, str | None]:
    """(the LUN's caching page, None) or (None, why it could not be read)."""
    name = ctypes.util.find_library("iscsi") or "libiscsi.so.7"
    try:
        lib = ctypes.CDLL(name)
    except OSError:
        return None, "libiscsi is not installed (Debian package libiscsi7)"
    lib.iscsi_create_context.restype = ctypes.c_void_p
    lib.iscsi_modesense6_sync.restype = ctypes.POINTER(_Task)
    lib.iscsi_get_error.restype = ctypes.c_char_p
    context = lib.iscsi_create_context(INITIATOR)
    if not context:
        return None, "libiscsi could not make a context"
    ctx = ctypes.c_void_p(context)
    try:
        lib.iscsi_set_targetname(ctx, iqn.encode())
        lib.iscsi_set_session_type(ctx, 2)  # ISCSI_SESSION_NORMAL
        lib.iscsi_set_header_digest(ctx, 0)  # ISCSI_HEADER_DIGEST_NONE
        lib.iscsi_set_timeout(ctx, TIMEOUT_S)
        if lib.iscsi_full_connect_sync(ctx, portal.encode(), lun) != 0:
            return None, f"login failed: {(lib.iscsi_get_error(ctx) or b'').decode(errors='replace')}"
        task = lib.iscsi_modesense6_sync(ctx, lun, 1, 0, CACHING_PAGE, 0, 255)  # DBD, current values
        if not task:
            return None, f"MODE SENSE(6) failed: {(lib.iscsi_get_error(ctx) or b'').decode(errors='replace')}"
        try:
            head = task.contents
            if head.status != 0 or not 0 < head.datain.size <= 255 or not head.datain.data:
                return None, f"MODE SENSE(6) answered status {head.status} with {head.datain.size} bytes"
            data = bytes(head.datain.data[i] for i in range(head.datain.size))
        finally:
            lib.scsi_free_scsi_task(task)
        lib.iscsi_logout_sync(ctx)
        try:
            return parse_caching_page(data), None
        except ValueError as exc:
            return None, str(exc)
    finally:
        lib.iscsi_destroy_context(ctx)
