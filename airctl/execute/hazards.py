"""Happens-before at run time: vector clocks, cross-stream read races and in-place hazards.

Each stream keeps a vector clock; a node's stamp is (stream, position, clock). A sync merges
the source's stamp into the waiting stream's clock (:func:`merge`). A read of a value produced
on another stream whose stamp the reader's clock does not cover is a race (:func:`check_reads`);
an in-place write is checked the same way against earlier readers and writers of its tensor
(:func:`track_inplace`). Each race is a :class:`~airctl.execute.timeline.Race` naming both
nodes with their source lines; the static twin of these checks is
:mod:`airctl.verify.happens_before`.
"""

from __future__ import annotations

from airctl.execute.run_state import RunState, Stamp
from airctl.execute.schedule import Item, stream_word
from airctl.execute.timeline import Race
from airctl.verify.happens_before import INPLACE_HAZARD, unordered_read_why


def merge(clock: list[int], src: Stamp) -> None:
    """Merge ``src``'s stamp into ``clock`` in place (a sync from ``src``'s node)."""
    for k, v in enumerate(src.clock):
        if v > clock[k]:
            clock[k] = v
    if src.pos > clock[src.sid]:
        clock[src.sid] = src.pos


def check_reads(st: RunState, s: int, it: Item) -> None:
    """Races of ``it`` (about to run on stream ``s``) with the cross-stream producers it reads."""
    if not it.reads:
        return
    clock = st.clock[s]
    sched = st.sched
    for j in it.reads:
        src = st.stamps[j]
        if src is None or src.sid == s or clock[src.sid] >= src.pos:
            continue
        p = sched.items[j]
        why = unordered_read_why(sched.mode, sched.npugraph_ex)
        st.races.append(Race(
            it.name, p.name, sched.streams[s], sched.streams[src.sid], it.source, p.source,
            f"{it.name}{at(it.source)} on {stream_word(sched.streams[s])} reads {p.name}{at(p.source)} "
            f"produced on {stream_word(sched.streams[src.sid])}, with no record/wait ordering them ({why})"))


def track_inplace(st: RunState, s: int, it: Item, stamp: Stamp) -> None:
    """After ``it`` ran on ``s``: races of its in-place write and of its reads of written tensors."""
    sched = st.sched
    clock = st.clock[s]

    def ordered(x: Stamp) -> bool:
        return x.sid == s or clock[x.sid] >= x.pos

    def race(reader: Item, producer: Item, rs: int, ps: int, text: str) -> None:
        st.races.append(Race(reader.name, producer.name, sched.streams[rs], sched.streams[ps], reader.source,
                             producer.source, text + INPLACE_HAZARD))

    with st.hb_lock:
        for j in it.mutated_reads:
            w = st.last_writer.get(j)
            if w is not None and w[0] != it.index and not ordered(w[1]):
                wi = sched.items[w[0]]
                race(it, wi, s, w[1].sid, f"{wi.name}{at(wi.source)} writes {sched.items[j].name} in place on "
                     f"{stream_word(sched.streams[w[1].sid])}; {it.name}{at(it.source)} on "
                     f"{stream_word(sched.streams[s])} uses it")
        t = it.inplace_target
        if t is not None:
            for c, (ri, rst) in st.readers.get(t, {}).items():
                if c != s and ri != it.index and not ordered(rst):
                    r = sched.items[ri]
                    race(r, it, c, s, f"{r.name}{at(r.source)} on {stream_word(sched.streams[c])} reads "
                         f"{sched.items[t].name}; {it.name}{at(it.source)} on {stream_word(sched.streams[s])} "
                         f"then writes it in place")
            st.last_writer[t] = (it.index, stamp)
        for j in it.mutated_reads:
            st.readers.setdefault(j, {})[s] = (it.index, stamp)


def at(source: str | None) -> str:
    """`` (file:line)`` after a node name, or nothing."""
    return f" ({source})" if source else ""
