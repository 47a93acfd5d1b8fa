import pytest

from linerate.errors import ConfigError
from linerate.model import MAX_RULES, FirewallProfile, TrialParams
from linerate.topology.plan import LabSpec


@pytest.mark.parametrize("kwargs,field", [
    ({"streams": 0}, "streams"), ({"streams": 129}, "streams"), ({"streams": True}, "streams"),
    ({"family": 5}, "family"), ({"duration_s": -1}, "duration"), ({"duration_s": 0}, "duration"),
    ({"omit_s": -1}, "omit"), ({"direction": "up"}, "direction"), ({"protocol": "sctp"}, "protocol"),
    ({"congestion": "cubic; rm -rf /"}, "congestion"),
])
def test_bad_trial_params_name_the_field(kwargs, field):
    with pytest.raises(ConfigError) as info:
        TrialParams(**kwargs)
    assert info.value.field == field
    assert info.value.exit_code == 2


@pytest.mark.parametrize("text,expected", [
    ("none", FirewallProfile("none")), ("stateful", FirewallProfile("stateful")),
    ("nat", FirewallProfile("nat")), ("rules:1000", FirewallProfile("rules", 1000)),
])
def test_firewall_profiles_parse(text, expected):
    assert FirewallProfile.parse(text) == expected
    assert str(FirewallProfile.parse(text)) == text


@pytest.mark.parametrize("text", ["rules:abc", "rules:0", f"rules:{MAX_RULES + 1}", "pf", "", "rules:"])
def test_bad_firewall_profiles(text):
    with pytest.raises(ConfigError, match="firewall"):
        FirewallProfile.parse(text)


@pytest.mark.parametrize("kwargs", [{"lab_id": "Bad_Name"}, {"lab_id": "x" * 9}, {"lab_id": "ok", "mtu": 67},
                                    {"lab_id": "ok", "mtu": 9217}])
def test_bad_lab_specs(kwargs):
    with pytest.raises(ConfigError):
        LabSpec(**kwargs)
