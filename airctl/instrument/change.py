"""Change detection is the runner's own (:func:`airctl.instrument.detect_change`): every after-hook
sees ``run.changed`` without depending on another instrument. This name stays for importers of
:func:`fingerprint`."""

from airctl.instrument import fingerprint

__all__ = ["fingerprint"]
