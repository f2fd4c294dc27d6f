# Shared by test-executor*.R and test-scale.R: a small LDA corpus for fits
# run locally, in rounds and on clusters, the check that two such fits
# are the same bits, and a worker made to fail.

cluster_corpus <- function() {
  simulate_lda(D = 120, V = 60, K = 4, doc_length = 40, seed = 21)$dtm
}

expect_same_lda <- function(a, b) {
  expect_identical(a$topic_word, b$topic_word)
  expect_identical(a$lambda, b$lambda)
  expect_identical(a$trace$objective, b$trace$objective)
}

# A corpus whose two halves use disjoint halves of the vocabulary: documents
# 1-40 the words w1-w200, documents 41-80 the words w201-w400; batches
# 1 and 3 hold first-half documents, 2 and 4 second-half ones, so that on 2
# workers with sync = 2 each worker's batches need half of the topic columns.
split_vocab_corpus <- function() {
  set.seed(7)
  docs <- lapply(1:80, function(d) {
    pool <- if (d <= 40) 1:200 else 201:400
    paste0("w", sample(pool, 60, replace = TRUE))
  })
  list(x = as_dtm(docs), batches = list(1:20, 41:60, 21:40, 61:80))
}

# Makes worker `worker`'s (a sparsevi_workers element) calls of the worker
# function `step` fail from its `at`-th on: "die" kills its process, "hang"
# sleeps 20 s with the connection open (test-executor-mirai.R: the local
# steps, cluster_worker_run; test-executor-sharded.R: a sharded round,
# shard_worker_round).
break_worker <- function(worker, how, at, step = "cluster_worker_run") {
  # (how, at and step copied into the task's own frame, which the new
  # function keeps: the daemon clears its global variables after each task)
  mirai::mirai({
    ns <- asNamespace("sparsevi")
    orig <- get(step, envir = ns)
    count <- 0
    die <- identical(how, "die")
    from <- at
    unlockBinding(step, ns)
    assign(step, function(...) {
      count <<- count + 1
      if (count >= from) {
        if (die) tools::pskill(Sys.getpid(), tools::SIGKILL) else Sys.sleep(20)
      }
      orig(...)
    }, envir = ns)
    TRUE
  }, how = how, at = at, step = step, .compute = worker$profile)[]
}
