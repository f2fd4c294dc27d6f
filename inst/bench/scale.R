# Benchmark of issue "Scale": threads, an R cluster, corpora on disk.
# Run from the package root with sparsevi installed:
#   nice -n 10 Rscript inst/bench/scale.R [parts]
# parts: any of threads,cluster,memory,workers (default all). Data from
# ../shared/data (SPARSEVI_DATA overrides). Results to
# inst/bench/results/scale.txt (appended per part). Figures are ratios
# measured in one run: absolute times on a shared machine are noisy.
suppressPackageStartupMessages(library(sparsevi))
args <- commandArgs(trailingOnly = TRUE)
parts <- if (length(args)) strsplit(args[1], ",")[[1]] else
  c("threads", "cluster", "memory", "workers")
data_dir <- Sys.getenv("SPARSEVI_DATA", "../shared/data")
out_file <- "inst/bench/results/scale.txt"
dir.create(dirname(out_file), showWarnings = FALSE, recursive = TRUE)
say <- function(...) {
  line <- sprintf(...)
  cat(line, "\n", sep = "")
  cat(line, "\n", sep = "", file = out_file, append = TRUE)
}
cpu <- function(expr) {
  t0 <- proc.time()
  force(expr)
  t <- proc.time() - t0
  c(elapsed = t[["elapsed"]], cpu = t[["user.self"]] + t[["sys.self"]])
}
say("== scale benchmark, %s, R %s, commit %s, load %s", format(Sys.time()),
    getRversion(), tryCatch(system("git rev-parse --short HEAD", intern = TRUE),
                            error = function(e) "?"),
    paste(readLines("/proc/loadavg", warn = FALSE), collapse = " "))

nips <- function() {
  read_uci_bow(file.path(data_dir, "nips_f20", "docword.nips_f20.txt.gz"),
               file.path(data_dir, "nips_f20", "vocab.nips_f20.txt"))
}

# ---- 1. threads: local steps on 1 and 2 threads, wall-clock ratio ----------
if ("threads" %in% parts) {
  say("-- threads: elapsed seconds with 1 and 2 threads (best of 3) and speed-up")
  x <- nips()[1:600, ]
  topics <- fit_lda(x, K = 100, L = 8, passes = 1, seed = 1, progress = FALSE)
  best <- function(f) min(replicate(3, cpu(f())[["elapsed"]]))
  time_engine <- function(name, f) {
    t1 <- best(function() f(1L))
    t2 <- best(function() f(2L))
    say("%-34s 1 thread %7.3fs  2 threads %7.3fs  speed-up %.2fx", name, t1, t2, t1 / t2)
  }
  ns <- asNamespace("sparsevi")
  state <- topics$state
  ctl <- topics$control
  time_engine("lda local vb, L = 8, K = 100", function(th) {
    ctl$threads <- th
    ns$lda_local_vb(x, state, ctl, c(0, 1), th)
  })
  time_engine("lda local vb, dense, K = 100", function(th) {
    c2 <- ctl
    c2$L <- 100L
    ns$lda_local_vb(x, state, c2, c(0, 1), th)
  })
  time_engine("heldout completion, K = 100", function(th) {
    heldout_loglik(topics, x, threads = th)
  })
  # the local steps of the other engines, from a fitted state (compute-bound)
  for (eng in c("cvb0", "gibbs", "ope")) {
    glob <- if (eng == "ope") "ml" else "stochastic"
    f_eng <- fit_lda(x, K = 100, local = eng, global = glob, passes = 1, seed = 1,
                     progress = FALSE)
    fun <- get(paste0("lda_local_", eng), envir = ns)
    time_engine(sprintf("lda local %s, K = 100", eng), function(th) {
      fun(x, f_eng$state, f_eng$control, c(0, 1), th)
    })
  }
  time_engine("fit_lda cvb0, 1 pass, K = 100", function(th) {
    fit_lda(x, K = 100, local = "cvb0", passes = 1, seed = 1, threads = th,
            progress = FALSE)
  })
  time_engine("fit_lda gibbs, 1 pass, K = 100", function(th) {
    fit_lda(x, K = 100, local = "gibbs", passes = 1, seed = 1, threads = th,
            progress = FALSE)
  })
  if (!is.null(get0("lda_local_ope", envir = ns))) {
    time_engine("fit_lda ope (ml), 1 pass, K = 100", function(th) {
      fit_lda(x, K = 100, local = "ope", global = "ml", passes = 1, seed = 1,
              threads = th, progress = FALSE)
    })
  }
  sim <- simulate_mixture(N = 40000, D = 10, K = 20, seed = 1)
  time_engine("fit_mixture gaussian, N=4e4 D=10 K=20", function(th) {
    fit_mixture(sim$X, K = 20, passes = 3, seed = 1, threads = th, progress = FALSE)
  })
  fm <- fit_mixture(sim$X, K = 20, passes = 3, seed = 1, progress = FALSE)
  time_engine("mixture responsibilities, N=4e4 K=20", function(th) {
    predict(fm, sim$X, type = "responsibilities", threads = th)
  })
  fv <- fit_vdp(sim$X, max_K = 20, seed = 1, progress = FALSE)
  time_engine("vdp predict density, N=4e4", function(th) {
    predict(fv, sim$X, type = "density", threads = th)
  })
  time_engine("fit_vdp kdtree = FALSE, N=4e4 D=10", function(th) {
    fit_vdp(sim$X, kdtree = FALSE, max_K = 20, seed = 1, threads = th, progress = FALSE)
  })
}

# ---- 2. a 2-worker cluster: seconds and bytes per lap, sparse vs dense ------
# Where the time goes: CPU seconds of the master and of the workers per lap
# (elapsed seconds on a shared 2-core machine mostly measure the other load).
if ("cluster" %in% parts) {
  say("-- cluster: nips_f20, K = 100, memoized, 4 batches, 3 laps")
  x <- nips()
  cl <- parallel::makePSOCKcluster(2L)
  parallel::clusterCall(cl, function(p) .libPaths(p), .libPaths())
  parallel::clusterCall(cl, function() {
    loadNamespace("sparsevi")
    loadNamespace("Matrix")
    NULL
  })
  cpu_now <- function() sum(proc.time()[c("user.self", "sys.self")])
  workers_cpu <- function() {
    sum(unlist(parallel::clusterCall(cl, function() sum(proc.time()[c("user.self", "sys.self")]))))
  }
  for (L in c(8L, 100L)) {
    # lap 1 (initialisation) outside the measured laps
    fit1 <- fit_lda(x, K = 100, L = L, n_batches = 4, passes = 1, seed = 1, cluster = cl,
                    sync = 2, progress = FALSE)
    m0 <- cpu_now()
    w0 <- workers_cpu()
    fit <- update(fit1, x, passes = 3, cluster = cl, progress = FALSE)
    m1 <- cpu_now()
    w1 <- workers_cpu()
    tr <- fit$trace[-1, ]
    say("cluster 2 workers, L = %3d: %.1f s/lap (CPU: master %.2f s/lap, workers %.2f s/lap); sent %.2f MB/lap, received %.2f MB/lap",
        L, mean(diff(fit$trace$seconds)), (m1 - m0) / 3, (w1 - w0) / 3,
        mean(tr$bytes_sent) / 1e6, mean(tr$bytes_received) / 1e6)
    fit01 <- fit_lda(x, K = 100, L = L, n_batches = 4, passes = 1, seed = 1, sync = 2,
                     progress = FALSE)
    m0 <- cpu_now()
    fit0 <- update(fit01, x, passes = 3, progress = FALSE)
    m1 <- cpu_now()
    say("no cluster,        L = %3d: %.1f s/lap (CPU %.2f s/lap); identical fit: %s", L,
        mean(diff(fit0$trace$seconds)), (m1 - m0) / 3,
        identical(fit0$topic_word, fit$topic_word) && identical(fit0$lambda, fit$lambda))
  }
  parallel::stopCluster(cl)
  if (requireNamespace("future", quietly = TRUE)) {
    old <- future::plan(future::multisession, workers = 2)
    invisible(future::value(future::future(.libPaths(p), globals = list(p = .libPaths()))))
    fit <- fit_lda(x, K = 100, L = 8, n_batches = 4, passes = 3, seed = 1,
                   cluster = "future", sync = 2, progress = FALSE)
    tr <- fit$trace
    say("future multisession, 2 workers, L =   8: %.1f s/lap; sent %.2f MB/lap, received %.2f MB/lap; identical fit: %s",
        mean(diff(c(0, tr$seconds))), mean(tr$bytes_sent) / 1e6,
        mean(tr$bytes_received) / 1e6,
        identical(fit$topic_word, fit_lda(x, K = 100, L = 8, n_batches = 4, passes = 3,
                                          seed = 1, sync = 2, progress = FALSE)$topic_word))
    future::plan(old)
  } else {
    say("future: not installed, skipped")
  }
}

# ---- 3. peak memory: in memory against from disk, wikipara ------------------
if ("memory" %in% parts) {
  say("-- memory: one stochastic pass over wikipara, K = 20, batches of 10,000 documents")
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
  mem <- peak_of(sprintf("x <- read_uci_bow('%s', '%s'); fit <- fit_lda(x, K = 20, global = 'stochastic', batch_size = 10000, passes = 1, seed = 1, progress = FALSE)", dw, vc))
  split <- peak_of(sprintf("src <- uci_source('%s', '%s', batch_size = 10000, dir = '%s')",
                           dw, vc, file.path(tempdir(), "wikisrc")))
  disk <- peak_of(sprintf("src <- uci_source('%s', '%s', batch_size = 10000, dir = '%s'); fit <- fit_lda(src, K = 20, global = 'stochastic', passes = 1, seed = 1, progress = FALSE)",
                          dw, vc, file.path(tempdir(), "wikisrc2")))
  say("R with sparsevi loaded (Matrix not loaded): %.0f MB", base$mb)
  say("in memory (read_uci_bow + fit): peak %.0f MB, %.0f s", mem$mb, mem$seconds)
  say("uci_source() one-pass split:     peak %.0f MB, %.0f s", split$mb, split$seconds)
  say("from disk (split + fit):         peak %.0f MB, %.0f s", disk$mb, disk$seconds)
  say("ratio from disk / in memory: %.2f (target <= 0.25)", disk$mb / mem$mb)
}

# ---- 4. simulated many-worker runs: processes on this machine --------------
if ("workers" %in% parts) {
  say("-- workers: nips_f20 first 600 documents, K = 50, L = 8, memoized, 12 batches, 2 laps")
  x <- nips()[1:600, ]
  for (W in c(1L, 2L, 4L, 6L)) {
    cl <- parallel::makePSOCKcluster(W)
    parallel::clusterCall(cl, function(p) .libPaths(p), .libPaths())
    t <- cpu(fit <- fit_lda(x, K = 50, L = 8, n_batches = 12, passes = 2, seed = 1,
                            cluster = cl, sync = W, progress = FALSE))
    tr <- fit$trace
    say("%d workers: %.2f s/lap, sent %.2f MB/lap, received %.2f MB/lap", W,
        mean(diff(c(0, tr$seconds))), mean(tr$bytes_sent) / 1e6,
        mean(tr$bytes_received) / 1e6)
    parallel::stopCluster(cl)
  }
}
