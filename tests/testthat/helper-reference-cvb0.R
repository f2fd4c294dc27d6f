# A slow, plain-R reference of SCVB0's local step (Foulds et al., Algorithm 2
# with clumping, eq. 9), token type by token type, drawing the same random
# numbers as src/lda-cvb0.c: per document one stream (7 * 2^48 +
# stream_base + document index, from 0); from it K uniforms for the start of
# NTheta when it is random, then per pass a Fisher-Yates shuffle of its
# distinct words. start: NTheta's start, "random" (uniforms scaled to the
# document's length), "topics" (the sum over the document's words of their
# count times lambda_kv / tot_k normalised over k) or "uniform" (N_d / K).
# L < K: in the last pass each entry adds only some of its responsibilities
# (the sparse summary), rest = "renormalise": its L largest (the lower topic
# first among equal ones), renormalised to its whole count; rest = "sample":
# its L - 1 largest as they are and the rest of its count on one other
# topic, drawn in proportion with one uniform per entry of positive count;
# rest = "shape": in a word with at least K / L entries in the batch, every
# entry's whole m gamma; else its L largest as they are and the rest of its
# count over the other topics in proportion to the word's topic column p
# (lambda_kv / tot_k normalised over k), i.e. c p plus m gamma - c p on the
# L topics, c = m (1 - their gamma) / (1 - their p); the summary is floored
# at 0. The document's own counts still take the whole gamma.
# background: topic 1's prior in a document of length N_d is alpha +
# background N_d (0: every topic's is alpha, the paper's model).
ref_cvb0_local <- function(dtm, lambda, alpha, seed, stream_base = 0,
                           doc_s = 1, doc_tau = 4, doc_kappa = 0.9,
                           passes = 2L, shuffle = TRUE, start = "topics", L = NULL,
                           rest = "sample", background = 0) {
  K <- nrow(lambda)
  V <- ncol(lambda)
  D <- length(dtm$doc_ptr) - 1L
  tot <- rowSums(lambda)
  theta_all <- matrix(0, K, D)
  S <- matrix(0, K, V)
  rho_of <- function(t) min(1, doc_s * (doc_tau + t)^(-doc_kappa))
  shape <- !is.null(L) && L < K && rest == "shape"
  if (shape) {
    n_entries <- tabulate(dtm$term + 1L, V)
    P <- lambda / tot
    p_all <- t(t(P) / colSums(P))
    R <- numeric(V)
  }
  for (b in seq_len(D) - 1L) {
    docs <- b + 1L
    need <- 0
    for (d in docs) {
      n <- dtm$doc_ptr[d + 1L] - dtm$doc_ptr[d]
      need <- need + (if (start == "random") K else 0) + passes * max(n - 1, 0) + n
    }
    u <- .Call(sparsevi:::ffi_svi_rng_unif, seed, 7 * 2^48 + stream_base + b,
               need + 1)
    pos <- 0
    draw <- function(n) {
      out <- u[pos + seq_len(n)]
      pos <<- pos + n
      out
    }
    for (d in docs) {
      idx <- seq.int(dtm$doc_ptr[d] + 1L, length.out = dtm$doc_ptr[d + 1L] - dtm$doc_ptr[d])
      n <- length(idx)
      if (n == 0L) next
      words <- dtm$term[idx] + 1L
      m <- dtm$count[idx]
      Nd <- sum(m)
      prior <- alpha + c(background * Nd, rep(0, K - 1L))
      theta <- switch(start,
        random = {
          u0 <- draw(K)
          Nd * u0 / sum(u0)
        },
        topics = {
          p <- lambda[, words, drop = FALSE] / tot
          drop(p %*% (m / colSums(p)))
        },
        uniform = rep(Nd / K, K))
      t <- 0
      for (pass in seq_len(passes)) {
        ord <- seq_len(n)
        if (shuffle && n > 1) {
          for (i in seq.int(n - 1L, 1L)) {
            j <- min(floor(draw(1) * (i + 1)), i)
            tmp <- ord[i + 1L]
            ord[i + 1L] <- ord[j + 1L]
            ord[j + 1L] <- tmp
          }
        }
        for (j in ord) {
          v <- words[j]
          gamma <- lambda[, v] / tot * (theta + prior)
          gamma <- gamma / sum(gamma)
          rho <- rho_of(t)
          t <- t + 1
          decay <- (1 - rho)^m[j]
          theta <- decay * theta + Nd * gamma * (1 - decay)
          if (pass == passes) {
            if (shape && L * n_entries[v] >= K) {
              S[, v] <- S[, v] + m[j] * gamma
            } else if (shape) {
              if (m[j] > 0) {
                top <- order(-gamma, seq_len(K))[seq_len(L)]
                p <- p_all[, v]
                rest_m <- m[j] * (1 - sum(gamma[top]))
                q <- sum(p[top])
                cc <- if (1 - q > 1e-12 && rest_m > 0) rest_m / (1 - q) else 0
                mt <- if (cc > 0) m[j] else m[j] / sum(gamma[top])
                S[top, v] <- S[top, v] + mt * gamma[top] - cc * p[top]
                R[v] <- R[v] + cc
              }
            } else if (!is.null(L) && L < K && rest == "renormalise") {
              top <- order(-gamma, seq_len(K))[seq_len(L)]
              S[top, v] <- S[top, v] + m[j] * gamma[top] / sum(gamma[top])
            } else if (!is.null(L) && L < K && m[j] > 0) {
              top <- order(-gamma, seq_len(K))[seq_len(L - 1L)]
              S[top, v] <- S[top, v] + m[j] * gamma[top]
              others <- setdiff(seq_len(K), top)
              rs <- sum(gamma[others])
              u1 <- draw(1)
              pick <- others[gamma[others] > 0][which(cumsum(gamma[others][gamma[others] > 0]) >
                                                        u1 * rs)[1L]]
              if (is.na(pick)) pick <- max(others[gamma[others] > 0])
              S[pick, v] <- S[pick, v] + m[j] * rs
            } else if (is.null(L) || L >= K) {
              S[, v] <- S[, v] + m[j] * gamma
            }
          }
        }
      }
      theta_all[, d] <- theta
    }
  }
  if (shape) S <- pmax(S + t(t(p_all) * R), 0)
  list(theta = theta_all, summary = S)
}

# The reference global step (eqs. 7-8).
ref_cvb0_global <- function(lambda, S, eta, rho, scale) {
  (1 - rho) * lambda + rho * (eta + scale * S)
}

# The K x V matrix of a local step's summary (its words and K x U values).
cvb0_dense <- function(res, V, lambda = NULL) {
  S <- res$summary
  if (!is.null(S$r)) S <- sparsevi:::cvb0_shape_parts(S, lambda, c(0, 1), rowSums(lambda))
  sparsevi:::cvb0_summary_dense(S, nrow(res$doc_topic), V)
}

# A minibatch of the first n_docs documents of a simulated corpus and a dense
# SCVB0 state over its vocabulary: topics 0.01 plus uniforms from stream
# `rng_seed`, t = 0, the corpus's tokens `tokens_mult` times the batch's.
cvb0_test_batch <- function(D, V, K, doc_length, seed, n_docs, rng_seed, tokens_mult) {
  sim <- simulate_lda(D = D, V = V, K = K, doc_length = doc_length, seed = seed)
  x <- sparsevi:::dtm_subset(sim$dtm, seq_len(n_docs))
  Vx <- ncol(x)
  list(x = x, K = K, V = Vx,
       state = lda_test_state(lambda = matrix(0.01 + uniform_source(rng_seed)(K * Vx), K, Vx), t = 0,
                    n_tokens = tokens_mult * sum(x$count)))
}
