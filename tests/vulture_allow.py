"""Names vulture (at 60 % confidence) calls unused that are used, each group with the reason.

Run as the project's dead-code check: `.venv/bin/vulture` reads [tool.vulture] in pyproject.toml, which
names this file beside airctl/; tests/test_dead_code.py fails on any other name. A name that is really
dead is deleted, not added here.
"""

_ = object()

# read by the tests: the wheel drift test's table and enumerations (tests/sim/test_wheel_drift.py), the GE build's allocation, the mark of a command whose --json is reports's
allocation  # airctl/sim/ge_build.py:44
wheel_items  # airctl/sim/wheel_drift.py:154
unlisted  # airctl/sim/wheel_drift.py:175
DRIFT_TABLE  # airctl/sim/wheel_drift_table.py:26
public_ops  # airctl/sim/wheel_surface.py:40
_.airctl_reports  # airctl/cli/shown.py:85

# sim's stand-ins: the torch_npu, TorchAir and CANN surface that TorchAir, npugraph_ex and users' scripts reach by attribute (torch.npu.*, torchair's C++ bindings, profiler options)
_.optionxform  # airctl/sim/ascend_ir_files.py:151
_.create_module  # airctl/sim/child.py:64
register_hook  # airctl/sim/conformance/_privateuse1_backend.py:31
register_generator  # airctl/sim/conformance/_privateuse1_backend.py:36
inner_precise  # airctl/sim/npu_attention.py:155
pin_memory  # airctl/sim/npu_device.py:97
pin_memory  # airctl/sim/npu_device.py:101
_.has_primary_context  # airctl/sim/npu_device.py:176
_.is_built  # airctl/sim/npu_device.py:179
_.get_offset  # airctl/sim/npu_device.py:224
_.set_offset  # airctl/sim/npu_device.py:227
batch_split_factor  # airctl/sim/npu_ops.py:64
dst_type  # airctl/sim/npu_ops.py:77
group_index  # airctl/sim/npu_ops.py:77
quant_mode  # airctl/sim/npu_ops.py:77
smooth_scales  # airctl/sim/npu_ops.py:77
dst_type_max  # airctl/sim/npu_ops.py:78
smooth_scale1  # airctl/sim/npu_ops.py:83
smooth_scale2  # airctl/sim/npu_ops.py:83
output_mask  # airctl/sim/npu_ops.py:84
y_dtype  # airctl/sim/npu_ops.py:84
scales1  # airctl/sim/npu_ops.py:90
scales2  # airctl/sim/npu_ops.py:90
zero_points1  # airctl/sim/npu_ops.py:90
zero_points2  # airctl/sim/npu_ops.py:90
div_mode  # airctl/sim/npu_ops.py:91
dst_type  # airctl/sim/npu_ops.py:91
div_mode  # airctl/sim/npu_ops.py:95
scales  # airctl/sim/npu_ops.py:95
zero_points  # airctl/sim/npu_ops.py:95
_._fallback_to_eager  # airctl/sim/patched_npugraph_ex_acl_graph.py:89
_.__path__  # airctl/sim/patched_torch_npu.py:50
_autoload  # airctl/sim/torch_npu/__init__.py:29
__getattr__  # airctl/sim/torch_npu/__init__.py:33
__dir__  # airctl/sim/torch_npu/__init__.py:42
_.record_event  # airctl/sim/torch_npu/npu.py:46
_.synchronize  # airctl/sim/torch_npu/npu.py:54
enable_timing  # airctl/sim/torch_npu/npu.py:76
interprocess  # airctl/sim/torch_npu/npu.py:76
_.synchronize  # airctl/sim/torch_npu/npu.py:91
_.elapsed_time  # airctl/sim/torch_npu/npu.py:94
end_event  # airctl/sim/torch_npu/npu.py:94
default_stream  # airctl/sim/torch_npu/npu.py:110
StreamContext  # airctl/sim/torch_npu/npu.py:132
synchronize  # airctl/sim/torch_npu/npu.py:143
device_count  # airctl/sim/torch_npu/npu.py:151
current_device  # airctl/sim/torch_npu/npu.py:155
set_device  # airctl/sim/torch_npu/npu.py:159
get_device_properties  # airctl/sim/torch_npu/npu.py:167
empty_cache  # airctl/sim/torch_npu/npu.py:171
memory_allocated  # airctl/sim/torch_npu/npu.py:175
max_memory_allocated  # airctl/sim/torch_npu/npu.py:179
default_generators  # airctl/sim/torch_npu/npu.py:185
manual_seed_all  # airctl/sim/torch_npu/npu.py:192
init  # airctl/sim/torch_npu/npu.py:200
set_deterministic_level  # airctl/sim/torch_npu/npu.py:212
set_stream_limit  # airctl/sim/torch_npu/npu.py:225
get_device_limit  # airctl/sim/torch_npu/npu.py:229
fake_record_stream  # airctl/sim/torch_npu/npu.py:233
graph_pool_handle  # airctl/sim/torch_npu/npu.py:269
_.get_cann_version  # airctl/sim/torch_npu/npu.py:281
_._is_gte_cann_version  # airctl/sim/torch_npu/npu.py:285
__getattr__  # airctl/sim/torch_npu/npu.py:295
__dir__  # airctl/sim/torch_npu/npu.py:304
mem_get_info  # airctl/sim/torch_npu/npu_probes.py:56
memory_stats  # airctl/sim/torch_npu/npu_probes.py:60
memory_stats_as_nested_dict  # airctl/sim/torch_npu/npu_probes.py:64
memory_summary  # airctl/sim/torch_npu/npu_probes.py:68
abbreviated  # airctl/sim/torch_npu/npu_probes.py:68
max_memory_cached  # airctl/sim/torch_npu/npu_probes.py:80
max_memory_reserved  # airctl/sim/torch_npu/npu_probes.py:80
memory_cached  # airctl/sim/torch_npu/npu_probes.py:80
memory_reserved  # airctl/sim/torch_npu/npu_probes.py:80
reset_max_memory_allocated  # airctl/sim/torch_npu/npu_probes.py:81
reset_max_memory_cached  # airctl/sim/torch_npu/npu_probes.py:81
reset_peak_memory_stats  # airctl/sim/torch_npu/npu_probes.py:81
ipc_collect  # airctl/sim/torch_npu/npu_probes.py:82
reset_accumulated_memory_stats  # airctl/sim/torch_npu/npu_probes.py:82
get_per_process_memory_fraction  # airctl/sim/torch_npu/npu_probes.py:85
set_per_process_memory_fraction  # airctl/sim/torch_npu/npu_probes.py:89
is_bf16_supported  # airctl/sim/torch_npu/npu_probes.py:129
including_emulation  # airctl/sim/torch_npu/npu_probes.py:129
get_amp_supported_dtype  # airctl/sim/torch_npu/npu_probes.py:133
device_of  # airctl/sim/torch_npu/npu_probes.py:172
get_device_capability  # airctl/sim/torch_npu/npu_probes.py:176
can_device_access_peer  # airctl/sim/torch_npu/npu_probes.py:180
peer_device  # airctl/sim/torch_npu/npu_probes.py:180
utilization  # airctl/sim/torch_npu/npu_probes.py:184
is_current_stream_capturing  # airctl/sim/torch_npu/npu_probes.py:188
is_jit_compile_false  # airctl/sim/torch_npu/npu_probes.py:192
finalize_dump  # airctl/sim/torch_npu/npu_probes.py:197
init_dump  # airctl/sim/torch_npu/npu_probes.py:197
set_aoe  # airctl/sim/torch_npu/npu_probes.py:197
set_compile_mode  # airctl/sim/torch_npu/npu_probes.py:197
set_dump  # airctl/sim/torch_npu/npu_probes.py:197
set_mm_bmm_format_nd  # airctl/sim/torch_npu/npu_probes.py:197
set_option  # airctl/sim/torch_npu/npu_probes.py:197
set_op_timeout_ms  # airctl/sim/torch_npu/npu_probes.py:198
set_sync_debug_mode  # airctl/sim/torch_npu/npu_probes.py:198
set_task_queue_enable  # airctl/sim/torch_npu/npu_probes.py:198
disable_deterministic_with_backward  # airctl/sim/torch_npu/npu_probes.py:199
enable_deterministic_with_backward  # airctl/sim/torch_npu/npu_probes.py:199
reset_stream_limit  # airctl/sim/torch_npu/npu_probes.py:199
set_device_limit  # airctl/sim/torch_npu/npu_probes.py:200
get_mm_bmm_format_nd  # airctl/sim/torch_npu/npu_probes.py:203
get_sync_debug_mode  # airctl/sim/torch_npu/npu_probes.py:207
get_task_queue_enable  # airctl/sim/torch_npu/npu_probes.py:211
ArithmeticUtilization  # airctl/sim/torch_npu/profiler/experimental_config.py:22
Memory  # airctl/sim/torch_npu/profiler/experimental_config.py:23
MemoryL0  # airctl/sim/torch_npu/profiler/experimental_config.py:24
MemoryUB  # airctl/sim/torch_npu/profiler/experimental_config.py:25
ResourceConflictRatio  # airctl/sim/torch_npu/profiler/experimental_config.py:26
L2Cache  # airctl/sim/torch_npu/profiler/experimental_config.py:27
MemoryAccess  # airctl/sim/torch_npu/profiler/experimental_config.py:28
AiCoreNone  # airctl/sim/torch_npu/profiler/experimental_config.py:29
MEM  # airctl/sim/torch_npu/profiler/experimental_config.py:39
DISK  # airctl/sim/torch_npu/profiler/experimental_config.py:40
NETWORK  # airctl/sim/torch_npu/profiler/experimental_config.py:41
OSRT  # airctl/sim/torch_npu/profiler/experimental_config.py:42
NUMA  # airctl/sim/torch_npu/profiler/experimental_config.py:43
mstx_domain_exclude  # airctl/sim/torch_npu/profiler/experimental_config.py:67
mstx_domain_include  # airctl/sim/torch_npu/profiler/experimental_config.py:67
async_mode  # airctl/sim/torch_npu/profiler/profiler.py:43
custom_trace_id_callback  # airctl/sim/torch_npu/profiler/profiler.py:68
execution_trace_observer  # airctl/sim/torch_npu/profiler/profiler.py:68
use_cuda  # airctl/sim/torch_npu/profiler/profiler.py:69
TorchDataType  # airctl/sim/torchair_core.py:36
BOOL  # airctl/sim/torchair_core.py:37
UINT8  # airctl/sim/torchair_core.py:38
INT8  # airctl/sim/torchair_core.py:39
INT16  # airctl/sim/torchair_core.py:40
UINT16  # airctl/sim/torchair_core.py:41
INT32  # airctl/sim/torchair_core.py:42
UINT32  # airctl/sim/torchair_core.py:43
INT64  # airctl/sim/torchair_core.py:44
UINT64  # airctl/sim/torchair_core.py:45
BF16  # airctl/sim/torchair_core.py:46
FLOAT16  # airctl/sim/torchair_core.py:47
FLOAT32  # airctl/sim/torchair_core.py:48
FLOAT64  # airctl/sim/torchair_core.py:49
COMPLEX64  # airctl/sim/torchair_core.py:50
COMPLEX128  # airctl/sim/torchair_core.py:51
_.set_hint_shape  # airctl/sim/torchair_core.py:76
_.auto_tune  # airctl/sim/torchair_core.py:88
GetSocName  # airctl/sim/torchair_core.py:118
StupidRepeat  # airctl/sim/torchair_core.py:134
get_registered_ir_def  # airctl/sim/torchair_core.py:146
CheckAclnnAvaliable  # airctl/sim/torchair_core.py:150
aclnn_name  # airctl/sim/torchair_core.py:150
check_cann_compat  # airctl/sim/torchair_core.py:174
as_torch_tensors  # airctl/sim/torchair_core.py:185
addresses  # airctl/sim/torchair_core.py:185
_.GetNpuStorageSizes  # airctl/sim/torchair_core.py:221

# the expression evaluator's visitor methods, dispatched by the AST node's class name
_._Constant  # airctl/ledger/expr.py:80
_._Name  # airctl/ledger/expr.py:83
_._Attribute  # airctl/ledger/expr.py:92
_._Subscript  # airctl/ledger/expr.py:98
_._Slice  # airctl/ledger/expr.py:105
_._List  # airctl/ledger/expr.py:108
_._Tuple  # airctl/ledger/expr.py:111
_._Set  # airctl/ledger/expr.py:114
_._Dict  # airctl/ledger/expr.py:117
_._BoolOp  # airctl/ledger/expr.py:121
_._UnaryOp  # airctl/ledger/expr.py:129
_._BinOp  # airctl/ledger/expr.py:134
_._Compare  # airctl/ledger/expr.py:138
_._IfExp  # airctl/ledger/expr.py:150
_._Call  # airctl/ledger/expr.py:153
_._GeneratorExp  # airctl/ledger/expr.py:197
_._ListComp  # airctl/ledger/expr.py:200
_._SetComp  # airctl/ledger/expr.py:203

# fields of index.json: written by to_json, read by `airctl show --json`, other tools and the tests
written_by  # airctl/ledger/index.py:129
airctl_version  # airctl/ledger/index.py:224
first_stage_with_finding  # airctl/ledger/index.py:246
fixed_findings  # airctl/ledger/index.py:247
other_modes  # airctl/ledger/index.py:248
report_error  # airctl/ledger/index.py:256
torchair_warnings  # airctl/ledger/index.py:257
torch_compile_debug  # airctl/ledger/index.py:261
start_ticks  # airctl/ledger/index_parts.py:26
graphs_checked  # airctl/ledger/index_parts.py:74
not_checked  # airctl/ledger/index_parts.py:75
calls_checked  # airctl/ledger/index_parts.py:78
fixed_by  # airctl/ledger/index_parts.py:125
other_mode  # airctl/ledger/index_parts.py:126
file_count  # airctl/ledger/index_parts.py:156
ended_by  # airctl/ledger/index_parts.py:163
yaml_passes  # airctl/ledger/index_parts.py:176
torchair_skipped  # airctl/ledger/index_parts.py:179
torch_compile_debug  # airctl/ledger/index_parts.py:189
ranks_started  # airctl/ledger/index_parts.py:205
fork_server_pid  # airctl/ledger/index_parts.py:206
in_graph  # airctl/ledger/index_parts.py:255
since_s  # airctl/ledger/index_parts.py:259
collective_graph  # airctl/ledger/index_parts.py:261
_.fixed_findings  # airctl/ledger/writer.py:355
_.other_modes  # airctl/ledger/writer.py:356
_.first_stage_with_finding  # airctl/ledger/writer.py:357
_.report_error  # airctl/ledger/writer.py:383

# enum members and exit codes: chosen by value (typer's choices, JSON, the OS)
OK  # airctl/errors.py:22
HANGUP  # airctl/errors.py:29
TERMINATED  # airctl/errors.py:30
SIM  # airctl/modes.py:79
PY  # airctl/modes.py:90
DOT  # airctl/modes.py:103
SVG  # airctl/modes.py:104
PNG  # airctl/modes.py:105

# the device table's fields and sources: printed by --device's help and docs/profile.md
url  # airctl/devices.py:25
SOURCES  # airctl/devices.py:29
max_streams  # airctl/devices.py:66
max_events  # airctl/devices.py:67

# fields of a result: written to JSON by its to_json (dataclasses.asdict) and read by the viewer and tests
world_size  # airctl/pipeline/ranks/worker.py:76 (Rank, written whole by dataclasses.asdict)
local_rank  # airctl/pipeline/ranks/worker.py:77
removed_edges  # airctl/diff/report.py:274
removed_edges  # airctl/diff/report.py:279
removed_edges  # airctl/diff/report.py:308
added_edges  # airctl/diff/report.py:309
added_edges  # airctl/diff/report.py:321
computing  # airctl/profile/ascend/breakdown.py:48
_.overlapped  # airctl/profile/ascend/breakdown.py:56
peak_allocated_bytes  # airctl/profile/ascend/memory_files.py:80
peak_reserved_bytes  # airctl/profile/ascend/memory_files.py:81
peak_at_us  # airctl/profile/ascend/memory_files.py:82
peak_from  # airctl/profile/ascend/memory_files.py:83
components  # airctl/profile/ascend/memory_files.py:84
top_operators  # airctl/profile/ascend/memory_files.py:85
operator_blocks  # airctl/profile/ascend/memory_files.py:86
unreleased_blocks  # airctl/profile/ascend/memory_files.py:87
median_without  # airctl/profile/noise.py:47
median_with  # airctl/profile/noise.py:48
spread_without  # airctl/profile/noise.py:49
spread_with  # airctl/profile/noise.py:50

# the io.RawIOBase protocol (seekable, readall), called by io's buffered readers
_.seekable  # airctl/io/compressed.py:74
_.readall  # airctl/io/compressed.py:80

# attributes of protobuf descriptors, read by the protobuf runtime
_.oneof_index  # airctl/io/ge_schema.py:142
_.map_entry  # airctl/io/ge_schema.py:157

# Python's and typer's protocols: a module __getattr__, an import loader's get_code, the __signature__ typer reads, a rich Table's caption
__getattr__  # airctl/cli/main.py:241
_.get_code  # airctl/pipeline/run/model_script.py:135
_.caption  # airctl/cli/summary.py:50
_.__signature__  # airctl/cli/signature.py:37
_.__annotations__  # airctl/cli/signature.py:38

# functools' __wrapped__, read by inspect.unwrap
_.__wrapped__  # airctl/passes/placements.py:93

# TorchAir's config fields, set for TorchAir to read
_.post_grad_custom_pre_pass  # airctl/pipeline/compile/compiler.py:90
_.post_grad_custom_pre_pass  # airctl/pipeline/compile/npugraph_ex.py:51

# attributes set for other code: torch.distributed.run's arguments, the watchdog's record read by its thread
_.prog  # airctl/pipeline/ranks/launch.py:201
_.tee  # airctl/pipeline/ranks/launch.py:231
_.last_seen  # airctl/pipeline/ranks/watchdog.py:44
_.last_seen  # airctl/pipeline/ranks/watchdog.py:68

# tempfile.tempdir, set for tempfile to read
_.tempdir  # airctl/pipeline/warm/child.py:63

# the rule catalogue's fields: docs/checks.md and tests/verify read them
dialects  # airctl/verify/rule.py:21
seen_in  # airctl/verify/rule.py:23
seen_how  # airctl/verify/rule.py:24

# API the tests and docstring examples use to read what the product wrote (payload_of, ...)
payload_of  # airctl/report/page.py:189
