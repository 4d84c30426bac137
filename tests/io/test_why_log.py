"""The reader of ``airctl why``'s events in log text (airctl/io/why_log.py), on real logs of the
fixtures/scripts/why/ scripts (fixtures/imports/why/README.md says how they were made)."""

from __future__ import annotations

from pathlib import Path

from airctl.io.torchair_why import capture_rows
from airctl.io.why_log import dynamo_event, is_dynamo_log, plain_guard, read_why_file, read_why_log

LOGS = Path(__file__).resolve().parents[2] / "fixtures" / "imports" / "why"


def test_torch_logs_give_each_graph_break_and_recompile_with_its_line() -> None:
    events = read_why_file(LOGS / "torch_logs.txt")
    got = [(e["kind"], Path(e["file"]).name, e["line"], e["reason"]) for e in events]
    assert got == [
        ("graph_break", "data_branch.py", 17, "Data-dependent branching"),
        ("recompile", "batch_size.py", 16, "x.size(0) was 4, now 8"),
        ("recompile", "batch_size.py", 16, "x.size(0) was 8, now 16"),
        ("graph_break", "print_in_forward.py", 17, "Failed to trace builtin operator"),
    ]
    assert [e["compile_id"] for e in events] == ["0/0", "0/1", "0/2", "0/0"]
    assert events[0]["gb_id"] == "GB0170" and "torch.cond" not in events[0]["dynamo_hint"]  # the first useful hint
    assert events[2]["failed_entry"] == "0/1" and len(events[2]["guard_failures"]) == 2
    assert [e["seq"] for e in events] == sorted(e["seq"] for e in events)


def test_the_scripts_own_output_between_records_is_not_an_event() -> None:
    lines = (LOGS / "torch_logs.txt").read_text().splitlines()
    assert "forward ran" in lines  # print_in_forward.py's print, between the log lines
    assert len(read_why_log(lines)) == 4


def test_npugraph_ex_lines_become_the_capture_rows_a_run_records() -> None:
    events = read_why_file(LOGS / "npugraph_ex.log")
    assert [e["kind"] for e in events if e["kind"] == "recompile"] == ["recompile"]
    rows = capture_rows([e for e in events if e["kind"] != "recompile"])
    assert [(r["graph_name"], r["event"], r["call"], r.get("key")) for r in rows] == [
        ("graph_1", "capture", 1, "no_updated_input"), ("graph_2", "capture", 1, "[6]"),
        ("graph_2", "recapture", 2, "[8]"), ("graph_2", "fallback", 3, None)]
    assert rows[2]["reason"] == "input shapes changed: [8] (captured before: [6])"
    assert rows[3]["reason"] == "capture_limit 2 reached: every later call runs eagerly"


def test_a_known_key_recaptured_takes_its_reason_from_npugraph_exs_counters() -> None:
    head = "[DEBUG] NPUGRAPH_EX(1,python):2026-11-27 12:00:00.000.000 [acl_graph.py:1]1 "
    counts = ("For graph graph_1 : the count of captures is {}, and count of recaptures caused by mutated inputs "
              "changed is {}, and count of recaptures caused by global limit changed is 0, and count of recaptures "
              "caused by force_recapture is 0")
    capture = "No find captured AclGraph{{id: {}}} of fx_graph graph_1 with graph key {{[4]}}, and start to capture it."
    lines = [head + capture.format(1),
             head + counts.format(1, 0),
             head.replace("DEBUG", "INFO") + "Find captured AclGraph{id: 1} of fx_graph graph_1 with graph key {[4]}.",
             head + "The current AclGraph needs to be recaptured for fx_graph graph_1 with graph key {[4]}.",
             head + capture.format(2),
             head + counts.format(1, 1)]
    rows = capture_rows(read_why_log(lines))
    assert [(r["event"], r["call"]) for r in rows] == [("capture", 1), ("recapture", 2)]
    assert rows[1]["reason"] == "an input the graph mutates moved to another address"


def test_the_recompile_limit_warning_says_the_function_runs_eagerly() -> None:
    text = ("torch._dynamo hit config.recompile_limit (8)\n   function: 'forward' (/m.py:16)\n"
            "   last reason: 0/7: tensor 'x' size mismatch at index 0. expected 9, actual 10\n"
            'To log all recompilation reasons, use TORCH_LOGS="recompiles".')
    event = dynamo_event(None, text, "0/8")
    assert event is not None and event["kind"] == "recompile_limit"
    assert (event["file"], event["line"], event["value"]) == ("/m.py", 16, 8)
    assert event["last_reason"] == "x.size(0) was 9, now 10"


def test_guards_in_words() -> None:
    assert plain_guard("tensor 'L['x']' stride mismatch at index 1. expected 8, actual 1")["reason"] == \
        "x.stride(1) was 8, now 1"
    assert plain_guard("tensor 'x' requires_grad mismatch. expected requires_grad=0")["guard"] == "other"
    assert plain_guard("L['self'].training == False")["reason"] == "L['self'].training == False"


def test_only_logs_with_dynamos_events_count_as_dynamo_logs() -> None:
    assert is_dynamo_log((LOGS / "torch_logs.txt").read_text()[:4096])
    assert not is_dynamo_log("V1127 11:55:40.053000 5761 torch/_dynamo/x.py:1] [0/0] [__guards] GUARDS:\n")


def test_cache_compile_lines_give_miss_hit_and_the_dropped_cache() -> None:
    events = read_why_file(LOGS / "cache_compile.log")
    assert [(e["kind"], e.get("function")) for e in events] == [
        ("cache_miss", "Model.forward"), ("cache_hit", "Model.forward"), ("cache_miss", "Model.forward"),
        ("recompile", "forward"), ("cache_dropped", "Model.forward")]
    assert events[0]["cache"].endswith("/Model_static_882f057be65aadcfe6eaf10c65286a45/forward/compiled_module")
    assert events[0]["seq"] == 1 and events[1]["seq"] == 4  # the miss's module repr runs over lines 2-3


def test_reduce_overheads_limit_and_static_kernel_lines() -> None:
    # messages as torch-npu 2.13 writes them (torchair/_acl_concrete_graph/acl_graph.py, static_kernel.py)
    head = "[{}] TORCHAIR(1,python):2026-11-27 12:00:00.000.000 [acl_graph.py:1]1 "
    lines = [head.format("WARNING") + "The static_capture_size_limit reached when capturing fx_graph graph_1 with "
             "graph key [4]12, we will fall back to eager for all subsequent executions. Excessive recapture can "
             "degrade performance. The current static_capture_size_limit is 2. If recapture are expected, consider "
             "increasing debug.aclgraph.static_capture_size_limit to an appropriate value.",
             head.format("DEBUG") + "Rank 0: kernels_0.run install success, msg: ok",
             head.format("INFO") + "Since /tmp/k/kernels_0.run is already installed, skipping installation."]
    fallback, miss, hit = read_why_log(lines)
    assert (fallback["kind"], fallback["limit_name"], fallback["limit"]) == ("fallback", "static_capture_size_limit", 2)
    assert capture_rows([fallback])[0]["reason"] == \
        "static_capture_size_limit 2 reached: every later call runs eagerly"
    assert (miss["kind"], miss["package"]) == ("static_kernel_miss", "kernels_0.run")
    assert (hit["kind"], hit["package"]) == ("static_kernel_hit", "/tmp/k/kernels_0.run")


def test_a_keyword_input_is_named_as_the_python_that_reads_it() -> None:
    """Decorated forwards (transformers') get their inputs as ``**kwargs``: the guard names ``kwargs['k']``."""
    for dynamo in ("kwargs['input_ids']", "L['kwargs']['input_ids']"):
        event = plain_guard(f"tensor '{dynamo}' size mismatch at index 1. expected 16, actual 24")
        assert event["reason"] == "kwargs['input_ids'].size(1) was 16, now 24"
        assert event["input"] == "kwargs['input_ids']"
        compile(event["reason"].split(" was ")[0], "<reason>", "eval")
    assert plain_guard("tensor 'L['x']' size mismatch at index 0. expected 4, actual 8")["input"] == "x"


def test_a_graph_break_inside_airctls_stand_in_is_placed_at_the_users_line() -> None:
    """Sim's factory wrappers are inlined into the user's code: the break is the user's line that called them."""
    import airctl.sim.patched_torch_device_word as word

    text = (f"Graph break in user code at {word.__file__}:77\nGraph Break Reason: Unsupported call\n"
            "User code traceback:\n"
            '  File "/w/model.py", line 12, in forward\n    mask = torch.ones(4, device="npu")\n'
            f'  File "{word.__file__}", line 77, in factory\n    return original(*args, **kwargs)\n')
    event = dynamo_event("graph_breaks", text)
    assert event is not None and (event["file"], event["line"]) == ("/w/model.py", 12)
