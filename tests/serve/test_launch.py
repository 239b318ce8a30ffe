"""Runs from the page, the pure parts: what a form may ask for (storbench.serve.launch.read_form),
the command it becomes, its plan, and the cross-site checks (storbench.serve.guard)."""

from __future__ import annotations

import pytest

from storbench.serve.guard import CSRF_COOKIE, csrf_cookie, csrf_token, form_refusal
from storbench.serve.launch import Allowed, FormError, plan_of, read_form, run_argv

ALLOWED = (Allowed("/srv/bench"), Allowed("/dev/sdz", destroy=True))
SUITES = {"quick": ("rnd4k-q1t1-read", "seq1m-q1t1-read"), "share": ("seq-read",)}
OWN = "http://127.0.0.1:8080"


def form(**fields) -> dict[str, list[str]]:
    base = {"suite": ["quick"], "target": ["0"], "repetitions": ["2"], "label": ["nightly"], "size": ["16m"], "runtime": ["1s"]}
    base.update({k: v if isinstance(v, list) else [v] for k, v in fields.items()})
    return base


def test_a_form_within_what_is_allowed_is_a_launch_and_its_command_a_list():
    req = read_form(form(workload=["rnd4k-q1t1-read"]), ALLOWED, SUITES, started_by="192.0.2.7")
    assert (req.suite, req.workloads, req.target, req.repetitions, req.label, req.started_by) == (
        "quick", ("rnd4k-q1t1-read",), ALLOWED[0], 2, "nightly", "192.0.2.7")
    assert run_argv(req) == ["run", "--workload", "rnd4k-q1t1-read", "--target", "/srv/bench", "--repeat", "2", "--no-report",
                             "--no-progress", "--label", "nightly", "--size", "16m", "--runtime", "1s"]  # fmt: skip
    whole = read_form(form(target="1", label="", size="", runtime=""), ALLOWED, SUITES, started_by="::1")
    # a device the operator named with --allow-run-destroy: the run may destroy its data, as named
    assert run_argv(whole) == ["run", "--suite", "quick", "--target", "/dev/sdz", "--repeat", "2", "--no-report", "--no-progress",
                               "--destroy-data", "/dev/sdz"]  # fmt: skip
    assert whole.label is None


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"suite": "../../etc"}, "suite '../../etc' is not a built-in suite (allowed: quick, share)"),
        ({"workload": ["seq-read"]}, "workload 'seq-read' is not in the suite 'quick'"),
        ({"workload": ["rnd4k-q1t1-read", "rnd4k-q1t1-read"]}, "a workload is chosen twice"),
        ({"target": "/etc"}, "target '/etc' is not one of the 2 targets this server allows (their numbers: 0 to 1)"),
        ({"target": "2"}, "target '2' is not one of the 2 targets this server allows (their numbers: 0 to 1)"),
        ({"target": "٠"}, "target '٠' is not one of the 2 targets this server allows (their numbers: 0 to 1)"),
        ({"target": ["0", "1"]}, "field 'target' given 2 times (once at most)"),
        ({"repetitions": "11"}, "repetitions '11': a whole number from 1 to 10"),
        ({"repetitions": "0"}, "repetitions '0': a whole number from 1 to 10"),
        ({"label": "a\nb"}, "label: at most 80 printable characters"),
        ({"label": "x" * 81}, "label: at most 80 printable characters"),
        ({"size": "1t"}, "size '1t' is not one of the suite’s, 16m, 64m, 256m, 1g, 4g"),
        ({"runtime": "--destroy-data"}, "runtime '--destroy-da' is not one of the suite’s, 1s, 5s, 30s, 60s, 5m"),
    ],
)
def test_anything_not_allowed_is_one_line_naming_the_field(fields, message):
    with pytest.raises(FormError) as exc:
        read_form(form(**fields), ALLOWED, SUITES, started_by="127.0.0.1")
    assert str(exc.value) == message


def test_the_plan_before_the_start_applies_the_forms_size_and_runtime():
    req = read_form(form(runtime="5s", repetitions="3"), ALLOWED, SUITES, started_by="127.0.0.1")
    rows, total = plan_of(req, [("a", (("runtime", "60"), ("time_based", None))), ("b", (("timeout", "10"), ("time_based", None)))])
    assert [r["basis"] for r in rows] == ["runtime 5 s", "runtime 5 s"]
    assert total.startswith("plan: 2 workloads x 3 repetitions on 1 target: about ")


def test_a_form_from_another_origin_or_without_this_browsers_token_is_refused():
    cookies = {CSRF_COOKIE: "a" * 32}
    assert form_refusal({"origin": OWN}, cookies, "a" * 32, OWN) is None
    assert form_refusal({"referer": OWN + "/start"}, cookies, "a" * 32, OWN) is None  # no Origin: its Referer
    assert form_refusal({"origin": "http://evil.example"}, cookies, "a" * 32, OWN) == (
        "a form sent from 'http://evil.example', not from this server (http://127.0.0.1:8080): refused (cross-site request)")
    assert form_refusal({"referer": "http://127.0.0.1:8080.evil.example/x"}, cookies, "a" * 32, OWN) is not None
    assert form_refusal({}, cookies, "a" * 32, OWN) == (
        "a form sent from 'None', not from this server (http://127.0.0.1:8080): refused (cross-site request)")
    stale = "the form's token does not match this browser's (an old or forged form): open the page again"
    assert form_refusal({"origin": OWN}, cookies, "b" * 32, OWN) == stale
    assert form_refusal({"origin": OWN}, {}, "a" * 32, OWN) == stale
    assert form_refusal({"origin": OWN}, cookies, None, OWN) == stale


def test_the_form_token_is_the_browsers_cookie_or_a_new_one():
    kept, new = csrf_token({CSRF_COOKIE: "0123456789abcdef" * 2})
    assert (kept, new) == ("0123456789abcdef" * 2, False)
    made, new = csrf_token({CSRF_COOKIE: "not-hex"})
    assert new and len(made) == 32 and made != csrf_token({})[0]
    assert csrf_cookie(made) == f"{CSRF_COOKIE}={made}; HttpOnly; SameSite=Strict; Path=/"


def test_a_launch_whose_storbench_cannot_start_fails_with_its_reason_and_the_queue_goes_on(tmp_path):
    from storbench.serve.launch import Launcher

    launcher = Launcher([Allowed(str(tmp_path))], f"sqlite:///{tmp_path}/db.sqlite", command=[str(tmp_path / "no-such-storbench")])
    try:
        req = read_form(form(), [Allowed(str(tmp_path))], SUITES, started_by="127.0.0.1")
        first, second = launcher.submit(req), launcher.submit(req)
        views = {v["id"]: v for v in launcher.views()}
        for launch_id in (first, second):
            assert views[launch_id]["state"] == "failed"
            assert views[launch_id]["output"][0].startswith("storbench could not be started: [Errno 2] No such file or directory")
    finally:
        launcher.close()
