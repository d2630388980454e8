"""ExponentialFamily: the base of distributions with densities exp(<t(x), theta> - F(theta)
+ k(x)). Knowing the natural parameters theta and the log normalizer F gives the entropy
and KL divergences within one family as Bregman divergences of F (autograd supplies
F's gradient, the expected sufficient statistic)."""
from ..autograd import grad as _grad
from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """Subclasses give `_natural_params`, `_log_normalizer(*natural_params)` and
    `_mean_carrier_measure` (E[k(x)])."""

    @property
    def _natural_params(self):
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def entropy(self):
        """H = F(theta) - <theta, grad F(theta)> - E[k(x)]."""
        result = -self._mean_carrier_measure
        nparams = [p.detach().requires_grad_() for p in self._natural_params]
        lg_normal = self._log_normalizer(*nparams)
        gradients = _grad(lg_normal.sum(), nparams, create_graph=True)
        result = result + lg_normal
        for param, g in zip(nparams, gradients):
            result = result - (param * g).reshape(tuple(self._batch_shape) + (-1,)).sum(-1)
        return result
