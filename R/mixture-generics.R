#' Held-out log-likelihood of a fitted model
#'
#' A generic with methods for every sparsevi fit. For mixtures it is the
#' mean over the points of `newdata` of
#' \eqn{\ln \sum_k \hat\pi_k p(x \mid \hat\phi_k)}, with point estimates
#' (posterior means) of the weights and component parameters.
#'
#' @param object A fitted model.
#' @param ... Further arguments for the method (for mixtures: `newdata`,
#'   `threads`).
#' @returns A single number: the mean held-out log-likelihood per point.
#' @examples
#' sim <- simulate_mixture(N = 300, D = 2, K = 3, seed = 1)
#' fit <- fit_mixture(sim$X[1:250, ], K = 3, seed = 1, progress = FALSE)
#' heldout_loglik(fit, sim$X[251:300, ])
#' @export
heldout_loglik <- function(object, ...) {
  UseMethod("heldout_loglik")
}
