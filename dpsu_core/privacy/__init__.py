"""Privacy math shared by all mechanisms: analytic Gaussian, thresholds, validation, delta guidance (all
calibrated values rounded toward safety)."""

from .gaussian import analytic_gaussian_sigma, gaussian_delta, gaussian_delta_exact, sqrt_up
from .guidance import Guidance, delta_guidance, suggested_delta
from .thresholds import (
    count_l2_sensitivity,
    cutoff,
    gaussian_scale,
    laplace_scale,
    rho_count_gaussian,
    rho_count_laplace,
    rho_greedy,
    rho_greedy_published,
    rho_weighted_gaussian,
    rho_weighted_gaussian_sigma,
    rho_weighted_laplace,
)

__all__ = [
    "Guidance",
    "delta_guidance",
    "suggested_delta",
    "analytic_gaussian_sigma",
    "count_l2_sensitivity",
    "cutoff",
    "gaussian_delta",
    "gaussian_delta_exact",
    "gaussian_scale",
    "laplace_scale",
    "rho_count_gaussian",
    "rho_count_laplace",
    "rho_greedy",
    "rho_greedy_published",
    "sqrt_up",
    "rho_weighted_gaussian",
    "rho_weighted_gaussian_sigma",
    "rho_weighted_laplace",
]
