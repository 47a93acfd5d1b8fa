"""Recall and precision of `linerate audit` per OS family on the hand-labelled corpus of real files
(tests/data/tuning/corpus, line 1 of each names its source; '#@ expect CODE' labels come from man pages
and source trees, never from linerate's output). A truly wrong line is one labelled with a code whose
finding is a warning or an error; recall counts those flagged warning/error, precision counts
warnings/errors that sit on a labelled line. Bar (issue 41): recall >= 80%, precision >= 95%, 0 false
errors."""

from linerate.tuning.versions import OS_FAMILIES
from tests.unit.test_tuning_knowledge import WARNING_OR_ERROR, audit_line, corpus_audit, corpus_files, labelled

# codes whose finding is only ever a note: a label with one of them marks a line that is not wrong
NOTE_CODES = {"LR006", "LR009", "LR010", "LR012", "LR013", "LR015", "LR016"}  # LR006: a valid trade-off, advice


def measure() -> dict[str, dict[str, int]]:
    stats: dict[str, dict[str, int]] = {}
    for path in corpus_files():
        family = OS_FAMILIES[audit_line(path)[0]]
        row = stats.setdefault(family, {"wrong": 0, "flagged": 0, "loud": 0, "correct": 0, "false_errors": 0})
        expected = labelled(path)
        wrong = {line for line, (code, _) in expected.items() if code not in NOTE_CODES}
        _, findings = corpus_audit(path)
        loud = {(f.line, f.severity) for f in findings if f.severity in WARNING_OR_ERROR}
        loud_lines = {line for line, _ in loud}
        row["wrong"] += len(wrong)
        row["flagged"] += len(wrong & loud_lines)
        row["loud"] += len(loud_lines)
        row["correct"] += len(loud_lines & wrong)
        row["false_errors"] += sum(1 for line, severity in loud if severity == "error" and line not in wrong)
    return stats


def test_recall_and_precision_per_os_meet_the_bar(capsys):
    stats = measure()
    with capsys.disabled():
        for family, row in sorted(stats.items()):
            print(f"\naudit on the corpus, {family}: recall {row['flagged']}/{row['wrong']} truly wrong lines "
                  f"flagged, precision {row['correct']}/{row['loud']} warnings+errors correct, "
                  f"{row['false_errors']} false error(s)")
    total = {key: sum(row[key] for row in stats.values()) for key in ("wrong", "flagged", "loud", "correct", "false_errors")}
    assert total["false_errors"] == 0
    assert total["flagged"] >= 0.8 * total["wrong"], total
    assert total["correct"] >= 0.95 * total["loud"], total
    for family, row in stats.items():
        if row["wrong"] >= 5:  # a per-OS bar only where the corpus holds enough wrong lines to mean something
            assert row["flagged"] >= 0.8 * row["wrong"], (family, row)
        assert row["correct"] >= 0.95 * row["loud"], (family, row)
