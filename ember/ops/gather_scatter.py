"""Index-driven ops: gather, scatter, index_select/add/copy/fill, masked ops, take,
searchsorted, bucketize."""

__all__ = []
METHODS = []
