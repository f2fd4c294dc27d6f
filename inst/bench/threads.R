# Threads for the default engine (issue 34): the default call
# fit_lda(x, K, passes = 1, seed = 1, threads = th, progress = FALSE) over
# the first 60,000 paragraphs of wikipara (all 129,289 terms, as
# inst/bench/large.R reads them) at K = 100 and K = 1000, on 1 and on 2
# threads in one process, runs alternating (1, 2, 1, 2, ...). Reports the
# wall-clock seconds of each whole call, the ratio of the medians (1 thread
# over 2) and of the best runs, and whether every run's fit is bit-identical
# to the first one-thread fit (its topics, training proportions, topic
# totals and trace without the seconds). Part "engines" (SPARSEVI_BENCH_PARTS)
# times one pass of every engine's default fit at K = 100 over the first
# SPARSEVI_BENCH_ENGINE_DOCS (default 5,000) paragraphs on 1 and 2 threads,
# the same way: the evidence for the default thread count. The machine's load (/proc/loadavg) is printed
# before and after each K: on a busy machine the second thread shares its
# core and the ratio is understated. Run from the package root:
#   nice -n 10 Rscript inst/bench/threads.R
# Environment: SPARSEVI_BENCH_KS (default "100,1000"), SPARSEVI_BENCH_REPS
# (runs per thread count, default 3), SPARSEVI_BENCH_DOCS (default 60000),
# SPARSEVI_BENCH_PARTS (default "default,engines"),
# SPARSEVI_BENCH_SMALL_RDS (the corpus, kept between runs; default
# <tempdir>/wikipara-60000.rds). Appends to inst/bench/results/scale.txt.
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
say <- bench_logger(bench_out("scale.txt"))
Ks <- if (smoke) c(4L, 8L) else
  as.integer(strsplit(Sys.getenv("SPARSEVI_BENCH_KS", "100,1000"), ",")[[1]])
reps <- if (smoke) 1L else as.integer(Sys.getenv("SPARSEVI_BENCH_REPS", "3"))
n_docs <- as.integer(Sys.getenv("SPARSEVI_BENCH_DOCS", "60000"))
parts <- strsplit(Sys.getenv("SPARSEVI_BENCH_PARTS", "default,engines"), ",")[[1]]
load_now <- function() paste(readLines("/proc/loadavg", warn = FALSE), collapse = " ")

corpus <- function(n) {
  if (smoke) return(bench_sim_corpus(D = 300, V = 60, K = 4, seed = 1))
  rds <- Sys.getenv("SPARSEVI_BENCH_SMALL_RDS", file.path(tempdir(), sprintf("wikipara-%d.rds", n)))
  if (!file.exists(rds)) {
    saveRDS(bench_corpus(sprintf("wikipara%d", n), bench_data_dir(), all_terms = TRUE), rds,
            compress = FALSE)
  }
  readRDS(rds)
}

# What must not depend on threads: the topics (lambda, read without building
# topic_word), the training proportions, the topic totals, the trace less
# its clocks.
fit_bits <- function(f) {
  tr <- .subset2(f, "trace")
  list(lambda = .subset2(f, "lambda"), doc_topic = .subset2(f, "doc_topic"),
       tot = .subset2(f, "state")$tot, t = .subset2(f, "state")$t,
       trace = tr[, setdiff(names(tr), c("seconds", "cpu_seconds")), drop = FALSE])
}

# Runs f(1), f(2), f(1), f(2), ... reps times each; wall seconds of each
# whole call and whether each fit equals the first one-thread fit.
time_threads <- function(label, f) {
  el <- list(`1` = numeric(0), `2` = numeric(0))
  cpu <- el
  ref <- NULL
  same <- TRUE
  for (r in seq_len(reps)) {
    for (th in 1:2) {
      gc()
      t0 <- proc.time()
      fit <- f(th)
      t <- proc.time() - t0
      el[[th]] <- c(el[[th]], t[["elapsed"]])
      cpu[[th]] <- c(cpu[[th]], t[["user.self"]] + t[["sys.self"]])
      b <- fit_bits(fit)
      if (is.null(ref)) {
        ref <- b
        say("  settings that ran [%s, threads %d]: %s", label, th, bench_settings(fit))
      } else {
        same <- same && identical(b, ref)
      }
      rm(fit, b)
    }
  }
  say("%-30s 1 thread: %s s (CPU %s)", label, paste(sprintf("%.2f", el[[1]]), collapse = " "),
      paste(sprintf("%.2f", cpu[[1]]), collapse = " "))
  say("%-30s 2 threads: %s s (CPU %s)", "", paste(sprintf("%.2f", el[[2]]), collapse = " "),
      paste(sprintf("%.2f", cpu[[2]]), collapse = " "))
  say("%-30s speed-up (1 thread / 2 threads): %.2fx medians, %.2fx best; fits identical across threads: %s",
      "", stats::median(el[[1]]) / stats::median(el[[2]]), min(el[[1]]) / min(el[[2]]), same)
  invisible(list(el = el, same = same))
}

bench_header(say, sprintf("== threads of the default engine (inst/bench/threads.R), parts %s, load %s",
                           paste(parts, collapse = ","), load_now()))
say("   machine: %d logical cores (parallel::detectCores()); runs alternate 1, 2, 1, 2 threads in one process",
    parallel::detectCores())

if ("default" %in% parts) {
  x <- corpus(n_docs)
  say("-- the default call fit_lda(x, K, passes = 1, seed = 1, threads = th, progress = FALSE): %s documents, V = %s, %s tokens; wall seconds of the whole call",
      format(nrow(x), big.mark = ","), format(ncol(x), big.mark = ","),
      format(sum(x$count), big.mark = ","))
  # (a first, untimed call loads what a session loads once)
  invisible(fit_lda(x[1:200, ], 4, passes = 1, seed = 1, progress = FALSE))
  for (K in Ks) {
    say("   K = %d: load before %s", K, load_now())
    time_threads(sprintf("default, K = %d", K), function(th) {
      fit_lda(x, K, passes = 1, seed = 1, threads = th, progress = FALSE)
    })
    say("   K = %d: load after %s", K, load_now())
  }
  rm(x)
}

if ("engines" %in% parts) {
  x <- corpus(n_docs)
  x <- x[seq_len(min(nrow(x), if (smoke) 300L else
    as.integer(Sys.getenv("SPARSEVI_BENCH_ENGINE_DOCS", "5000")))), ]
  K <- if (smoke) 4L else 100L
  say("-- every engine's default fit, one pass, K = %d, %s documents: fit_lda(x, K, local = <engine>, passes = 1, seed = 1, threads = th, progress = FALSE)",
      K, format(nrow(x), big.mark = ","))
  say("   load before %s", load_now())
  for (eng in c("cvb0", "vb", "ope", "gibbs")) {
    time_threads(sprintf("%s, K = %d", eng, K), function(th) {
      fit_lda(x, K, local = eng, passes = 1, seed = 1, threads = th, progress = FALSE)
    })
  }
  say("   load after %s", load_now())
}
attr(say, "close")()
