# Benchmark of SCVB0 (issue 7): throughput, held-out log-likelihood against
# time versus our stochastic VB, and 5-second topics on kos.
#
#   nice -n 10 Rscript inst/bench/scvb0.R [results file]
#
# Run from the package root with sparsevi installed (R_LIBS=...). Reads the
# corpora from ../shared/data (relative to the package root). Writes a small
# text report to inst/bench/results/scvb0.txt. Clocks are CPU seconds of this
# process (user + system): the benchmark machine is shared, so wall time
# would mostly measure the neighbours. One thread throughout.
#
# Environment knobs (to shorten or lengthen the run):
#   SCVB0_WIKI_DOCS  training documents of wikipara (default 50000)
#   SCVB0_WIKI_SECS  CPU seconds per method on wikipara (default 40)
#   SCVB0_NIPS_SECS  CPU seconds per method on nips_f20 (default 30)
#   SCVB0_PARTS      which parts to run, e.g. "1" or "2,3" (default "1,2,3")
#   SCVB0_METHODS    methods of part 2 (default "scvb0,svb,svb-5it,svb-O0")

suppressMessages(library(sparsevi))

args <- commandArgs(trailingOnly = TRUE)
out_file <- if (length(args)) args[1] else "inst/bench/results/scvb0.txt"
data_dir <- if (dir.exists("../shared/data")) "../shared/data" else "/work/shared/data"
env_num <- function(name, default) {
  v <- Sys.getenv(name)
  if (nzchar(v)) as.numeric(v) else default
}
wiki_docs <- env_num("SCVB0_WIKI_DOCS", 5e4)
wiki_secs <- env_num("SCVB0_WIKI_SECS", 40)
nips_secs <- env_num("SCVB0_NIPS_SECS", 30)
parts <- as.integer(strsplit(Sys.getenv("SCVB0_PARTS", "1,2,3"), ",")[[1]])
methods <- strsplit(Sys.getenv("SCVB0_METHODS", "scvb0,svb,svb-5it,svb-O0"), ",")[[1]]

report <- character(0)
say <- function(...) {
  line <- sprintf(...)
  cat(line, "\n", sep = "")
  report <<- c(report, line)
}
cpu <- function() {
  p <- proc.time()
  p[[1]] + p[[2]]
}

# --- data -------------------------------------------------------------------

# The first n_docs documents of a UCI bag-of-words file (all with Inf), read
# in chunks so that a subset of a large file stays cheap.
read_uci_head <- function(name, n_docs = Inf) {
  path <- file.path(data_dir, name, sprintf("docword.%s.txt.gz", name))
  vocab <- readLines(file.path(data_dir, name, sprintf("vocab.%s.txt", name)))
  con <- gzfile(path, "r")
  on.exit(close(con))
  hdr <- as.numeric(readLines(con, 3))
  parts <- list()
  repeat {
    ch <- scan(con, what = list(0L, 0L, 0), nmax = 2e6, quiet = TRUE)
    if (!length(ch[[1]])) break
    keep <- ch[[1]] <= n_docs
    parts[[length(parts) + 1L]] <- lapply(ch, `[`, keep)
    if (!all(keep)) break
  }
  d <- unlist(lapply(parts, `[[`, 1L))
  w <- unlist(lapply(parts, `[[`, 2L))
  cnt <- unlist(lapply(parts, `[[`, 3L))
  m <- Matrix::sparseMatrix(i = d, j = w, x = cnt, dims = c(max(d), hdr[2]),
                            dimnames = list(paste0("d", seq_len(max(d))), vocab))
  m
}

# Keep the n most frequent words of the training rows (as the paper's
# 7,700-word Wikipedia dictionary); drop documents left empty.
restrict_vocab <- function(m, train_rows, n) {
  freq <- Matrix::colSums(m[train_rows, , drop = FALSE])
  keep <- order(-freq)[seq_len(min(n, sum(freq > 0)))]
  m[, sort(keep), drop = FALSE]
}

nonempty <- function(m) m[Matrix::rowSums(m) > 0, , drop = FALSE]

# --- a minibatch driver with held-out evaluation against CPU time -------------

# The same loop as fit_lda() (local step, then global step, per minibatch of
# 100 documents, documents reshuffled every pass), stopped by a CPU budget and
# scored every `eval_every` CPU seconds (scoring time not counted). Held-out
# score: document completion, topics fixed at their posterior mean.
run_timed <- function(x, K, local, budget, heldout, eval_every, seed = 1, ...) {
  D <- nrow(x)
  tmpl <- fit_lda(x[seq_len(min(D, 150)), ], K = K, local = local, global = "stochastic",
                  passes = 1, batch_size = 100, init = "random", seed = seed,
                  progress = FALSE, ...)
  control <- tmpl$control
  control$n_docs <- D
  control$n_batches <- as.integer(ceiling(D / 100))
  if (!is.null(control$n_tokens)) control$n_tokens <- sum(x$count)
  state <- sparsevi:::lda_init_state(x, control)
  local_fun <- get(paste0("lda_local_", local), asNamespace("sparsevi"))
  gname <- if (is.null(control$global_step)) control$global else control$global_step
  global_fun <- get(paste0("lda_global_", gname), asNamespace("sparsevi"))
  score <- function() {
    if (is.null(heldout)) return(NA_real_)
    sparsevi:::completion_score(sparsevi:::lda_state_topic_word(state), control$alpha,
                                heldout, 1L)
  }
  trace <- data.frame(seconds = 0, docs = 0, heldout = score())
  clock <- 0
  docs <- 0
  next_eval <- eval_every
  lap <- 0
  nb <- control$n_batches
  while (clock < budget) {
    lap <- lap + 1
    batch_of <- sparsevi:::lda_assign_batches(D, nb, control$seed, stream = 600 + lap)
    members <- split(seq_len(D), factor(batch_of, levels = seq_len(nb)))
    for (b in seq_len(nb)) {
      t0 <- cpu()
      batch <- sparsevi:::dtm_subset(x, members[[b]])
      res <- local_fun(batch, state, control,
                       sparsevi:::lda_batch_seed(control$seed, lap, b), 1L)
      state <- global_fun(state, res, b, control)
      clock <- clock + cpu() - t0
      docs <- docs + length(members[[b]])
      if (clock >= next_eval || clock >= budget) {
        trace <- rbind(trace, data.frame(seconds = clock, docs = docs, heldout = score()))
        next_eval <- next_eval + eval_every
      }
      if (clock >= budget) break
    }
  }
  list(trace = trace, topic_word = sparsevi:::lda_state_topic_word(state), state = state,
       control = control)
}

print_traces <- function(runs) {
  for (nm in names(runs)) {
    tr <- runs[[nm]]$trace
    say("  %-22s %s", nm, paste(sprintf("%.0fs:%.3f", tr$seconds, tr$heldout),
                                collapse = "  "))
  }
}

# Held-out score of each run interpolated at common times.
compare_at <- function(runs, times) {
  say("  %-22s %s", "CPU seconds", paste(sprintf("%8.0f", times), collapse = ""))
  for (nm in names(runs)) {
    tr <- runs[[nm]]$trace
    v <- stats::approx(tr$seconds, tr$heldout, xout = times, rule = 2)$y
    say("  %-22s %s", nm, paste(sprintf("%8.3f", v), collapse = ""))
  }
}

make_test <- function(m_test, seed = 7) {
  x <- as_dtm(m_test)
  sparsevi:::as_heldout(x, x$vocab, observed_frac = 0.5, by = "tokens", seed = seed)
}

say("SCVB0 benchmark (inst/bench/scvb0.R), %s", format(Sys.time(), "%Y-%m-%d %H:%M"))
say("R %s; sparsevi %s; one thread; clocks are CPU seconds (shared machine).",
    getRversion(), utils::packageVersion("sparsevi"))

# --- 1. throughput ------------------------------------------------------------

m_all <- if (any(parts %in% 1:2)) read_uci_head("wikipara", wiki_docs + 2000)
if (1 %in% parts) {
say("")
say("1. Local-step throughput, K = 100, one core, minibatches of 100 documents (R wrapper and C; CPU time, best of 3)")
n_tp <- min(wiki_docs, 20000)
tp_sets <- list(
  full = nonempty(m_all[seq_len(n_tp), ]),
  top7700 = nonempty(restrict_vocab(m_all, seq_len(wiki_docs), 7700)[seq_len(n_tp), ])
)
for (nm in names(tp_sets)) {
  x <- as_dtm(tp_sets[[nm]])
  K <- 100
  V <- ncol(x)
  u <- sparsevi:::uniform_source(1)(K * V)
  lambda <- matrix(0.01 + u, K, V)
  # topic totals tracked as in training (lda_global_cvb0 keeps them)
  state <- list(lambda = lambda, t = 0L, tot = rowSums(lambda), tot_t = 0L)
  D <- nrow(x)
  batches <- lapply(split(seq_len(D), ceiling(seq_len(D) / 100)),
                    function(i) sparsevi:::dtm_subset(x, i))
  tok <- sum(x$count)
  ctl <- list(alpha = 0.1, burnin = 1L)
  best <- Inf
  for (r in 1:3) {
    t0 <- cpu()
    for (b in batches) sparsevi:::lda_local_cvb0(b, state, ctl, c(0, r), 1L)
    best <- min(best, cpu() - t0)
  }
  ctl0 <- list(alpha = 0.1, burnin = 0L)
  best0 <- Inf
  for (r in 1:3) {
    t0 <- cpu()
    for (b in batches) sparsevi:::lda_local_cvb0(b, state, ctl0, c(0, r), 1L)
    best0 <- min(best0, cpu() - t0)
  }
  say("  wikipara first %s docs, vocabulary %s (%s): %s tokens, %s (doc, word) pairs",
      format(D, big.mark = ","), format(V, big.mark = ","), nm,
      format(tok, big.mark = ","), format(length(x$term), big.mark = ","))
  say("    burn-in 1 (2 passes per document): %.2f s = %.2f M corpus tokens/s = %.2f M token-passes/s",
      best, tok / best / 1e6, 2 * tok / best / 1e6)
  say("    burn-in 0 (1 pass per document):   %.2f s = %.2f M tokens/s per pass",
      best0, tok / best0 / 1e6)
  if (nm == "top7700") {
    # the dense VB local step on the same minibatches, for reference
    vb_state <- list(lambda = lambda, t = 0L)
    fit_v <- fit_lda(x[1:150, ], K = K, local = "vb", global = "stochastic", L = K,
                     passes = 1, batch_size = 100, init = "random", seed = 1,
                     restarts = FALSE, progress = FALSE)
    vctl <- fit_v$control
    sub <- batches[seq_len(min(length(batches), 40))]
    sub_tok <- sum(vapply(sub, function(b) sum(b$count), 0))
    t0 <- cpu()
    for (b in sub) sparsevi:::lda_local_vb(b, vb_state, vctl, c(0, 1), 1L)
    tv <- cpu() - t0
    t0 <- cpu()
    for (b in sub) sparsevi:::lda_local_cvb0(b, state, ctl, c(0, 1), 1L)
    tc <- cpu() - t0
    say("    dense VB local step (to convergence) on the first %d minibatches: %.2f M tokens/s; SCVB0 %.2f M tokens/s (ratio %.1fx)",
        length(sub), sub_tok / tv / 1e6, sub_tok / tc / 1e6, tv / tc)
  }
}

}

# --- 2. held-out log-likelihood against time ------------------------------------

if (2 %in% parts) {
say("")
say("2. Held-out log-likelihood per token (half of each test document observed, half scored) against CPU seconds, K = 100")
say("   SCVB0: paper defaults (alpha 0.1, eta 0.01, topics s=10 tau=1000 kappa=0.9, documents s=1 tau=10 kappa=0.9, one burn-in pass).")
say("   SVB: our stochastic VB, dense (L = K), no restarts, its defaults (alpha 0.5, eta 0.1: the paper's +0.5 offset; rho = (1 + t)^-0.6); local step to convergence (svb) or at most 5 iterations (svb-5it); svb-O0: to convergence with SCVB0's priors alpha 0.1, eta 0.01.")
say("   All: minibatches of 100 documents, random initialisation, one thread.")
}

bench_corpus <- function(label, m_train, m_test, budget) {
  x <- as_dtm(nonempty(m_train))
  heldout <- make_test(nonempty(m_test))
  say("")
  say("%s: %s training documents, %s terms, %s tokens; %s test documents (%s held-out tokens); %.0f CPU s per method",
      label, format(nrow(x), big.mark = ","), format(ncol(x), big.mark = ","),
      format(sum(x$count), big.mark = ","), format(nrow(heldout$observed), big.mark = ","),
      format(sum(heldout$heldout$count), big.mark = ","), budget)
  runs <- list()
  if ("scvb0" %in% methods) {
    runs$scvb0 <- run_timed(x, 100, "cvb0", budget, heldout, budget / 10)
  }
  if ("svb" %in% methods) {
    runs$svb <- run_timed(x, 100, "vb", budget, heldout, budget / 10, L = 100,
                          restarts = FALSE)
  }
  if ("svb-5it" %in% methods) {
    runs$`svb-5it` <- run_timed(x, 100, "vb", budget, heldout, budget / 10, L = 100,
                                restarts = FALSE, max_iter = 5)
  }
  if ("svb-O0" %in% methods) {
    # the paper's SVB-B1-O0: SCVB0's priors
    runs$`svb-O0` <- run_timed(x, 100, "vb", budget, heldout, budget / 10, L = 100,
                               restarts = FALSE, alpha = 0.1, eta = 0.01)
  }
  print_traces(runs)
  say("  interpolated at common times:")
  compare_at(runs, budget * c(0.1, 0.25, 0.5, 0.75, 1))
  for (nm in names(runs)) {
    tr <- runs[[nm]]$trace
    say("  %-22s documents processed: %s (%.0f docs/CPU s)", nm,
        format(max(tr$docs), big.mark = ","), max(tr$docs) / max(tr$seconds))
  }
  runs
}

if (2 %in% parts) {
nips <- read_uci_head("nips_f20")
nips_runs <- bench_corpus("nips_f20 (train = documents 1-1350, test = 1351-1500)",
                          nips[1:1350, ], nips[1351:1500, ], nips_secs)

wiki <- restrict_vocab(m_all, seq_len(wiki_docs), 7700)
wiki_runs <- bench_corpus(sprintf("wikipara subset (train = first %s paragraphs, test = next 2,000; vocabulary: the 7,700 most frequent words of the training part)",
                                  format(wiki_docs, big.mark = ",")),
                          wiki[seq_len(wiki_docs), ], wiki[wiki_docs + seq_len(2000), ],
                          wiki_secs)
rm(wiki)
}
rm(m_all)

# --- 3. kos in 5 seconds -------------------------------------------------------------

if (3 %in% parts) {
say("")
say("3. kos, K = 20, 5 CPU seconds each: top words and coherence (reference corpus: kos itself, top 10 words)")
kos <- read_uci_head("kos")
xk <- as_dtm(kos)

# Coherence: the package's coherence() when its measures are available,
# else the same definitions computed here (MATH.md section 7).
doc_sets <- function(x) {
  m <- as_dgCMatrix(x)
  m@x[] <- 1
  m
}
local_coherence <- function(tw, ref, n = 10) {
  B <- doc_sets(ref)
  D <- nrow(B)
  npmi <- umass <- numeric(nrow(tw))
  for (k in seq_len(nrow(tw))) {
    top <- order(-tw[k, ])[seq_len(n)]
    Bk <- B[, top, drop = FALSE]
    co <- as.matrix(Matrix::crossprod(Bk))
    df <- diag(co)
    u <- 0
    s <- 0
    np <- 0
    for (mm in 2:n) for (l in 1:(mm - 1)) {
      u <- u + log((co[mm, l] + 1) / df[l])
      pij <- co[mm, l] / D
      pi <- df[mm] / D
      pj <- df[l] / D
      s <- s + if (pij > 0) log(pij / (pi * pj)) / (-log(pij)) else -1
      np <- np + 1
    }
    umass[k] <- u
    npmi[k] <- s / np
  }
  list(npmi = npmi, umass = umass)
}
pkg_coherence <- function(tw, measure) {
  ns <- asNamespace("sparsevi")
  if (is.null(get0(paste0("coherence_", measure), envir = ns, inherits = FALSE))) {
    return(NULL)
  }
  as.numeric(unlist(coherence(tw, xk, measure = measure, n = 10)))
}

kos_runs <- list(
  scvb0 = run_timed(xk, 20, "cvb0", 5, NULL, 5),
  svb = run_timed(xk, 20, "vb", 5, NULL, 5, L = 20, restarts = FALSE)
)
for (nm in names(kos_runs)) {
  tw <- kos_runs[[nm]]$topic_word
  colnames(tw) <- colnames(kos)
  lc <- local_coherence(tw, xk, 10)
  pn <- pkg_coherence(tw, "npmi")
  pu <- pkg_coherence(tw, "umass")
  src <- if (is.null(pn) && is.null(pu)) "computed in this script (coherence_npmi/coherence_umass not on this branch)" else "sparsevi::coherence()"
  npmi <- if (is.null(pn)) lc$npmi else pn
  umass <- if (is.null(pu)) lc$umass else pu
  tr <- kos_runs[[nm]]$trace
  say("")
  say("  %s: %s documents processed in %.1f CPU s; mean NPMI %.4f, mean UMass %.2f (%s)",
      nm, format(max(tr$docs), big.mark = ","), max(tr$seconds), mean(npmi), mean(umass), src)
  size <- rowSums(kos_runs[[nm]]$state$lambda)
  for (k in order(-size)) {
    say("    %2d  npmi %6.3f  umass %7.2f  %s", k, npmi[k], umass[k],
        paste(colnames(tw)[order(-tw[k, ])[1:8]], collapse = " "))
  }
}

}

dir.create(dirname(out_file), showWarnings = FALSE, recursive = TRUE)
writeLines(report, out_file)
cat("written to", out_file, "\n")
