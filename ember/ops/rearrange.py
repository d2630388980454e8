"""Shape ops that copy or tile: split, chunk, flip, roll, repeat, tile, stacking helpers,
triangles and diagonals."""

__all__ = []
METHODS = []
