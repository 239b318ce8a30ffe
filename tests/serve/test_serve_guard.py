"""storbench.serve.guard's pure parts: the Host header's name, the names a server answers to, the tokens a request carries."""

from __future__ import annotations

import pytest

from storbench.serve.guard import allowed_hosts, given_tokens, host_name


@pytest.mark.parametrize(("header", "name"), [
    ("127.0.0.1:8080", "127.0.0.1"), ("localhost", "localhost"), ("LocalHost:80", "localhost"), ("[::1]:8080", "::1"),
    ("[::1]", "::1"), ("bench.example.org", "bench.example.org"), ("evil.example:8080", "evil.example"), ("", ""),
])  # fmt: skip
def test_host_name(header, name):
    assert host_name(header) == name


def test_allowed_hosts():
    loop = {"localhost", "127.0.0.1", "::1"}
    assert allowed_hosts("127.0.0.1") == loop
    assert allowed_hosts("::1") == loop and allowed_hosts("localhost") == loop
    assert allowed_hosts("127.0.0.2") == {"127.0.0.2"}  # another loopback address: itself only
    assert allowed_hosts("0.0.0.0", ["Bench.Example.org"]) == {"0.0.0.0", "bench.example.org"}


def test_given_tokens():
    assert given_tokens({"authorization": "Bearer abc"}, {}, {}) == ["abc"]
    assert given_tokens({"authorization": "bearer abc"}, {}, {}) == ["abc"]  # the scheme in any case (RFC 7235)
    assert given_tokens({"authorization": "Basic abc"}, {}, {}) == []
    assert given_tokens({}, {"token": "q"}, {"storbench_token": "c"}) == ["q", "c"]  # every one, so a stale cookie cannot hide the right one
    assert given_tokens({"authorization": "Bearer "}, {"token": ""}, {}) == []
