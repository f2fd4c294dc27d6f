#' Simulate a corpus from latent Dirichlet allocation
#'
#' Draws topics, document-topic proportions and words from the LDA generative
#' process, returning the corpus with its planted truth. Tests and examples
#' use it to check that topics are recovered.
#'
#' @param D Number of documents (>= 1).
#' @param V Vocabulary size (>= 2).
#' @param K Number of topics (>= 1).
#' @param doc_length Mean document length (Poisson), default 100.
#' @param alpha Dirichlet concentration of document-topic proportions,
#'   default 0.1.
#' @param eta Dirichlet concentration of topic-word distributions, default
#'   0.05 (sparse, well-separated topics).
#' @param seed `NULL` (draw from R's random number generator) or a whole
#'   number; the simulation uses sparsevi's own random streams, so your R
#'   random state is not changed when `seed` is given.
#' @returns A list: `dtm` (a `sparsevi_dtm`), `topic_word` (K x V, rows sum
#'   to 1), `doc_topic` (D x K, rows sum to 1).
#' @examples
#' sim <- simulate_lda(D = 20, V = 50, K = 3, seed = 1)
#' sim$dtm
#' @export
simulate_lda <- function(D, V, K, doc_length = 100, alpha = 0.1, eta = 0.05,
                         seed = NULL) {
  D <- check_count(D, "D")
  V <- check_count(V, "V", min = 2)
  K <- check_count(K, "K")
  doc_length <- check_positive(doc_length, "doc_length", max = 1e7)
  alpha <- check_positive(alpha, "alpha")
  eta <- check_positive(eta, "eta")
  rng <- uniform_source(seed)
  topic_word <- rdirichlet(K, rep(eta, V), rng)
  doc_topic <- rdirichlet(D, rep(alpha, K), rng)
  lens <- pmax(1L, as.integer(stats::qpois(rng(D), doc_length)))
  # one document at a time, keeping only its non-zero counts, so memory is
  # O(V + tokens) rather than a dense D x V table
  terms <- counts <- vector("list", D)
  for (d in seq_len(D)) {
    p <- drop(doc_topic[d, , drop = FALSE] %*% topic_word)
    tab <- tabulate(draw_categorical(lens[d], p, rng), nbins = V)
    nz <- which(tab > 0L)
    terms[[d]] <- nz - 1L
    counts[[d]] <- as.double(tab[nz])
  }
  vocab <- sprintf("w%04d", seq_len(V))
  colnames(topic_word) <- vocab
  doc_names <- sprintf("doc%d", seq_len(D))
  dtm <- new_sparsevi_dtm(
    doc_ptr = c(0L, cumsum(lengths(terms))),
    term = unlist(terms, use.names = FALSE),
    count = unlist(counts, use.names = FALSE),
    vocab = vocab, doc_names = doc_names
  )
  list(dtm = validate_sparsevi_dtm(dtm), topic_word = topic_word, doc_topic = doc_topic)
}

#' Simulate data from a Gaussian mixture
#'
#' @param N Number of points (>= 1).
#' @param D Dimension (>= 1).
#' @param K Number of components (>= 1).
#' @param separation Distance between component means in units of the
#'   component standard deviation (the `c` of Kurihara et al.), default 4.
#' @param weights Mixing weights (length K, positive); default equal.
#' @param seed `NULL` (draw from R's random number generator) or a whole
#'   number; the simulation uses sparsevi's own random streams.
#' @returns A list: `X` (N x D matrix), `cluster` (integer labels),
#'   `means` (K x D), `covariances` (D x D x K array), `weights`.
#' @examples
#' sim <- simulate_mixture(N = 200, D = 2, K = 3, seed = 1)
#' table(sim$cluster)
#' @export
simulate_mixture <- function(N, D, K, separation = 4, weights = NULL, seed = NULL) {
  N <- check_count(N, "N")
  D <- check_count(D, "D")
  K <- check_count(K, "K")
  separation <- check_number(separation, "separation", lower = 0)
  if (is.null(weights)) weights <- rep(1 / K, K)
  if (!is.numeric(weights) || length(weights) != K || any(!is.finite(weights)) ||
      any(weights <= 0)) {
    abort("`weights` must be K positive numbers.", "argument")
  }
  weights <- weights / sum(weights)
  rng <- uniform_source(seed)
  rnorm_ <- function(n) stats::qnorm(rng(n))
  # means: scaled so that nearest means are about `separation` sds apart
  means <- matrix(rnorm_(K * D), K, D) * separation * sqrt(K)^(1 / max(D, 1))
  covs <- array(0, c(D, D, K))
  X <- matrix(0, N, D)
  cl <- draw_categorical(N, weights, rng)
  for (k in seq_len(K)) {
    A <- matrix(0.3 * rnorm_(D * D), D, D) + diag(D)
    S <- crossprod(A)
    S <- S / mean(diag(S))
    covs[, , k] <- S
    idx <- which(cl == k)
    if (length(idx)) {
      Z <- matrix(rnorm_(length(idx) * D), length(idx), D)
      X[idx, ] <- sweep(Z %*% chol(S), 2, means[k, ], `+`)
    }
  }
  list(X = X, cluster = cl, means = means, covariances = covs, weights = weights)
}

rdirichlet <- function(n, a, rng) {
  u <- rng(n * length(a))
  g <- matrix(stats::qgamma(u, shape = rep(a, times = n)), n, length(a), byrow = TRUE)
  g[g == 0] <- .Machine$double.xmin
  g / rowSums(g)
}

# n draws from a categorical distribution with probabilities p, by inverting
# the cumulative distribution at uniforms.
draw_categorical <- function(n, p, rng) {
  cp <- cumsum(p) / sum(p)
  pmin(findInterval(rng(n), cp) + 1L, length(p))
}

# A function returning n uniforms on (0, 1) from sparsevi's own stream for
# `seed`, successive calls continuing the sequence. The user's R random state
# is only read (to draw a seed) when `seed` is NULL, and never reset.
uniform_source <- function(seed) {
  seed <- resolve_seed(seed)
  stream <- 0
  function(n) {
    stream <<- stream + 1
    .Call(ffi_svi_rng_unif, seed, stream, as.double(n))
  }
}
