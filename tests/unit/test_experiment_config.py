import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from linerate.axes import AXES
from linerate.errors import ConfigError
from linerate.experiment.config import load_experiment, parse_experiment

MINIMAL = """
name = "classic"
repetitions = 3
duration_s = 5
omit_s = 1
[axes]
family = [4, 6]
streams = [1, 4]
firewall = ["none", "stateful"]
"""


def test_minimal_file_is_accepted_as_written():
    exp = parse_experiment(MINIMAL)
    assert exp.n_cells == 8 and exp.repetitions == 3
    cells = exp.cells()
    assert {(c["family"], c["streams"], c["firewall"]) for c in cells} == {
        (f, s, w) for f in (4, 6) for s in (1, 4) for w in ("none", "stateful")}
    assert all(c["duration_s"] == 5 and c["omit_s"] == 1 and c["mtu"] == 1500 for c in cells)


def test_examples_are_valid(data_dir):
    root = data_dir.parent.parent / "examples"
    files = sorted(root.glob("*.toml"))
    assert files
    for path in files:
        load_experiment(path)


def test_top_level_axis_names_are_fixed_values():
    exp = parse_experiment('name = "x"\ndirection = "reverse"\n[axes]\nstreams = [1, 2]\n')
    assert all(c["direction"] == "reverse" for c in exp.cells())


@pytest.mark.parametrize("text,needle", [
    ('name = "x"\n[axes]\nfamly = [4]', "did you mean 'family'"),
    ('name = "x"\n[axes]\nwarp = [4]', "unknown axis 'warp'"),
    ('name = "x"\n[axes]\nstreams = [0]', "streams = 0"),
    ('name = "x"\nrepetitions = "x"', "repetitions"),
    ('name = "x"\nrepetiton = 3', "did you mean 'repetitions'"),
    ('name = "x"\n[axes]\nstreams = ["4"]', "not a whole number"),
    ('name = "x"\n[axes]\nstreams = []', "no values"),
    ('name = "x"\n[axes]\nstreams = [1, 1]', "repeats"),
    ('name = "x"\nprecision = 2.0', "precision"),
    ('name = "x"\nmin_repetitions = 9\nmax_repetitions = 4', "min_repetitions"),
    ('repetitions = 3', "name"),
    ('name = "x"\nstreams = 4\n[axes]\nstreams = [1]', "both fixed and an axis"),
    ('name = [', "not valid TOML"),
])
def test_invalid_files_name_the_key(text, needle):
    with pytest.raises(ConfigError) as info:
        parse_experiment(text, "bad.toml")
    assert info.value.exit_code == 2
    assert "bad.toml" in str(info.value) and needle in str(info.value)


def test_unreadable_files(tmp_path):
    binary = tmp_path / "b.toml"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_experiment(binary)
    with pytest.raises(ConfigError, match="no such file"):
        load_experiment(tmp_path / "missing.toml")


toml_scalar = st.one_of(st.integers(-10, 10**6), st.booleans(), st.text(max_size=12), st.floats(allow_nan=False),
                        st.sampled_from(["none", "stateful", "rules:10", "nat", "cubic", "reverse", "udp"]))
toml_value = st.one_of(toml_scalar, st.lists(toml_scalar, max_size=4))
keys = st.sampled_from(["name", "repetitions", "duration_s", "omit_s", "precision", "seed", "family",
                        "streams", "firewall", "mtu", "direction", "bogus", "max_repetitions"])


def render(value) -> str:
    import json
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(render(v) for v in value) + "]"
    if isinstance(value, str):
        return json.dumps(value)
    return repr(value)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])  # slow, not wrong, under load
@given(top=st.dictionaries(keys, toml_value, max_size=6), axes=st.dictionaries(keys, toml_value, max_size=4),
       noise=st.text(max_size=20))
def test_random_toml_never_tracebacks(top, axes, noise):
    text = "\n".join(f"{k} = {render(v)}" for k, v in top.items())
    text += "\n[axes]\n" + "\n".join(f"{k} = {render(v)}" for k, v in axes.items())
    for candidate in (text, text + "\n" + noise):
        try:
            exp = parse_experiment(candidate, "fuzz.toml")
        except ConfigError as exc:
            assert str(exc).startswith("fuzz.toml: ") and "\n" not in str(exc)
        else:
            # An accepted file must be consistent: cells are the product of the axes, and every
            # value in every cell is one its axis validator accepts unchanged.
            expected = 1
            for values in exp.axes.values():
                expected *= len(values)
            cells = exp.cells()
            assert exp.n_cells == len(cells) == expected
            for cell in cells:
                for name, value in cell.items():
                    if name in AXES:
                        assert AXES[name].validate(value) == value, (name, value)


@pytest.mark.parametrize("mtu", [68, 576, 1279])
def test_a_lab_mtu_under_ipv6s_minimum_is_refused_before_anything_is_built(mtu, capsys):
    """Every lab link carries IPv6, which needs 1280 (RFC 8200 section 5): `lab up --mtu 576` built half a
    lab and failed on an IPv6 route with a message that did not name --mtu."""
    from linerate.cli import main

    from linerate.experiment.config import parse_experiment

    with pytest.raises(ConfigError, match="out of range; allowed: 1280 to 9216"):
        parse_experiment(f'name = "m"\n[axes]\nmtu = [{mtu}]\n')
    assert main(["lab", "up", "--name", "m", "--mtu", str(mtu), "--dry-run"]) == 2
    assert "--mtu: " in capsys.readouterr().err  # one line naming it, nothing built
