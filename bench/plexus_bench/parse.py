"""Parse the output of one benchmark program.

The format is defined in bench/util.h and shared by every program in bench/
and bench/limits/:

    # plexus-bench: <name>
    # <key>: <value>            metadata
    # columns: size_B latency_us
    0 0.42                      one row per message size
    # error: <text>             a failed data check: the run is invalid
    # end                       the program finished normally

Lines that are neither comments nor rows of numbers (a launcher's warning
that went to stdout, say) are kept in `noise` and otherwise ignored.
Several outputs can be merged (start-up runs one job per rank count).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Dict, List, Optional


@dataclass
class BenchOutput:
    name: Optional[str] = None
    meta: Dict[str, str] = field(default_factory=dict)
    columns: List[str] = field(default_factory=list)
    rows: List[List[float]] = field(default_factory=list)
    complete: bool = False
    errors: List[str] = field(default_factory=list)
    noise: List[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Finished, no failed check, and at least one well-formed row."""
        return self.complete and not self.errors and bool(self.columns) and bool(self.rows)

    def problem(self) -> Optional[str]:
        """Why the output is not usable, or None."""
        if self.errors:
            return "wrong result: " + self.errors[0]
        if not self.columns:
            return "no '# columns:' line in the output"
        if not self.rows:
            return "no result rows in the output"
        if not self.complete:
            return "output ends early (no '# end' line)"
        return None

    def series(self, column: str) -> Dict[float, float]:
        """{x: value} for one column, x being the first column (the size)."""
        idx = self.columns.index(column)
        return {row[0]: row[idx] for row in self.rows}

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "meta": dict(self.meta),
            "columns": list(self.columns),
            "rows": [list(r) for r in self.rows],
            "complete": self.complete,
            "errors": list(self.errors),
        }

    @classmethod
    def from_dict(cls, d: dict) -> "BenchOutput":
        return cls(
            name=d.get("name"),
            meta=dict(d.get("meta", {})),
            columns=list(d.get("columns", [])),
            rows=[list(r) for r in d.get("rows", [])],
            complete=bool(d.get("complete")),
            errors=list(d.get("errors", [])),
        )


def _number(text: str) -> float:
    v = float(text)
    if math.isnan(v):
        raise ValueError("nan")
    return v


def parse_output(text: str) -> BenchOutput:
    out = BenchOutput()
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            body = line[1:].strip()
            if body == "end":
                out.complete = True
                continue
            key, sep, value = body.partition(":")
            key = key.strip()
            if not sep or not key or " " in key:
                continue  # a free-form comment
            value = value.strip()
            if key == "plexus-bench":
                out.name = value
            elif key == "columns":
                out.columns = value.split()
            elif key == "error":
                out.errors.append(value)
            else:
                out.meta[key] = value
            continue
        fields = line.split()
        try:
            numbers = [_number(f) for f in fields]
        except ValueError:
            out.noise.append(raw)
            continue
        if not out.columns:
            out.noise.append(raw)
            continue
        if len(numbers) != len(out.columns):
            out.errors.append(
                "row '%s' has %d fields, expected %d (%s)"
                % (line, len(numbers), len(out.columns), " ".join(out.columns))
            )
            continue
        out.rows.append(numbers)
    return out


def merge_outputs(parts: List[BenchOutput]) -> BenchOutput:
    """One output from several jobs of the same program (rows appended).
    Complete only if every part is; columns must agree."""
    if not parts:
        return BenchOutput()
    merged = BenchOutput(name=parts[0].name, columns=list(parts[0].columns), complete=True)
    for p in parts:
        merged.meta.update(p.meta)
        merged.errors.extend(p.errors)
        merged.noise.extend(p.noise)
        merged.complete = merged.complete and p.complete
        if p.columns != merged.columns:
            merged.errors.append(
                "columns differ between jobs: %s vs %s" % (merged.columns, p.columns)
            )
            continue
        merged.rows.extend(list(r) for r in p.rows)
    return merged


def add_column(out: BenchOutput, name: str, values: List[float]) -> None:
    """Append a column measured by the runner (e.g. the job's wall time)."""
    if len(values) != len(out.rows):
        raise ValueError("need one value per row")
    out.columns.append(name)
    for row, v in zip(out.rows, values):
        row.append(v)
