# Large K and V (issue 16): one pass over the first 60,000 Wikipedia
# paragraphs of ../shared/data/wikipara with the full vocabulary (V = 129,289)
# at K = 1000 and K = 2000, each stochastic engine in its own child process so
# that its peak resident memory (GNU time's "Maximum resident set size") is
# its own. Reports wall seconds of the whole fit_lda() call (initialisation,
# training, building the fit and its doc_topic), the trace's training
# seconds and CPU seconds, and peak RSS. Run from the package root:
#   nice -n 10 Rscript inst/bench/large.R
# Environment: SPARSEVI_BENCH_DOCS (default 60000), SPARSEVI_BENCH_KS
# (default "1000,2000"), SPARSEVI_BENCH_ENGINES (default
# "cvb0,gibbs,vb,ope"; also "vbmemo": vb with memoized training, two laps,
# so that the second reads the topics the first built, and "default": the
# default call, fit_lda(x, K, passes = 1), defaults otherwise), SPARSEVI_BENCH_LIB
# (library of the sparsevi to run), SPARSEVI_BENCH_DOC_TOPICS ("default":
# the fit keeps its training documents' proportions as fit_lda() does by
# default, and the whole call is timed against the training, issue 20; a
# number: that doc_topics, e.g. 0 for training alone), SPARSEVI_BENCH_TOPIC_WORD
# ("read", the default: the child reads fit$topic_word after the call, which
# builds that K x V table on top of the fit's lambda; "skip": the fit_lda()
# call alone, issue 22's target), SPARSEVI_BENCH_PRELOAD ("Matrix", the
# default: the child loads the Matrix namespace before the timed call, as
# any user whose document-term matrix is a Matrix, a quanteda dfm or a tidy
# cast has it loaded; "none": the fit loads it itself, in its first lap,
# 0.35 s of CPU that the trace then counts as training). GC s: the child's
# garbage-collection seconds during the call (gc.time()).
# Every engine's fit names its settings (the engine's values at 06ddbb6,
# with the start each took by default at this size: cvb0 "seeded", the
# others "bregman"); "default" is the default call, its settings read back.
# Appends to inst/bench/results/large.txt.
data_dir <- file.path("..", "shared", "data")

# ---- Issue 33: fit + held-out score at large K, peak RSS; sublinearity ----
# SPARSEVI_BENCH_SECTION=heldout runs this section instead of the one below
# and quits. Each run is a child process under GNU time (/usr/bin/time -v)
# that reads the training corpus, fits and then scores the held-out
# documents with heldout_loglik() (document completion); its peak RSS is
# GNU time's "Maximum resident set size" of that child. The split: all of
# wikipara (615,012 paragraphs; SPARSEVI_BENCH_DOCS to use fewer) with 1,000
# held out by split_heldout(x, n_test = 1000, seed = 1), made once by this
# process. Runs: SPARSEVI_BENCH_RUNS (default
# "default:1000,default:2000,default:10000"; "<engine>:<K>", "default" the
# default call fit_lda(x, K, passes = 1), else local = <engine> with its
# defaults), seed 1, SPARSEVI_BENCH_THREADS (default 1) threads. Then the
# sublinearity check (SPARSEVI_BENCH_SUBLINEAR, default "1000,10000"; "" to
# skip): the whole fit_lda(x, K, local = "gibbs", passes = 1, threads = 1)
# call over the first 60,000 paragraphs, wall clock, largest K over
# smallest. Tokens/s/core: training tokens over the fit's CPU seconds (one
# thread: its core) and over its wall seconds. Corpora are kept in
# SPARSEVI_BENCH_CORPUS_RDS (the whole, default <tempdir>/wikipara-615012.rds)
# and SPARSEVI_BENCH_SMALL_RDS (the first 60,000). Appends to
# inst/bench/results/large.txt. Run from the package root:
#   SPARSEVI_BENCH_SECTION=heldout nice -n 19 Rscript inst/bench/large.R
if (identical(Sys.getenv("SPARSEVI_BENCH_SECTION"), "heldout")) {
  lib <- Sys.getenv("SPARSEVI_BENCH_LIB", "")
  if (nzchar(lib)) .libPaths(c(lib, .libPaths()))
  suppressPackageStartupMessages(library(sparsevi))
  source(file.path("inst", "bench", "bench-log.R"))
  source(file.path("inst", "bench", "bench-data.R"))
  out_file <- Sys.getenv("SPARSEVI_BENCH_OUT", file.path("inst", "bench", "results", "large.txt"))
  say <- bench_logger(out_file)
  n_all <- as.integer(Sys.getenv("SPARSEVI_BENCH_DOCS", "615012"))
  runs <- strsplit(strsplit(Sys.getenv("SPARSEVI_BENCH_RUNS",
                                       "default:1000,default:2000,default:10000"), ",")[[1]], ":")
  sub_K <- as.integer(strsplit(Sys.getenv("SPARSEVI_BENCH_SUBLINEAR", "1000,10000"), ",")[[1]])
  threads <- as.integer(Sys.getenv("SPARSEVI_BENCH_THREADS", "1"))
  corpus_of <- function(n, rds) {
    if (file.exists(rds)) return(rds)
    saveRDS(bench_corpus(sprintf("wikipara%d", n), data_dir, all_terms = TRUE), rds,
            compress = FALSE)
    rds
  }
  all_rds <- corpus_of(n_all, Sys.getenv("SPARSEVI_BENCH_CORPUS_RDS",
                                         file.path(tempdir(), sprintf("wikipara-%d.rds", n_all))))
  x <- readRDS(all_rds)
  sp <- split_heldout(x, n_test = 1000, seed = 1)
  train_rds <- tempfile(fileext = ".rds")
  test_rds <- tempfile(fileext = ".rds")
  saveRDS(sp$train, train_rds, compress = FALSE)
  saveRDS(sp$test, test_rds, compress = FALSE)
  n_train_tok <- sum(sp$train$count)
  rm(x, sp)
  child <- tempfile(fileext = ".R")
  writeLines(c(
    "`%||%` <- function(a, b) if (is.null(a)) b else a",
    "a <- commandArgs(TRUE)",
    "if (nzchar(a[5])) .libPaths(c(a[5], .libPaths()))",
    "suppressPackageStartupMessages(library(sparsevi))",
    "loadNamespace('Matrix')",
    "x <- readRDS(a[1]); K <- as.integer(a[4]); th <- as.integer(a[6])",
    "args <- list(x, K = K, passes = 1, seed = 1, threads = th, progress = FALSE)",
    "if (a[3] != 'default') args$local <- a[3]",
    "t0 <- proc.time()",
    "fit <- do.call(fit_lda, args)",
    "t1 <- proc.time() - t0",
    "h <- NA_real_; t2 <- c(elapsed = NA, user.self = NA, sys.self = NA)",
    "if (a[2] != '-') { test <- readRDS(a[2]); t0 <- proc.time(); h <- heldout_loglik(fit, test, threads = th); t2 <- proc.time() - t0 }",
    "st <- fit$state; g <- if (is.null(st$topics)) st$gibbs else st$topics$sparse",
    "cat(sprintf('RESULT %.2f %.2f %.2f %.2f %.6f %s %s %d %.0f\\n', t1[['elapsed']],",
    "            t1[['user.self']] + t1[['sys.self']], max(fit$trace$seconds), t2[['elapsed']],",
    "            as.numeric(h), fit$local, fit$topics_kind %||% 'dense', fit$control$batch_size,",
    "            if (is.null(g)) NA_real_ else length(g$x)))"), child)
  run_child <- function(train, test, eng, K) {
    tf <- tempfile()
    out <- suppressWarnings(system2("/usr/bin/time",
                                    c("-v", file.path(R.home("bin"), "Rscript"), child, train,
                                      test, eng, K, shQuote(lib), threads),
                                    stdout = TRUE, stderr = tf))
    err <- readLines(tf)
    rss <- as.numeric(sub(".*: ", "", grep("Maximum resident set size", err, value = TRUE)))
    res <- grep("^RESULT", out, value = TRUE)
    if (!length(res)) {
      return(list(ok = FALSE, msg = paste(utils::tail(err[!grepl("^\t", err)], 2),
                                          collapse = " | ")))
    }
    v <- strsplit(res, " ")[[1]][-1]
    num <- function(s) suppressWarnings(as.numeric(s)) # "NA" when not measured
    list(ok = TRUE, wall = num(v[1]), cpu = num(v[2]), train = num(v[3]), hwall = num(v[4]),
         score = num(v[5]), local = v[6], kind = v[7], batch = as.integer(v[8]),
         nnz = num(v[9]), rss = rss / 1024^2)
  }
  load <- function() paste(readLines("/proc/loadavg", warn = FALSE), collapse = "")
  say("")
  say("== issue 33: fit + held-out at large K, %s; host %s; load %s; sparsevi %s",
      format(Sys.time()), Sys.info()[["nodename"]], load(),
      as.character(utils::packageVersion("sparsevi")))
  say("   commit %s; command: %sSPARSEVI_BENCH_SECTION=heldout %sRscript inst/bench/large.R",
      system("git rev-parse --short HEAD", intern = TRUE),
      paste0(vapply(c("SPARSEVI_BENCH_DOCS", "SPARSEVI_BENCH_RUNS", "SPARSEVI_BENCH_SUBLINEAR",
                      "SPARSEVI_BENCH_THREADS", "SPARSEVI_BENCH_LIB", "SPARSEVI_BENCH_OUT"),
                    function(v) if (nzchar(Sys.getenv(v))) sprintf("%s=%s ", v, Sys.getenv(v)) else "",
                    ""), collapse = ""), bench_nice())
  say("   wikipara first %d paragraphs, V = 129,289; 1,000 held out (split_heldout(x, n_test = 1000, seed = 1)); %s training tokens; one pass, seed 1, %d thread(s)",
      n_all, format(n_train_tok, big.mark = ","), threads)
  say("   child per run under /usr/bin/time -v: fit_lda() then heldout_loglik(fit, test) (completion); peak RSS of the child (GiB)")
  say("   %-8s %6s %-6s %-6s %6s %10s %8s %8s %8s %9s %10s %12s %12s", "call", "K", "engine",
      "topics", "batch", "store nnz", "fit s", "fit CPU", "held s", "peak RSS", "held-out",
      "tok/s/core", "tok/s (wall)")
  for (r in runs) {
    res <- run_child(train_rds, test_rds, r[1], r[2])
    if (!res$ok) {
      say("   %-8s %6s  failed: %s", r[1], r[2], res$msg)
      next
    }
    say("   %-8s %6s %-6s %-6s %6d %10s %8.1f %8.1f %8.1f %6.2f GiB %10.4f %12s %12s", r[1], r[2],
        res$local, res$kind, res$batch,
        if (is.na(res$nnz)) "-" else format(res$nnz, big.mark = ","), res$wall, res$cpu,
        res$hwall, res$rss, res$score,
        format(round(n_train_tok / res$cpu), big.mark = ","),
        format(round(n_train_tok / res$wall), big.mark = ","))
  }
  say("   load after the runs: %s", load())
  if (length(sub_K) >= 2L && !anyNA(sub_K)) {
    small_rds <- corpus_of(60000L, Sys.getenv("SPARSEVI_BENCH_SMALL_RDS",
                                              file.path(tempdir(), "wikipara-60000.rds")))
    tok <- sum(readRDS(small_rds)$count)
    say("   sublinearity: fit_lda(x, K, local = \"gibbs\", passes = 1, threads = 1) over the first 60,000 paragraphs (%s tokens), whole call; load %s",
        format(tok, big.mark = ","), load())
    walls <- c()
    for (K in sub_K) {
      res <- run_child(small_rds, "-", "gibbs", K)
      if (!res$ok) {
        say("   gibbs    %6d  failed: %s", K, res$msg)
        next
      }
      walls[as.character(K)] <- res$wall
      say("   gibbs    %6d %-6s %6d %10s  wall %7.1f s  CPU %7.1f s  peak %5.2f GiB  %s tok/s/core",
          K, res$kind, res$batch, format(res$nnz, big.mark = ","), res$wall, res$cpu, res$rss,
          format(round(tok / res$cpu), big.mark = ","))
    }
    if (length(walls) == length(sub_K)) {
      say("   K = %d over K = %d, whole-call wall clock: %.2fx (target <= 3x)", max(sub_K),
          min(sub_K), walls[[as.character(max(sub_K))]] / walls[[as.character(min(sub_K))]])
    }
  }
  say("   load at end: %s", load())
  attr(say, "close")()
  quit(save = "no")
}

smoke <- identical(Sys.getenv("SPARSEVI_BENCH_SMOKE"), "1")
n_docs <- as.integer(Sys.getenv("SPARSEVI_BENCH_DOCS", "60000"))
Ks <- as.integer(strsplit(Sys.getenv("SPARSEVI_BENCH_KS", if (smoke) "5" else "1000,2000"), ",")[[1]])
engines <- strsplit(Sys.getenv("SPARSEVI_BENCH_ENGINES", "cvb0,gibbs,vb,ope"), ",")[[1]]
lib <- Sys.getenv("SPARSEVI_BENCH_LIB", "")
doc_topics <- Sys.getenv("SPARSEVI_BENCH_DOC_TOPICS", "default")
topic_word <- Sys.getenv("SPARSEVI_BENCH_TOPIC_WORD", "read")
preload <- Sys.getenv("SPARSEVI_BENCH_PRELOAD", "Matrix")
bench_dir <- local({
  a <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  d <- c(if (length(a)) dirname(a[1]), file.path("inst", "bench"),
         system.file("bench", package = "sparsevi"))
  d[file.exists(file.path(d, "bench-log.R"))][1]
})
source(file.path(bench_dir, "bench-log.R"))
data_dir <- if (!smoke) bench_data_dir()
say <- bench_logger(bench_out("large.txt"))
if (nzchar(lib)) .libPaths(c(lib, .libPaths()))
suppressPackageStartupMessages(library(sparsevi))
# SPARSEVI_BENCH_CORPUS_RDS: a file to keep the corpus in (read from it when
# it exists, e.g. for the whole of wikipara, several runs)
corpus_rds <- Sys.getenv("SPARSEVI_BENCH_CORPUS_RDS",
                         file.path(tempdir(), sprintf("wikipara-%d.rds", n_docs)))
source(file.path(bench_dir, "bench-data.R"))
if (file.exists(corpus_rds)) {
  x <- readRDS(corpus_rds)
} else {
  x <- bench_corpus(sprintf("wikipara%d", n_docs), data_dir, all_terms = TRUE)
  saveRDS(x, corpus_rds)
}
bench_header(say, sprintf("== large K and V (inst/bench/large.R); host %s; load %s",
                           Sys.info()[["nodename"]],
                           paste(readLines("/proc/loadavg", warn = FALSE), collapse = "")))
say("   wikipara first %d paragraphs: V = %d, %d tokens; one pass (vbmemo: two), batches of 1,000 paragraphs (ope: 5,000); 1 thread",
    nrow(x), ncol(x), sum(x$count))
say("   doc_topics: %s; topic_word after the call: %s; loaded before the call: %s; whole/train = wall seconds of the whole call over the trace's training seconds; CPU whole/train = the same in CPU seconds of the child (steadier on a loaded machine); GC s = garbage collection in the call",
    doc_topics, topic_word, preload)
say("   %-6s %5s %9s %9s %9s %10s %12s %11s %16s %6s", "engine", "K", "wall s", "train s", "CPU s",
    "peak RSS", "whole/train", "whole CPU", "CPU whole/train", "GC s")
child <- tempfile(fileext = ".R")
writeLines(c(
  "args <- commandArgs(TRUE)",
  "if (nzchar(args[4])) .libPaths(c(args[4], .libPaths()))",
  "suppressPackageStartupMessages(library(sparsevi))",
  "x <- readRDS(args[1])",
  "if (args[7] != 'none') for (p in strsplit(args[7], ',')[[1]]) loadNamespace(p)",
  "eng <- args[2]; K <- as.integer(args[3])",
  "memo <- eng == 'vbmemo'",
  "# each engine's settings at 06ddbb6, named",
  "named <- switch(if (memo) 'vb' else eng,",
  "  cvb0 = list(global = 'stochastic', alpha = 0.1, eta = 0.01, init = 'seeded', step_scale = 1,",
  "              tau = 1, kappa = 0.6, burnin = 0),",
  "  gibbs = list(global = 'stochastic', alpha = 0.1, eta = 0.2, init = 'bregman', step_scale = 1,",
  "               tau = 1, kappa = 0.6, reuse_dead = FALSE),",
  "  vb = list(global = if (memo) 'memoized' else 'stochastic', alpha = 0.1, eta = 0.01, L = min(8L, K),",
  "            init = 'bregman', restarts = TRUE, step_scale = 1, tau = 1, kappa = 0.6),",
  "  ope = list(global = 'ml', alpha = 1 / K, eta = 1 / K, init = 'bregman'),",
  "  list())",
  "args_fit <- if (eng == 'default') list(x, K = K, passes = 1, seed = 1, threads = 1, progress = FALSE) else",
  "  c(list(x, K = K, local = if (memo) 'vb' else eng,",
  "       passes = if (memo) 2 else 1, batch_size = if (eng == 'ope') 5000 else 1000, seed = 1,",
  "       threads = 1, progress = FALSE), named)",
  "if (args[5] != 'default') args_fit$doc_topics <- as.integer(args[5])",
  "g0 <- gc.time()[1]",
  "t0 <- proc.time()",
  "fit <- do.call(fit_lda, args_fit)",
  "if (args[6] == 'read') tw <- fit$topic_word[1, 1]",
  "t1 <- proc.time() - t0",
  "g1 <- gc.time()[1] - g0",
  "cat(sprintf('RESULT %.2f %.2f %.2f %.2f %.2f\\n', t1[['elapsed']], max(fit$trace$seconds),",
  "            max(fit$trace$cpu_seconds), t1[['user.self']] + t1[['sys.self']], g1))",
  sprintf("bench_dir <- %s", deparse(normalizePath(bench_dir))),
  "source(file.path(bench_dir, 'bench-log.R'))",
  "cat('SETTINGS', bench_settings(fit), '\\n')"), child)
settings_of <- list()
for (K in Ks) for (eng in engines) {
  tf <- tempfile()
  out <- suppressWarnings(system2("/usr/bin/time", c("-v", file.path(R.home("bin"), "Rscript"),
                                                     child, corpus_rds, eng, K, shQuote(lib), doc_topics, topic_word,
                                                     preload),
                                  stdout = TRUE, stderr = tf))
  err <- readLines(tf)
  rss <- as.numeric(sub(".*: ", "", grep("Maximum resident set size", err, value = TRUE)))
  res <- grep("^RESULT", out, value = TRUE)
  if (!length(res)) {
    say("   %-6s %5d  failed: %s", eng, K, paste(utils::tail(err[!grepl("^\t", err)], 2), collapse = " | "))
    if (smoke) stop("the ", eng, " child failed: ", paste(err, collapse = "\n"))
    next
  }
  v <- as.numeric(strsplit(res, " ")[[1]][-1])
  settings_of[[sprintf("%s K = %d", eng, K)]] <- sub("^SETTINGS ", "", grep("^SETTINGS", out, value = TRUE))
  say("   %-6s %5d %9.1f %9.1f %9.1f %8.2f GB %11.2fx %11.1f %15.2fx %6.2f", eng, K, v[1], v[2],
      v[3], rss / 1024^2, v[1] / v[2], v[4], v[4] / v[3], v[5])
}
for (nm in names(settings_of)) say("   settings that ran [%s]: %s", nm, settings_of[[nm]])
say("load at end: %s", paste(readLines("/proc/loadavg", warn = FALSE), collapse = ""))
attr(say, "close")()
