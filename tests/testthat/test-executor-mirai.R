# Persistent workers over mirai daemons (sparsevi_workers()): two daemons
# on this machine, the fits equal to the local ones with the same sync, the
# same traffic as a `parallel` cluster, several fits on the same workers,
# daemons started by a launcher at TCP addresses, and a worker that dies.

test_that("fits on persistent workers equal the local fits, with a PSOCK cluster's traffic", {
  skip_on_cran()
  skip_if_not_installed("mirai")
  vars <- names(sparsevi:::worker_env)
  expect_setequal(vars, c("R_VSIZE", "OMP_WAIT_POLICY"))
  before <- Sys.getenv(vars, unset = NA)
  w <- sparsevi_workers(2)
  on.exit(close(w), add = TRUE)
  expect_s3_class(w, "sparsevi_workers")
  # the daemons start with the larger heap trigger and the passive OpenMP
  # wait policy (or this session's own values), and this session's
  # environment is as it was
  expect_identical(Sys.getenv(vars, unset = NA), before)
  want <- ifelse(is.na(before), sparsevi:::worker_env[vars], before)
  for (wk in w) {
    got <- mirai::mirai(Sys.getenv(vars, unset = NA), vars = vars, .compute = wk$profile)[]
    expect_identical(unname(got), unname(want))
  }
  expect_length(w, 2L)
  pids <- vapply(w, function(x) x$pid, 0)
  expect_true(all(pids != Sys.getpid()) && pids[1] != pids[2])
  x <- cluster_corpus()
  # the default engine and vb, memoized and stochastic
  for (args in list(list(), list(local = "vb", L = 2, global = "memoized"))) {
    args <- c(list(x, K = 4, n_batches = 4, passes = 3, seed = 9, sync = 2, progress = FALSE),
              args)
    a <- do.call(fit_lda, c(args, list(cluster = w)))
    b <- do.call(fit_lda, args)
    expect_same_lda(a, b)
    expect_true(all(a$trace$bytes_sent > 0) && all(a$trace$bytes_received > 0))
  }
  # the same workers serve the next call: update() equals the local update()
  expect_same_lda(update(a, x, passes = 2, cluster = w, progress = FALSE),
                  update(b, x, passes = 2, progress = FALSE))
  # each fit's batches are freed on the workers when it ends
  left <- lapply(w, function(wk) {
    mirai::mirai(ls(asNamespace("sparsevi")$worker_store), .compute = wk$profile)[]
  })
  expect_identical(left, list(character(0), character(0)))
  # each batch runs on the worker that owns it, every lap: batch b on worker
  # (b - 1) mod 2 + 1 (a step that records its process id)
  cl <- parallel::makePSOCKcluster(2L)
  on.exit(parallel::stopCluster(cl), add = TRUE)
  parallel::clusterCall(cl, function(p) .libPaths(p), .libPaths())
  where <- function(batch, per) c(batch, Sys.getpid())
  environment(where) <- globalenv() # (travels without this test's frame)
  ex <- sparsevi:::new_executor(w, 4L, function(b) b, rep(1L, 4))
  seen <- lapply(1:3, function(lap) {
    r <- sparsevi:::executor_run(ex, 1:4, where, list())$results
    vapply(r, `[`, 0, 2)
  })
  sparsevi:::executor_close(ex)
  for (s in seen) expect_identical(s, pids[c(1, 2, 1, 2)])
  # the same bytes as a parallel cluster, lap by lap
  p <- do.call(fit_lda, c(args, list(cluster = cl)))
  expect_same_lda(p, a)
  expect_identical(p$trace$bytes_sent, a$trace$bytes_sent)
  expect_identical(p$trace$bytes_received, a$trace$bytes_received)
  # mixtures too
  sim <- simulate_mixture(N = 300, D = 2, K = 3, seed = 4)
  # (3 laps do not converge: its warning is not what this checks)
  a <- suppressWarnings(fit_mixture(sim$X, K = 3, n_batches = 4, passes = 3, seed = 2,
                                    sync = 2, cluster = w, progress = FALSE))
  b <- suppressWarnings(fit_mixture(sim$X, K = 3, n_batches = 4, passes = 3, seed = 2,
                                    sync = 2, progress = FALSE))
  expect_identical(a$state, b$state)
  expect_output(print(w), "2 worker\\(s\\)")
})

test_that("a worker that dies gives a classed error that keeps the last model", {
  skip_on_cran()
  skip_on_os("windows")
  skip_if_not_installed("mirai")
  # workers that listen at TCP ports and whose daemons a launcher starts, as
  # for other hosts or a scheduler (here the launcher is a shell on this
  # machine)
  launcher <- mirai::remote_config(command = "sh", args = c("-c", "."), quote = TRUE,
                                   rscript = file.path(R.home("bin"), "Rscript"))
  w <- sparsevi_workers(2, url = "tcp://127.0.0.1:0", remote = launcher, timeout = 60)
  on.exit(close(w), add = TRUE)
  expect_match(w[[1]]$url, "^tcp://127.0.0.1:[0-9]+$")
  expect_false(identical(w[[1]]$url, w[[2]]$url))
  x <- cluster_corpus()
  args <- list(x, local = "vb", K = 4, L = 2, n_batches = 4, seed = 9, sync = 2,
               progress = FALSE)
  # worker 2 dies in its third local step: in the first round of lap 2
  break_worker(w[[2]], "die", 3)
  err <- tryCatch(do.call(fit_lda, c(args, list(passes = 3, cluster = w))),
                  sparsevi_error_worker = function(e) e)
  expect_s3_class(err, "sparsevi_error_worker")
  expect_match(conditionMessage(err), "Worker 2")
  expect_s3_class(err$fit, "sparsevi_lda")
  expect_identical(nrow(err$fit$trace), 1L)
  expect_same_lda(err$fit, do.call(fit_lda, c(args, list(passes = 1))))
  # the dead worker is found before anything is sent to it
  err2 <- tryCatch(update(err$fit, x, passes = 1, cluster = w, progress = FALSE),
                   sparsevi_error_worker = function(e) e)
  expect_s3_class(err2, "sparsevi_error_worker")
  expect_match(conditionMessage(err2), "Worker 2")
  expect_identical(err2$fit$topic_word, err$fit$topic_word)
  # closed workers are refused
  close(w)
  expect_output(print(w), "closed")
  expect_error(fit_lda(x, K = 4, cluster = w), class = "sparsevi_error_argument")
  expect_error(sparsevi_workers(0), class = "sparsevi_error_argument")
  # a daemon that never dials in (a launcher that starts nothing)
  nothing <- mirai::remote_config(command = "true")
  expect_error(sparsevi_workers(1, url = "tcp://127.0.0.1:0", remote = nothing, timeout = 0.2),
               class = "sparsevi_error_worker")
  # a free port without a launcher: the daemons could not know where to dial
  expect_error(sparsevi_workers(1, url = "tcp://127.0.0.1:0"),
               class = "sparsevi_error_argument")
  expect_error(sparsevi_workers(2, remote = list()), class = "sparsevi_error_argument")
})

test_that("a worker that hangs with its connection open times out with the last model", {
  skip_on_cran()
  skip_if_not_installed("mirai")
  w <- sparsevi_workers(2, task_timeout = 2)
  on.exit(close(w), add = TRUE)
  expect_output(print(w), "task timeout 2 s")
  x <- cluster_corpus()
  args <- list(x, local = "vb", K = 4, L = 2, n_batches = 4, seed = 9, sync = 2,
               progress = FALSE)
  # worker 2 hangs in its third local step (the first round of lap 2): its
  # process lives on and its connection stays open
  break_worker(w[[2]], "hang", 3)
  t0 <- proc.time()[["elapsed"]]
  err <- tryCatch(do.call(fit_lda, c(args, list(passes = 3, cluster = w))),
                  sparsevi_error_worker = function(e) e)
  expect_lt(proc.time()[["elapsed"]] - t0, 15)
  expect_s3_class(err, "sparsevi_error_worker")
  expect_match(conditionMessage(err), "Worker 2")
  expect_match(conditionMessage(err), "did not answer within 2 seconds")
  expect_s3_class(err$fit, "sparsevi_lda")
  expect_identical(nrow(err$fit$trace), 1L)
  expect_same_lda(err$fit, do.call(fit_lda, c(args, list(passes = 1))))
  # bad values
  expect_error(sparsevi_workers(1, task_timeout = 0), class = "sparsevi_error_argument")
  expect_error(sparsevi_workers(1, task_timeout = "a"), "`task_timeout`")
})

test_that("a worker keeps the memory it frees for its next rounds (glibc)", {
  skip_on_cran()
  skip_if_not(file.exists("/proc/self/stat"))
  # In a child process (the setting lasts for the process): rounds of ten
  # 20 MB vectors alive at once, then collected, as a worker's messages are
  # under a large R_VSIZE. glibc gives the freed heap back to the system
  # and the next round faults in new pages; after worker_keep_memory() it
  # reuses them. The minor page faults of the third round, before and after.
  res <- run_child(c(
    'library(sparsevi)',
    'faults <- function() as.numeric(strsplit(readLines("/proc/self/stat"), " ")[[1]][10])',
    'round <- function() { f0 <- faults(); v <- lapply(1:10, function(i) { x <- numeric(2.5e6); x[] <- i; x }); rm(v); invisible(gc()); faults() - f0 }',
    'before <- c(round(), round(), round())',
    'ok <- sparsevi:::worker_keep_memory()',
    'after <- c(round(), round(), round())',
    'cat("RESULT", ok, before[3], after[3], "\\n")'))
  line <- grep("^RESULT", res$output, value = TRUE)
  expect_length(line, 1L)
  got <- strsplit(line, " ")[[1]]
  skip_if(got[2] != "TRUE", "the C library is not glibc: nothing to set")
  before <- as.numeric(got[3])
  after <- as.numeric(got[4])
  # (a 20 MB vector is 4,883 pages of 4 KB)
  expect_gt(before, 10 * 4000)
  expect_lt(after, before / 5)
})

test_that("the master takes no CPU while it waits for its workers", {
  skip_on_cran()
  skip_if_not_installed("mirai")
  w <- sparsevi_workers(2)
  on.exit(close(w), add = TRUE)
  profiles <- lapply(w, function(wk) wk$profile)
  expect_true(all(vapply(profiles, function(p) !is.null(sparsevi:::mirai_profile_cv(p)), TRUE)))
  ms <- lapply(seq_along(w), function(i) {
    mirai::mirai(Sys.sleep(s), s = 0.5 * i, .compute = profiles[[i]])
  })
  t0 <- proc.time()
  r <- sparsevi:::mirai_wait(ms, profiles)
  t <- proc.time() - t0
  expect_identical(r$status, "ok")
  expect_gte(t[["elapsed"]], 0.9)
  # (polling every millisecond took about 0.14 s of CPU a second)
  expect_lt(t[["user.self"]] + t[["sys.self"]], 0.05)
  # the results come back in the tasks' order, whichever ends first
  ms <- lapply(seq_along(w), function(i) {
    mirai::mirai({Sys.sleep(s); i}, s = 0.6 - 0.3 * i, i = i, .compute = profiles[[i]])
  })
  expect_identical(sparsevi:::mirai_wait(ms, profiles)$values, list(1L, 2L))
})
