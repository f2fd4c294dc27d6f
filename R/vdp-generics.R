#' Held-out log-likelihood of a fitted model
#'
#' A generic: each model family scores new data in its own way. For a
#' [fit_vdp()] fit it is the mean log predictive density of the new points
#' (Kurihara et al., eq. 7, tail included).
#'
#' @param object A fitted sparsevi model.
#' @param ... Passed to methods (for example `newdata`).
#' @returns A number (see the method's documentation).
#' @export
heldout_loglik <- function(object, ...) UseMethod("heldout_loglik")
