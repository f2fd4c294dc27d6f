# Benchmark of issue "Scale": threads, an R cluster, corpora on disk.
# Run from the package root with sparsevi installed:
#   nice -n 10 Rscript inst/bench/scale.R [parts]
# parts: any of threads,cluster,memory,workers,project,sharded,disk (default all). Data from
# ../shared/data (SPARSEVI_DATA overrides). Part sharded: SPARSEVI_SCALE_LAPS
# laps make its topics (default 1), SPARSEVI_SCALE_SYSTEMS picks among its
# systems (default,L8_renormalise; default both), SPARSEVI_SCALE_SIZES the
# batch sizes it models (default 1000,10000). Results to
# inst/bench/results/scale.txt (appended per part). Figures are ratios
# measured in one run: absolute times on a shared machine are noisy.
suppressPackageStartupMessages(library(sparsevi))
bench_dir <- local({
  a <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  d <- c(if (length(a)) dirname(a[1]), file.path("inst", "bench"),
         system.file("bench", package = "sparsevi"))
  d[file.exists(file.path(d, "bench-log.R"))][1]
})
source(file.path(bench_dir, "bench-log.R"))
smoke <- bench_smoke()
args <- commandArgs(trailingOnly = TRUE)
parts <- if (length(args)) strsplit(args[1], ",")[[1]] else
  if (smoke) "threads" else c("threads", "cluster", "memory", "workers", "project", "sharded", "disk")
data_dir <- if (!smoke) bench_data_dir()
say <- bench_logger(bench_out("scale.txt"))
# Every engine's settings at 06ddbb6, named in every fit (never a default
# that may change): vb memoized L = 8 with restarts unless a part says
# otherwise; each engine's priors, start and schedule.
eng_args <- function(eng, K) {
  switch(eng,
    vb = list(local = "vb", global = "memoized", L = min(8L, K), alpha = 0.1, eta = 0.01,
              init = "bregman", restarts = TRUE, step_scale = 1, tau = 1, kappa = 0.6),
    cvb0 = list(local = "cvb0", global = "stochastic", alpha = 0.1, eta = 0.01,
                init = "bregman", step_scale = 1, tau = 1, kappa = 0.6, burnin = 0),
    gibbs = list(local = "gibbs", global = "stochastic", alpha = 0.1, eta = 0.2,
                 init = "bregman", step_scale = 1, tau = 1, kappa = 0.6, burnin = 3,
                 samples = 2, reuse_dead = FALSE),
    ope = list(local = "ope", global = "ml", alpha = 1 / K, eta = 1 / K, init = "bregman",
               ope_iter = 50L, step_scale = 1, tau = 1, kappa = 0.6),
    stop("unknown engine ", eng))
}
fit_named <- function(x, K, eng, ...) {
  a <- utils::modifyList(eng_args(eng, K), list(...))
  do.call(fit_lda, c(list(x, K = K), a))
}
K1 <- if (smoke) 8L else 100L
cpu <- function(expr) {
  t0 <- proc.time()
  force(expr)
  t <- proc.time() - t0
  c(elapsed = t[["elapsed"]], cpu = t[["user.self"]] + t[["sys.self"]])
}
bench_header(say, sprintf("== scale benchmark (inst/bench/scale.R), parts %s, load %s",
                           paste(parts, collapse = ","),
                           paste(readLines("/proc/loadavg", warn = FALSE), collapse = " ")))

nips <- function() {
  if (smoke) return(bench_sim_corpus(D = 600, V = 60, K = 5, seed = 1, doc_length = 15))
  read_uci_bow(file.path(data_dir, "nips_f20", "docword.nips_f20.txt.gz"),
               file.path(data_dir, "nips_f20", "vocab.nips_f20.txt"))
}

# ---- 1. threads: local steps on 1 and 2 threads, wall-clock ratio ----------
if ("threads" %in% parts) {
  say("-- threads: elapsed seconds with 1 and 2 threads (best of 3) and speed-up")
  x <- nips()[1:600, ]
  # (the vb engine: its state and control feed the vb local steps below)
  topics <- fit_named(x, K1, "vb", passes = 1, seed = 1, progress = FALSE)
  bench_header(say, fits = list(`vb topics` = topics))
  best <- function(f) min(replicate(if (smoke) 1 else 3, cpu(f())[["elapsed"]]))
  time_engine <- function(name, f) {
    t1 <- best(function() f(1L))
    t2 <- best(function() f(2L))
    say("%-34s 1 thread %7.3fs  2 threads %7.3fs  speed-up %.2fx", name, t1, t2, t1 / t2)
  }
  ns <- asNamespace("sparsevi")
  state <- bench_fit_state(topics)
  ctl <- topics$control
  time_engine("lda local vb, L = 8, K = 100", function(th) {
    ctl$threads <- th
    ns$lda_local_vb(x, state, ctl, c(0, 1), th)
  })
  time_engine("lda local vb, dense, K = 100", function(th) {
    c2 <- ctl
    c2$L <- K1
    ns$lda_local_vb(x, state, c2, c(0, 1), th)
  })
  time_engine("heldout completion, K = 100", function(th) {
    heldout_loglik(topics, x, threads = th)
  })
  # the local steps of the other engines, from a fitted state (compute-bound)
  for (eng in c("cvb0", "gibbs", "ope")) {
    f_eng <- fit_named(x, K1, eng, passes = 1, seed = 1, progress = FALSE)
    bench_header(say, fits = stats::setNames(list(f_eng), eng))
    fun <- get(paste0("lda_local_", eng), envir = ns)
    time_engine(sprintf("lda local %s, K = 100", eng), function(th) {
      fun(x, bench_fit_state(f_eng), f_eng$control, c(0, 1), th)
    })
  }
  time_engine("fit_lda cvb0, 1 pass, K = 100", function(th) {
    fit_named(x, K1, "cvb0", passes = 1, seed = 1, threads = th, progress = FALSE)
  })
  time_engine("fit_lda gibbs, 1 pass, K = 100", function(th) {
    fit_named(x, K1, "gibbs", passes = 1, seed = 1, threads = th, progress = FALSE)
  })
  if (!is.null(get0("lda_local_ope", envir = ns))) {
    time_engine("fit_lda ope (ml), 1 pass, K = 100", function(th) {
      fit_named(x, K1, "ope", passes = 1, seed = 1, threads = th, progress = FALSE)
    })
  }
  sim <- simulate_mixture(N = if (smoke) 2000 else 40000, D = 10, K = 20, seed = 1)
  # the mixture's settings at 06ddbb6, named
  mix <- function(th) fit_mixture(sim$X, K = 20, likelihood = "gaussian", prior = "dirichlet",
                                  global = "memoized", L = 20, init = "kmeans", n_init = 1,
                                  tol = 1e-6, passes = 3, seed = 1, threads = th,
                                  progress = FALSE)
  time_engine("fit_mixture gaussian, N=4e4 D=10 K=20", function(th) suppressWarnings(mix(th)))
  fm <- suppressWarnings(mix(1L))
  bench_header(say, fits = list(mixture = fm))
  time_engine("mixture responsibilities, N=4e4 K=20", function(th) {
    predict(fm, sim$X, type = "responsibilities", threads = th)
  })
  # (one split at a time, as the recorded figures ran: pairs of splits came later)
  fv <- fit_vdp(sim$X, kdtree = TRUE, candidates = 10, tol = 1e-3, max_K = 20, seed = 1,
                progress = FALSE, pair_splits = FALSE)
  bench_header(say, fits = list(vdp = fv))
  time_engine("vdp predict density, N=4e4", function(th) {
    predict(fv, sim$X, type = "density", threads = th)
  })
  time_engine("fit_vdp kdtree = FALSE, N=4e4 D=10", function(th) {
    fit_vdp(sim$X, kdtree = FALSE, candidates = 10, tol = 1e-3, max_K = 20, seed = 1,
            threads = th, progress = FALSE, pair_splits = FALSE)
  })
}

# ---- 2. a 2-worker cluster against the same rounds run locally --------------
# Issue 22's setting: nips_f20, K = 100, 8 batches, rounds of 2 (sync = 2),
# 3 laps, one thread; vb (its default, memoized) and SCVB0. Each worker gets
# per round the topic columns of its batches' words and returns sparse
# summaries over them (R/executor.R, R/lda-store.R). Where the time goes:
# CPU seconds of the master and of the workers, and the machine's load.
# Elapsed seconds on this shared 2-core machine mostly measure the other
# load: with the kernel's autogroup scheduling
# (/proc/sys/kernel/sched_autogroup_enabled = 1) the CPU is shared equally
# between sessions, so this benchmark's master and its two workers together
# get one session's share, the same as the local run alone, whenever other
# sessions keep the cores busy.
if ("cluster" %in% parts) {
  say("-- cluster: nips_f20, K = 100, 8 batches, sync = 2, 3 laps, threads = 1; 2 PSOCK workers against the same rounds locally")
  x <- nips()
  loadNamespace("Matrix") # the master reads sparse summaries in both runs
  cl <- parallel::makePSOCKcluster(2L)
  parallel::clusterCall(cl, function(p) .libPaths(p), .libPaths())
  parallel::clusterCall(cl, function() {
    loadNamespace("sparsevi")
    loadNamespace("Matrix")
    NULL
  })
  cpu_now <- function() sum(proc.time()[c("user.self", "sys.self")])
  workers_cpu <- function() {
    unlist(parallel::clusterCall(cl, function() sum(proc.time()[c("user.self", "sys.self")])))
  }
  load_now <- function() strsplit(readLines("/proc/loadavg", warn = FALSE), " ")[[1]][1]
  reps <- as.integer(Sys.getenv("SPARSEVI_BENCH_REPS", "2"))
  # SPARSEVI_BENCH_CLUSTER_ENGINES: the engines of this part (default
  # vb,cvb0,gibbs)
  for (eng in strsplit(Sys.getenv("SPARSEVI_BENCH_CLUSTER_ENGINES", "vb,cvb0,gibbs"), ",")[[1]]) {
    args <- c(list(x, K = 100, n_batches = 8, passes = 3, seed = 1, sync = 2,
                   threads = 1, progress = FALSE), eng_args(eng, 100L))
    tl <- tc <- 0
    for (r in seq_len(reps)) {
      l0 <- load_now()
      m0 <- cpu_now()
      t_local <- system.time(b <- do.call(fit_lda, args))[["elapsed"]]
      m1 <- cpu_now()
      w0 <- workers_cpu()
      t_cl <- system.time(a <- do.call(fit_lda, c(args, list(cluster = cl))))[["elapsed"]]
      m2 <- cpu_now()
      w1 <- workers_cpu()
      tl <- tl + t_local
      tc <- tc + t_cl
      # the speed-up the CPU seconds allow when the three processes each
      # have a core of their own: the local run's CPU against the master's
      # plus the busier worker's (the workers' rounds are balanced: one
      # batch each of equal size)
      crit <- (m1 - m0) / ((m2 - m1) + max(w1 - w0))
      say("%-4s rep %d: local %.2f s (CPU %.2f s); cluster %.2f s (CPU master %.2f s, workers %s s); speed-up %.2fx elapsed, %.2fx by CPU critical path; identical fit: %s; load at start %s",
          eng, r, t_local, m1 - m0, t_cl, m2 - m1,
          paste(sprintf("%.2f", w1 - w0), collapse = " + "), t_local / t_cl, crit,
          identical(a$topic_word, b$topic_word) && identical(a$lambda, b$lambda), l0)
    }
    say("%-4s over %d reps: speed-up %.2fx (local %.1f s, cluster %.1f s); per lap sent %.2f MB, received %.2f MB (the whole K x V table to each worker of each round would be %.2f MB sent)",
        eng, reps, tl / tc, tl, tc, mean(a$trace$bytes_sent) / 1e6,
        mean(a$trace$bytes_received) / 1e6, 8 * 2 * 4 * 100 * ncol(x) / 1e6)
  }
  parallel::stopCluster(cl)
  if (requireNamespace("future", quietly = TRUE)) {
    old <- future::plan(future::multisession, workers = 2)
    invisible(future::value(future::future(.libPaths(p), globals = list(p = .libPaths()))))
    fit <- fit_named(x, 100L, "vb", n_batches = 4, passes = 3, seed = 1,
                     cluster = "future", sync = 2, progress = FALSE)
    bench_header(say, fits = list(`future, vb` = fit))
    tr <- fit$trace
    say("future multisession, 2 workers, %s %s, L = %3d: %.1f s/lap; sent %.2f MB/lap, received %.2f MB/lap; identical fit: %s",
        fit$local, fit$global, fit$L, mean(diff(c(0, tr$seconds))), mean(tr$bytes_sent) / 1e6,
        mean(tr$bytes_received) / 1e6,
        identical(fit$topic_word, fit_named(x, 100L, "vb", n_batches = 4, passes = 3,
                                            seed = 1, sync = 2, progress = FALSE)$topic_word))
    future::plan(old)
  } else {
    say("future: not installed, skipped")
  }
}

# ---- 3. peak memory: in memory against from disk, wikipara ------------------
if ("memory" %in% parts) {
  say("-- memory: one stochastic pass over wikipara, K = 20, batches of 10,000 documents; local vb, L = 8, alpha 0.1, eta 0.01, init bregman, restarts on, tau 1, kappa 0.6 (named)")
  vb_mem <- "local = 'vb', L = 8, alpha = 0.1, eta = 0.01, init = 'bregman', restarts = TRUE, step_scale = 1, tau = 1, kappa = 0.6"
  dw <- normalizePath(file.path(data_dir, "wikipara", "docword.wikipara.txt.gz"))
  vc <- normalizePath(file.path(data_dir, "wikipara", "vocab.wikipara.txt"))
  # peak resident memory of a fresh R process running `code`: from
  # /usr/bin/time -v when present, else the process's own VmHWM
  peak_of <- function(code) {
    script <- tempfile(fileext = ".R")
    writeLines(c("suppressPackageStartupMessages(library(sparsevi))", code,
                 "hwm <- grep('VmHWM', readLines('/proc/self/status'), value = TRUE)",
                 "cat(as.numeric(gsub('[^0-9]', '', hwm)) / 1024, '\\n')"), script)
    rscript <- file.path(R.home("bin"), "Rscript")
    timer <- "/usr/bin/time"
    t0 <- Sys.time()
    if (file.exists(timer)) {
      log <- tempfile()
      out <- system2(timer, c("-v", "-o", log, rscript, script), stdout = TRUE)
      rss <- grep("Maximum resident set size", readLines(log), value = TRUE)
      mb <- as.numeric(gsub("[^0-9]", "", rss)) / 1024
    } else {
      out <- system2(rscript, script, stdout = TRUE)
      mb <- as.numeric(out[length(out)])
    }
    list(mb = mb, seconds = as.numeric(difftime(Sys.time(), t0, units = "secs")))
  }
  base <- peak_of("invisible(NULL)")
  mem <- peak_of(sprintf("x <- read_uci_bow('%s', '%s'); fit <- fit_lda(x, K = 20, global = 'stochastic', %s, batch_size = 10000, passes = 1, seed = 1, progress = FALSE)", dw, vc, vb_mem))
  split <- peak_of(sprintf("src <- uci_source('%s', '%s', batch_size = 10000, shuffle = FALSE, dir = '%s')",
                           dw, vc, file.path(tempdir(), "wikisrc")))
  disk <- peak_of(sprintf("src <- uci_source('%s', '%s', batch_size = 10000, shuffle = FALSE, dir = '%s'); fit <- fit_lda(src, K = 20, global = 'stochastic', %s, batch_size = 10000, passes = 1, seed = 1, progress = FALSE)",
                          dw, vc, file.path(tempdir(), "wikisrc2"), vb_mem))
  say("R with sparsevi loaded (Matrix not loaded): %.0f MB", base$mb)
  say("in memory (read_uci_bow + fit): peak %.0f MB, %.0f s", mem$mb, mem$seconds)
  say("uci_source() one-pass split:     peak %.0f MB, %.0f s", split$mb, split$seconds)
  say("from disk (split + fit):         peak %.0f MB, %.0f s", disk$mb, disk$seconds)
  say("ratio from disk / in memory: %.2f (target <= 0.25)", disk$mb / mem$mb)
}

# ---- 4. simulated many-worker runs: processes on this machine --------------
if ("workers" %in% parts) {
  say("-- workers: nips_f20 first 600 documents, K = 50, vb L = 8, memoized, 12 batches, 2 laps (vb's settings named)")
  x <- nips()[1:600, ]
  for (W in c(1L, 2L, 4L, 6L)) {
    cl <- parallel::makePSOCKcluster(W)
    parallel::clusterCall(cl, function(p) .libPaths(p), .libPaths())
    t <- cpu(fit <- fit_named(x, 50L, "vb", n_batches = 12, passes = 2, seed = 1,
                              cluster = cl, sync = W, progress = FALSE))
    if (W == 1L) bench_header(say, fits = list(workers = fit))
    tr <- fit$trace
    say("%d workers: %.2f s/lap, sent %.2f MB/lap, received %.2f MB/lap", W,
        mean(diff(c(0, tr$seconds))), mean(tr$bytes_sent) / 1e6,
        mean(tr$bytes_received) / 1e6)
    parallel::stopCluster(cl)
  }
}

# ---- 5. projection: wikipara at K = 1000 on 4, 16 and 64 workers ----------
# Measured here, per batch of wikipara paragraphs at K = 1000 (one thread):
# the local step's compute c (vb L = 8, SCVB0 and SCVB0 with L = 32, the
# shape form of its sparse summaries, from start-like topics:
# Gamma(100, 100) + eta, as the first lap sees them); the bytes a worker
# receives (its columns of the topics, packed and serialised as the
# executor sends them) and returns (its summary and document proportions);
# the master's serialisation time s of both; and the master's global step g
# (summary blocks and the in-place store update at the batch's words, the
# same O(K x batch vocabulary) work as on the whole table). No K x V table
# is built: a worker's columns are all a local step reads. Model, one batch
# per worker per round (sync = W), every worker's message through the
# master's link:
#   round(W) = c + s + W (s + bytes / bandwidth + g) + latency
#   speed-up(W) = W (c + g) / round(W)     (against one process, one thread)
# A second model, of the topics sharded by word over the workers
# (sparsevi_workers(shard_topics = TRUE), R/executor-sharded.R; written as a
# design before it was built, notes/architecture.md §6),
# which keep them between rounds and send each other columns and summaries
# directly, each on its own link (a non-blocking switch). Per round a worker
# pulls its batch's columns from their owners and pushes its summary to
# them, and as an owner serves about as much to the others (every worker
# the same on average), so each link carries the bytes above each way; it
# serialises its own messages and the ones it serves (2 s); it applies the
# round's W global steps to its 1/W of the words (g); K totals per batch go
# to every worker; three latencies (the master's call, pull, push). Once a
# lap the master gathers the topics (the fit) and sends them back: 2 x 8KV
# bytes over its link, spread over the lap's N / (W x batch) rounds (an
# upper bound: the workers keep their columns from lap to lap, so after the
# first lap only the gather remains):
#   round_sharded(W) = c + 2 s + bytes / bandwidth + g + 8 K W / bandwidth
#                      + 3 latency + 2 (8 K V / bandwidth) W batch / N
if ("project" %in% parts) {
  say("-- project: wikipara, K = 1000, per batch of paragraphs (one thread, CPU seconds); 10 Gb/s, latency 1 ms per round")
  ns <- asNamespace("sparsevi")
  dw <- normalizePath(file.path(data_dir, "wikipara", "docword.wikipara.txt.gz"))
  vc <- normalizePath(file.path(data_dir, "wikipara", "vocab.wikipara.txt"))
  src <- uci_source(dw, vc, batch_size = 10000, shuffle = FALSE,
                    dir = file.path(tempdir(), "wikiproj"))
  V <- ncol(src)
  K <- 1000L
  loadNamespace("Matrix")
  bandwidth <- 10e9 / 8
  latency <- 1e-3
  # controls as fit_lda() makes them (a tiny corpus: only the controls are kept)
  tiny <- simulate_lda(D = 50, V = 1200, K = 3, seed = 1)$dtm
  controls <- list(
    vb = fit_named(tiny, K, "vb", global = "stochastic", init = "random",
                   passes = 1, seed = 1, progress = FALSE)$control,
    cvb0 = fit_named(tiny, K, "cvb0", init = "random", passes = 1, seed = 1,
                     progress = FALSE)$control,
    # SCVB0's sparse summaries, the shape form (?scvb0, "Sparse summaries")
    cvb0_L32 = fit_named(tiny, K, "cvb0", init = "random", passes = 1, seed = 1, L = 32,
                         sparse_rest = "shape", progress = FALSE)$control)
  for (nm in names(controls)) {
    say("   settings that ran [%s]: %s", nm,
        bench_settings(structure(list(control = controls[[nm]]), class = "sparsevi_lda")))
  }
  # CPU seconds (user + system) of this process: on a shared machine the
  # elapsed seconds also count the other processes' share of the cores
  timed <- function(expr) {
    t0 <- proc.time()
    val <- force(expr)
    t <- proc.time() - t0
    list(value = val, seconds = t[["user.self"]] + t[["sys.self"]])
  }
  for (size in c(1000L, 10000L)) {
    b0 <- ns$source_batch(src, 1L)
    batch <- if (size < nrow(b0)) ns$dtm_subset(b0, seq_len(size)) else b0
    cols <- ns$batch_columns(batch)
    U <- cols$vocab
    local_batch <- ns$batch_in_columns(batch, cols, U)
    set.seed(1)
    X <- matrix(stats::rgamma(K * length(U), 100, 100), K, length(U))
    tot <- rep(as.double(V), K) # about a start's totals (V entries of mean 1)
    for (eng in names(controls)) {
      ctl <- controls[[eng]]
      ctl$n_docs <- 60000
      ctl$n_tokens <- 60000 * sum(batch$count) / nrow(batch)
      state <- if (eng == "vb") {
        bench_lda_state(store = list(X = X, meta = c(1, 0, tot), offset = ctl$eta, V = V), t = 0L)
      } else {
        bench_lda_state(store = list(X = X, meta = c(1, 0, tot), eta = ctl$eta, V = V), t = 0L)
      }
      shared <- list(state = state, control = ns$shared_for_workers(list(control = ctl))$control)
      seed <- ns$lda_batch_seed(ctl$seed, 1L, 1L)
      step <- timed(ns$lda_batch_step(local_batch, seed, state, ctl))
      res <- step$value
      # (the best of 3: the machine is shared)
      outs <- lapply(1:3, function(i) timed({
        a <- ns$wire(ns$pack_doubles(shared))
        b <- ns$wire(ns$pack_doubles(list(res)))
        list(sent = length(a), received = length(b),
             back = ns$unpack_doubles(unserialize(b)))
      }))
      out <- outs[[1]]
      ser <- min(vapply(outs, `[[`, 1, "seconds"))
      g <- min(vapply(1:5, function(i) {
        st <- ns$lda_store_counts(X, 0) # a store of the batch's columns
        timed({
          # (the shape form's summary becomes K values per word under the
          # topics first, as lda_global_cvb0_lazy() does)
          shape <- !methods::is(res$summary, "dgCMatrix") && !is.null(res$summary$r)
          S <- if (!shape) ns$lda_summary_blocks(res$summary, K) else
            ns$cvb0_shape_parts(res$summary, X, c(ctl$eta, 1), tot)
          ns$lda_store_update(st, S, 0.5, 10, 1)
        })$seconds
      }, 1))
      c1 <- step$seconds
      bytes <- out$value$sent + out$value$received
      say("%-8s batch %5d paragraphs: vocabulary %6d of %d; compute c %.2f s; sent %.1f MB, received %.1f MB (the whole table: %.0f MB); master serialisation %.3f s, global step %.3f s",
          eng, size, length(U), V, c1, out$value$sent / 1e6, out$value$received / 1e6,
          8 * K * V / 1e6, ser, g)
      proj <- vapply(c(4L, 16L, 64L), function(W) {
        # (a worker serialises its own messages too: one more s)
        round_t <- c1 + ser + W * (ser + bytes / bandwidth + g) + latency
        W * (c1 + g) / round_t
      }, 1)
      say("%-8s batch %5d: projected speed-up at 4 / 16 / 64 workers: %.1fx / %.1fx / %.1fx",
          eng, size, proj[1], proj[2], proj[3])
      if (eng != "vb") {
        n_docs <- nrow(src)
        sharded <- vapply(c(4L, 16L, 64L), function(W) {
          round_t <- c1 + 2 * ser + bytes / bandwidth + g + 8 * K * W / bandwidth +
            3 * latency + 2 * (8 * K * V / bandwidth) * W * size / n_docs
          W * (c1 + g) / round_t
        }, 1)
        say("%-8s batch %5d: topics sharded by word, worker-to-worker (the design's model; the built executor: part sharded; %d paragraphs a lap): %.1fx / %.1fx / %.1fx",
            eng, size, n_docs, sharded[1], sharded[2], sharded[3])
      }
    }
  }
}

# ---- 6. the sharded executor as built: wikipara at K = 1000 ----------------
# A model of sparsevi_workers(shard_topics = TRUE) (R/executor-sharded.R) at
# 4, 16 and 64 workers, from inputs measured here on the code that runs
# there, with the topics after one lap over all the paragraphs (a trained
# state: which entries are +0 sets the bytes of the columns; the second
# lap's columns; SPARSEVI_SCALE_LAPS = n: after n laps, the columns of lap
# n + 1) and a batch of paragraphs drawn at random (a shuffled source's
# seventh). Per round each of W workers runs one batch. As a runner it gathers its batch's columns
# ((W - 1) / W of them from their owners, ffi_lda_shard_gather), runs the
# local step (c), cuts its summary by owner with the row sums
# (ffi_lda_shard_split, ffi_lda_summary_rowsums) and sends each owner its
# part; as an owner it takes the columns the round's runners need
# (lda_columns_take(): about one batch's vocabulary a round over all of
# them) and applies the round's W steps to its 1/W of the words (about one
# batch's global step, g). Per worker and round:
#   bytes  = (W - 1) / W x (columns + summary parts), each way
#   round(W) = c + take + gather + split + g + (W - 1) / W x serialise
#              + bytes x tau + bytes / bandwidth + 3 latency
#              + W x (result + (1 - 1 / W)^W x moved) x (tau + 1 / bandwidth)
#                                              [the master's link, one worker after another]
#              + 2 T (tau + 1 / bandwidth) / (N / (W b))        [the lap's ends]
#   speed-up(W) = W (c + g) / round(W)   (one process, one thread: c + g a batch)
# with tau the CPU seconds per byte that nanonext's push/pull costs sender
# and receiver together (measured here over TCP on the loopback: a link
# between hosts costs the hosts at least as much), serialise the wire() and
# unserialize() of the columns and summary parts, T the bytes of the whole
# table as lda_columns_take() sends it at each lap's start and end, N the
# corpus's paragraphs and b a batch's. The network: 10 Gb/s, 1 ms per
# message phase (the master's call, the columns, the summaries). Each row is
# also given with the columns dense (every entry other than +0: an upper
# bound on their bytes, what a fit long past its first lap approaches).
if ("sharded" %in% parts) {
  laps <- as.integer(Sys.getenv("SPARSEVI_SCALE_LAPS", "1"))
  # the batch sizes modelled (a fit from disk steps in 100 by default, as in
  # memory: fit_lda()'s batch_size)
  sizes <- as.integer(strsplit(Sys.getenv("SPARSEVI_SCALE_SIZES", "1000,10000"), ",")[[1]])
  stopifnot(length(sizes) > 0L, !anyNA(sizes), all(sizes >= 1L))
  say("-- sharded: the executor as built (sparsevi_workers(shard_topics = TRUE)), wikipara, K = 1000; topics after %d lap%s over all its paragraphs; CPU seconds, one thread; 10 Gb/s, latency 1 ms per message phase",
      laps, if (laps == 1L) "" else "s")
  if (!requireNamespace("nanonext", quietly = TRUE)) stop("part sharded needs nanonext (mirai's transport)")
  ns <- asNamespace("sparsevi")
  timed <- function(expr) {
    t0 <- proc.time()
    val <- force(expr)
    t <- proc.time() - t0
    list(value = val, seconds = t[["user.self"]] + t[["sys.self"]])
  }
  best <- function(n, f) { # (the least CPU of n runs: the machine is shared)
    r <- lapply(seq_len(n), function(i) timed(f()))
    r[[which.min(vapply(r, `[[`, 1, "seconds"))]]
  }
  bandwidth <- 10e9 / 8
  latency <- 1e-3
  K <- 1000L
  # (this process keeps the memory it frees, as the workers of
  # sparsevi_workers() do: worker_keep_memory())
  ns$worker_keep_memory()
  # tau: nanonext push/pull over TCP on the loopback, sender and receiver in
  # this process (its CPU seconds count both), 20 messages of 20 MB
  tau <- local({
    pull <- nanonext::socket("pull", listen = "tcp://127.0.0.1:0")
    port <- nanonext::opt(pull$listener[[1L]], "tcp-bound-port")
    push <- nanonext::socket("push", dial = sprintf("tcp://127.0.0.1:%d", port))
    on.exit({ close(push); close(pull) })
    set.seed(1)
    msg <- as.raw(sample.int(256L, 20e6, replace = TRUE) - 1L)
    n <- 20L
    r <- best(3, function() {
      for (i in seq_len(n)) {
        a <- nanonext::send_aio(push, msg, mode = "raw")
        got <- nanonext::recv(pull, mode = "raw", block = 60000L)
        nanonext::call_aio(a)
        stopifnot(length(got) == length(msg))
      }
    })
    r$seconds / (n * length(msg))
  })
  say("   tau (nanonext push/pull, TCP loopback, sender + receiver): %.2f s per GB", tau * 1e9)
  dw <- normalizePath(file.path(data_dir, "wikipara", "docword.wikipara.txt.gz"))
  vc <- normalizePath(file.path(data_dir, "wikipara", "vocab.wikipara.txt"))
  # (batches of documents drawn at random, as a fit in memory and a source by
  # default make them: a run of consecutive paragraphs shares more words, 13%
  # fewer distinct ones in 10,000 and 20% in 1,000, and would understate the
  # columns' bytes; runs before 2026-11-29 measured consecutive ones)
  src <- uci_source(dw, vc, batch_size = 10000, shuffle = TRUE, seed = 1,
                    dir = file.path(tempdir(), "wikiproj"))
  # (the lap that makes the topics runs in the default call's batches of 100)
  train <- uci_source(dw, vc, batch_size = 100, shuffle = TRUE, seed = 1,
                      dir = file.path(tempdir(), "wikiproj100"))
  V <- ncol(src)
  N <- nrow(src)
  stopifnot(ncol(train) == V, nrow(train) == N)
  say("   %d paragraphs, V = %d", N, V)
  later <- ns$source_batch(src, 7L) # 10,000 paragraphs drawn at random
  systems <- list(
    default = list(),
    L8_renormalise = list(L = 8L, sparse_rest = "renormalise"))
  systems <- systems[strsplit(Sys.getenv("SPARSEVI_SCALE_SYSTEMS", paste(names(systems), collapse = ",")),
                              ",")[[1]]]
  stopifnot(length(systems) > 0L, !anyNA(names(systems)))
  for (nm in names(systems)) {
    fit <- do.call(fit_named, c(list(train, K, "cvb0", passes = laps, seed = 1, background = 0,
                                     progress = FALSE), systems[[nm]]))
    say("   settings that ran [%s]: %s", nm, bench_settings(fit))
    ctl <- fit$control
    eta <- ctl$eta
    lam <- fit$lambda
    fit <- NULL
    stopifnot(nrow(lam) == K, ncol(lam) == V)
    # the store's table: lambda - eta, +0 where lambda is eta (never touched)
    Xall <- lam - eta
    Xall[lam == eta] <- 0
    lam <- NULL
    tot <- rowSums(Xall)
    nz_all <- mean(Xall != 0)
    T_bytes <- as.double(length(ns$wire(ns$lda_columns_take(Xall, seq_len(V)))))
    say("   [%s] the whole table: %.1f%% of its entries other than +0; %.0f MB as a lap's start or end sends it (dense: %.0f MB)",
        nm, 100 * nz_all, T_bytes / 1e6, 8 * K * V / 1e6)
    for (size in sizes) {
      batch <- if (size < nrow(later)) ns$dtm_subset(later, seq_len(size)) else later
      cols <- ns$batch_columns(batch)
      U <- cols$vocab
      local_batch <- ns$batch_in_columns(batch, cols, U)
      XU <- ns$lda_table_columns(Xall, U)
      state <- bench_lda_state(store = list(X = XU, meta = c(1, 0, tot), eta = eta, V = V),
                               t = 0L)
      seed <- ns$lda_batch_seed(ctl$seed, 1L, 1L)
      step <- best(5, function() ns$lda_batch_step(local_batch, seed, state, ctl))
      res <- step$value
      c1 <- step$seconds
      # the owners' side: the columns taken (both forms), their bytes
      forms <- list(trained = XU, dense = XU + (XU == 0) * 1e-3)
      msgs <- lapply(forms, function(X) {
        tk <- best(5, function() ns$lda_columns_take(X, seq_along(U)))
        raw <- ns$wire(list(kind = "columns", id = 1L, from = 1L, cols = tk$value))
        ser <- best(5, function() ns$wire(list(kind = "columns", id = 1L, from = 1L, cols = tk$value)))$seconds +
          best(5, function() unserialize(raw))$seconds
        ga <- best(5, function() .Call(ns$ffi_lda_shard_gather, length(U), matrix(0, K, 0L),
                                       integer(0), integer(0), list(tk$value), list(seq_along(U))))
        stopifnot(identical(ga$value, X))
        list(take = tk$seconds, gather = ga$seconds, bytes = as.double(length(raw)), ser = ser,
             nz = mean(X != 0))
      })
      # the runner's summary, cut by owner for W workers
      full <- ns$lda_columns_result(res, U, V)
      sh <- ns$cvb0_shard$step(state, full, ctl, 0, K)
      S <- sh$summary
      sh$summary <- NULL
      parts_of <- function(W) {
        sp <- best(3, function() {
          ssum <- .Call(ns$ffi_lda_summary_rowsums, S, K)
          list(ssum = ssum, by = .Call(ns$ffi_lda_shard_split, S, K, as.integer(W)))
        })
        msgs <- lapply(sp$value$by, function(p) {
          list(kind = "summaries", id = 1L, from = 1L,
               steps = list(c(sh, list(ssum = sp$value$ssum, pos = 1L, part = p))))
        })
        raws <- lapply(msgs, ns$wire)
        ser <- best(3, function() lapply(msgs, ns$wire))$seconds +
          best(3, function() lapply(raws, unserialize))$seconds
        list(split = sp$seconds, bytes = sum(as.double(lengths(raws))), ser = ser)
      }
      # g: one batch's global step (the owners' W steps on 1/W of the words
      # each add up to it; the local run takes it too)
      sl <- ns$cvb0_shard$step(state, res, ctl, 0, K)
      g <- min(vapply(1:5, function(i) {
        st <- ns$lda_store_counts(XU, 0)
        timed(ns$lda_store_update(st, sl$summary, sl$rho, sl$mult, 1))$seconds
      }, 1))
      res$summary <- NULL
      # what a worker returns the master for the batch: in a lap that keeps
      # the documents' proportions (the last, or every lap under a stopping
      # rule) their top shares, in the others none
      result_of <- function(r) {
        as.double(length(ns$wire(list(results = list(r), meta = c(1, 0, tot), rho = 0.5,
                                      sent = 0, received = 0))))
      }
      kept <- ns$lda_result_top_share(res, c(ctl$doc_topics, ctl$alpha))
      result_bytes <- result_of(kept)
      res$doc_topic <- NULL
      # a batch whose home worker already runs one of the round's batches
      # runs elsewhere, its documents sent by the master (shard_runners():
      # of W batches in a random order, (1 - 1 / W)^W of them on average)
      moved_bytes <- as.double(length(ns$wire(ns$batch_without_terms(batch))))
      say("   [%s] batch %5d paragraphs: vocabulary %6d; c %.3f s, g %.3f s; summary %s; result to the master %.3f MB in a lap that keeps the proportions (%d topics a document), %.3f MB in the others",
          nm, size, length(U), c1, g, if (!is.null(S$p)) "sparse" else "dense", result_bytes / 1e6,
          as.integer(ctl$doc_topics), result_of(res) / 1e6)
      for (form in names(msgs)) {
        m <- msgs[[form]]
        proj <- vapply(c(4L, 16L, 64L), function(W) {
          p <- parts_of(W)
          share <- (W - 1) / W
          bytes <- share * (m$bytes + p$bytes)
          rounds <- N / (W * size)
          round_t <- c1 + m$take + m$gather + p$split + g + share * (m$ser + p$ser) +
            bytes * tau + bytes / bandwidth + 3 * latency +
            W * (result_bytes + (1 - 1 / W)^W * moved_bytes) * (tau + 1 / bandwidth) +
            2 * (if (form == "dense") 8 * K * V else T_bytes) * (tau + 1 / bandwidth) / rounds
          c(W * (c1 + g) / round_t, bytes / 1e6, round_t)
        }, c(0, 0, 0))
        if (form == "trained") say("   [%s] batch %5d: the documents of a batch run away from home %.2f MB", nm, size, moved_bytes / 1e6)
        say("   [%s] batch %5d, columns %-7s (%.1f%% other than +0): take %.3f s, gather %.3f s, columns %.1f MB, serialise %.3f s; per worker and round at 4 / 16 / 64 workers: %.1f / %.1f / %.1f MB each way, %.3f / %.3f / %.3f s; projected speed-up %.1fx / %.1fx / %.1fx",
            nm, size, form, 100 * m$nz, m$take, m$gather, m$bytes / 1e6, m$ser,
            proj[2, 1], proj[2, 2], proj[2, 3], proj[3, 1], proj[3, 2], proj[3, 3],
            proj[1, 1], proj[1, 2], proj[1, 3])
      }
    }
    Xall <- NULL
    gc()
  }
}

# ---- 7. fits from disk: the batches' order and size ------------------------
# The first 20,000 Wikipedia paragraphs, 1,000 held out (split_heldout(n_test
# = 1000, seed = 1)); the other 19,000 written as a UCI file and read back by
# uci_source() in batch files of 100, 1,000 and 10,000 documents, in the
# file's order (shuffle = FALSE: paragraphs article by article) and drawn at
# random (shuffle = TRUE, seed = 1). Each source trains the default engine
# with every setting named (SCVB0, stochastic, alpha 0.1, eta 0.01, tau 1,
# kappa 0.6, the start fit_lda() takes: lda_default_init()), one pass at K =
# 1000 and ten at K = 100, in steps of 100 documents within the files (its
# default minibatch, named: batch_size = 100) and, for the larger files, in
# steps of a whole file (batch_size = the file's, what a fit from disk did
# before 2026-11-29), beside the fit in memory (minibatches of 100, drawn at
# random); held-out score by heldout_loglik(), wall seconds of the fit
# (uci_source() apart), the fit's own batch_size and n_batches.
if ("disk" %in% parts) {
  say("-- disk: fits from uci_source() against the fit in memory, wikipara20000 (1,000 held out); SCVB0 stochastic, alpha 0.1, eta 0.01, tau 1, kappa 0.6, step_scale 1, background 0 (named)")
  source(file.path(bench_dir, "bench-data.R"))
  ns <- asNamespace("sparsevi")
  x <- bench_corpus("wikipara20000", data_dir)
  sp <- split_heldout(x, n_test = 1000, seed = 1)
  tr <- sp$train
  d <- file.path(tempdir(), "disk")
  dir.create(d, showWarnings = FALSE)
  dw <- file.path(d, "docword.train.txt.gz")
  vc <- file.path(d, "vocab.train.txt")
  write_uci_bow(tr, dw, vc)
  say("   %d training documents, V = %d; %d held out", nrow(tr), ncol(tr), nrow(sp$test$observed))
  fit_with <- function(data, K, passes, step = 100L) {
    args <- list(data, K = K, local = "cvb0", global = "stochastic", alpha = 0.1, eta = 0.01,
                 tau = 1, kappa = 0.6, step_scale = 1, background = 0, batch_size = step,
                 init = ns$lda_default_init("cvb0", K, ncol(tr), sum(tr$count)),
                 passes = passes, seed = 1, threads = 1, progress = FALSE)
    t <- system.time(f <- do.call(fit_lda, args))
    list(fit = f, seconds = t[["elapsed"]])
  }
  for (K in c(1000L, 100L)) {
    passes <- if (K == 1000L) 1L else 10L
    mem <- fit_with(tr, K, passes)
    say("   K = %4d, %2d lap(s): in memory, minibatches of %d drawn at random: held-out %.4f, %.1f s; settings: %s",
        K, passes, mem$fit$control$batch_size, heldout_loglik(mem$fit, sp$test), mem$seconds,
        bench_settings(mem$fit))
    for (shuffle in c(FALSE, TRUE)) for (size in c(100L, 1000L, 10000L)) {
      t <- system.time(src <- uci_source(dw, vc, batch_size = size, shuffle = shuffle, seed = 1,
                                         dir = tempfile("disk", d)))
      for (step in unique(c(100L, size))) {
        r <- fit_with(src, K, passes, step)
        say("   K = %4d, %2d lap(s): from disk, files of %5d %-16s steps of %5d (%4d a lap): held-out %.4f, %.1f s (uci_source() %.1f s)",
            K, passes, size, if (shuffle) "drawn at random," else "in file order,",
            r$fit$control$batch_size, r$fit$control$n_batches, heldout_loglik(r$fit, sp$test),
            r$seconds, t[["elapsed"]])
      }
      unlink(src$dir, recursive = TRUE)
    }
  }
}
