import numpy as np
import pytest
from scipy import stats as sps

from linerate.stats import compare, relative_half_width, summarize


def test_ci_equals_scipy_t_interval():
    values = [941e6, 938e6, 944e6, 930e6, 951e6]
    s = summarize(values)
    low, high = sps.t.interval(0.95, len(values) - 1, loc=np.mean(values), scale=sps.sem(values))
    assert s.ci_low == pytest.approx(low) and s.ci_high == pytest.approx(high)
    assert s.n == 5 and s.median == 941e6 and s.min == 930e6 and s.max == 951e6
    assert s.stdev == pytest.approx(np.std(values, ddof=1))


def test_single_value_has_no_interval():
    s = summarize([5.0])
    assert s.n == 1 and s.ci_low is None and s.half_width is None


def test_empty_cell_counts_failures():
    s = summarize([], failures=2)
    assert s.n == 0 and s.mean is None and s.failures == 2


def test_welch_matches_scipy_and_verdicts():
    a = [590, 600, 585, 595, 605]
    b = [750, 760, 745, 755, 740]
    c = compare(a, b, "2.5.0", "2.4.5")
    assert c.p_value == pytest.approx(sps.ttest_ind(a, b, equal_var=False).pvalue)
    assert c.significant and "2.4.5 is 26.1% faster than 2.5.0" in c.verdict()
    same = compare([100, 101, 99, 100], [100, 99, 101, 100])
    assert not same.significant and same.verdict().startswith("no significant difference")
    assert compare([1.0], [2.0]).p_value is None


def test_relative_half_width():
    assert relative_half_width([100, 100, 100]) == 0
    assert relative_half_width([90, 110, 100]) > 0.1
    assert relative_half_width([1]) is None
