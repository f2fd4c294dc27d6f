#' sparsevi: fast learning of clusters and topics
#'
#' Topic models and mixture models fitted by scalable variational inference,
#' with the computation in registered C routines. Start with [as_dtm()] to
#' bring a corpus in, then fit topics with `fit_lda()`.
#'
#' @keywords internal
#' @useDynLib sparsevi, .registration = TRUE
#' @importFrom stats predict runif
#' @importFrom methods as is
"_PACKAGE"
