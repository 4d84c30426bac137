"""The catalogue entries of the capture-safety and device-budget rules (R16-R21, docs/checks.md).

What stops a multi-stream plan on a real NPU is mostly not a race: streams run out across captured
graphs, host work inside a captured region, a wait the compiler moved, a copy read on another stream,
core limits that add up past the chip, a replay of a graph whose recapture check was switched off.
These six rules say so before the run. They are kept apart from :mod:`airctl.verify.rules`' table
(which adds them to ``RULES``) so each family's module and its catalogue entry stay side by side; both
build on :class:`airctl.verify.rule.Rule`.

``ref`` extends reference/torchair.md §2.3 (R1-R15) with R16-R21; each rule's public source is in
the docstring of its module and in docs/checks.md.
"""

from __future__ import annotations

from airctl.modes import Mode
from airctl.verify.rule import FX_ARTIFACTS, Rule

CAPTURE_RULES = (
    Rule("stream_budget", "R16", "streams or events of the run's captured graphs past the device's limit",
         "error", "error", ("fx",),
         "fewer captured sizes (npugraph_ex `capture_limit`, the serving stack's capture sizes), fewer graphs "
         "(fewer graph breaks), or fewer side streams per graph: every stream a plan adds is multiplied by "
         "every capture of every graph",
         seen_in=("pass-runner",),
         seen_how="needs a run: the captures (npugraph_ex's and aclgraph's) are counted while the model runs"),
    Rule("capture_unsafe_op", "R17", "host synchronisation, a synchronous copy or a data-dependent size "
         "inside a captured region", None, "error", ("fx",),
         "move the host work out of the compiled region (compute it before the call and pass it in), give "
         "data-dependent ops a static size (torch.nonzero_static(x, size=N)), or use max-autotune for this graph",
         seen_in=FX_ARTIFACTS,
         seen_how="on the NPU: `rtMemcpy ErrCode=107030 [the current capture mode does not support this "
                  "operation]`, or 507015 at capture end"),
    Rule("wait_moved_by_compiler", "R18", "a wait with no data dependency on the work it guards, which a pass "
         "of the compiler moved past that work, or may move in this mode", "error", "error", ("fx",),
         "thread the tensor through the wait so no pass can move one without the other",
         seen_in=("fx", "pass-runner"),
         seen_how="a move needs source lines (the guarded op is written after the wait but runs before it); a "
                  "wait a later pass may move needs a run's stages (which passes ran after the wait entered)",
         mode_hints=((Mode.MAX_AUTOTUNE,
                      "thread the tensor through the wait: `x = torchair.ops.npu_wait_tensor(x, dep)` right "
                      "before the guarded op makes it read the wait's output, so no pass can move it above"),)),
    Rule("cross_stream_copy_without_event", "R19", "a copy (host-device, pinned or on-device) made on one "
         "stream and used on another with no event between", "error", "error", ("fx",),
         "record an event on the copy's stream after the copy and wait on it on the stream that reads it "
         "(the pass file's record/wait, or `event.record(copy_stream)`; `event.wait(reader_stream)`)",
         seen_in=FX_ARTIFACTS,
         seen_how="on the NPU: intermittent hangs or stale reads beside HCCL and compute streams"),
    Rule("core_limits_exceed_device", "R20", "per-stream core limits that together exceed the device's cube "
         "or vector cores", None, "error", ("fx",),
         "lower the limits so the streams that run together fit the chip, cube and vector cores separately",
         seen_in=FX_ARTIFACTS,
         seen_how="nothing fails: the streams serialise on the cores they share"),
    Rule("stale_replay", "R21", "a replay with npugraph_ex's recapture validation switched off, after a "
         "mutated input moved", None, "error", ("fx",),
         "drop `unsafe_skip_npugraph_capture_validation` (npugraph_ex then recaptures when a mutated input "
         "moves), or keep every mutated input at one address (a static buffer copied into)",
         seen_in=("pass-runner",),
         seen_how="needs a run: the calls' input addresses are compared with the captured ones"),
)
