"""`torch._inductor.config`: the settings scripts commonly set (gpt-fast, llm.c, sam-fast ...),
with PyTorch 2.13's defaults (ember/_config_module.py: they change no behaviour; an unknown
name is refused)."""
from .._config_module import install

_DEFAULTS = {
    "coordinate_descent_tuning": False, "max_autotune": False, "max_autotune_gemm": False,
    "max_autotune_pointwise": False, "epilogue_fusion": True, "freezing": False,
    "freezing_discard_parameters": False, "fx_graph_cache": True, "fx_graph_remote_cache": None,
    "autotune_local_cache": True, "force_disable_caches": False, "conv_1x1_as_mm": False,
    "force_fuse_int_mm_with_mul": False, "use_mixed_mm": True, "benchmark_kernel": False,
    "benchmark_fusion": False, "debug": False, "compile_threads": 2, "aggressive_fusion": False,
    "shape_padding": True, "comprehensive_padding": True, "split_reductions": True,
    "fallback_random": False, "implicit_fallbacks": True, "cpp_wrapper": False,
    "layout_optimization": True, "keep_output_stride": True, "size_asserts": True,
    "emulate_precision_casts": False, "allow_buffer_reuse": True, "permute_fusion": False,
    "pattern_matcher": True, "group_fusion": False, "reorder_for_compute_comm_overlap": False,
    "unroll_reductions_threshold": 8, "max_fusion_size": 64, "online_softmax": True,
    "assert_indirect_indexing": True, "profiler_mark_wrapper_call": False,
    "realize_opcount_threshold": None,
    "triton": {"cudagraphs": False, "cudagraph_trees": True, "unique_kernel_names": True,
               "autotune_pointwise": True, "descriptive_names": "original_aten",
               "multi_kernel": 0, "store_cubin": False, "use_block_ptr": False,
               "cooperative_reductions": False},
    "cpp": {"threads": -1, "simdlen": None, "enable_kernel_profile": False,
            "weight_prepack": True, "dynamic_threads": False, "min_chunk_size": 512,
            "vec_isa_ok": None, "fallback_scatter_reduce_sum": True},
    "trace": {"enabled": False, "debug_log": False, "info_log": False, "graph_diagram": False},
}

install(__name__, _DEFAULTS)
