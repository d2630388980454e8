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


def int_list_error(args, fname, what, position, is_int):
    """PyTorch's TypeError for an int-list argument (`args`: the varargs of `f(2, 3)`, or the
    one-tuple of `f((2, 3))`) holding a value that `is_int` refuses.

    PyTorch's parser picks a signature by the list's first element alone: a bad first element
    fails the match ("must be tuple of ints, but found element ... at pos 0"), and varargs
    count as a list only when they start with an int (else they are surplus positionals). A
    bad later element (a bool passes there) fails the unpacking after the match ("failed to
    unpack the object at pos i+1", counting from 1)."""
    if len(args) == 1 and not is_int(args[0]):
        seq = args[0]
        if not isinstance(seq, (tuple, list)):
            return TypeError(f"{fname}(): argument '{what}' (position {position}) must be tuple "
                             f"of ints, not {type(seq).__name__}")
        if seq and not is_int(seq[0]):
            return TypeError(f"{fname}(): argument '{what}' (position {position}) must be tuple "
                             f"of ints, but found element of type {type(seq[0]).__name__} at pos 0")
    else:
        seq = args
        if not is_int(seq[0]):
            return TypeError(f"{fname}() takes 1 positional argument but {len(args)} were given")
    for i, v in enumerate(seq):
        if not (is_int(v) or isinstance(v, bool)):
            return TypeError(f"{fname}(): argument '{what}' failed to unpack the object at pos "
                             f"{i + 1} with error \"type must be tuple of ints,but got "
                             f"{type(v).__name__}\"")
    return None
