# Benchmark of the cluster executors (issue 34): the same rounds of the
# default engine run locally on one thread, on a 2-worker PSOCK cluster
# (parallel), on 2 persistent workers over mirai daemons with the topics on
# the master (sparsevi_workers(shard_topics = FALSE)) and on 2 that own the
# topics' columns by word (sparsevi_workers(shard_topics = TRUE)), in one run: elapsed-time ratios, the CPU seconds of
# the master and of each worker, bytes per lap, and whether the fits are
# identical.
# Run from the package root with sparsevi installed:
#   nice -n 10 Rscript inst/bench/cluster.R
# Data: nips_f20 from ../shared/data (SPARSEVI_DATA overrides), K = 100, 8
# batches, sync = 2, 3 laps, threads = 1. SPARSEVI_BENCH_REPS repetitions
# (default 3) of the four runs, in that order. Results are appended to
# inst/bench/results/cluster.txt. On a machine shared with other jobs the
# elapsed times are noisy: the load average is printed with every repetition.
# SPARSEVI_CLUSTER_L (comma-separated, default "default"): the fits' `L`,
# each a part of its own: "default" the call without `L` (SCVB0's dense
# summaries), a number SCVB0's sparse summaries (each entry's L topics),
# "K" L = K (the dense summaries again); smoke mode runs "default" and 2.
# SPARSEVI_CLUSTER_REST (default "shape", fit_lda()'s default with `L`):
# the `sparse_rest` of the numbered parts; the workers keep the topics
# themselves (mirai sharded) only with "renormalise" or "sample", so with
# "shape" that run keeps them on the master.
# SPARSEVI_CLUSTER_CORPUS="wikipara60000" runs issue 34's second case
# instead: the first 60,000 wikipara paragraphs (all 129,289 terms, as
# inst/bench/threads.R reads them; SPARSEVI_BENCH_SMALL_RDS keeps the
# corpus between runs), K = 1000, the default call's minibatches of 100
# paragraphs, sync = 2, one lap.
suppressPackageStartupMessages(library(sparsevi))
bench_dir <- local({
  a <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  d <- c(if (length(a)) dirname(a[1]), file.path("inst", "bench"),
         system.file("bench", package = "sparsevi"))
  d[file.exists(file.path(d, "bench-log.R"))][1]
})
source(file.path(bench_dir, "bench-log.R"))
smoke <- bench_smoke()
say <- bench_logger(bench_out("cluster.txt"))
load_now <- function() paste(strsplit(readLines("/proc/loadavg", warn = FALSE), " ")[[1]][1:3],
                             collapse = " ")
bench_header(say, sprintf("== cluster executors (inst/bench/cluster.R): local, PSOCK, mirai workers; load %s",
                          load_now()))

corpus <- if (smoke) "simulated" else Sys.getenv("SPARSEVI_CLUSTER_CORPUS", "nips_f20")
if (!corpus %in% c("simulated", "nips_f20", "wikipara60000")) {
  stop("SPARSEVI_CLUSTER_CORPUS: nips_f20 or wikipara60000")
}
x <- switch(corpus,
  simulated = bench_sim_corpus(D = 400, V = 60, K = 5, seed = 1, doc_length = 15),
  nips_f20 = {
    d <- bench_data_dir()
    read_uci_bow(file.path(d, "nips_f20", "docword.nips_f20.txt.gz"),
                 file.path(d, "nips_f20", "vocab.nips_f20.txt"))
  },
  wikipara60000 = {
    source(file.path(bench_dir, "bench-data.R"))
    bench_wikipara_kept(60000)
  })
K <- switch(corpus, simulated = 8L, nips_f20 = 100L, wikipara60000 = 1000L)
D <- nrow(x)
# the default engine with its defaults (the settings that ran are printed
# from the fit), rounds of 2, one thread: nips_f20 in 8 batches of equal
# size and 3 laps; wikipara in the default call's batches of 100, one lap
args <- if (corpus == "wikipara60000") {
  list(x, K = K, batch_size = 100, sync = 2, passes = 1, seed = 1, threads = 1,
       progress = FALSE)
} else {
  list(x, K = K, batch_size = ceiling(D / 8), sync = 2, passes = 3, seed = 1, threads = 1,
       progress = FALSE)
}
say("-- corpus %s: %d documents, V = %d, K = %d, batches of %d, %d lap(s), sync = 2", corpus, D,
    ncol(x), K, args$batch_size, args$passes)
reps <- if (smoke) 1L else as.integer(Sys.getenv("SPARSEVI_BENCH_REPS", "3"))
Ls <- if (smoke) c("default", "2") else
  strsplit(Sys.getenv("SPARSEVI_CLUSTER_L", "default"), ",")[[1]]
sparse_rest <- Sys.getenv("SPARSEVI_CLUSTER_REST", "shape")
if (!sparse_rest %in% c("shape", "renormalise", "sample")) {
  stop("SPARSEVI_CLUSTER_REST: shape, renormalise or sample")
}
base_args <- args
has_mirai <- requireNamespace("mirai", quietly = TRUE)

invisible(loadNamespace("Matrix")) # the master reads sparse summaries in every run
cpu_now <- function() sum(proc.time()[c("user.self", "sys.self")])
cl <- parallel::makePSOCKcluster(2L)
invisible(parallel::clusterCall(cl, function(p) .libPaths(p), .libPaths()))
invisible(parallel::clusterCall(cl, function() {
  loadNamespace("sparsevi")
  loadNamespace("Matrix")
  NULL
}))
psock_cpu <- function() {
  unlist(parallel::clusterCall(cl, function() sum(proc.time()[c("user.self", "sys.self")])))
}
w <- ws <- NULL
if (has_mirai) {
  w <- sparsevi_workers(2, shard_topics = FALSE)
  ws <- sparsevi_workers(2, shard_topics = TRUE)
  cpu_of <- function(workers) {
    function() {
      ms <- lapply(workers, function(wk) {
        mirai::mirai({
          loadNamespace("Matrix")
          sum(proc.time()[c("user.self", "sys.self")])
        }, .compute = wk$profile)
      })
      vapply(ms, function(m) m[], 0)
    }
  }
  mirai_cpu <- cpu_of(w)
  shard_cpu <- cpu_of(ws)
  invisible(mirai_cpu())
  invisible(shard_cpu())
} else {
  say("mirai is not installed: the mirai workers are left out")
}

# one timed fit: elapsed, the master's CPU seconds, each worker's
# (a collection first, outside both counts: system.time()'s own would fall
# inside the CPU count and outside the elapsed one)
timed <- function(cluster = NULL, workers_cpu = function() 0) {
  invisible(gc())
  w0 <- workers_cpu()
  m0 <- cpu_now()
  t <- system.time(fit <- do.call(fit_lda, c(args, list(cluster = cluster))),
                   gcFirst = FALSE)[["elapsed"]]
  list(fit = fit, elapsed = t, cpu = cpu_now() - m0, workers = workers_cpu() - w0)
}
same <- function(a, b) {
  identical(a$topic_word, b$topic_word) && identical(a$lambda, b$lambda) &&
    identical(a$trace$objective, b$trace$objective)
}
per_round <- list()
for (Lp in Ls) {
args <- base_args
if (Lp != "default") {
  args$L <- if (Lp == "K") K else as.integer(Lp)
  args$doc_topics <- min(8L, K) # (the default call's: `doc_topics` follows `L`)
  args$sparse_rest <- sparse_rest
}
say("-- part L = %s (%s)", Lp, if (Lp == "default") "the default call" else
    sprintf("fit_lda(L = %d, sparse_rest = \"%s\")", args$L, sparse_rest))
tot <- c(local = 0, psock = 0, mirai = 0, sharded = 0)
for (r in seq_len(reps)) {
  l0 <- load_now()
  loc <- timed()
  ps <- timed(cl, psock_cpu)
  mi <- if (has_mirai) timed(w, mirai_cpu)
  sh <- if (has_mirai) timed(ws, shard_cpu)
  if (r == 1L) bench_header(say, fits = list(local = loc$fit))
  tot <- tot + c(loc$elapsed, ps$elapsed, if (has_mirai) c(mi$elapsed, sh$elapsed) else c(NA, NA))
  # the speed-up the CPU seconds allow when every process has a core of its
  # own: the local run's CPU seconds against the master's plus the busier
  # worker's (one batch each per round, of equal size)
  crit <- function(run) loc$cpu / (run$cpu + max(run$workers))
  line <- function(name, run) {
    sprintf("%s %.2f s (CPU master %.2f s, workers %s s; %.2fx elapsed, %.2fx by CPU critical path; identical fit: %s)",
            name, run$elapsed, run$cpu, paste(sprintf("%.2f", run$workers), collapse = " + "),
            loc$elapsed / run$elapsed, crit(run), same(run$fit, loc$fit))
  }
  say("rep %d (load at start %s, at end %s): local %.2f s (CPU %.2f s); %s; %s; %s", r, l0,
      load_now(), loc$elapsed, loc$cpu, line("PSOCK", ps),
      if (has_mirai) line("mirai", mi) else "mirai not run",
      if (has_mirai) line("mirai sharded", sh) else "sharded not run")
}
say("over %d rep(s): local/PSOCK %.2fx, local/mirai %.2fx, local/mirai sharded %.2fx (elapsed: local %.2f s, PSOCK %.2f s, mirai %.2f s, sharded %.2f s); %d batches of <= %d documents, K = %d",
    reps, tot[["local"]] / tot[["psock"]], tot[["local"]] / tot[["mirai"]],
    tot[["local"]] / tot[["sharded"]], tot[["local"]], tot[["psock"]], tot[["mirai"]],
    tot[["sharded"]], loc$fit$control$n_batches, args$batch_size, K)
per_lap <- function(run) {
  sprintf("sent %.3f MB, received %.3f MB", mean(run$fit$trace$bytes_sent) / 1e6,
          mean(run$fit$trace$bytes_received) / 1e6)
}
say("bytes per lap: PSOCK %s; mirai %s; mirai sharded %s (the master's link), %.3f MB between the workers; PSOCK and mirai the same bytes lap by lap: %s",
    per_lap(ps), if (has_mirai) per_lap(mi) else "not run",
    if (has_mirai) per_lap(sh) else "not run",
    if (has_mirai) mean(sh$fit$trace$bytes_between_workers) / 1e6 else NA,
    if (has_mirai) identical(ps$fit$trace[c("bytes_sent", "bytes_received")],
                             mi$fit$trace[c("bytes_sent", "bytes_received")]) else NA)
# (each part's bytes and local time per round, for the transport's bound below)
rounds <- loc$fit$control$n_batches / args$sync
per_round[[Lp]] <- c(mb = (mean(ps$fit$trace$bytes_sent) + mean(ps$fit$trace$bytes_received)) /
                       1e6 / rounds,
                     t = loc$elapsed / (rounds * args$passes))
ct <- loc$fit$control
say("ran: L = %s, SCVB0 summary %s", format(ct$cvb0_L),
    if (identical(ct$cvb0_settings$top_L, 0L)) "dense" else
      sprintf("sparse (top_L %d, sparse_rest %s)", ct$cvb0_settings$top_L, ct$sparse_rest))
}
# The transport alone: a raw vector of n MB to one worker (which returns 1),
# and one of n MB back, median of 5 calls each. Per round a
# cluster fit moves its bytes this way, so the rate bounds what any fit with
# that traffic can gain over one local process: with the rounds' local time
# t (two batches) and their bytes taking m, two workers need at least
# t / 2 + m, a speed-up of at most t / (t / 2 + m).
transport <- function(send, fetch, sizes) {
  vapply(sizes, function(mb) {
    r <- as.raw(sample(0:255, mb * 1e6, TRUE))
    med <- function(f) stats::median(replicate(5, system.time(f())[["elapsed"]]))
    c(mb = mb, send = med(function() send(r)), fetch = med(function() fetch(mb * 1e6)))
  }, numeric(3))
}
sizes <- if (smoke) 1 else c(1, 5, 20)
# (what comes back is made by the worker in the same call, raw(n): a mirai
# daemon clears its global environment after each call, so nothing can wait
# there; making 20 MB of zeros takes a few ms of the "from" time)
tp <- list(PSOCK = transport(
  function(r) parallel::clusterCall(cl[1], function(x) 1, r),
  function(n) parallel::clusterCall(cl[1], function(n) raw(n), n), sizes))
if (has_mirai) {
  prof <- w[[1]]$profile
  tp$mirai <- transport(
    function(r) mirai::mirai(1, r = r, .compute = prof)[],
    function(n) mirai::mirai(raw(n), n = n, .compute = prof)[], sizes)
}
say("-- transport: a raw vector to one worker and back (median of 5, ms and MB/s)")
for (nm in names(tp)) {
  m <- tp[[nm]]
  say("   %-6s %s", nm, paste(sprintf("%g MB: to %.1f ms (%.0f MB/s), from %.1f ms (%.0f MB/s)",
                                      m["mb", ], 1e3 * m["send", ], m["mb", ] / m["send", ],
                                      1e3 * m["fetch", ], m["mb", ] / m["fetch", ]),
                              collapse = "; "))
}
# each part's rounds against PSOCK's rate at the largest size (both directions)
big <- tp$PSOCK[, ncol(tp$PSOCK)]
rate <- 2 * big[["mb"]] / (big[["send"]] + big[["fetch"]]) # MB/s
for (Lp in names(per_round)) {
  pr <- per_round[[Lp]]
  m_round <- pr[["mb"]] / rate
  say("   part L = %s, per round (%d batches of the last rep): %.1f MB, %.1f ms at PSOCK's %.0f MB/s; local %.1f ms a round; two workers at most %.2fx with this traffic",
      Lp, args$sync, pr[["mb"]], 1e3 * m_round, rate, 1e3 * pr[["t"]],
      pr[["t"]] / (pr[["t"]] / 2 + m_round))
}
parallel::stopCluster(cl)
if (!is.null(w)) close(w)
if (!is.null(ws)) close(ws)
attr(say, "close")()
