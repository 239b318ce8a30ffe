"""storbench.serve.guard's pure parts: the Host header's name, the names a server answers to, the tokens a request carries."""

from __future__ import annotations

import pytest

from storbench.serve.guard import allowed_hosts, given_tokens, host_name, local_addresses


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
    # every address: the loopback names, the machine's own addresses and names, and --allow-host's
    assert allowed_hosts("0.0.0.0", ["Bench.Example.org"]) == {"0.0.0.0", "bench.example.org"} | loop
    assert allowed_hosts("::", (), ["192.0.2.2", "FD00::2", "Bench1"]) == {"::", "192.0.2.2", "fd00::2", "bench1"} | loop
    assert allowed_hosts("127.0.0.2", (), ["192.0.2.2"]) == {"127.0.0.2"}  # own names only for a wildcard bind


#: /proc/net/fib_trie and /proc/net/if_inet6 as this machine gave them (Debian 12, 6 Dec 2026), cut to
#: what counts: the local table's /32 host LOCAL entries, and a line per IPv6 address
FIB_TRIE = """Main:
  +-- 0.0.0.0/0 3 0 5
     |-- 0.0.0.0
        /0 universe UNICAST
     +-- 127.0.0.0/8 2 0 2
        +-- 127.0.0.0/31 1 0 0
           |-- 127.0.0.0
              /8 host LOCAL
           |-- 127.0.0.1
              /32 host LOCAL
        |-- 127.255.255.255
           /32 link BROADCAST
     +-- 192.0.2.0/24 2 0 1
        |-- 192.0.2.0
           /24 link UNICAST
        |-- 192.0.2.2
           /32 host LOCAL
Local:
  +-- 0.0.0.0/0 3 0 5
           |-- 127.0.0.1
              /32 host LOCAL
        |-- 192.0.2.2
           /32 host LOCAL
"""
IF_INET6 = """fe8000000000000000fc00fffe000001 04 40 20 80     eth0
fd000000000000000000000000000002 04 40 00 82     eth0
00000000000000000000000000000001 01 80 10 80       lo
"""


def test_local_addresses_from_proc():
    assert local_addresses(FIB_TRIE, IF_INET6) == ("127.0.0.1", "192.0.2.2", "fe80::fc:ff:fe00:1", "fd00::2", "::1")
    assert local_addresses("", "") == ()
    assert local_addresses("/32 host LOCAL\n", "not hex\n") == ()  # nothing before the first line, a line not an address


def test_given_tokens():
    assert given_tokens({"authorization": "Bearer abc"}, {}, {}) == ["abc"]
    assert given_tokens({"authorization": "bearer abc"}, {}, {}) == ["abc"]  # the scheme in any case (RFC 7235)
    assert given_tokens({"authorization": "Basic abc"}, {}, {}) == []
    assert given_tokens({}, {"token": "q"}, {"storbench_token": "c"}) == ["q", "c"]  # every one, so a stale cookie cannot hide the right one
    assert given_tokens({"authorization": "Bearer "}, {"token": ""}, {}) == []
