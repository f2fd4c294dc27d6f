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
  "               tau = 1, kappa = 0.6),",
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
