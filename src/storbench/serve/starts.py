"""The pages that start, queue, follow and cancel runs (``serve --allow-run``): ``/start`` (the form,
then its plan and ETA, then the start), ``/launches`` (every launch, the queue), ``/launches/N``
(one: its state, its run followed live, its output) and ``POST /launches/N/cancel``;
``/api/launches[/N]`` in JSON.

Every form carries the browser's form token and is checked for its origin
(:func:`storbench.serve.guard.form_refusal`); the token of the server itself is checked before any
of this (:class:`~storbench.serve.guard.Guard`), and the cookie that keeps it is ``SameSite=Strict``.
What is asked for is read by :func:`storbench.serve.launch.read_form`: only what the operator
allowed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import parse_qs

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from .guard import csrf_cookie, csrf_token, form_refusal
from .launch import MAX_REPETITIONS, RUNTIMES, SIZES, FormError, Launcher, plan_of, read_form

#: a form's body is a few fields: anything bigger is not one of ours
MAX_FORM_BYTES = 16_384


def _suites() -> tuple[Mapping[str, tuple[str, ...]], Mapping[str, tuple[tuple[str, str | None], ...]]]:
    """Each built-in suite's workload names, and each workload's options."""
    from ..suites import builtin_catalog

    catalog = builtin_catalog()
    suites = {name: tuple(w.name for w in s.workloads) for name, s in catalog.suites.items()}
    options = {name: w.options for name, w in catalog.workloads.items()}
    return suites, options


class Starts:
    """The handlers (module text) over one :class:`Launcher`; ``page`` renders a template."""

    def __init__(self, launcher: Launcher, page: Callable[..., HTMLResponse], title: str) -> None:  # type: ignore[explicit-any]  # app._page: a template and its context
        self.launcher = launcher
        self.page = page
        self.title = title

    def _with_token(self, request: Request, name: str, **context: Any) -> HTMLResponse:  # type: ignore[explicit-any]  # a template's context: suites, launches, a plan
        token, new = csrf_token(dict(request.cookies))
        response = self.page(name, title=self.title, csrf=token, **context)
        if new:
            response.headers.append("set-cookie", csrf_cookie(token))
        return response

    async def _form(self, request: Request) -> dict[str, list[str]]:
        body = await request.body()
        if len(body) > MAX_FORM_BYTES:
            raise HTTPException(413, f"a form of {len(body)} bytes: at most {MAX_FORM_BYTES}")
        try:
            form = parse_qs(body.decode("utf-8"), keep_blank_values=True, strict_parsing=False, max_num_fields=100)
        except (UnicodeDecodeError, ValueError) as exc:
            raise HTTPException(400, f"the form could not be read: {exc}") from None
        own = f"{request.url.scheme}://{request.headers.get('host', '')}"
        field = (form.get("csrf") or [""])[0]
        refusal = form_refusal(dict(request.headers), dict(request.cookies), field or None, own)
        if refusal is not None:
            raise HTTPException(403, refusal)
        return form

    def _context(self, launches: list[dict[str, object]] | None = None, **extra: Any) -> dict[str, Any]:  # type: ignore[explicit-any]  # a template's context
        suites, _ = _suites()
        allowed = [{"index": i, "path": a.path, "destroy": a.destroy} for i, a in enumerate(self.launcher.allowed)]
        return {"suites": suites, "allowed": allowed, "max_repetitions": MAX_REPETITIONS, "sizes": SIZES, "runtimes": RUNTIMES,
                "launches": launches if launches is not None else self.launcher.views(), **extra}  # fmt: skip

    def start_page(self, request: Request) -> Response:
        return self._with_token(request, "start.html.j2", **self._context(plan=None, chosen=None, error=None))

    async def start(self, request: Request) -> Response:
        form = await self._form(request)
        suites, options = _suites()
        client = request.client.host if request.client is not None else "unknown"
        try:
            req = read_form(form, self.launcher.allowed, suites, started_by=client)
        except FormError as exc:
            return self._with_token(request, "start.html.j2", status=400, **self._context(plan=None, chosen=None, error=str(exc)))
        if (form.get("action") or ["plan"])[0] == "start":
            launch_id = self.launcher.submit(req)
            return RedirectResponse(f"/launches/{launch_id}", status_code=303)
        names = req.workloads or suites[req.suite]
        rows, total = plan_of(req, [(n, options[n]) for n in names])
        launches = self.launcher.views()
        chosen = {"suite": req.suite, "workloads": list(req.workloads), "target": self.launcher.allowed.index(req.target),
                  "repetitions": req.repetitions, "label": req.label or "", "size": req.size, "runtime": req.runtime,
                  "busy": any(v["target"] == req.target.path and v["state"] in ("queued", "running", "cancelling") for v in launches)}  # fmt: skip
        return self._with_token(request, "start.html.j2", **self._context(launches, plan={"rows": rows, "total": total}, chosen=chosen, error=None))

    def launches_page(self, request: Request) -> Response:
        return self._with_token(request, "launches.html.j2", launches=self.launcher.views())

    def _launch(self, request: Request) -> dict[str, object]:
        launch_id = int(request.path_params["launch_id"])
        view = self.launcher.view(launch_id)
        if view is None:
            raise HTTPException(404, f"no launch {launch_id} on this server (launches live as long as the server)")
        return view

    def launch_page(self, request: Request) -> Response:
        return self._with_token(request, "launch.html.j2", launch=self._launch(request))

    async def cancel(self, request: Request) -> Response:
        await self._form(request)
        launch = self.launcher.cancel(int(request.path_params["launch_id"]))
        if launch is None:
            raise HTTPException(404, "no such launch on this server")
        return RedirectResponse(f"/launches/{launch.launch_id}", status_code=303)

    def launches_api(self, request: Request) -> Response:
        return JSONResponse({"launches": self.launcher.views()})

    def launch_api(self, request: Request) -> Response:
        return JSONResponse(self._launch(request))


def off(request: Request) -> Response:
    """``/start`` and ``/launches`` on a server that only shows the history."""
    raise HTTPException(404, "runs from the page are off here: storbench serve --token T --allow-run DIR starts them")
