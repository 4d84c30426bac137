"""A lean ledger: content-addressed, compressed snapshots that every reader still reads; index.json
rewrites bounded; the log compressed at the end."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from airctl.errors import GraphReadError
from airctl.graph.model import Graph, Node
from airctl.io.compressed import gunzip, gzip_bytes, open_bytes
from airctl.io.json_io import read_json, write_json
from airctl.io.read import read_graph
from airctl.ledger.reader import Ledger
from airctl.ledger.writer import LedgerWriter
from tests.io.dumps import DUMPS


def _graph(n: int) -> Graph:
    nodes = [Node("x", "placeholder", kind="placeholder")]
    nodes += [Node(f"n{i}", "aten.abs.default", inputs=[nodes[-1].name]) for i in range(n)]
    return Graph("g", "fx", nodes)


def test_a_graph_seen_before_refers_to_its_files_and_text_is_made_only_once(tmp_path: Path) -> None:
    w = LedgerWriter.create(tmp_path, "m")
    w.graph("1-inference", "inference")
    made: list[str] = []

    def text(label: str):
        return lambda: made.append(label) or f"code {label}\n"

    a, b = _graph(2), _graph(3)
    s0 = w.add_stage("1-inference", "aot-inference", a, text=text("aot"), content_key="A")
    s1 = w.add_stage("1-inference", "after:p", a, changed=False, text=text("p"), content_key="A")
    s2 = w.add_stage("1-inference", "after:q", b, changed=True, text=text("q"), content_key="B")
    s3 = w.add_stage("1-inference", "after:undo", a, changed=True, text=text("undo"), content_key="A")
    s4 = w.add_stage("1-inference", "fx-final", b, text=text("final"), content_key="B")
    w.finish()
    assert made == ["aot", "q"]  # texts of graphs already written are never generated
    assert s0.file == s1.file == s3.file == "graphs/1-inference/000-aot-inference.json.gz"
    assert s2.file == s4.file == "graphs/1-inference/002-after_q.json.gz"
    assert s3.text == s0.text and s3.node_delta == -1
    files = sorted(p.name for p in (w.root / "graphs" / "1-inference").iterdir())
    assert files == ["000-aot-inference.json.gz", "000-aot-inference.txt.gz", "002-after_q.json.gz",
                     "002-after_q.txt.gz"]
    led = Ledger.open(w.root)
    assert [len(led.load(s)) for s in led.stages()] == [3, 3, 4, 3, 4]
    assert gzip.decompress((w.root / s0.text).read_bytes()) == b"code aot\n"  # zcat reads it too
    # the writer hands back what it wrote without reading the file: kept as its JSON text once encoded
    # (a string, nothing for the garbage collector to walk), not as the graph's objects
    (w.root / s2.file).unlink()
    assert w.stage_graph(s2).nodes == b.nodes and w.graphs_written[s2.file].nodes == b.nodes
    assert set(w.graphs_written) == {s0.file, s2.file} and w._snapshots.pending == 0


def test_readers_read_compressed_snapshots_and_dumps(tmp_path: Path) -> None:
    g = _graph(2)
    snap = tmp_path / "001-aot.json.gz"
    snap.write_bytes(gzip_bytes(write_json(g)))
    assert read_graph(snap).nodes == g.nodes and read_json(snap).nodes == g.nodes
    assert read_graph(snap).name == "g"
    for name in ("optimized.pbtxt", "optimized.txt"):
        plain = DUMPS / "stream" / name
        packed = tmp_path / (name + ".gz")
        packed.write_bytes(gzip_bytes(plain.read_bytes()))
        assert read_graph(packed).nodes == read_graph(plain).nodes
        assert read_graph(packed).name == read_graph(plain).name  # named from "optimized", not ".pbtxt"


def test_damaged_compressed_files_are_graph_read_errors(tmp_path: Path) -> None:
    good = gzip_bytes(write_json(_graph(50)))
    (tmp_path / "cut.json.gz").write_bytes(good[: len(good) // 2])
    (tmp_path / "junk.json.gz").write_bytes(b"not gzip at all")
    with pytest.raises(GraphReadError, match="truncated"):
        read_graph(tmp_path / "cut.json.gz")
    with pytest.raises(GraphReadError, match="not a valid gzip"):
        read_graph(tmp_path / "junk.json.gz")
    with pytest.raises(GraphReadError, match="expands to more than"):
        gunzip(gzip_bytes(b"0" * 10_000), "bomb.gz", limit=1000)


def test_a_compressed_stream_read_to_its_end_is_checked_like_one_read_in_steps(tmp_path: Path) -> None:
    """``read()`` of a whole stream inflates in large chunks: what it returns, and the errors of a cut
    file or of too many inflated bytes, are those of reading it 8 KiB at a time."""
    text = write_json(_graph(3000)).encode()  # far more than the 64 KiB a reader looks at first
    good = gzip_bytes(text)
    (tmp_path / "big.json.gz").write_bytes(good)
    (tmp_path / "cut.json.gz").write_bytes(good[: len(good) * 3 // 4])
    with open_bytes(tmp_path / "big.json.gz") as stream:
        assert stream.read(10) == text[:10] and stream.read() == text[10:]
    assert read_graph(tmp_path / "big.json.gz").nodes == _graph(3000).nodes
    with pytest.raises(GraphReadError, match="truncated"), open_bytes(tmp_path / "cut.json.gz") as stream:
        stream.read()
    with pytest.raises(GraphReadError, match="expands to more than"), \
            open_bytes(tmp_path / "big.json.gz", limit=len(text) // 2) as stream:
        stream.read()


def test_index_rewrites_are_bounded_and_forced_at_the_end(tmp_path: Path, monkeypatch) -> None:
    w = LedgerWriter.create(tmp_path, "m")
    w.graph("1-inference", "inference")
    writes = []
    original = Path.replace

    def counting(self, target):
        if Path(target).name == "index.json":
            writes.append(1)
        return original(self, target)

    monkeypatch.setattr(Path, "replace", counting)
    w._flush_cost = 3600.0  # noqa: SLF001 - as if rewriting index.json had taken an hour
    for i in range(50):
        w.add_stage("1-inference", f"after:p{i}", _graph(1), changed=False, content_key="same")
    assert writes == []  # held back: rewriting it after every stage would dominate the run
    w.finish()
    assert len(writes) == 1
    assert len(json.loads((w.root / "index.json").read_text())["graphs"][0]["stages"]) == 50


def test_log_is_compressed_once_the_run_is_over(tmp_path: Path) -> None:
    w = LedgerWriter.create(tmp_path, "m")
    (w.root / "log.txt").write_text("line 1\nline 2\n")
    w.compress_log()
    assert not (w.root / "log.txt").exists()
    assert gzip.decompress((w.root / "log.txt.gz").read_bytes()) == b"line 1\nline 2\n"
    assert json.loads((w.root / "index.json").read_text())["log"] == "log.txt.gz"
    w.compress_log()  # once only
    assert w.run_index.log == "log.txt.gz"


def _full_disk_for_b(monkeypatch: pytest.MonkeyPatch) -> None:
    import errno

    from airctl.ledger import files

    real = files.write_file

    def write(path: Path, data: str | bytes) -> None:
        if "after_b" in path.name:
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        real(path, data)

    monkeypatch.setattr(files, "write_file", write)


def test_a_snapshot_the_disk_could_not_take_leaves_the_index_and_stops_the_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A full disk met by the background writer: the index never lists a missing file, the run fails cleanly."""
    from airctl.errors import LedgerError

    _full_disk_for_b(monkeypatch)
    w = LedgerWriter.create(tmp_path, "m")
    w.graph("1-inference", "inference")
    w.add_stage("1-inference", "after:a", _graph(1), text="a\n", content_key="A")
    w.add_stage("1-inference", "after:b", _graph(2), text="b\n", content_key="B")
    w._files.wait()  # the background writer has met the full disk: the next stage stops the run
    with pytest.raises(LedgerError, match="cannot write the ledger"):
        w.add_stage("1-inference", "after:c", _graph(3), text="c\n", content_key="C")
    w.fail("cannot write the ledger", None)  # what the pipeline does with that error
    w.finish("failed")
    index = json.loads((w.root / "index.json").read_text())
    assert index["status"] == "failed" and "cannot write the ledger" in index["error"]
    assert [s["name"] for s in index["graphs"][0]["stages"]] == ["after:a"]
    assert any("left out" in n for n in index["notes"])
    assert not list(w.root.rglob("*.tmp"))
    assert Ledger.open(w.root).load(Ledger.open(w.root).stages()[0]).nodes == _graph(1).nodes


def test_a_run_ending_ok_with_a_snapshot_missing_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from airctl.errors import LedgerError

    _full_disk_for_b(monkeypatch)
    w = LedgerWriter.create(tmp_path, "m")
    w.graph("1-inference", "inference")
    w.add_stage("1-inference", "after:a", _graph(1), content_key="A")
    w.add_stage("1-inference", "after:b", _graph(2), content_key="B")
    with pytest.raises(LedgerError, match="No space left"):
        w.finish()
    index = json.loads((w.root / "index.json").read_text())
    assert index["status"] == "failed" and [s["name"] for s in index["graphs"][0]["stages"]] == ["after:a"]
