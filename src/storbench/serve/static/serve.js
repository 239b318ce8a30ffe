/* storbench serve: charts (plotly, served by this server) and the live page. No other script, no request off this server. */
(function () {
  "use strict";
  var CONFIG = { responsive: true, displayModeBar: false };

  function fit(layout) {
    layout = Object.assign({}, layout || {});
    layout.autosize = true;
    layout.font = Object.assign({ size: 12 }, layout.font || {});
    layout.margin = Object.assign({ l: 50, r: 10, t: 40, b: 40 }, layout.margin || {});
    if (window.innerWidth < 520) { // a phone: the title wraps above, the legend goes below, nothing off-screen
      layout.legend = { orientation: "h", y: -0.25 };
      layout.margin.l = 45;
      if (layout.title && layout.title.text && layout.title.text.length > 34) {
        layout.title = Object.assign({}, layout.title, { font: { size: 12 } });
      }
    }
    return layout;
  }

  function draw(el, fig) {
    if (!window.Plotly) { el.textContent = "(charts need plotly.js, served at /static/plotly.js)"; return; }
    window.Plotly.newPlot(el, fig.data, fit(fig.layout), CONFIG);
  }

  function drawAll() {
    document.querySelectorAll("div.chart[data-figure]").forEach(function (el) {
      try { draw(el, JSON.parse(el.getAttribute("data-figure"))); } catch (e) { el.textContent = "chart not drawn: " + e; }
    });
  }

  function text(id, value) { var el = document.getElementById(id); if (el) { el.textContent = value; } }
  function seconds(s) { if (s === null || s === undefined) { return "-"; } s = Math.round(s); return Math.floor(s / 60) + "m" + String(s % 60).padStart(2, "0") + "s"; }
  function list(id, items, render) {
    var ul = document.getElementById(id); if (!ul) { return; }
    ul.innerHTML = "";
    items.forEach(function (item) { var li = document.createElement("li"); render(li, item); ul.appendChild(li); });
  }

  window.storbenchLive = function (runId) {
    var chart = document.getElementById("live-chart"), drawn = false;
    function update(d) {
      text("live-status", d.status);
      var s = d.state;
      if (!s) {
        if (d.waiting) { text("live-plan", d.waiting); }
        if (d.done_url) { window.location.assign(d.done_url); }
        return;
      }
      var c = s.current || {};
      var study = s.kind === "matrix" && s.study ? s.study : null;
      text("live-plan", (study ? "study " + study.label + ", setup " + study.setup + " (" + (study.index + 1) + "/" + study.setups.length + ") · " : "") +
        (c.index !== undefined && c.index !== null ? "workload " + (c.index + 1) + " of " + s.total : "starting") + " · running for " + seconds(s.elapsed_s));
      text("live-workload", c.workload ? c.workload + (c.repetition ? " #" + (c.repetition + 1) : "") + " on " + c.target : "-");
      // the newest rate fio printed, held until the next (d.rate_of: whose it is)
      text("live-iops", d.iops);
      text("live-bw", d.bw);
      text("live-rate-of", d.rate_of || "");
      text("live-percent", c.percent === null || c.percent === undefined ? "-" : c.percent.toFixed(0) + "%");
      text("live-eta", seconds(s.eta_run_s));
      if (study) {
        document.getElementById("live-study-card").hidden = false;
        text("live-eta-study", seconds(s.eta_study_s));
        text("live-setup", "setup " + (study.index + 1) + " of " + study.setups.length);
      }
      list("live-devices", d.devices.length ? d.devices : [{ text: "not sampled yet" }], function (li, dev) { li.textContent = dev.text; });
      list("live-results", d.results, function (li, r) {
        var a = document.createElement("a"); a.href = "/results/" + r.result_id + "/raw"; a.textContent = r.workload + (r.repetition ? " #" + (r.repetition + 1) : "");
        li.appendChild(a); li.appendChild(document.createTextNode(": " + r.text));
      });
      list("live-findings", s.findings, function (li, f) { li.className = f.severity; li.textContent = f.severity + " [" + f.check + "] " + f.workload + ": " + f.message; });
      list("live-notes", s.notes, function (li, n) { li.textContent = n; });
      if (window.Plotly && s.samples.length) {
        // one line per workload and repetition (segments: never one line joining two workloads)
        var traces = [], byKey = {};
        s.samples.forEach(function (p) {
          var key = p[3] + "/" + (p[4] || 0);
          if (!byKey[key]) {
            var name = ((s.names || {})[String(p[3])] || "workload " + (Number(p[3]) + 1)).split(" on ")[0] + (p[4] ? " #" + (p[4] + 1) : "");
            byKey[key] = { type: "scatter", mode: "lines+markers", name: name, x: [], y: [] };
            traces.push(byKey[key]);
          }
          byKey[key].x.push(p[0]); byKey[key].y.push(p[1]);
        });
        var layout = fit({ title: { text: "fio's IOPS per second, each workload and repetition" }, xaxis: { title: { text: "s since the run started" } },
          yaxis: { rangemode: "tozero" }, showlegend: traces.length > 1, legend: { orientation: "h" } });
        if (drawn) { window.Plotly.react(chart, traces, layout, CONFIG); } else { window.Plotly.newPlot(chart, traces, layout, CONFIG); drawn = true; }
      }
    }
    function poll() {
      fetch("/api/live/" + runId, { cache: "no-store", credentials: "same-origin" })
        .then(function (r) { return r.json(); })
        .then(function (d) { update(d); if (d.state || !d.done_url) { setTimeout(poll, 500); } })
        .catch(function () { setTimeout(poll, 1000); });
    }
    poll();
  };
  // a table's header buttons sort the rows shown (data-v: the cell's value; else its text)
  function sortable() {
    document.querySelectorAll("table.sortable").forEach(function (table) {
      table.querySelectorAll("thead th").forEach(function (th, col) {
        var button = th.querySelector("button.sort"); if (!button) { return; }
        button.addEventListener("click", function () {
          var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
          var desc = !button.classList.contains("desc");
          table.querySelectorAll("th button.sort").forEach(function (b) { b.classList.remove("asc", "desc"); });
          button.classList.add(desc ? "desc" : "asc");
          function key(row) { var cell = row.cells[col], v = cell.getAttribute("data-v"); return v === null ? cell.textContent.trim().toLowerCase() : Number(v); }
          rows.sort(function (a, b) { var x = key(a), y = key(b); var c = x < y ? -1 : x > y ? 1 : 0; return desc ? -c : c; });
          rows.forEach(function (row) { body.appendChild(row); });
        });
      });
    });
  }

  function start() {
    drawAll();
    sortable();
    // the live page names its run in data-run (no inline script: the Content-Security-Policy allows none)
    var live = document.getElementById("live");
    if (live && live.dataset.run) { window.storbenchLive(Number(live.dataset.run)); }
  }

  // plotly.js (1.2 MB) only on a page that draws: loaded from this server when a chart is there
  if (document.querySelector("div.chart[data-figure], #live-chart") && !window.Plotly) {
    var script = document.createElement("script");
    script.src = "/static/plotly.js";
    script.onload = start;
    script.onerror = start; // each chart then says that plotly.js is missing
    document.head.appendChild(script);
  } else {
    start();
  }
})();
