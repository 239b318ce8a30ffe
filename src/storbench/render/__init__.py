"""Render: what a person reads -- the terminal tables (:mod:`.terminal`, :mod:`.glance`), the
comparison's views (:mod:`.compare`), HTML and Markdown reports (:mod:`.html`, :mod:`.markdown`)
with their charts (:mod:`.html_charts`, :mod:`.png`), CSV (:mod:`.csv`) and the public JSON
records (:mod:`.public`).  ``format_*`` functions return text; printing is the commands' edge.

May import: compare, curve (the model), metrics, stats, storage and backend records, suites,
the loads' parsers, serialize, trace records, units, model and errors; never run, study, store, commands or serve.
"""

