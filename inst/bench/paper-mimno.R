# Mimno, Hoffman & Blei (2012), Fig. 2 at the paper's settings (issue 25):
# Gibbs within SVI ("gibbs") against online VB ("vb", L = K, "stochastic"),
# minibatches of 100 documents, kappa = 0.6, tau = 1,000 (and the package
# default tau = 1 for contrast), the same documents seen (one pass), K = 100,
# per-topic UMass coherence over the top 20 words on the training paragraphs,
# compared by a Welch test; also the lowest decile (the paper's "poor
# topics") and document completion on held-out paragraphs.
# Run from the package root:
#   SPARSEVI_BENCH_DOCS=30000 nice -n 10 Rscript inst/bench/paper-mimno.R
# Reads the first SPARSEVI_BENCH_DOCS + 1,000 paragraphs of ../shared/data/wikipara
# (1,000 of them, at random, held out);
# appends to inst/bench/results/paper-mimno.txt.
suppressPackageStartupMessages(library(sparsevi))
bench_dir <- local({
  a <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  d <- c(if (length(a)) dirname(a[1]), file.path("inst", "bench"),
         system.file("bench", package = "sparsevi"))
  d[file.exists(file.path(d, "bench-log.R"))][1]
})
source(file.path(bench_dir, "bench-log.R"))
source(file.path(bench_dir, "bench-data.R"))
smoke <- bench_smoke()
data_dir <- if (!smoke) bench_data_dir()
say <- bench_logger(bench_out("paper-mimno.txt"))
n_docs <- as.integer(Sys.getenv("SPARSEVI_BENCH_DOCS", "30000"))
K <- if (smoke) 10L else 100L
n_test <- if (smoke) 10L else 1000L

x <- bench_corpus(sprintf("wikipara%d", n_docs + 1000L), data_dir)
sp <- split_heldout(x, n_test = n_test, seed = 1)
train <- sp$train
test <- sp$test
bench_header(say, sprintf("== Mimno, Hoffman & Blei Fig. 2 at the paper's settings (inst/bench/paper-mimno.R); load %s",
                          paste(readLines("/proc/loadavg"), collapse = "")))
say("   wikipara: the first %d paragraphs, 1,000 of them (at random, seed 1) held out for document completion; V = %d",
    n_docs + 1000L, length(train$vocab))
say("   K = %d, minibatches of 100, one pass, kappa = 0.6, alpha = 0.1, step_scale 1, start bregman unless said, gibbs burnin 3 samples 2 unless said, vb dense with restart proposals unless said, seed 1, one thread; UMass over the top 20 words on the training paragraphs",
    K)

runs <- list(
  list(name = "hybrid  tau=1000 eta=0.2", local = "gibbs", tau = 1000, eta = 0.2),
  list(name = "onlineVB tau=1000 eta=0.2", local = "vb", tau = 1000, eta = 0.2),
  list(name = "onlineVB tau=1000 eta=0.01", local = "vb", tau = 1000, eta = 0.01),
  list(name = "hybrid  tau=1 eta=0.2", local = "gibbs", tau = 1, eta = 0.2),
  list(name = "onlineVB tau=1 eta=0.2", local = "vb", tau = 1, eta = 0.2),
  # the paper's online VB proposes no restarts
  list(name = "onlineVB tau=1000 eta=0.2 no restarts", local = "vb", tau = 1000, eta = 0.2,
       restarts = FALSE),
  # the start (the paper's random topics against the default Bregman start)
  # and training length (three passes)
  list(name = "hybrid  tau=1000 random start", local = "gibbs", tau = 1000, eta = 0.2,
       init = "random"),
  list(name = "hybrid  tau=1000 3 passes", local = "gibbs", tau = 1000, eta = 0.2, passes = 3),
  list(name = "onlineVB tau=1000 3 passes", local = "vb", tau = 1000, eta = 0.2, passes = 3),
  list(name = "hybrid  tau=1000 burnin 10", local = "gibbs", tau = 1000, eta = 0.2,
       burnin = 10, samples = 5)
)
coh <- list()
for (r in runs) {
  args <- list(train, K = K, local = r$local, global = "stochastic", batch_size = 100,
               passes = if (is.null(r$passes)) 1L else r$passes, kappa = 0.6, tau = r$tau,
               alpha = 0.1, eta = r$eta, step_scale = 1, seed = 1, threads = 1,
               progress = FALSE, doc_topics = 0,
               init = if (is.null(r$init)) "bregman" else r$init)
  if (r$local == "gibbs") {
    # gibbs's sweeps at 06ddbb6 (burnin 3, samples 2) unless the row sets them
    args$burnin <- if (is.null(r$burnin)) 3L else r$burnin
    args$samples <- if (is.null(r$samples)) 2L else r$samples
    # the paper re-seeds no topic (gibbs re-seeds dead ones by default since
    # the eleventh session; every row here ran before that)
    args$reuse_dead <- FALSE
  }
  if (r$local == "vb") {
    # online VB dense (L = K), with vb's restart proposals as every earlier
    # run of this script had them (vb's default), unless the row says not; the
    # paper's online VB has none
    args$L <- K
    args$restarts <- if (is.null(r$restarts)) TRUE else r$restarts
  }
  if (smoke) args$passes <- 1L
  t0 <- proc.time()[["user.self"]]
  fit <- do.call(fit_lda, args)
  sec <- proc.time()[["user.self"]] - t0
  bench_header(say, fits = stats::setNames(list(fit), r$name))
  u <- as.numeric(coherence(fit, train, measure = "umass", n = 20))
  h <- heldout_loglik(fit, test)
  coh[[r$name]] <- u
  say("  %-28s %6.1f CPU s  UMass mean %8.2f  median %8.2f  lowest decile mean %8.2f  held-out %.4f",
      r$name, sec, mean(u), stats::median(u), mean(sort(u)[seq_len(max(1L, K %/% 10))]), h)
}
welch <- function(a, b) {
  tt <- stats::t.test(coh[[a]], coh[[b]], var.equal = FALSE)
  say("  Welch: %s minus %s: difference of means %.2f, t = %.2f, p = %.3g", a, b,
      mean(coh[[a]]) - mean(coh[[b]]), tt$statistic, tt$p.value)
}
welch("hybrid  tau=1000 eta=0.2", "onlineVB tau=1000 eta=0.2")
welch("hybrid  tau=1000 eta=0.2", "onlineVB tau=1000 eta=0.01")
welch("hybrid  tau=1 eta=0.2", "onlineVB tau=1 eta=0.2")
welch("hybrid  tau=1000 3 passes", "onlineVB tau=1000 3 passes")
welch("hybrid  tau=1000 random start", "onlineVB tau=1000 eta=0.2")
welch("hybrid  tau=1000 eta=0.2", "onlineVB tau=1000 eta=0.2 no restarts")
say("  (UMass: closer to 0 is better; the paper finds fewer poor topics for the hybrid)")
attr(say, "close")()
