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
#' `sparsevi_warning_interrupted`; so does an interrupt while a completed
#' lap is scored (its trace row then has no scores). A snapshot (below)
#' that cannot be written stops training the same way, the error giving
#' the system's reason. To keep that lap's topics, a lap works on
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
#' smallest) K of the grid is chosen, widen the grid. A K listed twice is
#' fitted once (with a message). An interrupt (Ctrl-C) stops the search:
#' the K being fitted is not compared with the others, and the result is
#' the best K scored so far as fitted on the 90% (not refitted on all),
#' with `ended = "interrupted"`, a `sparsevi_warning_interrupted` warning
#' and the `select` table of the K done (attribute `"interrupted"`: the K
#' that was stopped). `init` as a matrix and `batches` describe one K and
#' all the documents, and cannot be used with several K.
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
  check_lda_vocab(V, call = here)
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
                                                        call = here, arg = "heldout")
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
