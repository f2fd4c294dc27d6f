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
# the same way: the evidence for the default thread count. Part "store" (not
# in the default parts) times the SCVB0 store update alone (the global step,
# ffi_lda_store_update) at K = 1000 over a V = 129,289 table, minibatches of
# 2,500 words: 20 different summaries in turn (each read from memory, as in
# training) and one summary again and again (in cache), on 1 and 2 threads,
# with the bytes it moves per update. Part "corpora" (not in the default
# parts) times every engine's default call (all its laps) at K =
# SPARSEVI_BENCH_CORPUS_K (100) on SPARSEVI_BENCH_CORPORA (kos, nips_f20,
# sotu_chunks, wikipara20000), engines SPARSEVI_BENCH_ENGINES (cvb0, vb,
# ope, gibbs); SPARSEVI_BENCH_BUSY=1 keeps a busy loop on one core meanwhile.
# OpenMP's variables are read as R starts: give them on the command line
# (OMP_WAIT_POLICY=passive Rscript inst/bench/threads.R); the command each
# section records lists them.
# The machine's load (/proc/loadavg) is printed
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
  bench_wikipara_kept(n)
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
if ("corpora" %in% parts) {
  # every engine's default call on each shared corpus (90% of it, the split
  # of seed 1), whole fits at their default laps: the evidence for the
  # default thread count (threads = 1 while fits are not faster on 2). With
  # SPARSEVI_BENCH_BUSY=1 a busy loop (sh, normal priority) holds one core
  # throughout: a machine where something else runs.
  K <- if (smoke) 4L else as.integer(Sys.getenv("SPARSEVI_BENCH_CORPUS_K", "100"))
  names_c <- if (smoke) "sim" else strsplit(Sys.getenv("SPARSEVI_BENCH_CORPORA",
    "kos,nips_f20,sotu_chunks,wikipara20000"), ",")[[1]]
  engines <- strsplit(Sys.getenv("SPARSEVI_BENCH_ENGINES", "cvb0,vb,ope,gibbs"), ",")[[1]]
  busy <- identical(Sys.getenv("SPARSEVI_BENCH_BUSY"), "1") && !smoke
  busy_pid <- NULL
  if (busy) {
    pidfile <- tempfile()
    system(sprintf("sh -c 'echo $$ > %s; while :; do :; done' > /dev/null 2>&1 &", pidfile))
    Sys.sleep(0.5)
    busy_pid <- as.integer(readLines(pidfile))
  }
  say("-- every engine's default call on the shared corpora: fit_lda(train, K = %d, local = <engine>, seed = 1, threads = th, progress = FALSE), train = 90%% of the corpus (split_heldout(x, 0.1, seed = 1)); %s",
      K, if (busy) "a busy loop at normal priority holds one core throughout" else "no other load")
  for (cn in names_c) {
    xc <- if (smoke) bench_sim_corpus(D = 300, V = 60, K = 4, seed = 1) else bench_corpus(cn)
    tr <- split_heldout(xc, test_frac = 0.1, seed = 1)$train
    say("   %s: %s documents, V = %s; load before %s", cn, format(nrow(tr), big.mark = ","),
        format(ncol(tr), big.mark = ","), load_now())
    for (eng in engines) {
      time_threads(sprintf("%s, %s, K = %d", cn, eng, K), function(th) {
        fit_lda(tr, K, local = eng, seed = 1, threads = th, progress = FALSE)
      })
    }
  }
  if (!is.null(busy_pid)) tools::pskill(busy_pid)
}
if ("store" %in% parts) {
  # the store update alone: X[, words] += c S (K x U) and the row sums of S,
  # as SCVB0's global step runs it (R/lda-store.R, src/lda-store.c)
  ns <- asNamespace("sparsevi")
  K <- if (smoke) 8L else 1000L
  V <- if (smoke) 500L else 129289L
  U <- if (smoke) 50L else 2500L
  n_sum <- if (smoke) 2L else 20L
  st <- ns$lda_store_counts(NULL, 0, K, V)
  set.seed(1)
  sums <- lapply(seq_len(n_sum), function(i) {
    list(words = sort(sample.int(V, U)) - 1L, x = stats::runif(K * U))
  })
  ffi <- get("ffi_lda_store_update", envir = ns)
  per_update <- function(th, batches, reps) {
    opts <- list(rho = 1e-3, mult = 1, rescale_below = 1e-100, t = 1, threads = as.integer(th))
    t0 <- proc.time()[["elapsed"]]
    for (r in seq_len(reps)) for (b in batches) .Call(ffi, st$X, st$meta, b$words, b$x, opts)
    (proc.time()[["elapsed"]] - t0) / (reps * length(batches))
  }
  mb <- (3 * K * U * 8) / 1e6 # the summary read, the table's columns read and written
  say("-- the store update alone (part store): K = %d, V = %s, %d words a minibatch; %.0f MB moved an update (the K x %d summary read, its columns of the table read and written); ms an update, median of 5 runs of %d updates",
      K, format(V, big.mark = ","), U, mb, U, n_sum * (if (smoke) 1L else 5L))
  say("   load before %s", load_now())
  for (case in c("20 summaries in turn (from memory)", "one summary again (in cache)")) {
    batches <- if (startsWith(case, "20")) sums else rep(sums[1], n_sum)
    ms <- vapply(1:2, function(th) {
      1000 * stats::median(vapply(1:5, function(i) per_update(th, batches, if (smoke) 1L else 5L), 0))
    }, 0)
    say("   %-36s 1 thread %.2f ms (%.1f GB/s)  2 threads %.2f ms (%.1f GB/s)  1 / 2: %.2fx",
        case, ms[1], mb / ms[1], ms[2], mb / ms[2], ms[1] / ms[2])
  }
  say("   load after %s", load_now())
}
attr(say, "close")()
