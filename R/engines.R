# The engine registry: every training engine of the package, described in
# one place. An LDA engine is a local step (R: lda_local_<name>(), its C in
# src/lda-<name>.c) with the global steps it pairs with, its defaults and the
# controls it takes in fit_lda()'s `...`; a mixture engine is a global step
# of fit_mixture(). fit_lda(), check_engine(), lda_combinations and the docs
# read this table; nothing else lists engines.
#
# vb: alpha = 0.1 was chosen by held-out score on validation documents of
# kos and nips_f20 (inst/bench/results/lda-sparse.txt, part 5). eta = 0.01
# replaced 0.5 after inst/bench/defaults.R (results/defaults.txt) scored
# eta = 0.5, 0.01 and "learn" against scikit-learn on six corpora, four of
# them never used for tuning (K = 100, 10 laps, one split each): 0.01 was
# within 0.05 nats/token of the best system on every corpus and ahead of
# scikit-learn's batch LDA on all six; 0.5 fell 0.28 behind on spamassassin
# (V = 13.7k). Priors NA mean 1 / K; step_scale is the s of the step size
# rho_t = s (tau + t)^-kappa.
sparsevi_engines <- list(
  lda = list(
    vb = list(
      paper = "Hughes & Sudderth (L-sparse); Hoffman et al. (online); Broderick et al. (streaming)",
      globals = c("memoized", "stochastic", "streaming", "batch"),
      defaults = list(global = "memoized", alpha = 0.1, eta = 0.01, step_scale = 1),
      controls = c("max_iter", "tol", "active_eps", "select_every", "restart_max",
                   "restart_iter", "restart_laps", "converge_tol", "warm_start", "step_scale")),
    ope = list(
      paper = "Than & Doan (OPE; ML-, Online-, Streaming-OPE)",
      globals = c("ml", "stochastic", "streaming", "memoized"),
      defaults = list(global = "ml", alpha = NA, eta = NA, step_scale = 1),
      controls = c("ope_iter", "ope_eps", "step_scale")),
    cvb0 = list(
      paper = "Foulds et al. (SCVB0)",
      globals = "stochastic",
      defaults = list(global = "stochastic", alpha = 0.1, eta = 0.01, step_scale = 1),
      controls = c("doc_s", "doc_tau", "doc_kappa", "burnin", "shuffle", "infer_passes",
                   "step_scale")),
    gibbs = list(
      paper = "Mimno, Hoffman & Blei (Gibbs within SVI)",
      globals = "stochastic",
      defaults = list(global = "stochastic", alpha = 0.1, eta = 0.2, step_scale = 1,
                      # init = "sparse" by default when the dense start would
                      # hold more than this many K x V entries (256 MB)
                      sparse_start_above = 2^25),
      controls = c("burnin", "samples", "rescale_below", "step_scale"))
  ),
  mixture = list(globals = c("memoized", "stochastic", "batch"))
)

#' Valid combinations of LDA local and global steps
#'
#' A data frame with columns `local`, `global` and `supported`, one row per
#' engine [fit_lda()] accepts (from the package's engine registry);
#' [fit_lda()] refuses any other pair.
#' @format A data frame.
#' @examples
#' lda_combinations
#' @export
lda_combinations <- local({
  eng <- sparsevi_engines$lda
  data.frame(local = rep(names(eng), vapply(eng, function(e) length(e$globals), 1L)),
             global = unlist(lapply(eng, `[[`, "globals"), use.names = FALSE),
             supported = TRUE, stringsAsFactors = FALSE)
})

# Per local step: default global step, priors and step scale (read by fit_lda).
lda_engine_defaults <- lapply(sparsevi_engines$lda, `[[`, "defaults")

# Engine controls fit_lda() accepts in `...`, by local step.
lda_engine_controls <- lapply(sparsevi_engines$lda, `[[`, "controls")
