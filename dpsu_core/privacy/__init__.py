"""Privacy math shared by all mechanisms: analytic Gaussian, thresholds, validation."""

from .gaussian import analytic_gaussian_sigma, gaussian_delta
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
