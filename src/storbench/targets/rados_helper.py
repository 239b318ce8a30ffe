"""One librados client that answers storbench's questions to a Ceph cluster for a whole run.

Not imported by storbench: :mod:`storbench.targets.ceph_session` runs this file with the Python
the ``ceph`` command itself runs on (Debian's ``/usr/bin/python3``, whose ``rados`` and ``rbd``
modules come with ceph-common), as ``PYTHON rados_helper.py CONF CLIENT OP_TIMEOUT_S``.  It
connects once and then reads one JSON request a line on stdin and writes one JSON answer a line on
stdout, ``{"rc": ERRNO, "out": TEXT, "err": TEXT}`` (``rc`` 0: done), until stdin closes (storbench
ended, or was killed: the pipe closes with it).  Each ``ceph`` command started a Python and
connected anew (0.3-0.5 s); here a question costs milliseconds.

Requests: ``{"op": "mon"|"mgr", "cmd": {...}}`` (a monitor's or the manager's command, as the ceph
CLI sends it), ``{"op": "osd", "id": N, "cmd": {...}}`` (``ceph tell osd.N ...``),
``{"op": "rbd-diff", "pool": P, "image": I}`` (the extents ``rbd diff --format json`` lists, and the
image's size), ``{"op": "rbd-info"|"rbd-du"|"rbd-status", "pool": P, "image": I}`` (what ``rbd
info``/``du``/``status --format json`` print; ``du`` only where the image's fast-diff map makes it
quick), ``{"op": "stat", "pool": P, "object": O}`` (an object's size).  ``rc`` 95 with an ``err``
beginning ``pass:``: not this client's to answer, the command answers it.  Only the standard
library and Ceph's own bindings: this runs outside storbench's environment.
"""

import json
import os
import sys
import time

# this file's folder is storbench's own targets, whose rados.py and rbd.py are not Ceph's modules
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != HERE]


def answer(rc, out="", err=""):
    sys.stdout.write(json.dumps({"rc": abs(int(rc)), "out": out, "err": err}) + "\n")
    sys.stdout.flush()


def text(data):
    return data.decode("utf-8", "replace") if isinstance(data, bytes) else (data or "")


def extents_of(image, size):
    """The written extents of an RBD image, as ``rbd diff --format json`` lists them."""
    extents = []

    def note(offset, length, exists):
        extents.append({"offset": offset, "length": length, "exists": "true" if exists else "false"})

    image.diff_iterate(0, size, None, note)
    return extents


#: librbd's names of an image's feature, operation and flag bits, as ``rbd info`` prints them
FEATURES = (("LAYERING", "layering"), ("STRIPINGV2", "striping"), ("EXCLUSIVE_LOCK", "exclusive-lock"),
            ("OBJECT_MAP", "object-map"), ("FAST_DIFF", "fast-diff"), ("DEEP_FLATTEN", "deep-flatten"),
            ("JOURNALING", "journaling"), ("DATA_POOL", "data-pool"), ("OPERATIONS", "operations"),
            ("MIGRATING", "migrating"), ("NON_PRIMARY", "non-primary"))  # fmt: skip
OP_FEATURES = (("CLONE_PARENT", "clone-parent"), ("CLONE_CHILD", "clone-child"), ("GROUP", "group"), ("SNAP_TRASH", "snap-trash"))
FLAGS = (("OBJECT_MAP_INVALID", "object map invalid"), ("FAST_DIFF_INVALID", "fast diff invalid"))


def names(rbd, prefix, table, bits):
    return [name for constant, name in table if bits & getattr(rbd, prefix + constant, 0)]


def info_of(rbd, image, name):
    """What ``rbd info --format json POOL/IMAGE`` prints of an open image."""
    stat = image.stat()
    features = image.features()
    info = {"name": name, "id": image.id(), "size": stat["size"], "objects": stat["num_objs"], "order": stat["order"],
            "object_size": stat["obj_size"], "snapshot_count": len(list(image.list_snaps())),
            "block_name_prefix": stat["block_name_prefix"], "format": 1 if image.old_format() else 2,
            "features": names(rbd, "RBD_FEATURE_", FEATURES, features),
            "op_features": names(rbd, "RBD_OPERATION_FEATURE_", OP_FEATURES, image.op_features()),
            "flags": names(rbd, "RBD_FLAG_", FLAGS, image.flags())}  # fmt: skip
    if features & rbd.RBD_FEATURE_STRIPINGV2:
        info.update(stripe_unit=image.stripe_unit(), stripe_count=image.stripe_count())
    for key, when in (("create_timestamp", image.create_timestamp), ("access_timestamp", image.access_timestamp),
                      ("modify_timestamp", image.modify_timestamp)):  # fmt: skip
        stamp = when()
        info[key] = stamp.ctime() if stamp else ""
    return info


#: rbd's --format json is compact
COMPACT = (",", ":")
#: the answer that leaves a question to the command (one whose time is not a run's client's to spend)
PASS = 95


def du_of(image, name):
    """``rbd du``'s line of an image: its size, and the whole objects written (as rbd du counts)."""
    size = image.size()
    used = []
    image.diff_iterate(0, size, None, lambda offset, length, exists: used.append(length if exists else 0), whole_object=True)
    return {"name": name, "id": image.id(), "provisioned_size": size, "used_size": sum(used)}


def serve(rados, cluster, timeout_s):

    ioctxs = {}

    def ioctx(pool):
        if pool not in ioctxs:
            ioctxs[pool] = cluster.open_ioctx(pool)
        return ioctxs[pool]

    for line in sys.stdin:
        try:
            request = json.loads(line)
            op = request["op"]
            if op in ("mon", "mgr", "osd"):
                cmd = json.dumps(request["cmd"])
                if op == "mon":
                    rc, out, err = cluster.mon_command(cmd, b"", timeout=timeout_s)
                elif op == "mgr":
                    rc, out, err = cluster.mgr_command(cmd, b"", timeout=timeout_s)
                else:
                    rc, out, err = cluster.osd_command(int(request["id"]), cmd, b"", timeout=timeout_s)
                answer(rc, text(out), text(err))
            elif op == "rbd-diff":
                import rbd  # type: ignore[import-not-found]

                with rbd.Image(ioctx(request["pool"]), request["image"], read_only=True) as image:
                    size = image.size()
                    answer(0, json.dumps({"size": size, "extents": extents_of(image, size)}))
            elif op in ("rbd-info", "rbd-du", "rbd-status"):
                import rbd

                with rbd.Image(ioctx(request["pool"]), request["image"], read_only=True) as image:
                    if op == "rbd-info":
                        answer(0, json.dumps(info_of(rbd, image, request["image"]), separators=COMPACT))
                    elif op == "rbd-du":
                        if not image.features() & rbd.RBD_FEATURE_FAST_DIFF or image.flags() & rbd.RBD_FLAG_FAST_DIFF_INVALID:
                            answer(PASS, err="pass: no fast-diff map (every object asked in turn: the command's own bound)")
                        else:
                            answer(0, json.dumps({"images": [du_of(image, request["image"])]}, separators=COMPACT))
                    else:  # the image's watchers: a mapping, a VM, a running fio
                        watchers = [{"address": w["addr"], "client": w["id"], "cookie": w["cookie"]} for w in image.watchers_list()]
                        answer(0, json.dumps({"watchers": watchers}, separators=COMPACT))
            elif op == "stat":
                size, mtime = ioctx(request["pool"]).stat(request["object"])
                answer(0, json.dumps({"size": size, "mtime": time.strftime("%Y-%m-%dT%H:%M:%S.000000%z", mtime)}))
            else:
                answer(22, err=f"unknown request {op!r}")
        except rados.Error as exc:
            answer(getattr(exc, "errno", None) or 5, err=str(exc))
        except Exception as exc:  # the request, not the cluster (rbd's errors carry an errno): say it and go on
            answer(getattr(exc, "errno", None) or 22, err=f"{type(exc).__name__}: {exc}")


def main(argv):
    conf, client, timeout = argv[1], argv[2], int(argv[3])
    try:
        import rados  # type: ignore[import-not-found]
    except ImportError as exc:
        answer(127, err=f"no rados module for {sys.executable}: {exc}")
        return 1
    try:
        cluster = rados.Rados(conffile=conf, name=f"client.{client}")
        for key in ("rados_osd_op_timeout", "rados_mon_op_timeout", "client_mount_timeout"):
            cluster.conf_set(key, str(timeout))
        cluster.connect(timeout=timeout)
    except Exception as exc:
        answer(getattr(exc, "errno", None) or 110, err=f"error connecting to the cluster: {exc}")
        return 1
    answer(0, out="ready")
    try:
        serve(rados, cluster, timeout)
    finally:
        cluster.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
