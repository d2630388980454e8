"""Random sampling: rand, randn, randint, randperm, normal, bernoulli, multinomial and the
in-place samplers (uniform_, normal_ ...), drawing from `ember.Generator`s."""

__all__ = []
METHODS = []
