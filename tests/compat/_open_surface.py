"""PyTorch's public names ember does not have yet, by module: the to-do list of
test_module_surface.py (None: the whole module is still to be written). It may only shrink: the
test fails when an entry is no longer missing, so that it is dropped here."""
OPEN = {
    "torch": ["bit", "bits16", "bits1x8", "bits2x4", "bits4x2", "bits8", "ccol_indices_copy",
        "chalf", "col_indices_copy", "complex32", "crow_indices_copy", "float4_e2m1fn_x2",
        "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu",
        "hash_tensor", "int1", "int2", "int3", "int4", "int5", "int6", "int7", "row_indices_copy",
        "sparse_bsc_tensor", "sparse_bsr_tensor", "sparse_compressed_tensor", "sparse_csc_tensor",
        "sparse_csr_tensor", "uint1", "uint16", "uint2", "uint3", "uint32", "uint4", "uint5",
        "uint6", "uint64", "uint7"],
    "torch.nn.functional": ["scaled_grouped_mm", "scaled_mm"],
    "torch.utils.checkpoint": ["SAC_IGNORED_OPS", "create_selective_checkpoint_contexts"],
}
