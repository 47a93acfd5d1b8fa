"""A pfSense/OPNsense config.xml is a user-supplied file, parsed through defusedxml: entity
declarations (billion laughs, external entities) and external DTDs are refused with one line naming
the file (exit 2), never expanded or fetched."""

from __future__ import annotations

import socket

import pytest

from linerate.cli import main
from linerate.errors import ConfigError
from linerate.tuning.parsers import parse_config_xml

BILLION_LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
]>
<pfsense><system><hostname>&lol3;</hostname></system></pfsense>
"""
EXTERNAL_ENTITY = """<?xml version="1.0"?>
<!DOCTYPE pfsense [<!ENTITY secret SYSTEM "file:///etc/passwd">]>
<pfsense><sysctl><item><tunable>&secret;</tunable><value>1</value></item></sysctl></pfsense>
"""
EXTERNAL_DTD = """<?xml version="1.0"?>
<!DOCTYPE pfsense SYSTEM "http://192.0.2.1/evil.dtd">
<pfsense><system/></pfsense>
"""
PLAIN = """<?xml version="1.0"?>
<pfsense><sysctl><item><tunable>net.inet.ip.redirect</tunable><value>0</value></item></sysctl></pfsense>
"""


@pytest.mark.parametrize("text", [BILLION_LAUGHS, EXTERNAL_ENTITY], ids=["billion-laughs", "external-entity"])
def test_entity_declarations_are_refused(text):
    with pytest.raises(ConfigError, match="refused: the file declares XML entities"):
        parse_config_xml(text, "config.xml")


def test_an_external_dtd_is_never_fetched(monkeypatch):
    # a DOCTYPE without entity declarations passes to expat, which never loads an external DTD
    def no_network(*args):
        raise AssertionError("the parser opened a connection")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    settings = parse_config_xml(EXTERNAL_DTD, "config.xml")
    assert settings and {s.product for s in settings} == {"pfsense"}


def test_a_plain_config_xml_still_parses():
    settings = parse_config_xml(PLAIN, "config.xml")
    assert any(s.key == "net.inet.ip.redirect" and s.value == "0" for s in settings)


def test_the_audit_cli_refuses_in_one_line(tmp_path, capsys):
    path = tmp_path / "config.xml"
    path.write_text(EXTERNAL_ENTITY)
    assert main(["audit", str(path), "--os", "pfsense"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "config.xml" in err and "root:" not in err
