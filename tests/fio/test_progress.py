from storbench.fio.progress import parse_status_line, split_status_chunks


def test_full_status_line():
    s = parse_status_line("Jobs: 1 (f=1): [r(1)][60.0%][r=99.8MiB/s][r=25.6k IOPS][eta 00m:02s]")
    assert s.percent == 60.0
    assert s.eta_s == 2
    assert s.bw_text == "r=99.8MiB/s"
    assert s.iops_text == "r=25.6k"


def test_mixed_status_line_with_hours():
    s = parse_status_line(
        "Jobs: 4 (f=4): [m(4)][12.5%][r=3032KiB/s,w=1300KiB/s][r=758,w=325 IOPS][eta 01h:02m:03s]"
    )
    assert s.percent == 12.5
    assert s.eta_s == 3723
    assert s.bw_text == "r=3032KiB/s,w=1300KiB/s"
    assert s.iops_text == "r=758,w=325"


def test_bare_jobs_line_and_noise():
    s = parse_status_line("Jobs: 1 (f=1)")
    assert s is not None and s.percent is None and s.eta_s is None
    assert parse_status_line("fio: pid=1, err=28") is None


def test_split_keeps_unfinished_tail():
    lines, rest = split_status_chunks("Jobs: 1 (f=1)\rJobs: 1 (f=1): [r(1)][5")
    assert lines == ["Jobs: 1 (f=1)"]
    assert rest == "Jobs: 1 (f=1): [r(1)][5"
    lines, rest = split_status_chunks("a\r\nb\n\rc")
    assert lines == ["a", "b"] and rest == "c"
