# Slow pure-R references of the OPE engine's kernels, for oracle tests.

# OPE objective f(theta) for one document (counts cnt over word indices w);
# bg = background x N_d adds to topic 1's prior.
ref_ope_objective <- function(theta, beta, w, cnt, alpha, bg = 0) {
  x <- as.vector(crossprod(beta[, w, drop = FALSE], theta))
  sum(cnt * log(x)) + (alpha - 1) * sum(log(theta)) + bg * log(theta[1])
}

# Algorithm 1 with the same draws as the C kernel: u (K + T uniforms) gives
# theta_1 from the first K and the g1/g2 picks from the rest.
ref_ope_doc <- function(beta, w, cnt, alpha, iter, eps, u, background = 0) {
  K <- nrow(beta)
  bg <- background * sum(cnt)
  theta <- 1 + u[seq_len(K)]
  theta <- eps + (1 - K * eps) * theta / sum(theta)
  f_start <- ref_ope_objective(theta, beta, w, cnt, alpha, bg)
  a <- 1 # g1 counted once before the first draw (the authors' code)
  b <- 0
  for (t in seq_len(iter)) {
    if (u[K + t] < 0.5) a <- a + 1 else b <- b + 1
    if ((a == 0 || length(w) == 0) && (b == 0 || (alpha == 1 && bg == 0))) next
    x <- as.vector(crossprod(beta[, w, drop = FALSE], theta))
    g1 <- if (length(w)) as.vector(beta[, w, drop = FALSE] %*% (cnt / x)) else 0
    g2 <- (alpha - 1) / theta + c(bg / theta[1], rep(0, K - 1))
    grad <- a * g1 + b * g2
    e <- rep(eps, K)
    e[which.max(grad)] <- 1 - (K - 1) * eps
    theta <- theta + (e - theta) / (t + 1)
  }
  list(theta = theta, f_start = f_start,
       f_end = ref_ope_objective(theta, beta, w, cnt, alpha, bg))
}

# OPE over documents of one block (at most 64), drawing from one stream.
ref_ope_block <- function(x, lambda, alpha, iter, eps, seed, stream, background = 0) {
  beta <- lambda / rowSums(lambda)
  K <- nrow(beta)
  D <- nrow(x)
  u <- .Call(sparsevi:::ffi_svi_rng_unif, seed, stream, D * (K + iter))
  theta <- matrix(0, K, D)
  fs <- fe <- numeric(D)
  for (d in seq_len(D)) {
    idx <- if (x$doc_ptr[d + 1] > x$doc_ptr[d]) (x$doc_ptr[d] + 1):x$doc_ptr[d + 1] else integer(0)
    r <- ref_ope_doc(beta, x$term[idx] + 1L, x$count[idx], alpha, iter, eps,
                     u[(d - 1) * (K + iter) + seq_len(K + iter)], background)
    theta[, d] <- r$theta
    fs[d] <- r$f_start
    fe[d] <- r$f_end
  }
  list(theta = theta, f_start = fs, f_end = fe)
}

# The MAP problem by projected gradient ascent on the eps-simplex (Euclidean
# projection), a deterministic oracle for the concave case alpha >= 1.
ref_simplex_project <- function(y, eps) {
  # project y onto {theta: sum = 1, theta >= eps}
  K <- length(y)
  z <- y - eps
  s <- 1 - K * eps
  u <- sort(z, decreasing = TRUE)
  css <- cumsum(u)
  rho <- max(which(u - (css - s) / seq_len(K) > 0))
  tau <- (css[rho] - s) / rho
  pmax(z - tau, 0) + eps
}

ref_ope_map <- function(beta, w, cnt, alpha, eps, iter = 5000) {
  K <- nrow(beta)
  theta <- rep(1 / K, K)
  f <- ref_ope_objective(theta, beta, w, cnt, alpha)
  step <- 1 / sum(cnt)
  for (i in seq_len(iter)) {
    x <- as.vector(crossprod(beta[, w, drop = FALSE], theta))
    g <- as.vector(beta[, w, drop = FALSE] %*% (cnt / x)) + (alpha - 1) / theta
    repeat {
      cand <- ref_simplex_project(theta + step * g, eps)
      fc <- ref_ope_objective(cand, beta, w, cnt, alpha)
      if (fc >= f - 1e-12 || step < 1e-14) break
      step <- step / 2
    }
    if (abs(fc - f) < 1e-12) { theta <- cand; f <- fc; break }
    theta <- cand
    f <- fc
    step <- step * 1.5
  }
  list(theta = theta, f = f)
}

# NPMI of the top-n words of each topic, by brute force over a dense matrix.
ref_npmi <- function(topic_word, dtm_matrix, n) {
  B <- dtm_matrix > 0
  D <- nrow(B)
  K <- nrow(topic_word)
  per <- numeric(K)
  for (k in seq_len(K)) {
    top <- order(topic_word[k, ], decreasing = TRUE)[seq_len(n)]
    vals <- c()
    for (j in 2:n) for (i in 1:(j - 1)) {
      pi <- sum(B[, top[i]]) / D
      pj <- sum(B[, top[j]]) / D
      pij <- sum(B[, top[i]] & B[, top[j]]) / D
      v <- if (pij == 0) -1 else if (pij == 1) 1 else log(pij / (pi * pj)) / -log(pij)
      vals <- c(vals, v)
    }
    per[k] <- mean(vals)
  }
  list(per_topic = per, mean = mean(per))
}
