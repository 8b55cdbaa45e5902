"""Privacy math shared by all mechanisms: analytic Gaussian, thresholds, validation, delta guidance."""

from .gaussian import analytic_gaussian_sigma, gaussian_delta
from .guidance import Guidance, delta_guidance, suggested_delta
from .thresholds import (
    gaussian_scale,
    laplace_scale,
    rho_count_gaussian,
    rho_count_laplace,
    rho_greedy,
    rho_weighted_gaussian,
    rho_weighted_gaussian_sigma,
    rho_weighted_laplace,
)

__all__ = [
    "Guidance",
    "delta_guidance",
    "suggested_delta",
    "analytic_gaussian_sigma",
    "gaussian_delta",
    "gaussian_scale",
    "laplace_scale",
    "rho_count_gaussian",
    "rho_count_laplace",
    "rho_greedy",
    "rho_weighted_gaussian",
    "rho_weighted_gaussian_sigma",
    "rho_weighted_laplace",
]
