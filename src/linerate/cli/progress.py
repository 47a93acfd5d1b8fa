"""Progress reporting: listens to scheduler events. A rich progress bar (cells done/total, current
cell, ETA) on a terminal; one plain line per trial otherwise (CI logs, pipes), whose ETA is the
scheduler's: remaining trials x this run's measured wall time per trial."""

from __future__ import annotations

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from linerate.cli.printing import escape_controls, raw_stderr
from linerate.experiment.plugins import Event
from linerate.report.layout import format_mbps


def _text(value: object) -> str:
    """Outside text for rich: control characters escaped, and no rich markup in it obeyed."""
    from rich.markup import escape

    return escape(escape_controls(str(value)))


def describe_cell(cell: dict) -> str:
    label = f"IPv{cell['family']} P{cell['streams']} {cell['direction']}"
    extra = [f"{k}={cell[k]}" for k in ("firewall", "mtu") if k in cell]
    return f"{label} {' '.join(extra)}"


def _duration(seconds: float) -> str:
    minutes, secs = divmod(int(round(seconds)), 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


class ProgressReporter:
    def __init__(self, console: Console | None = None):
        # rich draws its bar with escapes of its own: it gets the raw stream, and _text() escapes
        # what it is given from outside
        self.console = console or Console(file=raw_stderr(), soft_wrap=True)
        self.progress: Progress | None = None
        self.task = None

    def __enter__(self) -> "ProgressReporter":
        if self.console.is_terminal:
            self.progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                     TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                                     console=self.console)
            self.progress.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        if self.progress:
            self.progress.__exit__(*exc)

    def __call__(self, event: Event) -> None:
        if event.type == "start":
            if self.progress:
                self.task = self.progress.add_task("starting", total=event.planned)
            else:
                self.console.print(f"running {event.planned} trials ({_text(event.message)})", highlight=False)
        elif event.type == "trial" and event.trial is not None:
            result = (f"{format_mbps(event.trial.throughput_bps)} Mbit/s" if event.trial.ok
                      else f"FAILED: {_text(event.trial.error)}")
            line = f"{_text(describe_cell(event.cell))} #{event.repetition}: {result}"
            if self.progress and self.task is not None:
                self.progress.update(self.task, completed=event.done, total=event.planned,
                                     description=_text(describe_cell(event.cell)))
            else:
                eta = "" if event.eta_s is None else f" (ETA {_duration(event.eta_s)})"
                self.console.print(f"[{event.done}/{event.planned}] {line}{eta}", highlight=False)
        elif event.type == "calibrate":
            self.console.print(f"calibration: {_text(event.message)}", highlight=False)
        elif event.type == "message":  # a kind's own progress line (a search trial, a tuning decision)
            self.console.print(_text(event.message), highlight=False)
        elif event.type == "telemetry":
            self.console.print(f"telemetry: {_text(event.message)}", highlight=False)
        elif event.type == "retry":
            self.console.print(f"retrying {_text(describe_cell(event.cell))} (attempt {event.attempt} failed: "
                               f"{_text(event.message)})", highlight=False)
