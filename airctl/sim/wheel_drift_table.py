"""The one table of what airctl does with each thing the installed TorchAir and npugraph_ex offer.

Every item :func:`airctl.sim.wheel_drift.wheel_items` finds in the wheel (config fields, scope
functions, GE options, Dynamo guards) has one row here, ``item -> (status, why)``:

- ``modelled``: airctl itself models it; ``why`` says where;
- ``torchair``: sim runs TorchAir's (or npugraph_ex's) own Python, which acts on it unchanged: the
  user sees its effect in the ledger's stages and dumps with nothing more from airctl;
- ``ignored``: deliberately not modelled; ``why`` is the reason.

``tests/sim/test_wheel_drift.py`` fails naming every item of the wheel without a row, so the next
wheel bump names what is new; a row for an item the wheel no longer has is reported too.
"""

from __future__ import annotations

MODELLED, TORCHAIR, IGNORED = "modelled", "torchair", "ignored"

_GE_ONLY = "read by GE's C++ build or runtime only, which sim does not model; recorded in the loaded graph's options"
_ACL_DEVICE = "acts on the aclgraph device capture, which sim replaces by running the graph eagerly"
_DUMP_DEVICE = "a device data dump written by CANN at run time; sim has no device memory to dump"
_AOE = "AOE tuning runs on the device; the stand-in checks auto_tune's arguments and tunes nothing"
_PY = "TorchAir's own Python acts on it under sim; settable with --option"
_NPX_PY = "npugraph_ex's own Python acts on it under sim; settable with --option"

DRIFT_TABLE: dict[str, tuple[str, str]] = {
    # -- TorchAir CompilerConfig --------------------------------------------------------------
    "torchair.config:mode": (MODELLED, "--mode; airctl.modes, the backend's configure()"),
    "torchair.config:post_grad_custom_pre_pass": (MODELLED, "YAML passes and plugins (airctl/passes)"),
    "torchair.config:post_grad_custom_post_pass": (MODELLED, "YAML passes and plugins (airctl/passes)"),
    "torchair.config:aoe_config.aoe_config_file": (IGNORED, _AOE),
    "torchair.config:aoe_config.aoe_mode": (IGNORED, _AOE),
    "torchair.config:aoe_config.work_path": (IGNORED, _AOE),
    "torchair.config:debug.aclgraph.clone_input": (TORCHAIR, _PY),
    "torchair.config:debug.aclgraph.disable_mempool_reuse_in_same_fx": (IGNORED, _ACL_DEVICE),
    "torchair.config:debug.aclgraph.disable_reinplace_inplaceable_ops_pass": (TORCHAIR, _PY + " (pass stages)"),
    "torchair.config:debug.aclgraph.disable_reinplace_input_mutated_ops_pass": (TORCHAIR, _PY + " (pass stages)"),
    "torchair.config:debug.aclgraph.enable_output_clone": (TORCHAIR, _PY),
    "torchair.config:debug.aclgraph.remove_cat_ops": (TORCHAIR, _PY + " (pass stages)"),
    "torchair.config:debug.aclgraph.static_capture_size_limit": (MODELLED, "recapture reasons in airctl why"),
    "torchair.config:debug.data_dump.type": (TORCHAIR, _PY + " (its eager dumper runs on the CPU)"),
    "torchair.config:debug.deadlock_check": (IGNORED, "needs GE's compiled task list (GraphDebugJSONPrint); "
                                                      "sim's executor reports stream deadlocks itself"),
    "torchair.config:debug.fx_summary.skip_compile": (TORCHAIR, _PY),
    "torchair.config:debug.fx_summary.type": (MODELLED, "converter coverage (airctl/verify/converter_coverage)"),
    "torchair.config:debug.graph_dump.type": (MODELLED, "the ledger's TorchAir dumps (--dump-type, --capture)"),
    "torchair.config:debug.run_eagerly": (TORCHAIR, _PY),
    "torchair.config:dump_config.data_dump_stage": (IGNORED, _DUMP_DEVICE),
    "torchair.config:dump_config.dump_config_path": (IGNORED, _DUMP_DEVICE),
    "torchair.config:dump_config.dump_data": (IGNORED, _DUMP_DEVICE),
    "torchair.config:dump_config.dump_layer": (IGNORED, _DUMP_DEVICE),
    "torchair.config:dump_config.dump_mode": (IGNORED, _DUMP_DEVICE),
    "torchair.config:dump_config.dump_path": (IGNORED, _DUMP_DEVICE),
    "torchair.config:dump_config.dump_step": (IGNORED, _DUMP_DEVICE),
    "torchair.config:dump_config.enable_dump": (IGNORED, _DUMP_DEVICE),
    "torchair.config:dump_config.quant_dumpable": (IGNORED, _DUMP_DEVICE),
    "torchair.config:experimental_config.aclgraph._aclnn_static_shape_kernel": (IGNORED, "static kernels are "
                                                                                "compiled and run by CANN"),
    "torchair.config:experimental_config.aclgraph._aclnn_static_shape_kernel_build_dir": (IGNORED, "static kernels "
                                                                                          "are built by CANN"),
    "torchair.config:experimental_config.aclgraph._aclnn_static_shape_kernel_sym_index": (IGNORED, "static kernels "
                                                                                           "are built by CANN"),
    "torchair.config:experimental_config.aclgraph._aclnn_static_shape_kernel_sym_value_range": (
        IGNORED, "static kernels are built by CANN"),
    "torchair.config:experimental_config.aclgraph._super_kernel_debug_options": (IGNORED, "super kernels are fused "
                                                                                  "by CANN at capture"),
    "torchair.config:experimental_config.aclgraph._super_kernel_optimize": (IGNORED, "super kernels are fused by "
                                                                           "CANN at capture"),
    "torchair.config:experimental_config.aclgraph._super_kernel_optimize_options": (IGNORED, "super kernels are "
                                                                                   "fused by CANN at capture"),
    "torchair.config:experimental_config.aot_config_enable_joint_graph": (TORCHAIR, _PY),
    "torchair.config:experimental_config.aot_config_output_loss_index": (TORCHAIR, _PY),
    "torchair.config:experimental_config.cc_parallel_enable": (IGNORED, _GE_ONLY),
    "torchair.config:experimental_config.enable_ref_data": (TORCHAIR, _PY + " (RefData in the GE stages)"),
    "torchair.config:experimental_config.enable_view_optimize": (TORCHAIR, _PY),
    "torchair.config:experimental_config.frozen_parameter": (TORCHAIR, _PY + "; its cache effects in airctl why"),
    "torchair.config:experimental_config.jit_compile": (IGNORED, _GE_ONLY),
    "torchair.config:experimental_config.keep_inference_input_mutations": (TORCHAIR, _PY),
    "torchair.config:experimental_config.memory_efficiency": (IGNORED, _GE_ONLY),
    "torchair.config:experimental_config.npu_fx_pass": (TORCHAIR, _PY + " (pass stages)"),
    "torchair.config:experimental_config.pattern_fusion_pass": (TORCHAIR, _PY + " (pass stages)"),
    "torchair.config:experimental_config.remove_noop_ops": (TORCHAIR, _PY + " (pass stages)"),
    "torchair.config:experimental_config.static_model_ops_lower_limit": (IGNORED, _GE_ONLY),
    "torchair.config:experimental_config.tiling_schedule_optimize": (IGNORED, _GE_ONLY),
    "torchair.config:experimental_config.topology_sorting_strategy": (IGNORED, _GE_ONLY + " (ge.topoSortingMode)"),
    "torchair.config:export.experimental.auto_atc_config_generated": (TORCHAIR, _PY + " (dynamo_export)"),
    "torchair.config:export.experimental.enable_lite_export": (TORCHAIR, _PY + " (dynamo_export)"),
    "torchair.config:export.experimental.enable_record_nn_module_stack": (TORCHAIR, _PY + " (dynamo_export)"),
    "torchair.config:export.export_mode": (MODELLED, "dynamo_export's .air model (airctl/sim/ge_export)"),
    "torchair.config:export.export_path_dir": (MODELLED, "dynamo_export's .air model (airctl/sim/ge_export)"),
    "torchair.config:fusion_config.fusion_switch_file": (IGNORED, _GE_ONLY + " (GE's fusion passes)"),
    "torchair.config:ge_config.aicore_num": (IGNORED, _GE_ONLY + "; airctl's predictor takes core counts from "
                                                      "its device table"),
    "torchair.config:ge_config.enable_single_stream": (IGNORED, _GE_ONLY),
    "torchair.config:ge_config.export_compile_stat": (IGNORED, _GE_ONLY),
    "torchair.config:ge_config.multistream_parallel_mode": (MODELLED, "GE's automatic multi-stream: the ge-build "
                                                            "stage (airctl/graph/ge_streams, airctl/sim/ge_build)"),
    "torchair.config:ge_config.oo_constant_folding": (IGNORED, _GE_ONLY),
    "torchair.config:ge_config.oo_dead_code_elimination": (IGNORED, _GE_ONLY),
    "torchair.config:ge_config.oo_level": (IGNORED, _GE_ONLY),
    "torchair.config:ge_config.optimization_switch": (IGNORED, _GE_ONLY),
    "torchair.config:inference_config.dynamic_gears_merge_policy": (TORCHAIR, _PY + " (gear options on the graph)"),
    # -- npugraph_ex CompilerConfig -----------------------------------------------------------
    "npugraph_ex.config:mode": (MODELLED, "--mode npugraph_ex"),
    "npugraph_ex.config:post_grad_custom_pre_pass": (MODELLED, "YAML passes and plugins (airctl/passes)"),
    "npugraph_ex.config:post_grad_custom_post_pass": (MODELLED, "YAML passes and plugins (airctl/passes)"),
    "npugraph_ex.config:_vllm_aclnn_static_kernel_sym_index": (IGNORED, "static kernels are built by CANN"),
    "npugraph_ex.config:_vllm_aclnn_static_kernel_sym_range": (IGNORED, "static kernels are built by CANN"),
    "npugraph_ex.config:capture_error_mode": (MODELLED, "the stand-in NPUGraph accepts and records it "
                                                        "(airctl/sim/torch_npu/npu.py)"),
    "npugraph_ex.config:capture_limit": (MODELLED, "captures and capture-limit fallbacks in index.json captures"),
    "npugraph_ex.config:clone_input": (TORCHAIR, _NPX_PY),
    "npugraph_ex.config:clone_output": (TORCHAIR, _NPX_PY),
    "npugraph_ex.config:data_dump_dir": (TORCHAIR, _NPX_PY + " (its eager dumper runs on the CPU)"),
    "npugraph_ex.config:data_dump_stage": (TORCHAIR, _NPX_PY),
    "npugraph_ex.config:deadlock_check": (IGNORED, "needs the captured task list of the device; sim's executor "
                                                   "reports stream deadlocks itself"),
    "npugraph_ex.config:disable_static_kernel_compile_cache": (IGNORED, "static kernels are built by CANN"),
    "npugraph_ex.config:dump_tensor_data": (TORCHAIR, _NPX_PY + " (its eager dumper runs on the CPU)"),
    "npugraph_ex.config:force_eager": (MODELLED, "sim's npugraph_ex runner (airctl/sim/patched_npugraph_ex_acl_graph)"),
    "npugraph_ex.config:force_recapture": (MODELLED, "recapture reasons (airctl/sim/patched_npugraph_ex_acl_graph, "
                                                     "airctl why)"),
    "npugraph_ex.config:frozen_parameter": (TORCHAIR, _NPX_PY),
    "npugraph_ex.config:inplace_pass": (TORCHAIR, _NPX_PY + " (pass stages)"),
    "npugraph_ex.config:input_inplace_pass": (TORCHAIR, _NPX_PY + " (pass stages)"),
    "npugraph_ex.config:pattern_fusion_pass": (TORCHAIR, _NPX_PY + " (pass stages)"),
    "npugraph_ex.config:record_statistics_debug_info": (TORCHAIR, _NPX_PY + " (its DEBUG lines reach the run's log)"),
    "npugraph_ex.config:remove_cat_ops": (TORCHAIR, _NPX_PY + " (pass stages)"),
    "npugraph_ex.config:remove_noop_ops": (TORCHAIR, _NPX_PY + " (pass stages)"),
    "npugraph_ex.config:reuse_graph_pool_in_same_fx": (IGNORED, _ACL_DEVICE + " (memory pools)"),
    "npugraph_ex.config:static_kernel_compile": (IGNORED, "static kernels are built by CANN"),
    "npugraph_ex.config:super_kernel_debug_options": (IGNORED, "super kernels are fused by CANN at capture"),
    "npugraph_ex.config:super_kernel_optimize": (IGNORED, "super kernels are fused by CANN at capture"),
    "npugraph_ex.config:super_kernel_optimize_options": (IGNORED, "super kernels are fused by CANN at capture"),
    "npugraph_ex.config:unsafe_skip_npugraph_capture_validation": (MODELLED, "a call whose mutated input moved "
                                                                    "is a stale replay: check rule R21"),
    # -- scope functions ----------------------------------------------------------------------
    "torchair.scope:npu_stream_switch": (MODELLED, "streams: verify, execute, lanes, YAML stream actions"),
    "torchair.scope:npu_wait_tensor": (MODELLED, "verify rules and the executor's syncs"),
    "torchair.scope:super_kernel": (MODELLED, "YAML super_kernel action (airctl/passes/builtin)"),
    "torchair.scope:limit_core_num": (MODELLED, "YAML limit_core_num action; core counts in the predictor"),
    "torchair.scope:op_never_timeout": (MODELLED, "YAML op_never_timeout action (airctl/passes/builtin)"),
    "torchair.scope:data_dump": (IGNORED, _DUMP_DEVICE + "; its attribute shows in the GE stages"),
    "torchair.scope:deterministic": (TORCHAIR, "its _deterministic/_deterministic_level attributes show on the GE "
                                               "ops of the ge-* stages"),
    "npugraph_ex.scope:limit_core_num": (TORCHAIR, "npugraph_ex turns it into set_stream_limit calls, which the "
                                                   "stand-in torch.npu records per stream"),
    "npugraph_ex.scope:deterministic": (TORCHAIR, "its scope node and _op_deterministic_level values show in the "
                                                  "FX stages"),
    # -- GE options ---------------------------------------------------------------------------
    "ge_option:ge.autoMultistreamParallelMode": (MODELLED, "GE's automatic multi-stream (airctl/sim/ge_build)"),
    "ge_option:ge.aicoreNum": (IGNORED, _GE_ONLY),
    "ge_option:ge.deterministic": (IGNORED, _GE_ONLY),
    "ge_option:ge.enableSingleStream": (IGNORED, _GE_ONLY),
    "ge_option:ge.exec.allTensorNotEmpty": (IGNORED, _GE_ONLY),
    "ge_option:ge.exec.allow_hf32": (IGNORED, _GE_ONLY + "; sim computes in the dtypes of the FX graph"),
    "ge_option:ge.exec.atomicCleanPolicy": (IGNORED, _GE_ONLY),
    "ge_option:ge.exec.dumpData": (IGNORED, _DUMP_DEVICE),
    "ge_option:ge.exec.dumpLayer": (IGNORED, _DUMP_DEVICE),
    "ge_option:ge.exec.dumpMode": (IGNORED, _DUMP_DEVICE),
    "ge_option:ge.exec.dumpPath": (IGNORED, _DUMP_DEVICE),
    "ge_option:ge.exec.dumpStep": (IGNORED, _DUMP_DEVICE),
    "ge_option:ge.exec.enableDump": (IGNORED, _DUMP_DEVICE),
    "ge_option:ge.exec.enableEngineParallel": (IGNORED, _GE_ONLY),
    "ge_option:ge.exec.frozenInputIndexes": (IGNORED, _GE_ONLY),
    "ge_option:ge.exec.hostInputIndexes": (IGNORED, _GE_ONLY),
    "ge_option:ge.exec.outputReuseMemIndexes": (IGNORED, _GE_ONLY),
    "ge_option:ge.exec.staticMemoryPolicy": (IGNORED, _GE_ONLY),
    "ge_option:ge.exec.static_model_ops_lower_limit": (IGNORED, _GE_ONLY),
    "ge_option:ge.exportCompileStat": (IGNORED, _GE_ONLY),
    "ge_option:ge.featureBaseRefreshable": (IGNORED, _GE_ONLY),
    "ge_option:ge.fusionSwitchFile": (IGNORED, _GE_ONLY),
    "ge_option:ge.inputHintShape": (IGNORED, _GE_ONLY),
    "ge_option:ge.jit_compile": (IGNORED, _GE_ONLY),
    "ge_option:ge.oo.constantFolding": (IGNORED, _GE_ONLY),
    "ge_option:ge.oo.deadCodeElimination": (IGNORED, _GE_ONLY),
    "ge_option:ge.oo.level": (IGNORED, _GE_ONLY),
    "ge_option:ge.opSelectImplmode": (IGNORED, _GE_ONLY),
    "ge_option:ge.optimizationSwitch": (IGNORED, _GE_ONLY),
    "ge_option:ge.quant_dumpable": (IGNORED, _DUMP_DEVICE),
    "ge_option:ge.tiling_schedule_optimize": (IGNORED, _GE_ONLY),
    "ge_option:ge.topoSortingMode": (IGNORED, _GE_ONLY),
    # -- Dynamo guards ------------------------------------------------------------------------
    "dynamo_guard:install_npu_deterministic_level_guard": (
        MODELLED, "the wheel's own guard module under sim (airctl/sim/patched_torch_npu) on the stand-in's "
                  "set_deterministic_level: a change between calls recompiles, shown by airctl why with its hint"),
}
