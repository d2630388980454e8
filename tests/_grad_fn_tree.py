"""The grad_fn graph of a tensor as text, for comparing ember's graphs with PyTorch's."""


def grad_fn_tree(t, depth=6):
    """t's grad_fn and the nodes below it to `depth`, depth first, one class name a line
    indented by its depth (None edges skipped)."""
    lines = []

    def walk(fn, d):
        if fn is None or d > depth:
            return
        lines.append("  " * d + type(fn).__name__)
        for nxt, _ in fn.next_functions:
            walk(nxt, d + 1)
    walk(t.grad_fn, 0)
    return "\n".join(lines)
