# Where the time of one fit_mixture() call goes (issue 39, the scikit-learn E+M comparison):
# total, the start (init_seconds: k-means++ seeding and k-means), the laps (wall) and their
# E+M kernels (local + summary seconds), five runs. Run from the package root:
#   R_LIBS=<lib> nice -n 19 Rscript inst/bench/mixture-call-split.R
library(sparsevi)
options(sparsevi.threads = 1L)
Y <- simulate_mixture(N = 20000, D = 10, K = 20, seed = 1)$X
res <- t(replicate(5, {
  t <- system.time(f <- fit_mixture(Y, K = 20, L = 20, global = "batch", passes = 10, n_init = 1, tol = 0, seed = 1, progress = FALSE))[["elapsed"]]
  tr <- f$trace
  c(total = t, init = f$control$init_seconds, laps = max(tr$seconds), em = sum(tr$local_seconds + tr$summary_seconds), n_laps = max(tr$lap))
}))
print(res)
print(apply(res, 2, median))
