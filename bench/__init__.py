"""``make bench``: what a request costs, how fast the functions start, how logs scale, how the stack performs.

Each module measures one area and returns a ``Section``; ``python -m bench`` runs them all and writes
BENCHMARKS.md with the machine and the date, every figure next to its target.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from chalicelib.executors.containers import Runtime


@dataclass(frozen=True)
class Figure:
    """One measurement, the target it is held to, and whether it meets it (None: no target, for comparison)."""

    measure: str
    value: str
    target: str = ""
    met: bool | None = None


@dataclass
class Section:
    """A titled group of figures, with a few words on how they were taken."""

    title: str
    how: str
    figures: list[Figure] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def markdown(self) -> str:
        lines = [f"## {self.title}", "", self.how, "", "| Measure | Figure | Target | Met |", "|---|---|---|---|"]
        for figure in self.figures:
            met = "" if figure.met is None else ("met" if figure.met else "**NOT MET**")
            lines.append(f"| {figure.measure} | {figure.value} | {figure.target} | {met} |")
        lines.extend(["", *(f"- {note}" for note in self.notes)] if self.notes else [])
        return "\n".join(lines) + "\n"


def container_runtime(section: Section) -> Runtime | None:
    """This machine's container runtime; None where no container can run, with a note in ``section`` saying so."""
    from chalicelib.executors import containers  # loaded by the benches that run containers only

    made = containers.runtime()
    if isinstance(made, containers.Runtime):
        return made
    section.notes.append(f"Not measured: no container can run here ({made}).")
    return None
