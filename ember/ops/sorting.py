"""Order statistics: sort, argsort, topk, kthvalue, median, mode, unique, msort."""

__all__ = []
METHODS = []
