# Benchmark of SCVB0 (issue 7): throughput, held-out log-likelihood against
# time versus our stochastic VB, and 5-second topics on kos. Part 6 (issues
# 20 and 22): SCVB0's held-out score by lap on every corpus of ../shared/data
# under the paper's settings and the engine's defaults, and one pass at
# K = 1000 (SCVB0_PARTS=6). Part 7 (issue 38): Foulds et al. Fig. 3, SCVB0
# on every training paragraph of wikipara against batch VB on subsets of N
# paragraphs, held-out score against CPU seconds (SCVB0_PARTS=7).
#
#   nice -n 10 Rscript inst/bench/scvb0.R [results file]
#
# Run from the package root with sparsevi installed (R_LIBS=...). Reads the
# corpora from ../shared/data (relative to the package root). Appends a
# dated section to inst/bench/results/scvb0.txt (earlier sections are kept),
# headed by the commit, the command and, for every run, the settings that
# ran (read back from the fit's control list). Smoke mode
# (SPARSEVI_BENCH_SMOKE=1): every part on small simulated corpora with short
# budgets, results in a temporary directory.
# Clocks are CPU seconds of this process (user + system): the benchmark
# machine is shared, so wall time would mostly measure the neighbours. One
# thread throughout, except part 4 (threads), which must use wall time and
# reports the load average next to it.
#
# Before/after comparisons run the same script against two installed
# versions, e.g. (part 1 and 4 only):
#   SCVB0_PARTS=1,4 SCVB0_LABEL=before R_LIBS=/tmp/lib-old nice -n 10 Rscript inst/bench/scvb0.R
#   SCVB0_PARTS=1,4 SCVB0_LABEL=after  R_LIBS=/tmp/lib-new nice -n 10 Rscript inst/bench/scvb0.R
# (the script falls back to the older internals where the new ones are absent).
#
# Environment knobs (to shorten or lengthen the run):
#   SCVB0_WIKI_DOCS  training documents of wikipara (default 50000)
#   SCVB0_WIKI_SECS  CPU seconds per method on wikipara (default 40)
#   SCVB0_NIPS_SECS  CPU seconds per method on nips_f20 (default 30)
#   SCVB0_PARTS      which parts to run, e.g. "1" or "2,3" (default "1,2,3,4,5")
#   SCVB0_METHODS    methods of part 2 (default
#                    "scvb0,scvb0-default,svb,svb-5it,svb-O0"): scvb0 = the
#                    paper's settings (Foulds et al. Fig. 1: topics s = 10,
#                    tau = 1000, kappa = 0.9; documents s = 1, tau = 10,
#                    kappa = 0.9; one burn-in pass; alpha 0.1, eta 0.01);
#                    scvb0-default = the engine's schedule now, named
#                    (s = 1, tau = 1, kappa = 0.6, burnin 0; same priors);
#                    svb = stochastic VB with the paper's +0.5 offset
#                    (alpha 0.6, eta 0.51); svb-5it = the same, at most 5
#                    local iterations; svb-O0 = SCVB0's priors (alpha 0.1,
#                    eta 0.01). Every SVB row: L = K, no restarts,
#                    rho_t = (1 + t)^-0.6 (step_scale 1, tau 1, kappa 0.6).
#   SCVB0_LABEL      a label for the report's header (e.g. "before", "after")
#   SCVB0_TP_DOCS    documents of the throughput sets (default 20000)
#   SCVB0_P6_CORPORA corpora of part 6 (default kos,nips_f20,poliblog5k,
#                    sotu_chunks,spamassassin,moviereviews)
#   SCVB0_P6_LARGE   wikipara heads of part 6's K = 1000 pass (default
#                    "10000"; e.g. "10000,60000", the second as in large.R)
#   SCVB0_FIG3_DOCS  training paragraphs of wikipara in part 7 (default 100000)
#   SCVB0_FIG3_SECS  CPU seconds per method in part 7 (default 60)
#   SCVB0_FIG3_N     batch VB's subset sizes in part 7 (default
#                    "1000,10000,all"; "all" = every training paragraph)

suppressMessages(library(sparsevi))
bench_dir <- local({
  a <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  d <- c(if (length(a)) dirname(a[1]), file.path("inst", "bench"),
         system.file("bench", package = "sparsevi"))
  d[file.exists(file.path(d, "bench-log.R"))][1]
})
source(file.path(bench_dir, "bench-log.R"))
smoke <- bench_smoke()

args <- commandArgs(trailingOnly = TRUE)
out_file <- if (length(args) && !smoke) args[1] else bench_out("scvb0.txt")
data_dir <- if (!smoke) bench_data_dir()
env_num <- function(name, default) {
  v <- Sys.getenv(name)
  if (nzchar(v)) as.numeric(v) else default
}
wiki_docs <- env_num("SCVB0_WIKI_DOCS", if (smoke) 150 else 5e4)
wiki_secs <- env_num("SCVB0_WIKI_SECS", if (smoke) 0.05 else 40)
nips_secs <- env_num("SCVB0_NIPS_SECS", if (smoke) 0.05 else 30)
kos_secs <- if (smoke) 0.05 else 5
parts <- as.integer(strsplit(Sys.getenv("SCVB0_PARTS", if (smoke) "1,2,3,4,5,6,7" else "1,2,3,4,5"), ",")[[1]])
label <- Sys.getenv("SCVB0_LABEL")
tp_docs <- env_num("SCVB0_TP_DOCS", if (smoke) 150 else 2e4)
methods <- strsplit(Sys.getenv("SCVB0_METHODS", "scvb0,scvb0-default,svb,svb-5it,svb-O0"), ",")[[1]]
# K of parts 2, 3 (20 there) and 6; the smoke corpora have V = 150
K2 <- if (smoke) 10 else 100

report <- character(0)
say <- function(...) {
  line <- sprintf(...)
  cat(line, "\n", sep = "")
  report <<- c(report, line)
}
load_average <- function() {
  la <- tryCatch(readLines("/proc/loadavg", 1L), error = function(e) NA_character_)
  if (is.na(la)) "unknown" else paste(strsplit(la, " ")[[1]][1:3], collapse = " ")
}
cpu <- function() {
  p <- proc.time()
  p[[1]] + p[[2]]
}

# --- data -------------------------------------------------------------------

# The first n_docs documents of a UCI bag-of-words file (all with Inf), read
# in chunks so that a subset of a large file stays cheap.
read_uci_head <- function(name, n_docs = Inf) {
  if (smoke) {
    m <- as_dgCMatrix(bench_sim_corpus(D = if (is.finite(n_docs)) n_docs else 300, V = 150,
                                       K = 5, seed = 1, doc_length = 30))
    dimnames(m) <- list(paste0("d", seq_len(nrow(m))), colnames(m))
    return(m)
  }
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
# score: document completion, topics fixed at their posterior mean. `global`
# "batch" (part 7's batch VB) makes every lap one batch of all documents: one
# local step over the corpus, then the topics' update; it is scored after
# every lap (give eval_every = 0) and can only stop at the end of a lap, so
# its last lap may end past the budget (the trace has its true CPU time).
# `laps` stops training after that many laps whatever the budget.
run_timed <- function(x, K, local, budget, heldout, eval_every, seed = 1,
                      global = "stochastic", laps = Inf, init = "random", ...) {
  D <- nrow(x)
  one_batch <- identical(global, "batch")
  tmpl <- do.call(fit_lda, c(list(x[seq_len(min(D, 150)), ], K = K, local = local, global = global,
                                  passes = 1, init = init, seed = seed, progress = FALSE),
                             if (!one_batch) list(batch_size = 100), list(...)))
  control <- tmpl$control
  control$n_docs <- D
  control$n_batches <- if (one_batch) 1L else as.integer(ceiling(D / 100))
  if (one_batch) control$batch_size <- D
  if (!is.null(control$n_tokens)) control$n_tokens <- sum(x$count)
  state <- sparsevi:::lda_init_state(x, control)
  local_fun <- get(paste0("lda_local_", local), asNamespace("sparsevi"))
  # (the engine's own global step for this `global`, from the registry)
  global_fun <- sparsevi:::lda_engine(local)$global[[control$global]]
  end_lap <- get0(paste0("lda_", local, "_end_lap"), asNamespace("sparsevi"),
                  inherits = FALSE)
  score <- function() {
    if (is.null(heldout)) return(NA_real_)
    sparsevi:::completion_score(state_topic_word(state, control), control$alpha, heldout, 1L)
  }
  trace <- data.frame(seconds = 0, docs = 0, heldout = score())
  clock <- 0
  docs <- 0
  next_eval <- eval_every
  lap <- 0
  nb <- control$n_batches
  while (clock < budget && lap < laps) {
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
      if (clock >= next_eval || clock >= budget || (b == nb && lap >= laps)) {
        trace <- rbind(trace, data.frame(seconds = clock, docs = docs, heldout = score()))
        next_eval <- next_eval + eval_every
      }
      if (clock >= budget) break
    }
    if (!is.null(end_lap) && clock < budget) {
      t0 <- cpu()
      state <- end_lap(state, control)
      clock <- clock + cpu() - t0
    }
  }
  list(trace = trace, topic_word = state_topic_word(state, control), lambda = state_lambda(state, control),
       state = state, control = control)
}

# The dense topics of a training state: SCVB0 keeps them lazily during a lap
# (a store) in this version; older versions kept a dense lambda. The topic
# fields are read in either form of the state (bench_lda_topics()).
state_lambda <- function(state, control = NULL) {
  ns <- asNamespace("sparsevi")
  f <- get0("cvb0_state_lambda", ns, inherits = FALSE)
  if (!is.null(f) && !is.null(bench_lda_topics(state, "store")$eta)) return(f(state)) # (SCVB0's store)
  # (the store era: the engine's finish builds lambda, leaving the state's
  # store as it is)
  fin <- get0("lda_finish_state", ns, inherits = FALSE)
  if (is.null(bench_lda_topics(state, "lambda")) && !is.null(fin) && !is.null(control)) {
    return(bench_lda_topics(fin(state, control), "lambda"))
  }
  bench_lda_topics(state, "lambda")
}
state_topic_word <- function(state, control = NULL) {
  beta <- bench_lda_topics(state, "beta")
  if (!is.null(beta)) return(beta)
  lam <- state_lambda(state, control)
  lam / rowSums(lam)
}

print_traces <- function(runs) {
  for (nm in names(runs)) {
    tr <- runs[[nm]]$trace
    say("  %-22s %s", nm, paste(sprintf("%.0fs:%.3f", tr$seconds, tr$heldout),
                                collapse = "  "))
  }
}

# A trace's held-out score at the given CPU times, held constant beyond its
# ends; a trace with one scored point (a very short budget can give one)
# holds that score at every time, as approx()'s rule = 2 would.
trace_at <- function(tr, times) {
  ok <- is.finite(tr$seconds) & is.finite(tr$heldout)
  if (sum(ok) >= 2L) {
    return(stats::approx(tr$seconds[ok], tr$heldout[ok], xout = times, rule = 2, ties = "ordered")$y)
  }
  rep(if (any(ok)) tr$heldout[ok][1L] else NA_real_, length(times))
}

# Held-out score of each run interpolated at common times.
compare_at <- function(runs, times) {
  say("  %-22s %s", "CPU seconds", paste(sprintf("%8.0f", times), collapse = ""))
  for (nm in names(runs)) {
    tr <- runs[[nm]]$trace
    v <- trace_at(tr, times)
    say("  %-22s %s", nm, paste(sprintf("%8.3f", v), collapse = ""))
  }
}

make_test <- function(m_test, seed = 7) {
  x <- as_dtm(m_test)
  sparsevi:::as_heldout(x, x$vocab, observed_frac = 0.5, by = "tokens", seed = seed)
}

bench_header(say, sprintf("SCVB0 benchmark (inst/bench/scvb0.R), parts %s%s", paste(parts, collapse = ","),
                           if (nzchar(label)) sprintf(" [%s]", label) else ""))
say("load average at start: %s (2 cores)", load_average())
say("one thread; clocks are CPU seconds (shared machine).")
# the settings a run_timed() run actually ran, read back from its control
run_settings <- function(run) bench_settings(structure(list(control = run$control),
                                                       class = c("sparsevi_lda", "sparsevi_fit")))

# --- 1. throughput ------------------------------------------------------------

n_wiki_test <- if (smoke) 50 else 2000
fig3_docs <- env_num("SCVB0_FIG3_DOCS", if (smoke) 150 else 1e5)
fig3_secs <- env_num("SCVB0_FIG3_SECS", if (smoke) 0.05 else 60)
fig3_n <- strsplit(Sys.getenv("SCVB0_FIG3_N", if (smoke) "20,100,all" else "1000,10000,all"), ",")[[1]]
# (part 7's paragraphs and its 2,000 test paragraphs after them; the other
# parts take the first rows of the same read)
m_all <- if (any(parts %in% c(1, 2, 4, 5, 7))) {
  read_uci_head("wikipara", max(if (any(parts %in% c(1, 2, 4, 5))) wiki_docs,
                                if (7 %in% parts) fig3_docs) + n_wiki_test)
}
ns <- asNamespace("sparsevi")
kernel_width <- function(want) {
  f <- get0("ffi_lda_cvb0_kernel_width", ns, inherits = FALSE)
  if (is.null(f)) NA_integer_ else .Call(f, as.integer(want))
}
tp_sets <- NULL
if (any(parts %in% c(1, 4))) {
  n_tp <- min(wiki_docs, tp_docs)
  tp_sets <- list(
    full = nonempty(m_all[seq_len(n_tp), ]),
    top7700 = nonempty(restrict_vocab(m_all, seq_len(wiki_docs), 7700)[seq_len(n_tp), ])
  )
  if (smoke) tp_sets$full <- NULL # the same code as top7700
}
# A topic state as training has it (random lambda, tracked totals) and the
# minibatches of 100 documents of a set.
tp_setup <- function(m, batch_size = 100) {
  x <- as_dtm(m)
  K <- if (smoke) 10 else 100
  V <- ncol(x)
  u <- sparsevi:::uniform_source(1)(K * V)
  lambda <- matrix(0.01 + u, K, V)
  D <- nrow(x)
  list(x = x, K = K, V = V, tok = sum(x$count),
       state = bench_lda_state(lambda = lambda, t = 0L, tot = rowSums(lambda), tot_t = 0L,
                               n_tokens = sum(x$count)),
       batches = lapply(split(seq_len(D), ceiling(seq_len(D) / batch_size)),
                        function(i) sparsevi:::dtm_subset(x, i)))
}
# CPU (or wall) seconds of f(), best of `reps`
best_of <- function(reps, f, wall = FALSE) {
  if (smoke) reps <- 1
  best <- Inf
  for (r in seq_len(reps)) {
    invisible(gc())
    t0 <- if (wall) proc.time()[[3]] else cpu()
    f(r)
    best <- min(best, (if (wall) proc.time()[[3]] else cpu()) - t0)
  }
  best
}
# (sync = 1, as fit_lda()'s control has it: from the version with a reused
# summary buffer, the local step writes into it, as in training)
local_pass <- function(s, ctl, threads = 1L) {
  ctl$cvb0_settings <- NULL
  ctl$sync <- 1L
  function(r) for (b in s$batches) sparsevi:::lda_local_cvb0(b, s$state, ctl, as.double(c(0, r)), threads)
}
# One lap of training as fit_lda() runs it: local step, the engine's global
# step (lazy in this version, dense before), the end of the lap. From the
# version that keeps the lazy store across laps (cvb0_new_store), a lap does
# no K x V work: the store is made once before timing (a fit makes it once,
# at its first minibatch) and laps run on it; older versions created it and
# materialised lambda in every lap (their end_lap hook), which is timed.
train_lap <- function(s, burnin = 1L) {
  tmpl <- fit_lda(s$x[1:150, ], K = s$K, local = "cvb0", global = "stochastic", passes = 1,
                  batch_size = 100, init = "random", seed = 1, progress = FALSE, burnin = burnin,
                  alpha = 0.1, eta = 0.01, step_scale = 1, tau = 1, kappa = 0.6, doc_s = 1,
                  doc_tau = 10, doc_kappa = 0.9)
  control <- tmpl$control
  control$n_docs <- nrow(s$x)
  control$n_tokens <- s$tok
  global_fun <- ns$lda_engine("cvb0")$global[[control$global]]
  end_lap <- get0("lda_cvb0_end_lap", ns, inherits = FALSE)
  new_store <- get0("cvb0_new_store", ns, inherits = FALSE)
  state0 <- s$state
  if (!is.null(new_store)) {
    state0 <- bench_lda_with_store(state0, new_store(state0, control$eta))
  }
  function(r) {
    state <- state0
    for (i in seq_along(s$batches)) {
      res <- sparsevi:::lda_local_cvb0(s$batches[[i]], state, control, as.double(c(r, i)), 1L)
      state <- global_fun(state, res, i, control)
    }
    if (!is.null(end_lap)) state <- end_lap(state, control)
    state
  }
}
# The once-per-fit K x V work of this version: making the store from lambda
# and materialising lambda from it at the end (lda_cvb0_finish).
store_costs <- function(s) {
  new_store <- get0("cvb0_new_store", ns, inherits = FALSE)
  finish <- get0("lda_cvb0_finish", ns, inherits = FALSE)
  if (is.null(new_store) || is.null(finish)) return(NULL)
  mk <- best_of(3, function(r) new_store(s$state, 0.01))
  st <- s$state
  st <- bench_lda_with_store(st, new_store(st, 0.01))
  fin <- best_of(3, function(r) finish(st, list()))
  c(make = mk, finish = fin)
}

if (1 %in% parts) {
say("")
say("1. Throughput, K = 100, one thread, minibatches of 100 documents; CPU seconds, best of 3")
say("   local: the local step alone (R wrapper and C); training: local + global step + end of lap, as fit_lda() runs a lap")
say("   kernel vector width used: %s (2 = SSE2, 4 = AVX2, 8 = AVX-512)",
    if (is.na(kernel_width(0))) "2 (single SSE2 kernel in this version)" else kernel_width(0))
for (nm in names(tp_sets)) {
  s <- tp_setup(tp_sets[[nm]])
  say("  wikipara first %s docs, vocabulary %s (%s): %s tokens, %s (doc, word) pairs",
      format(nrow(s$x), big.mark = ","), format(s$V, big.mark = ","), nm,
      format(s$tok, big.mark = ","), format(length(s$x$term), big.mark = ","))
  l1 <- best_of(3, local_pass(s, list(alpha = 0.1, burnin = 1L)))
  l0 <- best_of(3, local_pass(s, list(alpha = 0.1, burnin = 0L)))
  t1 <- best_of(3, train_lap(s, 1L))
  t0 <- best_of(3, train_lap(s, 0L))
  say("    local, burn-in 1 (default; 2 passes per document): %.3f s = %.2f M corpus tokens/s = %.2f M token-passes/s",
      l1, s$tok / l1 / 1e6, 2 * s$tok / l1 / 1e6)
  say("    local, burn-in 0 (1 pass per document):            %.3f s = %.2f M tokens/s per pass",
      l0, s$tok / l0 / 1e6)
  say("    training lap, burn-in 1 (defaults):                 %.3f s = %.2f M corpus tokens/s = %.2f M token-passes/s",
      t1, s$tok / t1 / 1e6, 2 * s$tok / t1 / 1e6)
  say("    training lap, burn-in 0 (1 pass per document):      %.3f s = %.2f M tokens/s per pass",
      t0, s$tok / t0 / 1e6)
  sc <- store_costs(s)
  if (!is.null(sc)) {
    say("    once per fit (not per lap): making the lazy store %.3f s, materialising lambda at the end %.3f s",
        sc[["make"]], sc[["finish"]])
  }
  if (!is.na(kernel_width(0))) {
    w <- vapply(c(2, 4, 8), function(k) {
      best_of(3, local_pass(s, list(alpha = 0.1, burnin = 1L, cvb0_kernel = k)))
    }, 0)
    say("    local, burn-in 1, by kernel width: %s",
        paste(sprintf("%d (%s): %.3f s = %.2f M tokens/s", c(2, 4, 8),
                      vapply(c(2, 4, 8), function(k) as.character(kernel_width(k)), ""),
                      w, s$tok / w / 1e6), collapse = "; "))
  }
  if (nm == "top7700") {
    # the dense VB local step on the same minibatches, for reference
    vb_state <- bench_lda_state(lambda = bench_lda_topics(s$state, "lambda"), t = 0L)
    fit_v <- fit_lda(s$x[1:150, ], K = s$K, local = "vb", global = "stochastic", L = s$K,
                     alpha = 0.1, eta = 0.01, step_scale = 1, tau = 1, kappa = 0.6,
                     max_iter = 100, tol = 0.05,
                     passes = 1, batch_size = 100, init = "random", seed = 1,
                     restarts = FALSE, progress = FALSE)
    vctl <- fit_v$control
    sub <- s$batches[seq_len(min(length(s$batches), 40))]
    sub_tok <- sum(vapply(sub, function(b) sum(b$count), 0))
    t0 <- cpu()
    for (b in sub) sparsevi:::lda_local_vb(b, vb_state, vctl, c(0, 1), 1L)
    tv <- cpu() - t0
    t0 <- cpu()
    for (b in sub) sparsevi:::lda_local_cvb0(b, s$state, list(alpha = 0.1, burnin = 1L), c(0, 1), 1L)
    tc <- cpu() - t0
    say("    dense VB local step (to convergence) on the first %d minibatches: %.2f M tokens/s; SCVB0 %.2f M tokens/s (ratio %.1fx)",
        length(sub), sub_tok / tv / 1e6, sub_tok / tc / 1e6, tv / tc)
  }
}
say("  load average at the end of part 1: %s", load_average())
}

# --- 5. the whole fit -------------------------------------------------------------

if (5 %in% parts) {
say("")
say("5. The whole fit as users run it (the engine's defaults at 152e884, named; init \"seeded\", the default start here): fit_lda(<wikipara first %s docs, full vocabulary>, K = 100, local = \"cvb0\", passes = 3, seed = 1, threads = 1), CPU seconds (initialisation included)",
    format(wiki_docs, big.mark = ","))
x5 <- as_dtm(nonempty(m_all[seq_len(wiki_docs), ]))
tok5 <- sum(x5$count)
invisible(gc())
c0 <- cpu()
f5 <- fit_lda(x5, K = 100, local = "cvb0", passes = 3, seed = 1, threads = 1,
              alpha = 0.1, eta = 0.01, step_scale = 1, tau = 1, kappa = 0.6, doc_s = 1,
              doc_tau = 10, doc_kappa = 0.9, burnin = 0, init = "seeded",
              batch_size = 100, progress = FALSE)
say("  settings that ran: %s", bench_settings(f5))
c5 <- cpu() - c0
invisible(gc())
c0 <- cpu()
i5 <- sparsevi:::lda_init_state(x5, f5$control)
ci <- cpu() - c0
say("  %s docs, %s terms, %s tokens: %.2f CPU s = %.2f M tokens x passes / CPU s (of which initialisation %.2f s; without it %.2f M tokens x passes / CPU s)",
    format(nrow(x5), big.mark = ","), format(ncol(x5), big.mark = ","),
    format(tok5, big.mark = ","), c5, 3 * tok5 / c5 / 1e6, ci,
    3 * tok5 / (c5 - ci) / 1e6)
rm(x5, f5, i5)
}

# --- 4. threads -------------------------------------------------------------------

if (4 %in% parts) {
say("")
say("4. Threads: the local step alone, 1 and 2 threads, WALL seconds (best of 5), burn-in 1, K = 100, top7700 set")
say("   OMP_WAIT_POLICY=%s; load average before: %s (2 cores)",
    if (nzchar(Sys.getenv("OMP_WAIT_POLICY"))) Sys.getenv("OMP_WAIT_POLICY") else "(unset)",
    load_average())
for (bs in c(100, 1000)) {
  s <- tp_setup(tp_sets$top7700, batch_size = bs)
  w <- vapply(1:2, function(th) {
    best_of(5, local_pass(s, list(alpha = 0.1, burnin = 1L), threads = th), wall = TRUE)
  }, 0)
  say("  minibatches of %4d documents: 1 thread %.3f s, 2 threads %.3f s: speed-up %.2fx",
      bs, w[1], w[2], w[1] / w[2])
}
say("  load average after: %s", load_average())
}

# --- 2. held-out log-likelihood against time ------------------------------------

if (2 %in% parts) {
say("")
say("2. Foulds et al. Fig. 1: held-out log-likelihood per token (half of each test document observed, half scored) against CPU seconds, K = %d", K2)
say("   scvb0: the paper's settings, named in the call: alpha 0.1, eta 0.01, topics s=10 tau=1000 kappa=0.9, documents s=1 tau=10 kappa=0.9, one burn-in pass.")
say("   scvb0-default: the engine's schedule now, named: topics s=1 tau=1 kappa=0.6, no burn-in; documents and priors as scvb0.")
say("   svb: our stochastic VB, dense (L = K), no restarts, rho = (1 + t)^-0.6, with the paper's +0.5 offset (alpha 0.6, eta 0.51), local step to convergence;")
say("   svb-5it: the same with at most 5 local iterations; svb-O0: to convergence with SCVB0's priors alpha 0.1, eta 0.01.")
say("   All: minibatches of 100 documents, random initialisation, one thread. Each row's settings as read back from its control list follow.")
}

fig1_corpus <- function(label, m_train, m_test, budget) {
  x <- as_dtm(nonempty(m_train))
  heldout <- make_test(nonempty(m_test))
  say("")
  say("%s: %s training documents, %s terms, %s tokens; %s test documents (%s held-out tokens); %.0f CPU s per method",
      label, format(nrow(x), big.mark = ","), format(ncol(x), big.mark = ","),
      format(sum(x$count), big.mark = ","), format(nrow(heldout$observed), big.mark = ","),
      format(sum(heldout$heldout$count), big.mark = ","), budget)
  runs <- list()
  K <- K2
  # every setting each row relies on, named (run_timed() adds
  # global = "stochastic", batch_size = 100, init = "random")
  cvb0_paper <- list(alpha = 0.1, eta = 0.01, step_scale = 10, tau = 1000, kappa = 0.9,
                     doc_s = 1, doc_tau = 10, doc_kappa = 0.9, burnin = 1)
  cvb0_now <- list(alpha = 0.1, eta = 0.01, step_scale = 1, tau = 1, kappa = 0.6,
                   doc_s = 1, doc_tau = 10, doc_kappa = 0.9, burnin = 0)
  svb <- function(alpha, eta, ...) list(L = K, restarts = FALSE, alpha = alpha, eta = eta,
                                        step_scale = 1, tau = 1, kappa = 0.6, ...)
  specs <- list(
    scvb0 = c(list("cvb0"), cvb0_paper),
    `scvb0-default` = c(list("cvb0"), cvb0_now),
    svb = c(list("vb"), svb(0.6, 0.51, max_iter = 100)),   # the paper's +0.5 offset
    `svb-5it` = c(list("vb"), svb(0.6, 0.51, max_iter = 5)),
    `svb-O0` = c(list("vb"), svb(0.1, 0.01, max_iter = 100))) # the paper's SVB-O0
  for (nm in intersect(names(specs), methods)) {
    sp <- specs[[nm]]
    runs[[nm]] <- do.call(run_timed, c(list(x, K, sp[[1]], budget, heldout,
                                            if (smoke) budget else budget / 10), sp[-1]))
    say("  settings that ran [%s]: %s", nm, run_settings(runs[[nm]]))
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
nips <- read_uci_head("nips_f20", if (smoke) 200 else Inf)
n_nips_train <- if (smoke) 150 else 1350
n_nips_test <- if (smoke) 50 else 150
nips_runs <- fig1_corpus(sprintf("nips_f20 (train = documents 1-%d, test = %d-%d)", n_nips_train,
                                  n_nips_train + 1L, n_nips_train + n_nips_test),
                          nips[1:n_nips_train, ], nips[n_nips_train + 1:n_nips_test, ], nips_secs)

wiki <- restrict_vocab(m_all, seq_len(wiki_docs), 7700)
wiki_runs <- fig1_corpus(sprintf("wikipara subset (train = first %s paragraphs, test = next 2,000; vocabulary: the 7,700 most frequent words of the training part)",
                                  format(wiki_docs, big.mark = ",")),
                          wiki[seq_len(wiki_docs), ], wiki[wiki_docs + seq_len(n_wiki_test), ],
                          wiki_secs)
rm(wiki)
}

# --- 7. Foulds et al. Fig. 3: SCVB0 against batch VB on subsets -----------------
#
# The paper's Fig. 3 (Wikipedia, K = 100 in Hoffman et al.'s setting): batch
# VB cannot make one pass over the whole corpus in the time allowed, so it is
# trained on subsets of N documents; SCVB0 streams over all of them and
# reaches a better held-out score sooner. Here: the first `fig3_docs`
# wikipara paragraphs (vocabulary: the 7,700 most frequent words of them, as
# the paper's Wikipedia dictionary), the next 2,000 as test documents, one
# evaluator for every row (run_timed()'s: document completion, half of each
# test document observed, the topics at their posterior mean, the row's
# alpha). Batch VB on N paragraphs drawn at random (seeded) from the
# training ones; N = "all" is every one of them.

fig3_time_to <- function(tr, target) {
  # first CPU time the trace reaches `target` (linear between its points)
  i <- which(tr$heldout >= target)[1]
  if (is.na(i)) return(NA_real_)
  if (i == 1L) return(tr$seconds[1])
  f <- (target - tr$heldout[i - 1L]) / (tr$heldout[i] - tr$heldout[i - 1L])
  tr$seconds[i - 1L] + f * (tr$seconds[i] - tr$seconds[i - 1L])
}
fig3_at <- function(tr, t) trace_at(tr, t)

if (7 %in% parts) {
wiki7 <- restrict_vocab(m_all, seq_len(fig3_docs), 7700)
x7 <- as_dtm(nonempty(wiki7[seq_len(fig3_docs), ]))
heldout7 <- make_test(nonempty(wiki7[fig3_docs + seq_len(n_wiki_test), ]))
rm(wiki7)
K7 <- K2
say("")
say("7. Foulds et al. Fig. 3 (issue 38): SCVB0 on every training paragraph against batch VB on subsets of N paragraphs;")
say("   held-out log-likelihood per token (half of each test document observed, half scored, one evaluator) against CPU seconds, K = %d.", K7)
say("   wikipara: %s training paragraphs (the first %s, empty ones dropped), %s terms (the 7,700 most frequent of them), %s tokens;",
    format(nrow(x7), big.mark = ","), format(as.integer(fig3_docs), big.mark = ","), format(ncol(x7), big.mark = ","),
    format(sum(x7$count), big.mark = ","))
say("   %s test paragraphs (the next ones; %s held-out tokens); %.0f CPU s per row, one thread, scored about every %.1f CPU s",
    format(nrow(heldout7$observed), big.mark = ","), format(sum(heldout7$heldout$count), big.mark = ","),
    fig3_secs, fig3_secs / 40)
say("   (batch VB: at the end of the first lap after each mark, so at least once per lap; its last lap may end past the budget).")
say("   scvb0: the paper's settings (Foulds et al. section 4.1): minibatches of 100, topics s=10 tau=1000 kappa=0.9, documents s=1")
say("   tau=10 kappa=0.9, one burn-in pass, alpha 0.1, eta 0.01; scvb0-default: the engine's schedule (s=1 tau=1 kappa=0.6, no burn-in).")
say("   vb-N: batch VB (local = vb, global = batch: one local step over the N paragraphs, to convergence (max_iter 100, tol 0.05),")
say("   then the topics' update, every lap), dense (L = K), no restarts, alpha 0.1, eta 0.01 (SCVB0's priors, the paper's O0);")
say("   vb-all-O0.5: the same on every paragraph with the +0.5 offset (alpha 0.6, eta 0.51). All rows start from init = random, seed 1.")
cvb0_paper7 <- list(alpha = 0.1, eta = 0.01, step_scale = 10, tau = 1000, kappa = 0.9,
                    doc_s = 1, doc_tau = 10, doc_kappa = 0.9, burnin = 1)
cvb0_now7 <- utils::modifyList(cvb0_paper7, list(step_scale = 1, tau = 1, kappa = 0.6, burnin = 0))
vb7 <- function(alpha, eta) list(global = "batch", L = K7, restarts = FALSE, alpha = alpha, eta = eta,
                                 max_iter = 100, tol = 0.05, converge_tol = 0)
specs7 <- list(scvb0 = list(local = "cvb0", n = "all", args = cvb0_paper7),
               `scvb0-default` = list(local = "cvb0", n = "all", args = cvb0_now7))
for (n in fig3_n) {
  specs7[[paste0("vb-", n)]] <- list(local = "vb", n = n, args = vb7(0.1, 0.01))
}
specs7[["vb-all-O0.5"]] <- list(local = "vb", n = "all", args = vb7(0.6, 0.51))
runs7 <- list()
for (nm in names(specs7)) {
  sp <- specs7[[nm]]
  xs <- x7
  if (sp$n != "all") {
    n <- min(as.integer(sp$n), nrow(x7))
    rows <- sort(order(sparsevi:::lda_unif(c(0, 7), 700, nrow(x7)))[seq_len(n)])
    xs <- sparsevi:::dtm_subset(x7, rows)
  }
  runs7[[nm]] <- do.call(run_timed, c(list(xs, K7, sp$local, fig3_secs, heldout7, fig3_secs / 40,
                                           seed = 1, init = "random"), sp$args))
  tr <- runs7[[nm]]$trace
  say("  settings that ran [%s]: N = %s paragraphs; %s", nm, format(nrow(xs), big.mark = ","),
      run_settings(runs7[[nm]]))
  rm(xs)
  invisible(gc())
}
print_traces(runs7)
say("  interpolated at common times:")
compare_at(runs7, fig3_secs * c(0.05, 0.1, 0.25, 0.5, 1))
for (nm in names(runs7)) {
  tr <- runs7[[nm]]$trace
  say("  %-22s documents processed: %s in %.1f CPU s (%.0f docs/CPU s); best held-out %.4f at %.1f s, last %.4f",
      nm, format(max(tr$docs), big.mark = ","), max(tr$seconds), max(tr$docs) / max(tr$seconds),
      max(tr$heldout), tr$seconds[which.max(tr$heldout)], tr$heldout[nrow(tr)])
}
# The figure as ratios: each batch VB row against SCVB0 (both settings).
say("  The figure as ratios against each batch VB row (held-out differences in nats per token, SCVB0 minus VB;")
say("  perplexity ratio = exp(-difference), below 1 favours SCVB0): t_VB = CPU s until VB first comes within 0.01 of its best;")
say("  SCVB0's score at t_VB; t_S = CPU s until SCVB0 first reaches VB's best; speed-up = t_VB / t_S; and at the budget's end.")
for (s_nm in intersect(c("scvb0", "scvb0-default"), names(runs7))) {
  ts <- runs7[[s_nm]]$trace
  for (v_nm in grep("^vb-", names(runs7), value = TRUE)) {
    tv <- runs7[[v_nm]]$trace
    best <- max(tv$heldout)
    t_vb <- fig3_time_to(tv, best - 0.01)
    t_s <- fig3_time_to(ts, best)
    d_at <- fig3_at(ts, t_vb) - fig3_at(tv, t_vb)
    end <- min(max(ts$seconds), max(tv$seconds))
    d_end <- fig3_at(ts, end) - fig3_at(tv, end)
    say("  %-14s vs %-12s VB best %.4f; t_VB %6.1f s: SCVB0 %.4f (%+.4f, perplexity x%.3f); t_S %s; speed-up %s; at %.0f s %+.4f (x%.3f)",
        s_nm, v_nm, best, t_vb, fig3_at(ts, t_vb), d_at, exp(-d_at),
        if (is.na(t_s)) "never (within the budget)" else sprintf("%.1f s", t_s),
        if (is.na(t_s)) "-" else if (t_s > 0) sprintf("%.1fx", t_vb / t_s) else "inf",
        end, d_end, exp(-d_end))
  }
}
ahead <- vapply(grep("^vb-", names(runs7), value = TRUE), function(v_nm) {
  tv <- runs7[[v_nm]]$trace
  tt <- fig3_secs * c(0.05, 0.1, 0.25, 0.5, 1)
  all(fig3_at(runs7$scvb0$trace, tt) > fig3_at(tv, tt))
}, TRUE)
say("  scvb0 (the paper's settings) ahead of every batch VB row at every common time: %s%s",
    if (all(ahead)) "yes" else "no", if (all(ahead)) "" else
      sprintf(" (not of %s)", paste(names(ahead)[!ahead], collapse = ", ")))
say("  load average at the end of part 7: %s", load_average())
rm(x7, runs7)
}
rm(m_all)

# --- 3. kos in 5 seconds -------------------------------------------------------------

if (3 %in% parts) {
say("")
say("3. kos, K = 20, 5 CPU seconds each (scvb0: engine schedule s=1 tau=1 kappa=0.6, burnin 0; svb: L = K, no restarts; both alpha 0.1, eta 0.01): top words and coherence (reference corpus: kos itself, top 10 words)")
kos <- read_uci_head("kos")
xk <- as_dtm(kos)

# Coherence: the package's coherence() when its measures are available,
# else the same definitions computed here (notes/math.md §7).
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

Kk <- if (smoke) 5 else 20
kos_runs <- list(
  scvb0 = run_timed(xk, Kk, "cvb0", kos_secs, NULL, kos_secs, alpha = 0.1, eta = 0.01,
                    step_scale = 1, tau = 1, kappa = 0.6, doc_s = 1, doc_tau = 10,
                    doc_kappa = 0.9, burnin = 0),
  svb = run_timed(xk, Kk, "vb", kos_secs, NULL, kos_secs, L = Kk, restarts = FALSE,
                  alpha = 0.1, eta = 0.01, step_scale = 1, tau = 1, kappa = 0.6)
)
for (nm in names(kos_runs)) say("  settings that ran [%s]: %s", nm, run_settings(kos_runs[[nm]]))
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
  size <- rowSums(kos_runs[[nm]]$lambda)
  for (k in order(-size)) {
    say("    %2d  npmi %6.3f  umass %7.2f  %s", k, npmi[k], umass[k],
        paste(colnames(tw)[order(-tw[k, ])[1:8]], collapse = " "))
  }
}

}

# --- 6. quality: the held-out score by lap, and one pass at K = 1000 ------------
#
# Every corpus split by split_heldout(test_frac = 0.1, seed = 1) and scored by
# the package's evaluator (document completion, the `heldout` of fit_lda(),
# the same for every engine); K = 100, 10 laps, seed 1, one thread. Settings:
# "paper" is Foulds et al.'s topic schedule rho_t = 10 (1000 + t)^-0.9 with
# one burn-in pass (the defaults before this part was written); "default" is
# the engine's defaults now (rho_t = (1 + t)^-0.6, no burn-in pass).

if (6 %in% parts) {
source(file.path(bench_dir, "bench-data.R"))
p6_corpora <- strsplit(Sys.getenv("SCVB0_P6_CORPORA",
  "kos,nips_f20,poliblog5k,sotu_chunks,spamassassin,moviereviews"), ",")[[1]]
p6_corpora <- p6_corpora[nzchar(p6_corpora)]
p6_large <- as.integer(strsplit(Sys.getenv("SCVB0_P6_LARGE", "10000"), ",")[[1]])
if (smoke) {
  p6_corpora <- p6_corpora[1]
  p6_large <- p6_large[1]
}
p6_K <- if (smoke) c(5, 10) else c(100, 1000)
p6_laps <- if (smoke) 2 else 10
# every setting named: "paper" = Foulds et al.'s; "default" = the engine's now
now <- list(alpha = 0.1, eta = 0.01, step_scale = 1, tau = 1, kappa = 0.6, doc_s = 1,
            doc_tau = 10, doc_kappa = 0.9, burnin = 0)
paper <- utils::modifyList(now, list(step_scale = 10, tau = 1000, kappa = 0.9, burnin = 1,
                                     init = "bregman"))
p6_settings <- list(
  "paper (old defaults)" = paper,
  "paper, burnin = 0" = utils::modifyList(paper, list(burnin = 0)),
  "default, burnin = 1" = utils::modifyList(now, list(burnin = 1)),
  "default" = now)
p6_sotu_extra <- list(
  "paper, burnin = 3" = utils::modifyList(paper, list(burnin = 3)),
  "paper, alpha = 0.5" = utils::modifyList(paper, list(alpha = 0.5)),
  "paper, step_scale = 1" = utils::modifyList(paper, list(step_scale = 1)),
  "paper, eta = 0.1" = utils::modifyList(paper, list(eta = 0.1)),
  "paper, doc_s = 500, doc_tau = 1000" = utils::modifyList(paper, list(doc_s = 500, doc_tau = 1000)),
  "default, burnin = 3" = utils::modifyList(now, list(burnin = 3)),
  "default, kappa = 0.7" = utils::modifyList(now, list(kappa = 0.7)),
  "default, kappa = 0.9" = utils::modifyList(now, list(kappa = 0.9)),
  "default, tau = 10" = utils::modifyList(now, list(tau = 10)))
p6_fit <- function(tr, test, K, passes, extra, batch_size = NULL) {
  args <- list(tr, K = K, local = "cvb0", passes = passes, seed = 1, heldout = test,
               doc_topics = 0, progress = FALSE, threads = 1)
  if (!is.null(batch_size)) args$batch_size <- batch_size
  args <- utils::modifyList(args, extra)
  t0 <- cpu()
  f <- do.call(fit_lda, args)
  list(fit = f, cpu = cpu() - t0)
}
say("")
say("6. SCVB0 quality (issues 20, 22): held-out log-likelihood per token by lap (document completion,")
say("   split_heldout(test_frac = 0.1, seed = 1), the package's evaluator); K = 100, 10 laps, seed 1, 1 thread.")
say("   paper = step_scale 10, tau 1000, kappa 0.9, burnin 1 (the old defaults); default = the engine's")
say("   defaults now: step_scale 1, tau 1, kappa 0.6, burnin 0. CPU s of the whole call incl. the 10 scores.")
for (cn in p6_corpora) {
  x <- bench_corpus(cn)
  sp <- split_heldout(x, test_frac = 0.1, seed = 1)
  say("-- %s: %d train documents, V = %d, %.1f tokens per document", cn, nrow(sp$train),
      ncol(x), sum(sp$train$count) / nrow(sp$train))
  sets <- p6_settings
  if (cn == "sotu_chunks") sets <- c(sets, p6_sotu_extra)
  for (nm in names(sets)) {
    r <- p6_fit(sp$train, sp$test, p6_K[1], p6_laps, sets[[nm]])
    ho <- r$fit$trace$heldout
    say("  %-36s lap 10 %.4f  best %.4f (lap %2d)  CPU %5.1f s  by lap %s", nm, ho[length(ho)],
        max(ho), which.max(ho), r$cpu, paste(sprintf("%.3f", ho), collapse = " "))
    say("  %-36s settings that ran: %s", "", bench_settings(r$fit))
  }
}
say("")
say("   The topic step size and what is left of the start after n minibatches, prod_t (1 - rho_t)")
say("   (the start gives each word of each topic about one pseudo-count, V per topic):")
for (sch in list(c(10, 1000, 0.9), c(1, 1, 0.6))) {
  rho <- pmin(1, sch[1] * (sch[2] + 0:5999)^(-sch[3]))
  keep <- cumprod(1 - rho)
  say("   s = %g, tau = %g, kappa = %g: rho_0 = %.4f, rho_599 = %.4f, max %.4f; start kept after 10, 60, 134, 600 steps: %.3g %.3g %.3g %.3g",
      sch[1], sch[2], sch[3], rho[1], rho[600], max(rho), keep[10], keep[60], keep[134], keep[600])
}
say("")
say("   One pass at K = 100 and 1000 over the first N wikipara paragraphs with the full vocabulary")
say("   (V = 129,289, as inst/bench/large.R), minibatches of 1,000 paragraphs (large.R's), same split and")
say("   evaluator; vb = local \"vb\", global \"stochastic\" at its defaults. The default start is")
say("   \"seeded\" where K x V > 2^25 (here K = 1000), else \"bregman\"; paper uses \"bregman\".")
for (n in p6_large) {
  x <- bench_corpus(sprintf("wikipara%d", n), all_terms = TRUE)
  sp <- split_heldout(x, test_frac = 0.1, seed = 1)
  for (K in p6_K) {
    for (nm in c("paper (old defaults)", "default, init = bregman", "default, burnin = 1",
                 "default", "vb stochastic")) {
      extra <- switch(nm, "vb stochastic" = list(local = "vb", global = "stochastic",
                                                 alpha = 0.1, eta = 0.01, step_scale = 1,
                                                 tau = 1, kappa = 0.6, init = "bregman",
                                                 restarts = TRUE),
                      "default, init = bregman" = utils::modifyList(now, list(init = "bregman")),
                      p6_settings[[nm]])
      r <- p6_fit(sp$train, sp$test, K, 1, extra, batch_size = 1000)
      say("  wikipara%d K = %4d %-24s held-out %.4f  CPU %6.1f s  (start: %s)", n, K, nm,
          r$fit$trace$heldout[1], r$cpu, r$fit$control$init)
      say("  %-36s settings that ran: %s", "", bench_settings(r$fit))
      if (nm == "paper (old defaults)" && K == max(p6_K)) {
        # the evaluator's own inference is not what fails: ten times its iterations
        tw <- r$fit$topic_word
        ho <- sparsevi:::as_heldout(sp$test, r$fit$vocab, seed = 1)
        say("  %24s evaluator with max_iter 100 / 1000, tol 0.05 / 0.001: %.4f / %.4f", "",
            sparsevi:::completion_score(tw, 0.1, ho), sparsevi:::completion_score(tw, 0.1, ho,
            max_iter = 1000L, tol = 0.001))
      }
      rm(r)
      gc()
    }
  }
}
say("  load average at the end of part 6: %s", load_average())
}

dir.create(dirname(out_file), showWarnings = FALSE, recursive = TRUE)
cat(report, file = out_file, sep = "\n", append = TRUE)
cat("appended to", out_file, "\n")
