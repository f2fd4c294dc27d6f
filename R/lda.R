#' @importFrom stats terms update logLik
NULL

# fit_lda(): the training loop every LDA engine plugs into, and the
# sparsevi_lda class with its methods. The loop holds an engine object
# (lda_engine(), R/engines.R) and calls its functions: engine$local(),
# engine$global[[global]](), engine$finish(), ...: a new engine is a new file
# and a registry entry, never a new flag here.

check_engine <- function(local, global, call = caller_call()) {
  ok <- lda_combinations$local == local & lda_combinations$global == global &
    lda_combinations$supported
  valid <- paste0(lda_combinations$local, " x ", lda_combinations$global, collapse = ", ")
  if (!any(ok)) {
    # the default engine changed from "vb" to "cvb0": say so when `global` is
    # one of vb's and `local` was left at its default
    hint <- ""
    if (identical(local, "cvb0") && global %in% sparsevi_engines$lda$vb$globals) {
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
#' Fits LDA by a training loop of local steps (per document, in C) and global
#' steps (topics). The default engine is SCVB0 (Foulds et al., *Stochastic
#' Collapsed Variational Bayesian Inference for LDA*; see [scvb0]): each
#' minibatch of 100 documents updates its documents' topic counts and then
#' takes a stochastic step on the topics, 10 laps over the corpus. It was
#' the fastest engine with the best held-out score on every benchmark corpus
#' (see "Which engine"). `local = "vb"` is Hughes & Sudderth's *Fast Learning
#' of Clusters and Topics via Sparse Posteriors*: each word's topic
#' responsibilities keep only their `L` largest entries (`L = K` is the
#' classic dense step), documents restart from scratch with restart
#' proposals, and training is memoized (exact, monotone objective),
#' stochastic, streaming or batch.
#'
#' @param x A corpus, anything [as_dtm()] accepts (documents in rows).
#' @param K Number of topics, between 2 and the vocabulary size, with K x V
#'   at most 2^31 - 1 (larger topic tables are refused before allocating).
#'   Several values (e.g. `K = c(20, 50, 100)`) choose K: see "Choosing K".
#' @param local The engine, i.e. how each document's topics are inferred:
#'   `"cvb0"` (default: SCVB0, stochastic collapsed variational Bayes, the
#'   fastest with the best held-out score measured, see "Which engine"
#'   below and [scvb0]), `"vb"` (variational Bayes with sparse
#'   responsibilities and an exact objective you can watch, memoized by
#'   default: the default engine before SCVB0), `"gibbs"` (Gibbs
#'   sampling within stochastic VB, for very many topics) or `"ope"` (Than &
#'   Doan's online MAP). Each engine has its own default `global`;
#'   [lda_combinations] lists every valid pair.
#' @param global How the topics are updated from the documents: `NULL`
#'   (default) takes the engine's own (`"stochastic"` for the default
#'   `"cvb0"`, its only one). `"memoized"` (default for `"vb"`)
#'   remembers each batch's contribution and replaces it when the batch is
#'   seen again, so the objective never decreases and more laps never hurt;
#'   `"stochastic"` takes a step towards each batch's estimate (cheaper per
#'   lap, no objective); `"streaming"` sees each document once; `"batch"`
#'   updates once per pass over all documents. Memoized training holds the
#'   initial topics during its first lap until every batch has been seen,
#'   then updates them after every batch.
#' @param L For `local = "vb"`: how many topics each word of a document may
#'   belong to, 1 to `K`: each word keeps its `L` most likely topics (the
#'   rest are set to zero), which makes each step cost grow with `L`, not
#'   `K`. Default `min(8, K)`; `L = K` is classic (dense) variational Bayes.
#'   The other engines (the default `"cvb0"` included) keep every topic of
#'   every word; for them `L` only sets the default of `doc_topics`.
#' @param alpha Document-topic smoothing (> 0). `NULL` takes the engine's
#'   default (0.1 for `"cvb0"`, as in Foulds et al., and for `"vb"`, chosen on validation documents of kos and
#'   nips_f20: see `inst/bench/results/lda-sparse.txt`, part 5).
#' @param eta Topic-word smoothing (> 0), or `"learn"` (empirical Bayes,
#'   for `local = "vb"` only, an error with any other engine: between laps, eta is set to the value that maximises
#'   the bound given the expected counts (Minka's fixed point), and lambda
#'   follows it; it starts from `min(0.5, 2500 / V)`; the memoized ELBO keeps
#'   increasing; the path is `state$eta_path`). `NULL` takes the engine's
#'   default: 0.01 for `"cvb0"` (Foulds et al.'s) and for `"vb"` (measured across six corpora against
#'   scikit-learn by `inst/bench/defaults.R`: the most robust of 0.5, 0.01
#'   and `"learn"`; 0.5, the earlier default, fell behind on larger
#'   vocabularies).
#' @param n_batches,batch_size Number of batches, or documents per batch
#'   (give at most one). Default: the engine's: minibatches of 100
#'   documents for the default `"cvb0"` (Foulds et al.'s); batches of
#'   `max(100, D / 10)` documents for the others; `global = "batch"` uses
#'   one batch. Documents are assigned to batches
#'   once, at random; stochastic and streaming training visit the batches in a
#'   new random order every lap. Or give `batches`.
#' @param batches `NULL`, or your own batches: a list of vectors of document
#'   numbers (rows of `x`) that together hold every document once. A corpus
#'   on disk ([uci_source()]) brings its own batches.
#' @param passes Number of laps through the data (>= 1), default 10. The
#'   default engine (`"cvb0"`) runs them all (its held-out score was still
#'   improving at lap 10 on three of seven corpora:
#'   `inst/bench/results/cvb0-stop.txt`). An
#'   upper bound for memoized and batch training with `local = "vb"`, which
#'   stop once a lap moves the ELBO by less than `converge_tol` (default
#'   0.005, see `...`) of its size (the fit's `ended` says `"converged"`,
#'   `"passes"` or `"interrupted"`; `converge_tol = 0` runs every lap).
#'   Streaming makes one pass.
#' @param restarts For `local = "vb"`: run restart proposals after each
#'   document converges. `NULL` (default) takes the engine's default: `TRUE`
#'   for `"vb"` (in the first `restart_laps` laps, default all: without
#'   them the held-out score falls after lap 3 or 4, measured on kos,
#'   sotu_chunks and spamassassin). The other engines have no restart
#'   proposals: `restarts = TRUE` with them is an error (class
#'   `sparsevi_error_argument`), `FALSE` is accepted.
#' @param init `"bregman"` (default: Bregman k-means++ picks K diverse
#'   documents, and each topic starts from a near-uniform random base plus
#'   its document's counts; for `local = "gibbs"` the base is its mean, 1,
#'   held as one number in the engine's sparse store: see [lda_gibbs]; on
#'   corpora of more than max(5000, 10 K) documents it picks from a random
#'   pool of that many), `"random"` (the near-uniform base alone),
#'   `"sparse"` (`local = "gibbs"` only: every topic starts at the prior,
#'   held as an empty sparse store, so the start costs O(K + V) memory
#'   rather than a dense K x V table; the first minibatch's Gibbs samples
#'   break the symmetry, as in collapsed Gibbs sampling's random start),
#'   `"seeded"`
#'   (`local = "gibbs"` or `"cvb0"`: each topic is `eta` plus the counts of the
#'   document Bregman k-means++ chose for it, held sparsely: no K x V table,
#'   so the start hardly costs more at large K; but on 30,000 Wikipedia
#'   paragraphs at K = 100 its topics stayed near their seed documents, with
#'   UMass coherence -760 against -523 and held-out -9.73 against -9.27 for
#'   `"bregman"`: `inst/bench/results/paper-mimno.txt`; for `local = "cvb0"` the same
#'   start held as a dense table, without the random base: SCVB0's default
#'   when K x V exceeds 2^25 entries or 4 times the corpus's tokens (see
#'   [scvb0]), where one pass over 60,000 paragraphs
#'   at K = 1000 scores -8.95 against -9.53 nats per token from `"bregman"`:
#'   `inst/bench/results/scvb0.txt`, part 6), or
#'   a K x V matrix of positive initial topic parameters (lambda), e.g. the
#'   `lambda` of an earlier fit.
#' @param tau,kappa Step sizes of stochastic training,
#'   `rho_t = s (tau + t)^-kappa`; `tau >= 0` (default 1), `kappa` in
#'   (0.5, 1] (default 0.6).
#' @param seed `NULL` (draw from R's generator) or a whole number. The fit
#'   depends on the seed only, never on `threads`.
#' @param threads Number of threads (default `getOption("sparsevi.threads",
#'   1L)`).
#' @param progress Print a line per lap (lap, elapsed seconds, the objective
#'   where the engine has one (`"memoized"`, `"batch"`), the held-out score
#'   per token when `heldout` is given, estimated time left); default
#'   `interactive()`.
#' @param heldout `NULL` or test documents (a `sparsevi_heldout` from
#'   [split_heldout()], or a corpus, split 80/20 by word type) scored by
#'   [heldout_loglik()] after every lap.
#' @param cluster `NULL`, or a cluster from [parallel::makePSOCKcluster()]
#'   (workers on this or other machines, each with sparsevi installed). Each
#'   batch is sent once to a worker and stays there; every round the workers
#'   run the local steps of their batches and return only the batch
#'   summaries. The fit equals the fit without a cluster (for the same
#'   `sync`, which does not depend on the cluster).
#'   If a worker dies, the error (class `sparsevi_error_worker`) names it and
#'   carries the last completed model as its `fit` field. `"future"` (the
#'   current `future::plan()`) or a future plan object work too; see
#'   [sparsevi_cluster].
#' @param doc_topics How many topics to keep per training document in
#'   `doc_topic` (the fit's sparse document-topic proportions, see Value):
#'   default `L` (8 topics per document when K >= 8, for every engine);
#'   `0` or `FALSE` keeps none. They come from each
#'   document's local step in the last lap (no pass over the documents
#'   after training); an interrupted fit infers them with the final topics
#'   instead. `predict(fit)` returns them: with the default they are
#'   truncated (each document's `L` largest proportions, renormalised), so
#'   give `doc_topics = K` to keep the full posterior of every training
#'   document.
#' @param reuse_dead `FALSE` (default), `TRUE`, or a share of the tokens
#'   (default for `TRUE`: 0.001): after each lap but the last, every topic
#'   holding less than that share is re-seeded from one document (drawn by
#'   length from the fit's random streams; memoized training forgets the
#'   topic's cached statistics). Dead topics are reported by `print()` and
#'   listed by [dead_topics()]. For `local = "vb"` only: with any other
#'   engine (the default `"cvb0"` included) a share above 0 is an error
#'   (class `sparsevi_error_argument`; [prune_topics()] works for every
#'   engine); the memoized objective may fall on the lap after a re-seed.
#' @param sync Batches whose local steps share one set of global parameters
#'   (a round; they run in parallel on a cluster), their global steps then
#'   applied in batch order. Default 1 (one batch at a time), with or
#'   without a cluster, so a fit on a cluster equals the fit without one;
#'   set it to the number of workers to run a round's batches in parallel.
#' @param ... Engine controls. For `"vb"`: `max_iter` (100), `tol` (0.05),
#'   `restart_max` (proposals per document, 4), `restart_iter` (forward
#'   iterations of a proposal, 10), `select_every` (`FALSE`: select on
#'   iterations 1-5 and every 10th), `active_eps` (1e-8), `restart_laps`
#'   (the laps with restart proposals, default all), `converge_tol` (0.005:
#'   memoized and batch training stop once a lap moves the ELBO by less than
#'   this share of it; 0 runs every lap), `warm_start` (`FALSE`: `TRUE`
#'   starts each document from its state of the previous lap).
#'   For `"cvb0"`: `doc_s`, `doc_tau`, `doc_kappa`, `burnin`, `shuffle`,
#'   `infer_passes`; for `"gibbs"`: `burnin`, `samples`, `rescale_below`;
#'   any engine: `step_scale`. An unknown control is an error.
#' @returns A `sparsevi_lda` object, a list with `topic_word` (K x V, rows
#'   sum to 1, vocabulary as column names; a fit with `lambda` stores
#'   `lambda` alone and `fit$topic_word` is built from it each time it is
#'   read: read it once into a variable in a loop), `lambda` (K x V variational
#'   Dirichlet parameters, or `NULL`), `alpha`, `eta`, `K`, `vocab`, `local`,
#'   `global`, `L`, `control` (every setting), `trace` (a data frame with
#'   one row per lap: `lap`, `seconds` of training (wall clock, without the
#'   objective and held-out evaluation), `cpu_seconds` (the same span in CPU
#'   time of this R process, all its threads: steadier than `seconds` on a
#'   shared machine; work done by `cluster` workers is not counted),
#'   `objective` (the ELBO
#'   for memoized and batch training with `local = "vb"`; `NA` for the
#'   default SCVB0 and every other engine or global step, which have no
#'   training objective: `heldout` is the score to watch), `heldout`
#'   (per-token held-out log-likelihood, or `NA`), `restart_accept`
#'   (acceptance rate of the `"vb"` step's restart proposals, else `NA`)), `n_docs`, `n_tokens`, `reused_dead` (with
#'   `reuse_dead`: topics re-seeded after each lap, else `NULL`), `doc_topic` (the training
#'   documents' topic proportions: a sparse D x K `dgCMatrix` holding, for
#'   each document, its `doc_topics` largest posterior-mean proportions
#'   renormalised to sum to 1, from the last lap's local steps;
#'   `NULL` if `doc_topics = 0`; [predict()] without `newdata` returns it),
#'   `ended` (how training ended: `"converged"`, `"passes"` or
#'   `"interrupted"`),
#'   `heldout` (the `heldout` documents, scored again by [update()]),
#'   `state` (what [update()] needs to continue) and `call`; with several
#'   `K`, also `select` (see "Choosing K").
#' @section Which engine:
#' Measured on seven corpora at K = 100, one thread, the same split and
#' held-out evaluator (document completion) for every system
#' (`inst/bench/results/defaults.txt` and `speed-after.txt`):
#' * `local = "cvb0"` (SCVB0, the default) is the fastest and scores best:
#'   0.5 to 2.6 CPU seconds per 10-lap fit against 7.5 to 21.3 for `"vb"`
#'   (memoized, converged after 5 to 7 laps), with a held-out score higher
#'   on all seven corpora by 0.03 (moviereviews) to 0.22 (wikipara20000)
#'   nats per token. The whole default call `fit_lda(x, K = 100)` took
#'   1.2% to 3.7% of the CPU time of scikit-learn's batch LDA (10
#'   iterations) and 0.5% to 2.0% of topicmodels' collapsed Gibbs sampler
#'   (300 iterations), ending 0.02 to 0.66 nats per token above both, and
#'   3.1% to 8.2% of text2vec's WarpLDA, ending 0.17 to 0.59 above it
#'   (all in one run:
#'   `inst/bench/results/speed-after.txt`). On 60,000
#'   Wikipedia paragraphs, one pass, it scores -8.75 at K = 100 and -8.95
#'   at K = 1000. It has no training objective (the trace's `objective` is
#'   `NA`): give `heldout` to watch its progress.
#' * `local = "vb"` (memoized) has an exact objective that never
#'   decreases, continues cleanly with [update()], and offers
#'   `eta = "learn"`, `reuse_dead` and L-sparse responsibilities. It stops
#'   when a lap moves the objective by less than `converge_tol` (5 to 7
#'   laps on seven corpora), with a held-out score above scikit-learn's
#'   batch LDA (10 iterations) on every corpus, reached in 5% to 13% of
#'   scikit-learn's time (`inst/bench/results/speed.txt`).
#' * `local = "gibbs"` for many topics: its time per minibatch hardly grows
#'   with K (nips_f20: 0.27 s at K = 1000 and at K = 2000, against 0.63 s
#'   and 1.20 s for online VB; slower than VB at K = 100;
#'   `inst/bench/results/gibbs.txt`), and a one-pass fit costs 1.7 to 2.2
#'   times more at K = 1000 than at K = 100 (kos, Wikipedia paragraphs:
#'   `inst/bench/results/gibbs-k.txt`).
#' * `local = "ope"` (Online-OPE, Streaming-OPE) reached online VB's final
#'   predictive score 2.9 to 20.8 times sooner on two corpora
#'   (`inst/bench/results/ope.txt`).
#'
#' `vignette("engines")` compares them in more detail.
#'
#' @section Memory and interruptions:
#' A fit holds one dense K x V table of topics at a time (plus scratch of K
#' times a batch's vocabulary): its start becomes the topic store in place,
#' and the fit's `lambda` is built in that table at the end; `topic_word`
#' is computed from it when read. An error or interrupt (Ctrl-C) during a lap returns
#' the fit after the last completed lap, with a warning of class
#' `sparsevi_warning_interrupted`. To keep that lap's topics, a lap works on
#' a copy of the store while memory is plentiful. A store larger than
#' `getOption("sparsevi.snapshot_bytes")` is instead written to a file in
#' [tempdir()] before each lap and read back if the lap fails, so that the
#' fit never holds two tables; the file is removed when the fit returns.
#' The default, `"auto"`, does so when the table exceeds a quarter of the
#' memory the system has available at the lap's start (Linux; elsewhere
#' give a number of bytes to enable it): writing costs from about one to
#' many seconds per GB and lap, depending on the disk. The fit is the same
#' either way.
#'
#' The topic tables are allocated outside R's heap (an R matrix all the
#' same, saved and copied as one): a 100 MB table then no longer makes R
#' run a full garbage collection first, which took 0.1 to 0.3 s per call
#' with Matrix loaded. [gc()] does not count them; [object.size()] and the
#' process's memory do. Tables of dropped fits are freed by R's collector,
#' which sparsevi runs itself before they exceed twice the memory of the
#' tables still in use (and 256 MB).
#'
#' @section Choosing K:
#' Give several values, e.g. `fit_lda(x, K = c(10, 20, 40))`. Each K is
#' fitted with the same settings and seed on 90% of the documents and
#' scored by document completion ([heldout_loglik()]) on the other 10% (one
#' split, made once with `seed`, shared by every K); the K with the best
#' held-out score is then fitted again on all the documents. The result is
#' exactly `fit_lda(x, K = <chosen>, ...)`, plus `select`: a data frame
#' with one row per K (`K`, `heldout` (validation score per token),
#' `coherence` (mean UMass coherence on the fitting documents, top 10
#' words), `seconds` (training), `wall_seconds` (the whole fit), `laps`,
#' `chosen`). [print()] shows the table and `plot(fit, type = "select")`
#' draws it. `L` and `doc_topics` are capped at each K; `heldout`, if
#' given, is scored by the final fit only (it plays no part in the choice).
#' A corpus on disk is not supported. Cost: one fit per K on 90% of the
#' documents plus one refit. On kos and poliblog5k this took 1.24 to 1.27
#' times the CPU time of fitting each K once on all documents with `"vb"`
#' (K = 10, 20, 40), and 1.10 to 1.81 times with `"cvb0"` (K = 25 to 200);
#' in all four runs it chose the K that scored best on test documents it
#' never saw (`inst/bench/results/select-k.txt`). When the largest (or
#' smallest) K of the grid is chosen, widen the grid.
#'
#' @section Differences from the paper:
#' The default engine is Foulds et al.'s SCVB0; its departures from the
#' paper (the topic step schedule \eqn{(1 + t)^{-0.6}}, no burn-in pass,
#' the Bregman start, the seeded start when K x V exceeds 2^25) are in
#' [scvb0], each with the setting that restores the paper's choice. With
#' `local = "vb"`, Hughes & Sudderth's L-sparse memoized VB, what differs
#' from their paper:
#' * **Priors** `alpha = 0.1`, `eta = 0.01`, chosen by held-out score on
#'   six corpora (`inst/bench/results/defaults.txt`); the authors' code
#'   (bnpy) defaults to larger smoothing, 0.5 and 0.1. Give `alpha`, `eta`.
#' * **The first memoized lap is a batch lap:** the initial topics are held
#'   until every batch has been seen. The paper updates the topics after
#'   every first-lap batch, which settled in poorer optima here (kos,
#'   K = 100, 10 laps: held-out -7.4998 against -7.4599). No setting
#'   restores it; `global = "stochastic"` updates after every batch.
#' * **Stopping:** training stops when a lap moves the objective by less than
#'   `converge_tol` (0.005 of it), so `passes` is an upper bound; the paper
#'   runs a fixed number of laps. `converge_tol = 0` runs every lap.
#' * **Cold starts with restarts** every lap, as in the paper (its App. D);
#'   `warm_start = TRUE` starts each document from its previous lap instead
#'   (cheaper laps, lower held-out scores: `inst/bench/results/speed.txt`).
#' * **Seeding** by Bregman k-means++ over documents (`init = "bregman"`) as
#'   in the paper, for every engine; the OPE, SCVB0 and Gibbs papers start
#'   at random: `init = "random"`.
#' * **Batches** of `max(100, D / 10)` documents; give `n_batches` or
#'   `batch_size` for the paper's.
#' The other engines' departures are in [ope], [scvb0] and [lda_gibbs].
#'
#' @examples
#' sim <- simulate_lda(D = 60, V = 40, K = 3, seed = 1)
#' fit <- fit_lda(sim$dtm, K = 3, passes = 5, seed = 1) # SCVB0
#' fit
#' terms(fit, 5)
#' # L-sparse memoized VB, with an objective that never decreases
#' fit_vb <- fit_lda(sim$dtm, K = 3, local = "vb", L = 2, passes = 5, seed = 1)
#' fit_vb$trace$objective
#' @export
fit_lda <- function(x, K, local = "cvb0", global = NULL, L = min(8, K), alpha = NULL,
                    eta = NULL, n_batches = NULL, batch_size = NULL, passes = 10,
                    restarts = NULL, init = c("bregman", "random", "sparse", "seeded"), tau = 1, kappa = 0.6,
                    seed = NULL, threads = getOption("sparsevi.threads", 1L),
                    progress = interactive(), heldout = NULL, batches = NULL,
                    cluster = NULL, sync = NULL, doc_topics = L, reuse_dead = FALSE, ...) {
  if (!missing(K) && length(K) > 1L) {
    # several K: fit each and keep the best (R/lda-select.R), with the
    # arguments the user gave (their values, forced here)
    given <- setdiff(intersect(names(match.call())[-1L], names(formals(sys.function()))),
                     "...")
    return(lda_select_k(c(mget(given), list(...)), match.call()))
  }
  call <- match.call()
  here <- sys.call()
  passes_given <- !missing(passes)
  if (!inherits(x, "sparsevi_source")) x <- as_dtm(x)
  D <- nrow(x)
  V <- ncol(x)
  if (missing(K)) abort("`K`, the number of topics, is missing.", "argument", call = here)
  K <- check_count(K, "K", min = 2, max = V, call = here)
  if (!inherits(x, "sparsevi_source")) check_nonempty_dtm(x, "x", call = here)
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
  dead_share <- check_reuse_dead(reuse_dead, local, call = here)
  if (is.null(alpha)) alpha <- if (is.na(defaults$alpha)) 1 / K else defaults$alpha
  if (is.null(eta)) eta <- if (is.na(defaults$eta)) 1 / K else defaults$eta
  alpha <- check_positive(alpha, "alpha", call = here)
  eta_learn <- identical(eta, "learn")
  if (eta_learn) {
    if (local != "vb") {
      abort(sprintf("`eta = \"learn\"` is for the \"vb\" local step; give a number for `local = \"%s\"`.",
                    local), "argument", call = here)
    }
    eta <- eta_learn_start(V)
  }
  eta <- check_positive(eta, "eta", call = here)
  passes <- check_count(passes, "passes", min = 1, max = 1e6, call = here)
  if (global == "streaming" && passes > 1) {
    if (passes_given) {
      warn("Streaming training makes a single pass over the data; `passes` is set to 1.",
           "passes", call = here)
    }
    passes <- 1L
  }
  restarts <- check_restarts(restarts, local, call = here)
  init_lambda <- NULL
  if (missing(init) && !is.null(defaults$sparse_start_above) &&
      as.double(K) * V > defaults$sparse_start_above) {
    init <- "sparse" # a large table: the engine's sparse start
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
  tau <- check_number(tau, "tau", lower = 0, call = here)
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
                                                        call = here)
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
                    reuse_dead = dead_share > 0, dead_share = dead_share,
                    eta_learn = eta_learn, doc_topics = doc_topics,
                    init_lambda = init_lambda),
               dots)
  control$step_scale <- if (is.null(dots$step_scale)) defaults$step_scale else
    check_positive(dots$step_scale, "step_scale", call = here)
  # the global step's form is the registry's choice (engine$global); its
  # label stays in the fit (the engine's finish and end_lap read it)
  engine <- lda_engine(local)
  control$global_step <- engine$global_step[[global]]
  if (!is.null(engine$control)) control <- engine$control(control, call = here)
  # what lda_train() needs of a fit: no topics are built before training, and
  # the start is referenced by lda_train() alone (an engine that swaps it for
  # a store of its own frees it)
  fit <- lda_train(list(control = control, state = lda_init_state(x, control),
                        trace = lda_empty_trace(), call = call),
                   x, passes, progress, heldout, cluster)
  lda_keep(fit, x, heldout, doc_topics)
}

# `restarts`: NULL is the engine's default (TRUE for "vb", the only engine
# with restart proposals); TRUE for another engine is an error rather than
# a setting that silently does nothing; FALSE is what the others do anyway.
check_restarts <- function(restarts, local, call = caller_call()) {
  if (is.null(restarts)) return(identical(local, "vb"))
  restarts <- check_flag(restarts, "restarts", call = call)
  if (restarts && !identical(local, "vb")) {
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

lda_resolve_batches <- function(D, global, n_batches, batch_size, call = caller_call()) {
  if (!is.null(n_batches) && !is.null(batch_size)) {
    abort("Give `n_batches` or `batch_size`, not both.", "argument", call = call)
  }
  if (global == "batch") {
    if ((!is.null(n_batches) && n_batches != 1) || (!is.null(batch_size) && batch_size < D)) {
      abort("`global = \"batch\"` uses all documents in one batch; drop `n_batches`/`batch_size` or use `global = \"memoized\"`.",
            "argument", call = call)
    }
    return(list(n_batches = 1L, batch_size = D))
  }
  if (!is.null(n_batches)) {
    n_batches <- check_count(n_batches, "n_batches", min = 1, max = D, call = call)
    batch_size <- as.integer(ceiling(D / n_batches))
  } else {
    if (is.null(batch_size)) batch_size <- max(100, ceiling(D / 10))
    batch_size <- check_count(batch_size, "batch_size", min = 1, max = .Machine$integer.max,
                              call = call)
    batch_size <- min(batch_size, D)
    n_batches <- as.integer(ceiling(D / batch_size))
  }
  list(n_batches = as.integer(n_batches), batch_size = as.integer(batch_size))
}

# Uniforms from stream `stream` of the fit's seed.
lda_unif <- function(seed, stream, n) {
  .Call(ffi_svi_rng_unif, seed, as.double(stream), as.double(n))
}

# A seed for one (lap, batch), so local steps draw the same numbers whatever
# the thread count.
lda_batch_seed <- function(seed, lap, batch) {
  floor(lda_unif(seed, 1e6 + lap * 1e5 + batch, 2) * 4294967296)
}

lda_init_state <- function(x, control) {
  K <- control$K
  # A corpus on disk is initialised from its first batch (the documents the
  # seeding can see without reading everything).
  x0 <- if (inherits(x, "sparsevi_source")) source_batch(x, 1L) else x
  if (nrow(x0) < K && control$init %in% c("bregman", "seeded")) control$init <- "random"
  if (control$init == "sparse") {
    # the engine holds its start itself, sparsely (gibbs: an empty store,
    # lambda = eta everywhere; the first minibatch's samples break the tie)
    return(lda_engine(control$local)$start$sparse(control, ncol(x)))
  }
  if (control$init %in% c("bregman", "seeded") && nrow(x0) > bregman_pool(K)) {
    # k-means++ costs O(K nnz): seed from a random pool of documents
    pick <- order(lda_unif(control$seed, 903, nrow(x0)))[seq_len(bregman_pool(K))]
    x0 <- dtm_subset(x0, sort(pick))
  }
  seeded <- lda_engine(control$local)$start[[control$init]]
  if (control$init %in% c("bregman", "seeded") && !is.null(seeded)) {
    # the engine holds the seeding itself, sparsely (gibbs: eta plus each
    # topic's chosen document, and for "bregman" a uniform base held as one
    # number, no dense K x V table)
    return(seeded(x0, lda_bregman_pick(x0, K, control$eta, control$seed), control, ncol(x)))
  }
  lambda <- switch(control$init,
    given = control$init_lambda,
    bregman = lda_init_bregman(x0, K, control$eta, control$seed),
    random = lda_init_random(x0, K, control$eta, control$seed)
  )
  state <- list(lambda = lambda, t = 0L)
  if (control$global %in% c("memoized", "batch")) {
    # a lazy memoized step starts from an empty store of its own
    if (!identical(control$global_step, "memoized_lazy")) state$S <- matrix(0, K, ncol(x))
    state$cache <- vector("list", control$n_batches)
    state$doc_obj <- rep(NA_real_, control$n_batches)
  }
  state
}

# Batches of a corpus: fixed for the whole fit (memoized caches are per batch,
# and on a cluster each batch stays on its worker); stochastic and streaming
# training visit them in a new random order every lap. A source's batches are
# its files.
lda_members <- function(x, control) {
  if (inherits(x, "sparsevi_source")) return(as.list(seq_along(x$files)))
  if (!is.null(control$batches) && sum(lengths(control$batches)) == nrow(x)) {
    return(control$batches)
  }
  batch_of <- lda_assign_batches(nrow(x), control$n_batches, control$seed)
  split(seq_len(nrow(x)), factor(batch_of, levels = seq_len(control$n_batches)))
}

# Number of batches of a source (its files); n_batches/batch_size cannot
# change them.
source_batches <- function(x, global, n_batches, batch_size, call = caller_call()) {
  nb <- length(x$files)
  if (!is.null(batch_size) || (!is.null(n_batches) && n_batches != nb)) {
    abort(sprintf("A corpus on disk comes in the %d batches it was written in; drop `n_batches`/`batch_size`, or remake it with uci_source(batch_size = ).",
                  nb), "argument", call = call)
  }
  if (global == "batch" && nb != 1L) {
    abort("`global = \"batch\"` needs all documents in one batch; use `global = \"memoized\"` with a corpus on disk.",
          "argument", call = call)
  }
  list(n_batches = nb, batch_size = as.integer(max(x$n_docs)))
}

# Batch b of a corpus in memory or on disk.
lda_batch <- function(x, members, b) {
  if (inherits(x, "sparsevi_source")) source_batch(x, b) else dtm_subset(x, members[[b]])
}

# The executor's reader of a fit's batches (function(b)). A corpus in memory
# of at most lda_batch_cache_max entries keeps each batch once made, for the
# later laps: a second copy of the corpus (12 bytes an entry) instead of a
# new one every lap (every lap re-made every minibatch: 40 of the 307 MB a
# default fit on spamassassin allocated, which R's collector then cleared).
# A corpus on disk is read batch by batch, and a larger one re-made. A
# training call of one lap keeps nothing: no batch is read twice, and the
# kept batches only grew the live heap during the lap (a one-pass OPE fit
# over 60,000 Wikipedia paragraphs at K = 100: garbage collection 0.50 ->
# 0.37 s, peak memory 0.48 -> 0.43 GB).
lda_batch_reader <- function(x, members, laps = 2L) {
  if (inherits(x, "sparsevi_source") || length(x$term) > lda_batch_cache_max || laps < 2L) {
    return(function(b) lda_batch(x, members, b))
  }
  cache <- vector("list", length(members))
  function(b) {
    if (is.null(cache[[b]])) cache[[b]] <<- lda_batch(x, members, b)
    cache[[b]]
  }
}

# Entries of the largest corpus whose batches are kept (about 100 MB).
lda_batch_cache_max <- 2^23

# The local step of one batch, as the executor (here or on a worker) runs it:
# the engine's own (engine$local, R/engines.R).
lda_batch_step <- function(batch, seed, state, control) {
  lda_engine(control$local)$local(batch, state, control, seed, control$threads)
}

check_batches <- function(batches, D, n_batches, batch_size, global, call = caller_call()) {
  if (!is.null(n_batches) || !is.null(batch_size)) {
    abort("Give `batches`, or `n_batches`/`batch_size`, not both.", "argument", call = call)
  }
  ok <- is.list(batches) && length(batches) >= 1L &&
    all(vapply(batches, function(b) is.numeric(b) && length(b) > 0 && !anyNA(b), TRUE))
  if (ok) {
    all_docs <- unlist(batches, use.names = FALSE)
    ok <- length(all_docs) == D && all(all_docs == round(all_docs)) &&
      identical(sort(as.integer(all_docs)), seq_len(D))
  }
  if (!ok) {
    abort(sprintf("`batches` must be a list of non-empty vectors of document numbers that together hold each of the %s documents exactly once.",
                  fmt_int(D)), "argument", call = call)
  }
  if (global == "batch" && length(batches) != 1L) {
    abort("`global = \"batch\"` uses one batch; give a single batch or use `global = \"memoized\"`.",
          "argument", call = call)
  }
  lapply(batches, as.integer)
}

check_init_lambda <- function(init, K, V, call = caller_call()) {
  if (!is.numeric(init) || !identical(dim(init), c(as.integer(K), as.integer(V))) ||
      anyNA(init) || any(!is.finite(init)) || any(init <= 0)) {
    abort(sprintf("A matrix `init` must be K x V (%d x %s) with positive finite entries (initial topic parameters).",
                  K, fmt_int(V)), "argument", call = call)
  }
  storage.mode(init) <- "double"
  unname(init)
}

corpus_tokens <- function(x) {
  if (inherits(x, "sparsevi_source")) sum(x$n_tokens) else sum(x$count)
}

# Documents to batches, once, by a random permutation from our streams.
lda_assign_batches <- function(D, n_batches, seed, stream = 500) {
  perm <- order(lda_unif(seed, stream, D))
  b <- integer(D)
  b[perm] <- (seq_len(D) - 1L) %% n_batches + 1L
  b
}

# Documents the Bregman seeding draws from: all of a corpus up to 10 per
# topic (at least 5,000), else a random pool of that many (its cost is
# O(K nnz) of the pool: at K = 1000 over 60,000 Wikipedia paragraphs the
# whole corpus took most of a one-pass fit's time).
bregman_pool <- function(K) max(5000L, 10L * as.integer(K))

# Bregman k-means++ over documents (Hughes & Sudderth section 6): the first
# document at random, each next with probability proportional to its smallest
# KL divergence from the smoothed word distributions of those chosen;
# lambda_k = the random init's near-uniform lambda plus the counts of the k-th
# chosen document (seeding lambda_k with eta + counts alone made topics so
# peaked that training stalled in poor optima on kos and nips).
lda_init_bregman <- function(x, K, eta, seed) {
  # a near-uniform base (as the random init) keeps every word in every topic
  # from the start; each topic then leans towards its chosen document
  # (the pick first: its O(V) temporaries per topic are collected before the
  # K x V table exists, not left beside it; separate streams, same result)
  chosen <- lda_bregman_pick(x, K, eta, seed)
  lambda <- lda_init_random(x, K, eta, seed)
  s <- lda_seed_counts(x, chosen)
  at <- cbind(s$k + 1L, s$v + 1L)
  lambda[at] <- lambda[at] + s$x
  lambda
}

# The counts of the documents the Bregman pick chose, topic k from the k-th:
# triples k (0-based topic), v (0-based word), x (count), topic by topic and,
# within a topic, in the document's word order. A document's words are
# distinct, so each (k, v) occurs once. Every seeded start reads them:
# lda_init_bregman(), lda_gibbs_seeded_start(), lda_cvb0_seeded_start().
lda_seed_counts <- function(x, chosen) {
  n <- x$doc_ptr[chosen + 1L] - x$doc_ptr[chosen]
  idx <- sequence(n, from = x$doc_ptr[chosen] + 1L)
  list(k = rep.int(seq_along(chosen) - 1L, n), v = x$term[idx], x = as.double(x$count[idx]))
}

# The K documents Bregman k-means++ picks (in topic order), in C through an
# inverted index: each topic costs O(D + the entries sharing a word with
# its document), not O(nnz) (issue 20: the R form below was a third of a
# one-pass gibbs fit at K = 1000 on 1,000 kos documents). The documents of
# the R form (its KL values may differ from the R form's in the last bits,
# which can change a pick only where a draw falls exactly on a boundary).
lda_bregman_pick <- function(x, K, eta, seed) {
  lens <- doc_lengths(x)
  p <- as.double(x$count / lens[rep.int(seq_len(nrow(x)), diff(x$doc_ptr))])
  self <- .Call(ffi_dtm_doc_dot, x$doc_ptr, x$term, p * log(p), rep(1, ncol(x)))
  .Call(ffi_lda_bregman_pick, x, ncol(x), as.integer(K), as.double(eta), p, self,
        as.double(lens), lda_unif(seed, 901, K))
}

# The pure-R form of lda_bregman_pick() (the reference of its C).
lda_bregman_pick_r <- function(x, K, eta, seed) {
  D <- nrow(x)
  V <- ncol(x)
  lens <- doc_lengths(x)
  doc_of <- rep.int(seq_len(D), diff(x$doc_ptr))
  p <- x$count / lens[doc_of]
  doc_dot <- function(w, v) .Call(ffi_dtm_doc_dot, x$doc_ptr, x$term, w, v)
  self <- doc_dot(p * log(p), rep(1, V)) # sum_j p_j log p_j
  u <- lda_unif(seed, 901, K)
  mind <- ifelse(lens > 0, Inf, 0)
  chosen <- integer(0)
  smooth <- eta
  # (the same values as before, without per-topic ifelse() and O(V)
  # allocations: at K = 1000 the pick was a tenth of a one-pass default fit)
  logmu <- double(V)
  for (k in seq_len(K)) {
    fin <- is.finite(mind)
    w <- if (k == 1L || !any(fin & mind > 0)) {
      as.double(lens > 0 & !(seq_len(D) %in% chosen))
    } else {
      w <- mind
      w[!fin] <- 0
      w
    }
    if (sum(w) <= 0) w <- as.double(!(seq_len(D) %in% chosen))
    if (sum(w) <= 0) w <- rep(1, D)
    d <- min(D, findInterval(u[k] * sum(w), cumsum(w)) + 1L)
    while (w[d] <= 0 && d > 1L) d <- d - 1L
    chosen <- c(chosen, d)
    idx <- (x$doc_ptr[d] + 1L):x$doc_ptr[d + 1L]
    idx <- idx[idx > x$doc_ptr[d]]
    terms <- x$term[idx] + 1L
    cnt <- x$count[idx]
    nc <- sum(cnt)
    logmu[] <- log(smooth / (nc + V * smooth))
    logmu[terms] <- log((smooth + cnt) / (nc + V * smooth))
    cross <- doc_dot(p, logmu)
    kl <- pmax(self - cross, 0)
    kl[lens == 0] <- 0
    mind <- pmin(mind, kl)
    mind[chosen] <- 0
  }
  chosen
}

# Random fallback: lambda_kv ~ Gamma(100, rate 100), near-uniform topics
# with the symmetry broken by small noise (as Hoffman et al.'s online LDA).
# The Gamma quantiles come from the Wilson-Hilferty transform of normal ones
# (abs. error < 2e-3 at shape 100): qgamma() itself took ~1 us per entry, 13 s
# for K = 100 over a 129k-term vocabulary. Filled in C in one pass
# (src/lda-init.c); gamma100_quantile() is its R reference.
lda_init_random <- function(x, K, eta, seed) {
  .Call(ffi_lda_init_random, seed, 902, as.integer(K), ncol(x), as.double(eta))
}

gamma100_quantile <- function(u) {
  c9 <- 1 / 900
  z <- pmax(1 - c9 + stats::qnorm(u) * sqrt(c9), 0)
  z * z * z
}

# The trace of an LDA fit: the common columns (R/train.R) and the acceptance
# rate of the vb step's restart proposals.
lda_trace_extras <- "restart_accept"
lda_empty_trace <- function() train_empty_trace(lda_trace_extras)

# Topic-word point estimate of a state: the posterior mean of the topics, or
# the `beta` a point-estimate learner (e.g. ML-OPE) keeps.
lda_state_topic_word <- function(state) {
  if (!is.null(state$beta)) return(state$beta)
  lda_normalise_rows(state$lambda)
}

# lambda / rowSums(lambda), bit for bit (long double row sums column after
# column, as rowSums() adds), in a new table by one pass in C: R's recycled
# division took 0.34 s of a 2.3 s default call at K = 100, V = 129,289. The
# R expression is its reference (test-lda-init.R).
lda_normalise_rows <- function(lambda) {
  .Call(ffi_lda_ope_rows, lambda,
        list(r_sums = TRUE, divide = TRUE, in_place = FALSE, given = FALSE, mark = 0L))
}

# An engine may hold its topics in a form of its own during training (cvb0:
# a lazy store kept across laps); its engine$finish() returns the state with
# its dense lambda, for whatever reads the topics (a fit, a held-out score).
# `in_place` (the end of training only): lambda is built in the store's own
# table (R/lda-store.R), no second K x V table.
lda_finish_state <- function(state, control, in_place = FALSE) {
  finish <- lda_engine(control$local)$finish
  if (is.null(finish)) state else finish(state, control, in_place = in_place)
}

# Above this many K x V entries a table counts as large: a memoized store's
# first fill collects each batch's dense blocks and a memoized fit keeps its
# sums S alone (lda-global.R, lda-vb.R). (A fit keeps its topics as
# `lambda` only at every size and builds the dense `topic_word` when it is
# read, `$.sparsevi_lda`.)
lda_dense_topics_max <- 2^25

new_sparsevi_lda <- function(state, control, x, trace, call, in_place = FALSE) {
  state <- lda_finish_state(state, control, in_place)
  # topic_word is built from lambda when read (`$.sparsevi_lda`), at every
  # size: the fit holds one K x V table, and the call does not pay for a
  # second (at K = 100, V = 129,289 it was a tenth of a default one-pass call)
  tw <- NULL
  if (!is.null(state$beta)) {
    # a point-estimate learner's beta (ML-OPE) is the fit's topic_word
    # itself, named in place at the end of training: one K x V table, not two
    state$beta <- lda_ope_topic_word(state$beta, x$vocab)
    tw <- state$beta
  }
  structure(
    list(topic_word = tw, lambda = if (is.null(state$beta)) state$lambda else NULL,
         alpha = control$alpha, eta = control$eta, K = control$K, vocab = x$vocab,
         local = control$local, global = control$global, L = control$L,
         control = control, trace = trace, n_docs = nrow(x), n_tokens = corpus_tokens(x),
         reused_dead = state$reused, state = state, call = call),
    class = c("sparsevi_lda", "sparsevi_fit")
  )
}

validate_sparsevi_lda <- function(fit) {
  # the stored table, or lambda (a large fit builds topic_word when read);
  # entries are positive, so finite row sums mean finite entries
  tw <- .subset2(fit, "topic_word")
  if (is.null(tw)) tw <- .subset2(fit, "lambda")
  if (is.null(tw)) tw <- .subset2(.subset2(fit, "state"), "S") # lambda when read
  # a large fit's lambda with the row sums its engine tracked for it (SCVB0):
  # those, not another O(K V) pass
  st <- .subset2(fit, "state")
  known <- is.null(.subset2(fit, "topic_word")) && is.matrix(tw) &&
    length(st$tot) == nrow(tw) && !is.null(st$t) && identical(st$tot_t, st$t)
  rs <- if (known) st$tot else if (is.matrix(tw)) rowSums(tw) else NA_real_
  if (!is.matrix(tw) || nrow(tw) != fit$K || ncol(tw) != length(fit$vocab) ||
      !all(is.finite(rs)) ||
      (!is.null(.subset2(fit, "topic_word")) && any(abs(rs - 1) > 1e-8))) {
    abort("internal error: invalid topic-word matrix.", "internal")
  }
  fit
}

# fit$topic_word of a large fit is built from lambda when read (see
# lda_dense_topics_max), and so is fit$lambda of a large memoized fit, which
# keeps its sums S alone (lambda = eta + S); every other field is the list's
# own.
#' @export
`$.sparsevi_lda` <- function(x, name) {
  val <- .subset2(x, name, exact = FALSE)
  if (is.null(val) && identical(name, "lambda")) return(lda_fit_lambda(x))
  if (is.null(val) && identical(name, "topic_word")) {
    lam <- lda_fit_lambda(x)
    if (is.null(lam)) return(NULL)
    val <- lda_normalise_rows(lam)
    dimnames(val) <- list(NULL, .subset2(x, "vocab"))
  }
  val
}

#' @export
`[[.sparsevi_lda` <- function(x, i, ...) {
  if (identical(i, "topic_word") || identical(i, "lambda")) return(`$.sparsevi_lda`(x, i))
  .subset2(x, i, ...)
}

# A fit's lambda: its own, or built from the memoized sums S it keeps
# instead (a large memoized fit, lda_vb_finish()); NULL for ML-OPE (beta).
lda_fit_lambda <- function(fit) {
  lam <- .subset2(fit, "lambda")
  if (!is.null(lam)) return(lam)
  S <- .subset2(.subset2(fit, "state"), "S")
  if (is.null(S) || !is.null(.subset2(.subset2(fit, "state"), "beta"))) return(NULL)
  .Call(ffi_lda_lambda_from_stats, S, .subset2(fit, "eta"))
}

# One lap over the batches (train_rounds(), R/train.R); returns the new state
# and the lap's trace extras. Batches are taken in rounds of `control$sync`:
# the local steps of a round share the global parameters of the round's
# start (on a cluster they run in parallel, one worker per batch), then the
# global steps are applied in batch order. With sync = 1 this is the usual
# one-batch-at-a-time loop. The rounds are the same with or without a
# cluster, so are the fits.
lda_lap <- function(state, x, control, lap, ex, keep = NULL, warm_of = NULL, spare = NULL,
                    buffers = NULL) {
  # the lap works on its own copy of a topic store: the state it was given
  # stays the last completed lap's (R/train.R)
  state <- lda_store_lap_start(state, spare)
  # The engine's global step for this `global` (R/engines.R: e.g. gibbs runs
  # the sparse lazy form of "stochastic", lda_global_gibbs()).
  engine <- lda_engine(control$local)
  global_fun <- engine$global[[control$global]]
  nb <- control$n_batches
  visit <- if (control$global %in% c("memoized", "batch")) {
    seq_len(nb)
  } else {
    order(lda_unif(control$seed, 600 + lap, nb))
  }
  visit <- visit[ex$sizes[visit] > 0]
  # (No collection is forced here. While the topics were in R's heap, its
  # collector ran too seldom for the local steps' K x (batch vocabulary)
  # scratch, and the loop forced a collection every round or 128 MB; the
  # topic tables are outside R's heap now (src/table.c), R's heap stays
  # small and collects that scratch on its own. At K = 1000 over 60,000
  # Wikipedia paragraphs the forced collections took 3.15 of OPE's 31.2 s,
  # and without them 1.59 of 29.4 s, with the same peak memory: 1.52 GB; the
  # default 0.82 -> 0.25 s of 10 s, vb memoized 3.95 -> 2.44 s, 3.06 ->
  # 3.02 GB; inst/bench/results/large.txt.)
  # summary buffers (engines with summary_buffers, run here): each local
  # step gets one from `free` (an empty one at first: the step makes its
  # own, with room to spare) and the buffer goes back once the global step
  # has read that step's result, so the minibatches reuse a few buffers
  # instead of leaving one per minibatch to the garbage collector. `buffers`
  # (lda_train()) keeps them from lap to lap: a new set every lap was 36 of
  # the 128 MB a default fit on kos allocated.
  free <- if (isTRUE(engine$summary_buffers) && ex$kind == "local") buffers
  if (!is.null(free) && is.null(free$bufs)) free$bufs <- list()
  run_round <- function(round, state) {
    seeds <- lapply(round, function(b) {
      s <- lda_batch_seed(control$seed, lap, b)
      if (!is.null(warm_of)) attr(s, "warm") <- warm_of(b)
      # nothing reads this lap's document-topic counts: an engine may keep
      # them as working memory only (SCVB0)
      if (is.null(keep) && is.null(warm_of)) attr(s, "doc_topic") <- FALSE
      if (!is.null(free)) {
        n <- length(free$bufs)
        attr(s, "summary_buffer") <- if (n) free$bufs[[n]] else double(0)
        if (n) free$bufs[[n]] <- NULL
      }
      s
    })
    # restart proposals only in the first laps (vb: control$restart_laps)
    ctl <- control
    if (!is.null(ctl$restart_laps) && lap > ctl$restart_laps) ctl$restarts <- FALSE
    shared <- list(state = if (ex$kind == "cluster") lda_local_view(state) else state,
                   control = ctl)
    # (on a cluster: only the topic columns of each worker's words travel)
    executor_run(ex, round, lda_batch_step, shared, per = seeds, packages = "Matrix",
                 columns = lda_columns(control, length(x$vocab)))
  }
  tally <- function(acc, res) {
    if (is.null(res$stats$restart_tries)) return(acc)
    acc + c(res$stats$restart_tries, res$stats$restart_accepts)
  }
  r <- train_rounds(state, visit, if (is.null(control$sync)) 1L else control$sync, run_round,
                    function(state, res, b) {
                      if (!is.null(keep)) keep(res, b)
                      state <- global_fun(state, res, b, control)
                      # the step's summary is read: its buffer is free again
                      S <- if (!is.null(free)) res$summary
                      if (is.list(S) && !is.object(S) && is.double(S$x) && length(S$x)) {
                        free$bufs[[length(free$bufs) + 1L]] <- S$x
                      }
                      state
                    }, tally, c(0, 0))
  state <- r$state
  # an engine may finish a lap (gibbs: materialise its lazy sparse topics)
  if (!is.null(engine$end_lap)) state <- engine$end_lap(state, control)
  list(state = state,
       extras = list(restart_accept = if (r$acc[1] > 0) r$acc[2] / r$acc[1] else NA_real_,
                     bytes_sent = r$sent, bytes_received = r$received))
}

# The rows of two traces, one after the other; columns one lacks (a fit
# saved by an older version) are NA there.
trace_bind <- function(old, new) {
  cols <- union(names(new), names(old))
  fill <- function(d) {
    for (nm in setdiff(cols, names(d))) d[[nm]] <- rep(NA_real_, nrow(d))
    d[cols]
  }
  out <- rbind(fill(old), fill(new))
  rownames(out) <- NULL
  out
}

# What a local step needs of the global state: everything but the memoized
# caches and bookkeeping, which stay on the master.
lda_local_view <- function(state) {
  # a step reads a dense lambda when there is one (a memoized first lap
  # keeps its topics while its store fills)
  if (!is.null(state$lambda)) state$vbstore <- NULL
  state[setdiff(names(state), c("cache", "S", "doc_obj"))]
}

# Training laps of a topic model, through the one training loop (R/train.R).
lda_train <- function(fit, x, passes, progress, heldout, cluster = NULL) {
  control <- fit$control
  start <- fit$state
  # a large memoized fit keeps S alone: its lambda again, as training left it
  if (is.null(start$lambda) && !is.null(start$S) && is.null(start$beta)) {
    start$lambda <- .Call(ffi_lda_lambda_from_stats, start$S, control$eta)
  }
  trace <- fit$trace
  # a new fit's start is referenced by the training loop alone from here on
  # (take_start()), so that it is freed once the first lap has completed (or
  # as soon as an engine swaps its topics for a store of its own)
  if (!inherits(fit, "sparsevi_lda")) {
    fit$state <- NULL
    # ... and an engine's store may take the start's table itself (no second
    # K x V table: R/lda-store.R; a failed first lap is an error anyway), unless
    # it is the user's matrix (init = a matrix, kept in the control)
    if (!identical(control$init, "given")) start$start_owned <- TRUE
  }
  take_start <- function() {
    s <- start
    start <<- NULL
    s
  }
  lap0 <- if (nrow(trace)) max(trace$lap) else 0L
  sec0 <- if (nrow(trace)) max(trace$seconds) else 0
  cpu0 <- if (nrow(trace) && !is.null(trace$cpu_seconds)) {
    max(c(0, trace$cpu_seconds), na.rm = TRUE)
  } else 0
  members <- lda_members(x, control)
  ex <- tryCatch(new_executor(cluster, control$n_batches,
                              lda_batch_reader(x, members, passes),
                              if (inherits(x, "sparsevi_source")) x$n_docs
                              else lengths(members)),
                 sparsevi_error_worker = function(e) {
                   # update(): the model it was given; a new fit has none yet
                   e$fit <- if (inherits(fit, "sparsevi_lda")) fit
                   stop(e)
                 })
  on.exit(executor_close(ex), add = TRUE)
  stops <- !is.null(control$converge_tol) && control$converge_tol > 0 &&
    control$global %in% c("memoized", "batch")
  # with a convergence stop, `passes` is an upper bound and so is the ETA
  trainer <- new_trainer(progress, lap0 + passes, c(sec0, cpu0), upper_bound = stops,
                         heldout_unit = "/token")
  trainer$progress <- progress
  evaluate <- function(state) {
    list(objective = lda_objective(state, control),
         heldout = if (is.null(heldout)) NA_real_ else
           completion_score(lda_state_topic_word(lda_finish_state(state, control)),
                            control$alpha, heldout, control$threads))
  }
  # between laps: empirical Bayes eta, then re-seeding dead topics (the
  # control's eta changes for the laps that follow)
  between <- function(state, lap) {
    note <- ""
    state <- lda_finish_state(state, control) # the dense topics (a store is dropped)
    if (isTRUE(control$eta_learn)) {
      eb <- lda_learn_eta(state, control)
      state <- eb$state
      control$eta <<- eb$eta
      state$eta_path <- c(state$eta_path, eb$eta)
    }
    if (isTRUE(control$reuse_dead)) {
      rd <- lda_reuse_dead(state, x, control, lap)
      state <- rd$state
      state$reused <- c(state$reused, rd$n)
      if (rd$n > 0L) note <- sprintf("%d dead topics re-seeded", rd$n)
    }
    list(state = state, note = note)
  }
  # the training documents' proportions from each batch's latest local step
  # (lda_keep() turns the last lap's into the fit's doc_topic: no
  # re-inference after training)
  kept <- lda_kept_parts(x, members, control)
  # vb warm start: each batch's document-topic counts of its latest local
  # step, sparse (K x n), the start of its next one
  warm <- NULL
  if (identical(control$local, "vb") && isTRUE(control$warm_start) &&
      !inherits(x, "sparsevi_source")) {
    warm <- new.env(parent = emptyenv())
    warm$N <- vector("list", control$n_batches)
  }
  # the proportions are kept in the last scheduled lap only, or in every lap
  # when a stopping rule may make an earlier one the last (they were a tenth
  # of a default ten-lap call on kos, nine of them thrown away)
  last_lap <- lap0 + passes
  hook_for <- function(l) {
    add <- if (stops || l == last_lap) kept$add
    if (is.null(add) && is.null(warm)) return(NULL)
    function(res, b) {
      if (!is.null(add)) add(res, b)
      if (!is.null(warm) && is.matrix(res$doc_topic)) {
        warm$N[b] <- list(methods::as(res$doc_topic, "CsparseMatrix"))
      }
    }
  }
  warm_of <- if (!is.null(warm)) function(b) warm$N[[b]]
  on_worker_error <- function(err, state) {
    # a worker failed: the error carries the last completed model (none when
    # the first lap failed after its store took the start's table, or wrote
    # the start's own store)
    consumed <- lda_store_consumed(state)
    state$start_owned <- NULL
    err$fit <- if (!consumed) {
      new_sparsevi_lda(state, control, x, trace_bind(trace, trainer$frame(lda_trace_extras)),
                       fit$call)
    }
    stop(err)
  }
  # memoized / batch vb: `passes` is an upper bound, training stops once a
  # lap moves the ELBO by less than control$converge_tol of its size
  tol <- control$converge_tol
  converged <- if (stops) {
    function(previous, current) {
      !is.na(previous) && !is.na(current) && abs(current - previous) <= tol * abs(current)
    }
  }
  # a large topic store is kept safe on disk between laps, not copied
  # (lda_store_protect(), R/lda-store.R)
  lda_snapshot_bytes() # (a bad option is an error before training, not a failed lap)
  snapshot_files <- new.env(parent = emptyenv())
  # the tables earlier laps copied their stores into, for later laps to
  # copy into again (lda_store_lap_start())
  spare <- new.env(parent = emptyenv())
  # the summary buffers the laps pass on to each other (lda_lap())
  buffers <- new.env(parent = emptyenv())
  on.exit(lda_store_forget(snapshot_files), add = TRUE)
  run <- train_laps(take_start(), lap0 + seq_len(passes),
                    function(state, l) lda_lap(state, x, control, l, ex, hook_for(l), warm_of,
                                               spare, buffers),
                    evaluate,
                    trainer,
                    between = if (isTRUE(control$eta_learn) || isTRUE(control$reuse_dead))
                      between,
                    converged = converged,
                    on_worker_error = on_worker_error, fail_first = TRUE,
                    protect = function(state, l) lda_store_protect(state, snapshot_files),
                    recover = lda_store_recover)
  trace <- trace_bind(trace, trainer$frame(lda_trace_extras))
  state <- run$state
  run$state <- NULL
  state$snapshots <- NULL
  lda_store_forget(snapshot_files)
  state$start_owned <- NULL
  # the fit's lambda is built in the store's table (the store ends here)
  fit <- new_sparsevi_lda(state, control, x, trace, fit$call, in_place = TRUE)
  fit$ended <- run$ended
  # an interrupted lap kept some batches' proportions of its own: infer
  # them all with the final topics instead (lda_keep())
  fit$kept <- if (!identical(run$ended, "interrupted")) kept$env
  validate_sparsevi_lda(fit)
}

#' @export
print.sparsevi_lda <- function(x, ...) {
  tr <- x$trace
  pi <- x$prune_info
  cat(sprintf("<sparsevi_lda> %d topics, %s documents, %s tokens, %s terms\n", x$K,
              fmt_int(x$n_docs), fmt_int(x$n_tokens), fmt_int(length(x$vocab))))
  cat(sprintf("  engine: %s; %d laps in %.2fs\n", lda_engine_label(x), nrow(tr),
              if (nrow(tr)) max(tr$seconds) else 0))
  if (!is.null(x$select)) print_select(x$select, x$K)
  if (!is.null(x$ended)) {
    cat(sprintf("  training ended: %s\n", switch(x$ended,
      converged = "converged (a lap moved the ELBO by less than converge_tol; `passes` is an upper bound)",
      passes = "after the `passes` laps",
      interrupted = "interrupted (the fit of the last completed lap)",
      x$ended)))
  }
  # every figure below is of this object: after prune_topics(), the trace's
  # last row describes the model before pruning
  pruned_now <- !is.null(pi) && nrow(tr) && max(tr$lap) == pi$lap
  if (pruned_now) {
    cat(sprintf("  pruned topics %s (old numbers) after lap %d; the objective is recomputed by update()\n",
                paste(pi$topics, collapse = ", "), pi$lap))
    if (!is.na(pi$heldout_after)) {
      cat(sprintf("  held-out log-likelihood per token: %.4f (before pruning: %.4f)\n",
                  pi$heldout_after, pi$heldout_before))
    }
  } else {
    if (nrow(tr) && !is.na(tr$objective[nrow(tr)])) {
      cat(sprintf("  final objective: %s\n", format(tr$objective[nrow(tr)], digits = 10)))
    } else if (nrow(tr) && all(is.na(tr$heldout))) {
      cat(sprintf("  no objective (%s): fit with `heldout` to score each lap\n",
                  lda_no_objective_reason(x)))
    }
    if (nrow(tr) && !is.na(tr$heldout[nrow(tr)])) {
      cat(sprintf("  held-out log-likelihood per token: %.4f\n", tr$heldout[nrow(tr)]))
    }
  }
  kept <- lda_doc_topics_kept(x)
  if (!is.null(x$doc_topic) && kept < x$K) {
    cat(sprintf("  training documents' proportions (predict(fit)): the %d largest of %d per document, renormalised\n",
                kept, x$K))
  }
  size <- lda_topic_sizes(x)
  junk <- dead_topics(x)
  top <- setdiff(order(-size), junk)[seq_len(min(5L, x$K - length(junk)))]
  tt <- terms(x, 6)
  cat("  largest topics:\n")
  for (k in top) {
    cat(sprintf("   %3d (%4.1f%%): %s\n", k, 100 * size[k] / sum(size),
                paste(tt[, k], collapse = " ")))
  }
  print_junk(junk, lda_prune_cost(x, junk), x$local)
  invisible(x)
}

# The engine as print() and summary() name it: the method (the registry's
# `label`), then the local and global steps; L only where the local step
# uses it (the "vb" step's top-L responsibilities).
lda_engine_label <- function(fit) {
  label <- sparsevi_engines$lda[[fit$local]]$label
  steps <- if (identical(fit$local, "vb")) {
    sprintf("local \"vb\" (L = %d), global \"%s\"", fit$L, fit$global)
  } else {
    sprintf("local \"%s\", global \"%s\"", fit$local, fit$global)
  }
  if (is.null(label)) steps else sprintf("%s: %s", label, steps)
}

# Why a fit's trace has no objective (its `objective` column is NA).
lda_no_objective_reason <- function(fit) {
  if (identical(fit$local, "vb")) {
    return(sprintf("global \"%s\" computes none; \"memoized\" and \"batch\" do", fit$global))
  }
  sprintf("%s has no training objective", sparsevi_engines$lda[[fit$local]]$label)
}

# Dead and duplicate topics, as print() and summary() report them; pruning
# is recommended only when the held-out documents show it costs (almost)
# nothing (`cost`, from lda_prune_cost(); NULL: not measured).
print_junk <- function(junk, cost = NULL, local = "vb") {
  if (!length(junk)) return(invisible())
  reason <- attr(junk, "reason")
  n_dead <- sum(reason == "dead")
  n_dup <- length(junk) - n_dead
  what <- c(if (n_dead) sprintf("%d dead (under 0.1%% of the tokens each)", n_dead),
            if (n_dup) sprintf("%d duplicating a bigger topic's top words", n_dup))
  shown <- utils::head(junk, 12L)
  cat(sprintf("  junk topics: %s: %s%s\n", paste(what, collapse = "; "),
              paste(shown, collapse = ", "), if (length(junk) > 12L) ", ..." else ""))
  reseed <- if (local == "vb") "; fit_lda(..., reuse_dead = TRUE) re-seeds dead topics while training" else ""
  if (is.null(cost)) {
    cat(sprintf("    prune_topics(fit) removes them, at a held-out cost not measured (fit with `heldout` to measure it)%s\n",
                reseed))
  } else if (cost$drop <= prune_safe_drop) {
    cat(sprintf("    prune_topics(fit) removes them safely: held-out score %.4f -> %.4f per token\n",
                cost$before, cost$after))
  } else {
    cat(sprintf("    pruning them would lower the held-out score by %.4f per token (%.4f -> %.4f): keep them%s\n",
                cost$drop, cost$before, cost$after, reseed))
  }
  invisible()
}

lda_topic_sizes <- function(fit) {
  # an engine may say how big its topics are (ML-OPE has no lambda)
  hook <- lda_engine(fit$local)$topic_sizes
  size <- if (!is.null(hook)) hook(fit)
  if (!is.null(size)) return(size)
  if (!is.null(fit$lambda)) rowSums(fit$lambda) - length(fit$vocab) * fit$eta else
    rep(1, fit$K)
}

#' @export
summary.sparsevi_lda <- function(object, ...) {
  tr <- object$trace
  size <- lda_topic_sizes(object)
  pi <- object$prune_info
  if (!is.null(pi) && nrow(tr) && max(tr$lap) == pi$lap) {
    # pruned since the last lap: the trace describes the model before pruning
    tr$objective[nrow(tr)] <- NA_real_
    tr$heldout[nrow(tr)] <- pi$heldout_after
  }
  out <- structure(list(K = object$K, L = object$L, local = object$local, global = object$global,
                 n_docs = object$n_docs, n_tokens = object$n_tokens, ended = object$ended,
                 laps = nrow(tr), seconds = if (nrow(tr)) max(tr$seconds) else 0,
                 objective = if (nrow(tr)) tr$objective[nrow(tr)] else NA_real_,
                 heldout = if (nrow(tr)) tr$heldout[nrow(tr)] else NA_real_,
                 restart_accept = mean(tr$restart_accept, na.rm = TRUE),
                 topic_share = size / sum(size),
                 top_terms = terms(object, 10), junk = dead_topics(object),
                 prune_info = object$prune_info, select = object$select,
                 doc_topics = lda_doc_topics_kept(object)),
            class = "summary.sparsevi_lda")
  out$prune_cost <- lda_prune_cost(object, out$junk)
  out
}

#' @export
print.summary.sparsevi_lda <- function(x, ...) {
  cat(sprintf("LDA with %d topics (%s)\n", x$K, lda_engine_label(x)))
  cat(sprintf("%s documents, %s tokens; %d laps, %.2f seconds%s\n", fmt_int(x$n_docs),
              fmt_int(x$n_tokens), x$laps, x$seconds,
              if (is.null(x$ended)) "" else sprintf(" (ended: %s)", x$ended)))
  obj <- if (!is.null(x$prune_info) && is.na(x$objective)) {
    "not recomputed since pruning"
  } else if (is.na(x$objective)) {
    sprintf("none (%s)", lda_no_objective_reason(x))
  } else {
    format(x$objective, digits = 10)
  }
  cat(sprintf("objective: %s; held-out: %s%s\n", obj, format(x$heldout, digits = 5),
              if (identical(x$local, "vb")) {
                sprintf("; restart acceptance: %s", format(x$restart_accept, digits = 3))
              } else ""))
  if (!is.null(x$select)) print_select(x$select, x$K)
  o <- order(-x$topic_share)
  reason <- attr(x$junk, "reason")
  for (k in o) {
    j <- match(k, x$junk)
    cat(sprintf("%3d %5.1f%%  %s%s\n", k, 100 * x$topic_share[k],
                paste(x$top_terms[, k], collapse = " "),
                if (is.na(j)) "" else sprintf("  [%s]", reason[j])))
  }
  print_junk(x$junk, x$prune_cost, x$local)
  invisible(x)
}

#' Top terms of each topic
#'
#' @param x A `sparsevi_lda`.
#' @param n Number of terms per topic (default 10).
#' @param ... Unused.
#' @returns A character matrix, `n` rows (most probable first), one column
#'   per topic.
#' @examples
#' sim <- simulate_lda(D = 60, V = 40, K = 3, seed = 1)
#' fit <- fit_lda(sim$dtm, K = 3, passes = 3, seed = 1)
#' terms(fit, 4)
#' @export
terms.sparsevi_lda <- function(x, n = 10, ...) {
  n <- check_count(n, "n", min = 1)
  n <- min(n, length(x$vocab))
  out <- matrix(x$vocab[lda_top_words(x, n)], nrow = n)
  colnames(out) <- paste0("topic", seq_len(x$K))
  out
}

# The n most probable words of each topic (indices, n x K, best first; ties
# by word order, as order() gives), by a partial sort per topic. A large fit
# that builds topic_word when read is ranked by lambda (the same order within
# a topic) without building it.
lda_top_words <- function(fit, n) {
  tw <- .subset2(fit, "topic_word")
  if (is.null(tw)) tw <- lda_fit_lambda(fit)
  V <- ncol(tw)
  n <- min(as.integer(n), V)
  out <- apply(tw, 1L, function(p) {
    cand <- if (n < V) which(p >= sort(p, partial = V - n + 1L)[V - n + 1L]) else seq_len(V)
    cand[order(-p[cand])][seq_len(n)]
  })
  matrix(out, nrow = n)
}

#' Document-topic proportions of new documents
#'
#' With `newdata`, infers each document's topic proportions with the fitted
#' topics held fixed: the full posterior mean, every one of the K topics.
#' Without `newdata`, returns the training documents' proportions stored on
#' the fit (`fit$doc_topic`). **These are truncated**: by default the fit
#' keeps only each document's `doc_topics = L` largest proportions,
#' renormalised to sum to 1 (at K = 40 and L = 8, 8 non-zero entries per row,
#' each up to about 0.1 away from the full posterior). For the full
#' posterior of the training documents, fit with `doc_topics = K`, or call
#' `predict(fit, training_corpus)`; `type = "full"` asks for the full
#' posterior and is an error when the fit keeps only a truncated one.
#'
#' @param object A `sparsevi_lda`.
#' @param newdata A corpus, anything [as_dtm()] accepts. Its terms are
#'   matched to the fitted vocabulary by name; unknown terms are dropped
#'   (with a message saying how many). Missing: the training documents'
#'   proportions kept on the fit (see above).
#' @param type `"topics"` (default): D x K proportions (truncated to the
#'   kept topics when `newdata` is missing and the fit keeps fewer than K per
#'   document); `"full"`: the full posterior, every topic (without
#'   `newdata`, only from a fit with `doc_topics = K`).
#' @param method Inference method: `"vb"` (default; the local step with the
#'   topics fixed). Other engines add methods.
#' @param seed `NULL` or a whole number (for randomised methods).
#' @param threads Number of threads.
#' @param sparse `FALSE` (default): a dense matrix; `TRUE`: a sparse
#'   `dgCMatrix`.
#' @param ... Controls of the method (e.g. `max_iter`).
#' @returns A D x K matrix of topic proportions (rows sum to 1). How many
#'   topics per training document a fit keeps is `fit$control$doc_topics`
#'   (`print(fit)` says it too).
#' @examples
#' sim <- simulate_lda(D = 60, V = 40, K = 3, seed = 1)
#' fit <- fit_lda(sim$dtm, K = 3, L = 2, passes = 3, seed = 1)
#' round(predict(fit, sim$dtm[1:3, ]), 2) # full posterior
#' head(predict(fit)) # training documents: the 2 largest per document
#' full <- fit_lda(sim$dtm, K = 3, L = 2, passes = 3, seed = 1, doc_topics = 3)
#' head(predict(full, type = "full"))
#' @export
predict.sparsevi_lda <- function(object, newdata, type = "topics", method = "vb",
                                 seed = NULL, threads = getOption("sparsevi.threads", 1L),
                                 sparse = FALSE, ...) {
  type <- check_choice(type, c("topics", "full"), "type")
  sparse <- check_flag(sparse, "sparse")
  if (missing(newdata)) {
    if (is.null(object$doc_topic)) {
      abort("This fit keeps no training-document proportions (fitted with `doc_topics = 0`, or by an older version): give `newdata`.",
            "argument")
    }
    kept <- lda_doc_topics_kept(object)
    if (type == "full" && kept < object$K) {
      abort(sprintf("This fit keeps only the %d largest of %d topic proportions per training document (`doc_topics = %d`): for the full posterior give the training documents as `newdata`, or fit with `doc_topics = K`.",
                    kept, object$K, kept), "argument")
    }
    return(if (sparse) object$doc_topic else as.matrix(object$doc_topic))
  }
  method <- check_string(method, "method")
  fun <- lda_engine(method)$infer
  if (is.null(fun)) {
    abort(sprintf("`method = \"%s\"` is not available for LDA predictions; use \"vb\".",
                  method), "argument")
  }
  x <- align_newdata(as_dtm(newdata), object$vocab)
  threads <- sparsevi_threads(threads)
  seed <- resolve_seed(seed)
  ctl <- list(...)
  theta <- fun(object, x, if (length(ctl)) ctl else NULL, seed, threads)
  dimnames(theta) <- list(x$doc_names, paste0("topic", seq_len(object$K)))
  if (sparse) methods::as(theta, "CsparseMatrix") else theta
}

# How many topics per training document the fit keeps in doc_topic.
lda_doc_topics_kept <- function(fit) {
  kept <- fit$control$doc_topics
  if (is.null(kept)) kept <- min(fit$L, fit$K)
  as.integer(min(kept, fit$K))
}

align_newdata <- function(x, vocab, call = caller_call()) {
  al <- dtm_align(x, vocab)
  if (al$dropped > 0) {
    message(sprintf("%s term%s of `newdata` (%s tokens) not in the fitted vocabulary dropped.",
                    fmt_int(al$dropped), if (al$dropped == 1) "" else "s",
                    fmt_int(al$dropped_tokens)))
  }
  if (sum(x$count) > 0 && al$dropped_tokens >= sum(x$count)) {
    abort("None of the terms of `newdata` is in the fitted vocabulary: check that it comes from the same kind of corpus and tokenisation.",
          "vocab", call = call)
  }
  al$x
}

#' Plot a topic model: training trace, top words, document topics
#'
#' `type = "trace"` (the default) draws the objective (left) and the
#' held-out log-likelihood per token (right, when recorded) against seconds
#' of training. `type = "words"` draws the `n` most probable words of each
#' chosen topic as bar charts (x axis: the word's probability in the
#' topic). `type = "documents"` draws the topic proportions of chosen
#' documents as stacked bars, with a legend giving each topic's top words:
#' of `newdata` (inferred), or without it of the training documents (the
#' proportions kept on the fit, see [predict()][predict.sparsevi_lda]).
#' `type = "select"` (a fit with several K) draws the held-out score,
#' coherence and training time of each K, the chosen K circled.
#' @param x A `sparsevi_lda`.
#' @param type `"trace"` (default), `"words"`, `"documents"` or `"select"`.
#' @param topics For `"words"`: topic numbers (1 to K) to draw; default
#'   the (at most) six largest topics by share of the tokens, drawn largest
#'   first (the panel titles give each share).
#' @param n For `"words"`: words per topic, default 10 (1 to the vocabulary
#'   size).
#' @param newdata For `"documents"`: `NULL` (default: the training
#'   documents, from the proportions kept on the fit), or a corpus, anything
#'   [as_dtm()] accepts, aligned to the fitted vocabulary by term name.
#' @param docs For `"documents"`: document numbers or names (in `newdata`,
#'   or among the training documents); default the first (at most) eight.
#' @param n_topics For `"documents"`: how many topics (the most used in the
#'   chosen documents) get their own colour, default 6; the rest are drawn
#'   together as "other topics".
#' @param ... Passed to [graphics::plot()] (`"trace"`) or
#'   [graphics::barplot()] (`"words"`, `"documents"`).
#' @returns `x`, invisibly.
#' @examples
#' sim <- simulate_lda(D = 60, V = 40, K = 3, seed = 1)
#' fit <- fit_lda(sim$dtm, K = 3, passes = 4, seed = 1, progress = FALSE)
#' plot(fit)
#' plot(fit, type = "words", n = 5)
#' plot(fit, type = "documents", docs = 1:5) # training documents
#' plot(fit, type = "documents", newdata = sim$dtm[1:5, ])
#' @export
plot.sparsevi_lda <- function(x, type = c("trace", "words", "documents", "select"),
                              topics = NULL, n = 10, newdata = NULL, docs = NULL,
                              n_topics = 6, ...) {
  type <- check_choice(type, c("trace", "words", "documents", "select"), "type")
  if (type == "words") return(lda_plot_words(x, topics = topics, n = n, ...))
  if (type == "select") return(lda_plot_select(x, ...))
  if (type == "documents") {
    return(lda_plot_documents(x, newdata = newdata, docs = docs, n_topics = n_topics, ...))
  }
  tr <- x$trace
  has_obj <- any(!is.na(tr$objective))
  has_ho <- any(!is.na(tr$heldout))
  n <- max(1L, has_obj + has_ho)
  old <- graphics::par(mfrow = c(1, n))
  on.exit(graphics::par(old))
  if (has_obj) {
    graphics::plot(tr$seconds, tr$objective, type = "b", xlab = "seconds",
                   ylab = "objective (ELBO)", main = "Training objective", ...)
  }
  if (has_ho) {
    graphics::plot(tr$seconds, tr$heldout, type = "b", xlab = "seconds",
                   ylab = "held-out log-lik per token", main = "Held-out score", ...)
  }
  if (!has_obj && !has_ho) {
    graphics::plot(tr$lap, tr$seconds, type = "b", xlab = "lap", ylab = "seconds",
                   main = "Training time", ...)
  }
  invisible(x)
}

#' Continue training a topic model
#'
#' @param object A `sparsevi_lda`.
#' @param x The corpus (for memoized training, the same documents as the
#'   fit; other documents start a new memo from the fitted topics).
#' @param passes Number of further laps (default 5).
#' @param progress Print a line per lap.
#' @param heldout As in [fit_lda()]. Missing (the default): the held-out
#'   documents given when the model was fitted (its `heldout`), scored
#'   after every lap again; `NULL` to score none.
#' @param cluster `NULL` or a cluster from [parallel::makePSOCKcluster()], as
#'   in [fit_lda()]; the rounds are those of the fit (its `sync`).
#' @param ... Nothing else: any other argument (a misspelt one, or a setting
#'   of the model such as `alpha`) is an error of class
#'   `sparsevi_error_argument`.
#' @returns The updated `sparsevi_lda`; its trace continues the old one.
#' @examples
#' sim <- simulate_lda(D = 60, V = 40, K = 3, seed = 1)
#' fit <- fit_lda(sim$dtm, K = 3, passes = 2, seed = 1)
#' fit <- update(fit, sim$dtm, passes = 2)
#' fit$trace
#' @export
update.sparsevi_lda <- function(object, x, passes = 5, progress = interactive(),
                                heldout, cluster = NULL, ...) {
  check_update_dots(..., valid = c("x", "passes", "progress", "heldout", "cluster"))
  if (missing(x)) {
    abort("`x`, the corpus to continue training on, is missing (the fit does not keep its documents).",
          "argument")
  }
  cluster <- check_cluster(cluster)
  if (inherits(x, "sparsevi_source")) {
    if (!identical(x$vocab, object$vocab)) {
      abort("`x`, a corpus on disk, must have the fitted vocabulary.", "vocab")
    }
    if (length(x$files) != object$control$n_batches) {
      abort("`x`, a corpus on disk, must have the batches the model was fitted on.",
            "argument")
    }
  } else {
    x <- align_newdata(as_dtm(x), object$vocab)
  }
  passes <- check_count(passes, "passes", min = 1)
  progress <- check_flag(progress, "progress")
  if (missing(heldout)) heldout <- object$heldout
  heldout <- if (is.null(heldout)) NULL else as_heldout(heldout, object$vocab, seed = 1)
  state <- object$state
  control <- object$control
  if (!is.null(state$cache) && control$n_docs != nrow(x)) {
    # new documents: a fresh memo, starting from the fitted topics
    control$n_docs <- nrow(x)
    b <- lda_resolve_batches(nrow(x), control$global, NULL,
                             if (control$global == "batch") NULL else control$batch_size)
    control$n_batches <- b$n_batches
    control$batch_size <- b$batch_size
    state$S <- matrix(0, control$K, ncol(x))
    state$cache <- vector("list", control$n_batches)
    state$doc_obj <- rep(NA_real_, control$n_batches)
  }
  control$n_docs <- nrow(x)
  object$control <- control
  object$state <- state
  fit <- lda_train(object, x, passes, progress, heldout, cluster)
  n_keep <- if (is.null(control$doc_topics)) min(control$L, control$K) else control$doc_topics
  lda_keep(fit, x, heldout, n_keep)
}

#' @export
logLik.sparsevi_lda <- function(object, ...) {
  tr <- object$trace
  val <- if (nrow(tr)) tr$objective[nrow(tr)] else NA_real_
  pi <- object$prune_info
  # pruned since the last lap: the trace's objective is the unpruned model's
  if (!is.null(pi) && nrow(tr) && max(tr$lap) == pi$lap) val <- NA_real_
  structure(val, df = object$K * (length(object$vocab) - 1), nobs = object$n_tokens,
            class = "logLik")
}
