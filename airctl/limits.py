"""Every size and count limit airctl puts on what it reads, in one table (docs/reliability.md "Limits").

An input with no end (``/dev/zero``, a FIFO, a 50 MB pass file, a YAML alias bomb, a 150 MB index)
must end in a clear error naming the file, in bounded memory, not in the machine's swap. Each
reader checks its input against the limit here before it reads, and reads no further than it;
the numbers are far above anything airctl or a user writes by hand, and well under what would
take 500 MB of memory to hold. Changing one here changes the check and the message; the docs'
table names these constants.

This module sits on the floor: it imports nothing of airctl.
"""

from __future__ import annotations

import os

MiB = 1 << 20

MODEL_SCRIPT_BYTES = 16 * MiB
"""A model script (``airctl compile``/``run``): Python source; the largest generated model files are a few MB."""

PASS_FILE_BYTES = 4 * MiB
"""A YAML pass file: 20,000 passes (the pass-count benchmark's largest) take 2.1 MB."""

PASS_FILE_NODES = 400_000
"""YAML nodes in a pass file, counted with every alias expanded (a "billion laughs" stops here)."""

INDEX_BYTES = 64 * MiB
"""``index.json``: 20,000 stages make about 10 MB."""

POINTER_BYTES = 4096
"""The current-run pointer (``latest``): one run id, under 100 bytes."""

CSV_HEADER_BYTES = 64 * 1024
"""A profiler CSV's header line: a few dozen column names."""

CSV_HEADER_COLUMNS = 1000
"""Columns in a profiler CSV's header."""

NAME_PATTERN_CHARS = 1000
"""A ``name:`` selector's regular expression, in characters."""

NAME_PATTERN_STATES = 20_000
"""States of a ``name:`` selector's compiled automaton (``x{1000}{1000}`` stops here)."""

COMPILE_STAT_BYTES = 16 * MiB
"""GE's compile statistics (``fusion_result.json`` of ``ge_config.export_compile_stat``): GE writes a few KiB."""

PROFILE_META_BYTES = 16 * MiB
"""A profiler folder's small JSON files (``profiler_info*.json``, ``profiler_metadata.json``) and a prediction's
``summary.json``: a few KiB each. Over it, the file is read as absent, as a file that is not JSON is."""

COLLECTIVE_LOG_BYTES = 256 * MiB
"""A rank's ``collectives.jsonl`` read back by ``airctl check`` (about 200 bytes an event: over a million)."""

PROFILE_TABLE_BYTES = 512 * MiB
"""A profiler's CSV table (``kernel_details.csv``, ``step_trace_time.csv``): about 300 bytes a kernel, so over a
million kernel launches; the table is held whole while it is parsed."""

PROFILE_TRACE_BYTES = 512 * MiB
"""A run's ``profile/trace.json`` read back by ``airctl show --node`` (a million tasks take about 250 MB)."""

NPROC_PER_CPU = 4
"""``--nproc`` at most this many ranks per CPU core this process may use (and never over 256)."""

NPROC_MAX = 256

COLLECTIVE_TIMEOUT_S = 60.0
"""A rank's default process-group timeout under sim (``--collective-timeout``): a rank that waits longer
for its peers in a collective fails (a time limit, beside the sizes: the run must end)."""


def nproc_limit() -> int:
    """The most ranks ``--nproc`` accepts on this machine: :data:`NPROC_PER_CPU` per usable core,
    at least 2 (a two-rank run works anywhere), at most :data:`NPROC_MAX`."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(2, min(NPROC_MAX, NPROC_PER_CPU * cores))
