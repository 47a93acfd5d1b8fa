from pathlib import Path

import pytest

from linerate.errors import ParseError
from linerate.lab.wire import WireSample, parse_root_qdisc, rate_between, wire_bits

DATA = Path(__file__).parent.parent / "data" / "tc"


def test_root_qdisc_counters_from_a_shaped_port():
    # recorded on a 1g lab's wan0: root segmenter tbf 1:, shaper tbf 2: below it
    assert parse_root_qdisc((DATA / "qdisc_shaped.json").read_text()) == (3650061850, 2413436)


def test_parse_errors_name_the_problem():
    with pytest.raises(ParseError, match="not JSON"):
        parse_root_qdisc("qdisc tbf 1: root")
    with pytest.raises(ParseError, match="no root qdisc"):
        parse_root_qdisc('[{"kind": "tbf", "handle": "2:", "parent": "1:1", "bytes": 1, "packets": 1}]')


def test_wire_bits_add_fcs_preamble_and_gap_per_frame():
    assert wire_bits(1514, 1) == 1538 * 8
    assert wire_bits(0, 0) == 0


def test_rate_between_brackets_the_sampling_delay():
    first, second = WireSample(10.0, 10.1, 0), WireSample(12.0, 12.1, 2_000_000_000)
    rate = rate_between(first, second)
    assert rate.low_bps == pytest.approx(2e9 / 2.1) and rate.high_bps == pytest.approx(2e9 / 1.9)
    assert rate.low_bps < 1e9 < rate.high_bps and rate.mid_bps == pytest.approx((rate.low_bps + rate.high_bps) / 2)
