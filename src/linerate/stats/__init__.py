"""Pure statistics: per-cell summaries with Student-t confidence intervals, Welch's t-test,
and the adaptive stopping rule. No I/O."""

from linerate.stats.summary import Comparison, Summary, compare, percentiles, relative_half_width, summarize

__all__ = ["Comparison", "Summary", "compare", "percentiles", "summarize", "relative_half_width"]
