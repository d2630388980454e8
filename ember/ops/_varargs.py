"""PyTorch's argument parser takes a `*size`-style parameter by keyword too: `zeros(2, 3)`,
`zeros((2, 3))` and `zeros(size=(2, 3))` are one call. Python cannot name a `*args` parameter
and a keyword alike, so those ops take `*args` plus the keyword and join them here."""


def varargs_or_keyword(args, value, name, fname):
    """The positional tuple the op normalises as before: `args`, or `(value,)` when the
    keyword was given instead."""
    if value is None:
        return args
    if args:
        raise TypeError(f"{fname}() got multiple values for argument '{name}'")
    return (value,)
