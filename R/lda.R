#' @importFrom stats terms update logLik
NULL

# fit_lda(), the front door of every LDA engine: its arguments, their checks
# and the control list the training loop reads. The rest of LDA is split by
# job: R/lda-start.R (the first state), R/lda-batches.R (batches and seeds),
# R/lda-train.R (laps through the loop of R/train.R), R/lda-class.R (the
# sparsevi_lda object), R/lda-methods.R (print, predict, ...), R/lda-kept.R
# (the training documents' proportions) and R/lda-<engine>.R per engine. The
# loop holds an engine object (lda_engine(), R/engines.R) and calls its
# functions: a new engine is a new file and a registry entry, never a new
# flag in the loop.

check_engine <- function(local, global, call = caller_call()) {
  ok <- lda_combinations$local == local & lda_combinations$global == global &
    lda_combinations$supported
  valid <- paste0(lda_combinations$local, " x ", lda_combinations$global, collapse = ", ")
  if (!any(ok)) {
    # the default engine changed from "vb" to "cvb0": say so when `global` is
    # one of vb's and `local` was left at its default
    hint <- ""
    if (identical(local, lda_default_local) && global %in% sparsevi_engines$lda$vb$globals) {
      hint <- sprintf(" The default `local` is \"cvb0\" (SCVB0), whose only global step is \"stochastic\"; for global = \"%s\" give `local = \"vb\"`.",
                      global)
    }
    abort(sprintf("The combination `local = \"%s\"`, `global = \"%s\"` is not supported. Valid combinations: %s.%s",
                  local, global, valid, hint), "engine", call = call)
  }
  engine <- lda_engine(local)
  if (is.null(engine) || is.null(engine$global[[global]])) {
    abort(sprintf("The %s step \"%s\" is not available in this version of sparsevi. Available now: %s.",
                  if (is.null(engine)) "local" else "global",
                  if (is.null(engine)) local else global,
                  paste(lda_available(), collapse = ", ")),
          "engine", call = call)
  }
  invisible(TRUE)
}

lda_available <- function() {
  ok <- vapply(seq_len(nrow(lda_combinations)), function(i) {
    engine <- lda_engine(lda_combinations$local[i])
    !is.null(engine) && is.function(engine$global[[lda_combinations$global[i]]])
  }, logical(1))
  paste0(lda_combinations$local[ok], " x ", lda_combinations$global[ok])
}

#' Fit a topic model (latent Dirichlet allocation)
#'
#' Fits latent Dirichlet allocation to a corpus of documents, by laps over
#' batches of documents. The default engine is SCVB0, stochastic collapsed
#' variational Bayes ([scvb0]); the others are L-sparse variational Bayes
#' (Hughes & Sudderth), Gibbs sampling within stochastic VB ([lda_gibbs])
#' and online MAP estimation ([ope]).
#'
#' With the default engine and up to 200 topics, topic 1 is a background
#' topic: it gathers the words common to many documents, so that the other
#' topics each say something different (`background = 0` turns it off; see
#' "Background topic"). Leave it out when looking for each document's
#' main topic.
#'
#' @param x A corpus, anything [as_dtm()] accepts (documents in rows), or a
#'   corpus on disk from [uci_source()].
#' @param K Number of topics, at least 2 and at most the vocabulary size.
#'   Several values (e.g. `K = c(20, 50, 100)`) choose K: see "Choosing K".
#' @param local The engine: `"cvb0"` (default, SCVB0), `"vb"` (L-sparse
#'   variational Bayes), `"gibbs"` or `"ope"`. See "Which engine". Above
#'   2^28 K x V entries the default is `"gibbs"` (sparse topics), and
#'   `print()` says so.
#' @param global How the topics are updated: `NULL` (default) takes the
#'   engine's own (`"stochastic"` for `"cvb0"`, `"gibbs"` and `"ope"`,
#'   `"memoized"` for `"vb"`).
#'   Also `"streaming"` (one pass) and `"batch"`; [lda_combinations]
#'   lists the valid pairs.
#' @param L For `local = "vb"`: each word keeps its `L` most likely topics
#'   (`L = K`: classic dense VB). For `"cvb0"`, only when given: each
#'   (document, word) entry of a minibatch adds to the topics' minibatch
#'   estimate its `L` most likely topics exactly and the rest of its count
#'   as one number, spread over the other topics in proportion to the
#'   word's topics (see [scvb0], "Sparse summaries"), so a minibatch's
#'   summary holds at most `L` values per entry instead of K per word;
#'   without `L` (or with `L = K`) the summary is dense. For `"ope"`, also
#'   only when given: each document adds to the minibatch's summary its `L`
#'   largest proportions and the rest of its mass as one number per word,
#'   spread as the word's topics are (streaming and memoized OPE: the rest
#'   on one topic drawn from the others; see [ope], "Sparse summaries");
#'   without `L` (or with `L = K`) the summary is dense. Otherwise the
#'   default of `doc_topics`.
#' @param alpha,eta Document-topic and topic-word smoothing (> 0). `NULL`
#'   takes the engine's defaults (0.1 and 0.01 for `"cvb0"`; for `"vb"`
#'   `eta = 0.01` and `alpha = 10 / K` within 0.1 to 0.5, i.e. 0.1 from
#'   K = 100 on and 0.5 up to K = 20).
#'   With `local = "vb"`, `eta = "learn"` estimates eta between laps
#'   (empirical Bayes; its path is `fit$state$eta_path`).
#' @param n_batches,batch_size Number of batches, or documents per batch
#'   (give at most one). Default: 100 documents per batch for `"cvb0"`,
#'   `max(100, D / 10)` for the others, at most 500 for Online-OPE
#'   (`local = "ope"`, `global = "stochastic"`). A corpus on disk
#'   ([uci_source()]) is cut into batches of this size within each of its
#'   batch files, which are only what is read at a time: a batch never
#'   spans two files, so a file smaller than `batch_size` is one batch, and
#'   `n_batches` there can only be its number of files.
#' @param batches Your own batches: a list of row numbers' vectors that
#'   hold every document once.
#' @param passes Laps through the data (default 10). Memoized and batch
#'   training with `local = "vb"` stop earlier once a lap moves the
#'   objective by less than `converge_tol` (see `...`).
#' @param restarts For `local = "vb"`: restart proposals (default `TRUE`).
#' @param init `"bregman"` (default: K seed documents by Bregman
#'   k-means++), `"random"`, `"sparse"` (`"gibbs"`), `"seeded"` (`"gibbs"`,
#'   `"cvb0"`: the seeds' counts alone), or a K x V matrix. Not given,
#'   `"cvb0"` and `"gibbs"` start `"seeded"` when K x V exceeds 2^25 entries
#'   or 4 times the corpus's tokens. The seeds come from all the documents
#'   (a random pool of max(5000, 10 K) when there are more), also for a
#'   corpus on disk, whose batches holding them are then read once before
#'   training; with fewer documents than topics the start is `"random"`,
#'   and the fit's `control$init` says so.
#' @param tau,kappa Step sizes of stochastic training,
#'   \eqn{\rho_t = (\tau + t)^{-\kappa}}. `kappa` defaults to 0.6; `tau`
#'   (`NULL`: the engine's) to 16 for `local = "vb"` with
#'   `global = "stochastic"` (see "Differences from the paper") and to 1
#'   otherwise.
#' @param seed `NULL` or a whole number. The fit depends on the seed only,
#'   never on `threads`.
#' @param threads Number of threads (default
#'   `getOption("sparsevi.threads", 1L)`).
#' @param progress Print a line per lap; default `interactive()`.
#' @param heldout `NULL`, or test documents (from [split_heldout()], or a
#'   corpus) scored by [heldout_loglik()] after every lap.
#' @param cluster `NULL`, persistent workers from [sparsevi_workers()], a
#'   cluster from [parallel::makePSOCKcluster()], or `"future"`: see
#'   [sparsevi_cluster].
#' @param sync Batches run in parallel per round on a cluster (default 1).
#' @param doc_topics Topic proportions kept per training document in
#'   `doc_topic` (default `L`; `K`: all; `0`: none).
#' @param reuse_dead For `local = "vb"`, `"gibbs"` and `"ope"` with
#'   `global = "stochastic"`: `TRUE` or a share of the tokens: after each
#'   lap, re-seed the topics under it from a document each; `FALSE`: never.
#'   `TRUE` is 0.001 for `"vb"` and `"ope"`, and for `"gibbs"` the default
#'   share of [dead_topics()] (0.001 up to K = 100, `0.1 / K` above). `NULL`
#'   (the default) is the engine's own: `TRUE` for `"gibbs"` (its share
#'   counts the tokens a topic drew in the lap; see [lda_gibbs]) and for
#'   Online-OPE (see [ope]), `FALSE` for `"vb"`.
#' @param heldout_every `NULL` (default), or a whole number n: score
#'   `heldout` also within each lap, after the round that completes every
#'   n-th batch of the lap (as gensim's `eval_every`), outside the training
#'   clock like the laps' scores. For stochastic and streaming training on
#'   large corpora, where a lap takes long and the score can peak within
#'   it. Each score builds the dense K x V topics once. The scores are in
#'   `learning_curve`.
#' @param ... Engine controls: `background` for every engine (see
#'   "Background topic"); for `"vb"` `max_iter`, `tol`, `converge_tol` and
#'   `warm_start`; see [scvb0], [lda_gibbs] and [ope] for the others.
#' @returns A `sparsevi_lda`: a list with `topic_word` (K x V), `lambda`,
#'   `alpha`, `eta`, `K`, `vocab`, `doc_topic` (sparse D x K), `doc_key` (a
#'   fingerprint of the documents `doc_topic` belongs to: given them again,
#'   [lda_to_ldavis()] and `augment()` read `doc_topic`), `trace` (per
#'   lap: seconds, `objective` (memoized or batch `"vb"`), `heldout`),
#'   `ended`, with `heldout_every` `learning_curve` (a data frame: `lap`,
#'   `batches` of the lap done, training `seconds` and `cpu_seconds`,
#'   `heldout`; a row for each score within a lap and for each lap's end)
#'   and, with several `K`, `select`. Ctrl-C during a lap returns
#'   the last completed lap's fit, with a warning.
#' @section Background topic:
#' `background = b` gives topic 1 the prior \eqn{\alpha + b N_d} in a
#' document of \eqn{N_d} words instead of \eqn{\alpha}: every document
#' lends it about \eqn{b / (1 + b)} of its words before the data speak, so
#' the words common to many documents gather there instead of heading the
#' other topics. Every engine takes it; `background = 0` is the model
#' without one. By default:
#' * `"cvb0"`: \eqn{K / 200} within 0.3 to 0.5 up to K = 200, fading to
#'   none at K = 500 (see [scvb0],
#'   "Topic quality");
#' * `"ope"`: 0.1 up to K = 200 (see [ope], "Background topic");
#' * `"vb"` and `"gibbs"`: none. With one their held-out scores fell on
#'   almost every corpus we measured, and their NPMI coherence did not
#'   reliably rise (`"vb"`); topic 1 took most of the tokens (`"gibbs"`,
#'   see [lda_gibbs]).
#'
#' Above 200 topics no engine has one by default: there SCVB0's lowered
#' NPMI, and OPE's cost 0.03-0.22 nats per token of held-out score (K =
#' 300).
#' [print()] marks the background topic; [predict()][predict.sparsevi_lda]
#' uses the fit's `background` whatever its `method`; `prune_topics(fit,
#' 1)` removes it and sets `background` to 0. A document's proportions
#' stay each topic's share of its words, and [heldout_loglik()] scores
#' every fit with the symmetric \eqn{\alpha}. On documents without common
#' words, such as those of [simulate_lda()], topic 1 takes the place of a
#' real topic: give `background = 0` there.
#'
#' @section Which engine:
#' * `"cvb0"` (default): the fastest engine here, with the most distinct
#'   and coherent topics on the corpora we measured (its background topic
#'   costs some held-out score; with `background = 0` it had the best
#'   held-out score of the engines on most of them). It has no training
#'   objective: give `heldout` to watch its progress.
#' * `"vb"`: an exact objective that never decreases, a convergence stop,
#'   `eta = "learn"`, `reuse_dead` and sparse responsibilities (`L`).
#'   Slower than `"cvb0"`.
#' * `"gibbs"`: for many topics (hundreds to thousands): its cost per
#'   document hardly grows with K.
#' * `"ope"`: online MAP inference, for streams of documents.
#'
#' See `vignette("engines")` and `vignette("benchmarks")`.
#' @section Choosing K:
#' Give several values, e.g. `fit_lda(x, K = c(10, 20, 40))`. Each K is
#' fitted on 90% of the documents and
#' scored by document completion ([heldout_loglik()]) on the other 10%;
#' the best K is then refitted on all documents. The result is
#' `fit_lda(x, K = <best>, ...)` with a `select` table (one row per K:
#' the held-out score, UMass coherence, the number of dead topics as
#' [dead_topics()] counts them (many say that K is more than the corpus
#' needs), seconds), shown by [print()] and drawn by
#' `plot(fit, type = "select")`. When the grid's
#' smallest or largest K is chosen, both say so: widen the grid (unless
#' the largest K chosen already has dead topics: then fewer topics would do).
#' Ctrl-C stops the search and returns the best K so far, fitted on the
#' 90%, with `ended = "interrupted"`.
#' @section Differences from the paper:
#' The engines' departures from their papers are listed on [scvb0], [ope]
#' and [lda_gibbs]. With `local = "vb"` (Hughes & Sudderth):
#' * priors `alpha = 10 / K` within 0.1 to 0.5 and `eta = 0.01` (the
#'   authors' code: 0.5 and 0.1);
#' * the first memoized lap holds the initial topics until every batch has
#'   been seen (the paper updates after each batch);
#' * training stops at convergence (`converge_tol`), so `passes` is an
#'   upper bound; `converge_tol = 0` runs every lap;
#' * batches of `max(100, D / 10)` documents: give `n_batches` or
#'   `batch_size` for the paper's;
#' * one step schedule, where the paper searched: with `global =
#'   "stochastic"`, \eqn{\rho_t = (16 + t)^{-0.6}}, 0.19 at the first
#'   minibatch. `tau = 1` gives \eqn{\rho = 1} there: the first minibatch's
#'   estimate, scaled up to the corpus, replaces the start, and the topics
#'   then follow each minibatch. On seven corpora at K = 20, 100 and 200
#'   (10 laps), `tau = 16` against `tau = 1` raised the held-out score in
#'   19 of 21 cases (all 14 at K = 100 and 200) and NPMI coherence in 14,
#'   and led scikit-learn's and gensim's online VB on held-out score on all
#'   seven at K = 100 (`inst/bench/results/vb-stochastic.txt`). With few
#'   minibatches a lap (a large `batch_size`) the steps stay small for
#'   long: on 19,000 Wikipedia paragraphs in minibatches of 10,000 (K = 100,
#'   5 laps) `tau = 1` scored -8.76 nats per token and `tau = 16` -9.01, in
#'   minibatches of 1,900 (the default) -9.11 and -8.80: there give a smaller
#'   `tau`;
#' * Bregman k-means++ seeds from a random pool of `max(5000, 10 K)`
#'   documents of a larger corpus;
#' * restarts: at most `restart_max = 4` proposals per document, of
#'   `restart_iter = 10` iterations, every lap.
#' @seealso [predict()][predict.sparsevi_lda], [plot()][plot.sparsevi_lda],
#'   [prune_topics()], `vignette("topics")`.
#' @examples
#' sim <- simulate_lda(D = 60, V = 40, K = 3, seed = 1)
#' fit <- fit_lda(sim$dtm, K = 3, passes = 5, seed = 1) # SCVB0
#' fit
#' terms(fit, 5)
#' # L-sparse memoized VB, with an objective that never decreases
#' fit_vb <- fit_lda(sim$dtm, K = 3, local = "vb", L = 2, passes = 5, seed = 1)
#' fit_vb$trace$objective
#' # choose K on a validation split
#' pick <- fit_lda(sim$dtm, K = c(2, 3, 5), passes = 3, seed = 1)
#' pick$select
#' @export
fit_lda <- function(x, K, local = "cvb0", global = NULL, L = min(8, K), alpha = NULL,
                    eta = NULL, n_batches = NULL, batch_size = NULL, passes = 10,
                    restarts = NULL, init = c("bregman", "random", "sparse", "seeded"), tau = NULL, kappa = 0.6,
                    seed = NULL, threads = getOption("sparsevi.threads", 1L),
                    progress = interactive(), heldout = NULL, batches = NULL,
                    cluster = NULL, sync = NULL, doc_topics = L, reuse_dead = NULL,
                    heldout_every = NULL, ...) {
  if (!missing(K) && length(K) > 1L) {
    # several K: fit each and keep the best (R/lda-select.R), with the
    # arguments the user gave (their values, forced here)
    given <- setdiff(intersect(names(match.call())[-1L], names(formals(sys.function()))),
                     "...")
    # (checked before the per-K fits; the refit of the best K uses it)
    lda_check_heldout_every(heldout_every, heldout, call = sys.call())
    return(lda_select_k(c(mget(given), list(...)), match.call()))
  }
  call <- match.call()
  here <- sys.call()
  passes_given <- !missing(passes)
  if (!inherits(x, "sparsevi_source")) x <- as_dtm(x)
  D <- nrow(x)
  V <- ncol(x)
  if (missing(K)) abort("`K`, the number of topics, is missing.", "argument", call = here)
  check_lda_vocab(V, call = here)
  K <- check_count(K, "K", min = 2, max = V, call = here)
  if (!inherits(x, "sparsevi_source")) check_nonempty_dtm(x, "x", call = here)
  # the default engine depends on K x V (lda_default_engine(), R/engines.R)
  engine_reason <- NULL
  if (missing(local)) {
    pick <- lda_default_engine(K, V)
    local <- pick$local
    engine_reason <- pick$reason
    if (is.null(eta)) eta <- pick$eta
  }
  check_topic_table_size(K, V, call = here)
  local <- check_string(local, "local", call = here)
  if (is.null(lda_engine_defaults[[local]])) {
    abort(sprintf("`local` must be one of %s, not \"%s\".",
                  paste0('"', names(lda_engine_defaults), '"', collapse = ", "), local),
          "engine", call = here)
  }
  defaults <- lda_engine_defaults[[local]]
  if (is.null(global)) global <- defaults$global
  global <- check_string(global, "global", call = here)
  check_engine(local, global, call = here)
  L <- check_count(L, "L", min = 1, max = K, call = here)
  doc_topics <- check_doc_topics(doc_topics, K, call = here)
  dead_share <- check_reuse_dead(reuse_dead, local, K, global, call = here)
  if (is.null(alpha)) alpha <- lda_default_prior(defaults$alpha, K)
  if (is.null(eta)) eta <- lda_default_prior(defaults$eta, K)
  alpha <- check_positive(alpha, "alpha", call = here)
  eta_learn <- identical(eta, "learn")
  if (eta_learn) {
    if (!lda_engine_can(local, "learn_eta")) {
      abort(sprintf("`eta = \"learn\"` is for the \"vb\" local step; give a number for `local = \"%s\"`.",
                    local), "argument", call = here)
    }
    eta <- eta_learn_start(V)
  }
  eta <- check_positive(eta, "eta", call = here)
  passes <- check_count(passes, "passes", min = 1, max = 1e6, call = here)
  if (lda_global_kind(global)$one_pass && passes > 1) {
    if (passes_given) {
      warn("Streaming training makes a single pass over the data; `passes` is set to 1.",
           "passes", call = here)
    }
    passes <- 1L
  }
  restarts <- check_restarts(restarts, local, call = here)
  init_lambda <- NULL
  if (missing(init)) {
    # the large-K default (gibbs) with fewer start documents than topics: its
    # empty sparse start, not the random start's dense K x V table (Bregman
    # seeding needs K documents); else the engine's rule (R/lda-start.R)
    init <- if (!is.null(engine_reason) && D < K) {
      "sparse"
    } else {
      lda_default_init(local, K, V, corpus_tokens(x))
    }
  }
  if (is.matrix(init)) {
    init_lambda <- check_init_lambda(init, K, V, call = here)
    init <- "given"
  } else {
    init <- check_choice(init, c("bregman", "random", "sparse", "seeded"), "init", call = here)
    if (init %in% c("sparse", "seeded") && is.null(lda_engine(local)$start[[init]])) {
      has <- names(Filter(function(e) !is.null(e$start[[init]]),
                          lapply(stats::setNames(nm = names(sparsevi_engines$lda)), lda_engine)))
      abort(sprintf("`init = \"%s\"` is for local = %s; use \"bregman\" or \"random\" for local = \"%s\".",
                    init, paste0("\"", has, "\"", collapse = " or "), local),
            "argument", call = here)
    }
  }
  if (!is.null(tau)) tau <- check_number(tau, "tau", lower = 0, call = here)
  kappa <- check_number(kappa, "kappa", lower = 0.5, upper = 1, lower_open = TRUE,
                        call = here)
  threads <- sparsevi_threads(threads)
  progress <- check_flag(progress, "progress", call = here)
  cluster <- check_cluster(cluster, call = here)
  sync <- resolve_sync(sync, cluster, call = here)
  user_batches <- NULL
  if (!is.null(batches)) {
    if (inherits(x, "sparsevi_source")) {
      abort("A corpus on disk brings its own batches; drop `batches`.", "argument",
            call = here)
    }
    user_batches <- check_batches(batches, D, n_batches, batch_size, global, call = here)
  }
  batches <- if (inherits(x, "sparsevi_source")) {
    source_batches(x, global, n_batches, batch_size, call = here)
  } else if (!is.null(user_batches)) {
    list(n_batches = length(user_batches), batch_size = max(lengths(user_batches)))
  } else {
    lda_resolve_batches(D, global, n_batches, batch_size, call = here)
  }
  heldout <- if (is.null(heldout)) NULL else as_heldout(heldout, x$vocab, seed = 1,
                                                        call = here, arg = "heldout")
  heldout_every <- lda_check_heldout_every(heldout_every, heldout, call = here)
  dots <- list(...)
  if (length(dots) && (is.null(names(dots)) || any(!nzchar(names(dots))))) {
    abort("Engine controls in `...` must be named, e.g. `max_iter = 50`.", "argument",
          call = here)
  }
  known <- lda_engine_controls[[local]]
  unknown <- setdiff(names(dots), known)
  if (!is.null(known) && length(unknown)) {
    abort(sprintf("Unknown control(s) in `...` for local = \"%s\": %s. Known controls: %s.",
                  local, paste(unknown, collapse = ", "), paste(known, collapse = ", ")),
          "argument", call = here)
  }
  seed <- resolve_seed(seed, call = here)
  control <- c(list(K = K, L = L, alpha = alpha, eta = eta, local = local, global = global,
                    n_batches = batches$n_batches, batch_size = batches$batch_size,
                    restarts = restarts, init = init, tau = tau, kappa = kappa,
                    step_scale = defaults$step_scale, seed = seed, threads = threads,
                    n_docs = D, sync = sync, batches = user_batches,
                    source_batches = if (inherits(x, "sparsevi_source")) source_batches_key(x),
                    reuse_dead = dead_share > 0, dead_share = dead_share,
                    eta_learn = eta_learn, doc_topics = doc_topics,
                    heldout_every = heldout_every,
                    init_lambda = init_lambda, engine_reason = engine_reason),
               dots)
  control$step_scale <- if (is.null(dots$step_scale)) defaults$step_scale else
    check_positive(dots$step_scale, "step_scale", call = here)
  # the global step's form is the registry's choice (engine$global); its
  # label stays in the fit (the engine's finish and end_lap read it)
  engine <- lda_engine(local)
  control$global_step <- engine$holds[[global]]
  if (!is.null(engine$control)) control <- engine$control(control, call = here)
  # (tau not given and no engine's own: the loop's 1)
  if (is.null(control$tau)) control$tau <- 1
  # (what starts: the random start where there are fewer documents than
  # topics to seed from; after the engine's settings, which read the start
  # asked for)
  control$init <- lda_start_kind(control$init, D, K)
  # what lda_train() needs of a fit: no topics are built before training, and
  # the start is referenced by lda_train() alone (an engine that swaps it for
  # a store of its own frees it)
  fit <- lda_train(list(control = control, state = lda_init_state(x, control),
                        trace = lda_empty_trace(), call = call),
                   x, passes, progress, heldout, cluster)
  lda_keep(fit, x, heldout, doc_topics)
}

# fit_lda(heldout_every = ), update(heldout_every = ): NULL, or a whole
# number of batches, which needs held-out documents to score.
lda_check_heldout_every <- function(heldout_every, heldout, call = caller_call()) {
  if (is.null(heldout_every)) return(NULL)
  heldout_every <- check_count(heldout_every, "heldout_every", min = 1, max = .Machine$integer.max,
                               call = call)
  if (is.null(heldout)) {
    abort(paste0("`heldout_every` scores held-out documents within each lap: give them ",
                 "as `heldout` too (e.g. from split_heldout()), or leave `heldout_every` out."),
          "argument", call = call)
  }
  as.integer(heldout_every)
}

# An engine's default prior for K topics: a number, NA for 1 / K, or a
# function of K (R/engines.R).
lda_default_prior <- function(prior, K) {
  if (is.function(prior)) return(prior(K))
  if (is.na(prior)) 1 / K else prior
}

# Topics are distributions over terms: a vocabulary of one term (or none)
# has no topics to find, whatever K.
check_lda_vocab <- function(V, call = caller_call()) {
  if (V < 2) {
    abort(sprintf("`x` has %d term%s in its vocabulary; topics need at least 2 terms to tell apart. Check how the corpus was built (tokenisation, a vocabulary filter such as `min_doc_freq`).",
                  V, if (V == 1) "" else "s"), "data", call = call)
  }
  invisible(TRUE)
}

# `restarts`: NULL is the engine's default (TRUE for "vb", the only engine
# with restart proposals); TRUE for another engine is an error rather than
# a setting that silently does nothing; FALSE is what the others do anyway.
check_restarts <- function(restarts, local, call = caller_call()) {
  if (is.null(restarts)) return(lda_engine_can(local, "restarts"))
  restarts <- check_flag(restarts, "restarts", call = call)
  if (restarts && !lda_engine_can(local, "restarts")) {
    abort(sprintf("`restarts = TRUE` asks for the restart proposals of the \"vb\" local step; local = \"%s\" has none: drop `restarts` or use `local = \"vb\"`.",
                  local), "argument", call = call)
  }
  restarts
}

# A dense K x V topic table (several are held at once) must stay addressable
# and allocatable: refuse K x V above 2^31 - 1 entries before allocating.
check_topic_table_size <- function(K, V, call = caller_call()) {
  if (as.double(K) * as.double(V) > .Machine$integer.max) {
    abort(sprintf("K x V = %d x %d = %.3g topic-word entries is too large (the limit is 2^31 - 1, and each table takes 8 bytes per entry): reduce `K` or prune the vocabulary (e.g. drop rare terms).",
                  K, V, as.double(K) * V), "size", call = call)
  }
  invisible(TRUE)
}
