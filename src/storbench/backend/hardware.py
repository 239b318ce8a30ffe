"""What the drives themselves said before and after one fio run (pure): their SMART / health
readings (:class:`storbench.storage.health.DriveHealth`) and what grew between them."""

from __future__ import annotations

from dataclasses import dataclass

from ..storage.health import DriveHealth, HealthChange, health_changes, written_during


@dataclass(frozen=True)
class HardwareActivity:
    """The drives' readings just before and just after fio ran (same drives, same order where both were read)."""

    before: tuple[DriveHealth, ...] = ()
    after: tuple[DriveHealth, ...] = ()
    problems: tuple[str, ...] = ()

    def pairs(self) -> tuple[tuple[DriveHealth, DriveHealth], ...]:
        after = {d.device: d for d in self.after}
        return tuple((b, after[b.device]) for b in self.before if b.device in after)

    def changes(self) -> tuple[HealthChange, ...]:
        """Every error and thermal counter that grew during the run, drive by drive."""
        return tuple(c for b, a in self.pairs() for c in health_changes(b, a))

    def written_bytes(self) -> dict[str, int]:
        """The bytes each drive says it took during the run (where it counts them)."""
        return {b.device: w for b, a in self.pairs() if (w := written_during(b, a)) is not None}
