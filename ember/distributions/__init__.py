"""ember.distributions (PyTorch's torch.distributions): probability distributions with
sampling (`rsample` differentiable where PyTorch's is), log densities, moments, and
KL divergences. Everything is written with ember ops, so gradients flow through
parameters as in PyTorch."""
from . import constraints, transforms
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .chi2 import Chi2
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exponential import Exponential
from .gamma import Gamma
from .geometric import Geometric
from .independent import Independent
from .kl import kl_divergence, register_kl
from .laplace import Laplace
from .log_normal import LogNormal
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .poisson import Poisson
from .relaxed_bernoulli import LogitRelaxedBernoulli, RelaxedBernoulli
from .relaxed_categorical import ExpRelaxedCategorical, RelaxedOneHotCategorical
from .studentT import StudentT
from .transformed_distribution import TransformedDistribution
from .transforms import *  # noqa: F401,F403
from .uniform import Uniform

__all__ = ["Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2", "Dirichlet",
           "Distribution", "Exponential", "ExpRelaxedCategorical", "Gamma", "Geometric",
           "Independent", "Laplace", "LogitRelaxedBernoulli", "LogNormal", "MultivariateNormal", "Normal", "OneHotCategorical", "Poisson",
           "RelaxedBernoulli", "RelaxedOneHotCategorical", "StudentT", "TransformedDistribution", "Uniform", "constraints", "kl_divergence",
           "register_kl", "transforms"] + transforms.__all__
