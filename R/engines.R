# The engine registry: every training engine of the package, described in
# one place. fit_lda(), check_engine(), lda_combinations, the docs and the
# training loop read it; nothing else lists engines.
#
# Two parts, both here:
# * sparsevi_engines: what each engine is (its paper, the global steps it
#   pairs with, its defaults and the controls fit_lda() accepts in `...`),
#   plain data, read when the package is built (lda_combinations,
#   lda_engine_defaults, lda_engine_controls);
# * lda_engine_<name>(): the engines as objects, after R's `family` objects of
#   glm(): each entry adds to its data the engine's own functions, so the
#   loop calls `engine$local(...)` without knowing which engine it holds and
#   grep leads from the loop (R/lda-train.R) to the code: lda_engine(local) ->
#   lda_engine_<local>() -> the functions. Built by functions, at use,
#   because the engines' functions are defined in files collated after this
#   one.
#
# The fields of an LDA engine (validate_lda_engine() checks them):
#   local(batch, state, control, seed, threads) -> list(summary, doc_topic,
#       stats): the local step of one batch (run here or on a cluster worker);
#   global: a list of functions by the user's `global` name, each
#       (state, res, batch_id, control) -> state: the global step that
#       training with that `global` runs (the registry chooses its form,
#       e.g. vb's stochastic training runs the lazy store step);
#   holds: the same names -> the form in which that step keeps the topics
#       between batches ("sums", "scaled", "lambda", "beta", "sparse",
#       "dense"; see lda_step()), recorded in the fit as control$global_step
#       (the loop and the engines read lda_step(control)$holds);
#   control(control, call) -> control: checks and fills the engine's
#       controls when fit_lda() builds its control list (NULL: none);
#   finish(state, control) -> state with a dense lambda (or beta), for
#       whatever reads the topics (NULL: the state is already dense);
#   end_lap(state, control) -> state, after the last batch of a lap (NULL);
#   infer(fit, dtm, control, seed, threads) -> D x K proportions: predict()
#       and the training documents' proportions (lda_doc_topics());
#   topic_sizes(fit) -> K sizes or NULL for print() and summary() (NULL);
#   columns(state, control, U) -> state: what a cluster worker's local step
#       of batches with the words U needs of the state (the topics' columns
#       U; NULL: the whole state travels);
#   shard: NULL, or what laps on workers that own the topics' columns by
#       word need (R/executor-sharded.R): list(can(control) -> whether its
#       global step can run so, dense(state) -> NULL or list(lambda, tot),
#       the dense topics a new fit's first local steps read, before the
#       first step makes a store, store(state, control) -> the state with
#       the lap's store, step(state, res, control, t, K) -> one step's
#       rho, mult, t, rescale_below and summary on the worker that ran
#       it, after(state, t, rho) -> the state after the lap's steps);
#   start: a list of starts the engine holds itself, by `init` name
#       ("sparse": (control, V) -> state; "seeded": (x0, chosen, control, V)
#       -> state); empty when the engine starts from a dense lambda.
#
# Adding an engine "foo": write R/lda-foo.R with lda_local_foo() (and its
# own global step if the shared ones of R/lda-global.R do not fit), its C in
# src/lda-foo.c (kernel) and src/lda-foo-ffi.c (glue, options by name, see
# src/ffi.h), tests in tests/testthat/test-lda-foo.R against a pure-R
# reference; then give it an entry in sparsevi_engines$lda below (paper,
# globals, defaults, controls, abilities `can`), a constructor lda_engine_foo() (its
# functions) and a line in lda_engine()'s switch. lda_combinations,
# fit_lda()'s checks, predict() and tests/testthat/test-engines.R pick it up
# from there.
#
# Mixture engines are global steps of fit_mixture() (sparsevi_engines$mixture).
#
# vb: alpha = 0.1 was chosen at K = 100 by held-out score on validation
# documents of kos and nips_f20 (inst/bench/results/lda-sparse.txt, part 5);
# for fewer topics it grows as 10 / K, up to 0.5 at K = 20 and below
# (lda_vb_alpha(): at K = 20 on all seven corpora of quality.R, 0.5 against
# 0.1 raised held-out on 7, diversity on 7 and NPMI on 4; results/quality.txt,
# "vb's alpha for few topics"). A prior given as a function takes K. eta = 0.01
# replaced 0.5 after inst/bench/defaults.R (results/defaults.txt) scored
# eta = 0.5, 0.01 and "learn" against scikit-learn on six corpora, four of
# them never used for tuning (K = 100, 10 laps, one split each): 0.01 was
# within 0.05 nats/token of the best system on every corpus and ahead of
# scikit-learn's batch LDA on all six; 0.5 fell 0.28 behind on spamassassin
# (V = 13.7k). Priors NA mean 1 / K; step_scale is the s of the step size
# rho_t = s (tau + t)^-kappa.
#
# seeded_start (cvb0, gibbs): when fit_lda() is given no `init`, the engine
# starts "seeded" above `above` K x V entries or when K x V exceeds `ratio`
# times the corpus's tokens (lda_default_init(), R/lda-start.R, with the
# measurements behind it).
lda_seeded_start_rule <- list(above = 2^25, ratio = 4)

# vb's default alpha for K topics: 10 / K within [0.1, 0.5].
lda_vb_alpha <- function(K) min(0.5, max(0.1, 10 / K))

# Every engine's `background` control (?fit_lda, "Background topic"): a
# weight in [0, 100], `absent` when not given (each engine's default).
lda_check_background <- function(b, absent, call = caller_call()) {
  check_number(b %||% absent, "background", lower = 0, upper = 100, call = call)
}

sparsevi_engines <- list(
  lda = list(
    vb = list(
      label = "L-sparse VB",
      paper = "Hughes & Sudderth (L-sparse); Hoffman et al. (online); Broderick et al. (streaming)",
      globals = c("memoized", "stochastic", "streaming", "batch"),
      defaults = list(global = "memoized", alpha = lda_vb_alpha, eta = 0.01, step_scale = 1),
      controls = c("max_iter", "tol", "active_eps", "select_every", "restart_max",
                   "restart_iter", "restart_laps", "converge_tol", "warm_start", "step_scale",
                   "background"),
      can = c("top_L", "restarts", "learn_eta", "reuse_dead", "warm_start", "elbo")),
    ope = list(
      label = "OPE",
      paper = "Than & Doan (OPE; ML-, Online-, Streaming-OPE)",
      globals = c("ml", "stochastic", "streaming", "memoized"),
      # global "stochastic" (Online-OPE) with reuse_dead (issue 35): against
      # ML-OPE (the default before) on the seven shared corpora at K = 20,
      # 100 and 200 (21 cases, 10 laps, one split each, quality.R's scorer),
      # held-out higher in 20 (-0.007..+0.32 nats/token), NPMI higher in 19
      # and diversity higher in 21 (+0.04..+0.20); NPMI within 0.05 of the
      # default call (SCVB0) in 19 of 21 cases instead of 14. At K = 100-200
      # on six corpora ML-OPE's ten most frequent words each sat among the
      # top ten of 40-156 topics, Online-OPE's of 18-67 (wikipara20000:
      # 6-17 both). Re-seeding (dead_share 0.001) matters
      # where topics die at K = 100-200 (kos K = 200: NPMI 0.082 -> 0.150)
      # and needs a lambda, so it is Online-OPE's only (reuse_dead_globals);
      # inst/bench/results/quality.txt, "OPE's default learner".
      defaults = list(global = "stochastic", alpha = NA, eta = NA, step_scale = 1,
                      reuse_dead = TRUE),
      controls = c("ope_iter", "ope_eps", "step_scale", "background"),
      # its documents' topics are MAP proportions, not expected counts;
      # reuse_dead with global = "stochastic" only (lda_reuse_dead_ok())
      can = c("proportions", "reuse_dead"),
      reuse_dead_globals = "stochastic"),
    cvb0 = list(
      label = "SCVB0",
      paper = "Foulds et al. (SCVB0)",
      globals = "stochastic",
      defaults = list(global = "stochastic", alpha = 0.1, eta = 0.01, step_scale = 1),
      controls = c("doc_s", "doc_tau", "doc_kappa", "burnin", "shuffle", "infer_passes",
                   "doc_start", "sparse_rest", "step_scale", "background"),
      # its local step writes its dense K x (batch vocabulary) summary into a
      # buffer the loop gives it and takes back after the global step
      # (lda_lap()): a fresh one per minibatch was a third of a default fit's
      # CPU time in garbage collection (kos, K = 100)
      summary_buffers = TRUE,
      # every token lends every topic a part of itself: a topic no document
      # uses keeps a share of the corpus (lda_prior_floor(), R/topics.R),
      # which dead_topics() calls dead
      prior_share = TRUE,
      # the default start: "seeded" on large tables (lda_default_init())
      seeded_start = lda_seeded_start_rule),
    gibbs = list(
      label = "Gibbs within SVI",
      paper = "Mimno, Hoffman & Blei (Gibbs within SVI)",
      globals = "stochastic",
      # (its starts are sparse: "bregman" holds the base as one number,
      # "seeded" none; no start builds a K x V table)
      # step_scale NA: the engine's rule (gibbs_step_scale(), issue 35):
      # 0.2 from a start with a base (the first step, rho = 0.2, keeps 80%
      # of it instead of replacing it, so topics the first minibatch barely
      # samples do not die and fill with rare words); 1 from the empty
      # init = "sparse" start (nothing to keep) and from the "seeded" start
      # of large tables (measured there at 1; 0.2 cost held-out score)
      # reuse_dead TRUE: fit_lda(reuse_dead = NULL) re-seeds the topics that
      # drew under dead_share of a lap's tokens (issue 35;
      # lda_reuse_dead_gibbs(), R/lda-gibbs.R), NA: dead_topics()'s default
      # share, 0.001 up to K = 100 and 0.1 / K above (a fixed 0.001 is the
      # average share at K = 1000: 83% of the topics of kos were re-seeded
      # every lap, NPMI 0.156 against 0.184 with 1e-4). At K = 100 NPMI
      # within 0.05 of the default call on 5 of 7 corpora instead of 3,
      # held-out within 0.005 or better (inst/bench/results/quality.txt).
      defaults = list(global = "stochastic", alpha = 0.1, eta = 0.2, step_scale = NA,
                      reuse_dead = TRUE, dead_share = NA),
      # the default start: "seeded" on large tables (lda_default_init())
      seeded_start = lda_seeded_start_rule,
      # (its local step returns the documents' topic counts sparsely, so
      # its batches need no cap at large K: issue 33)
      controls = c("burnin", "samples", "rescale_below", "step_scale", "background"),
      # reuse_dead: its sparse store re-seeded in place (lda_reuse_dead_gibbs())
      can = "reuse_dead")
  ),
  mixture = list(globals = c("memoized", "stochastic", "batch"))
)

# The global steps of LDA as descriptors: what the loop and the engines need
# to know of a step, so that no code tests a step's name.
#   visits:    "ordered" (every lap takes the batches in order) or
#              "shuffled" (a new random order each lap, lda_lap());
#   memoized:  the step keeps each batch's latest summary and their exact
#              sum: the ELBO is exact, and a lap that barely moves it may
#              end training (`passes` is then an upper bound);
#   one_batch: every document in one batch;
#   one_pass:  the data are seen once (streaming): `passes` is 1;
#   point:     the topics are a point estimate on the simplex (ML-OPE's
#              beta), not Dirichlet parameters.
lda_global_kinds <- list(
  memoized   = list(visits = "ordered", memoized = TRUE, one_batch = FALSE,
                    one_pass = FALSE, point = FALSE),
  batch      = list(visits = "ordered", memoized = TRUE, one_batch = TRUE,
                    one_pass = FALSE, point = FALSE),
  stochastic = list(visits = "shuffled", memoized = FALSE, one_batch = FALSE,
                    one_pass = FALSE, point = FALSE),
  streaming  = list(visits = "shuffled", memoized = FALSE, one_batch = FALSE,
                    one_pass = TRUE, point = FALSE),
  ml         = list(visits = "shuffled", memoized = FALSE, one_batch = FALSE,
                    one_pass = FALSE, point = TRUE)
)

# The descriptor of a global step by its name (the user's `global`).
lda_global_kind <- function(global) {
  kind <- lda_global_kinds[[global]]
  if (is.null(kind)) abort(sprintf("internal error: unknown global step \"%s\".", global),
                           "internal")
  kind
}

# The global step of a fit's control list as the loop and the engines read
# it: the descriptor of control$global, with `holds`, the form in which the
# engine's step keeps its topics between batches (the engine's
# global_step: "sums" a store of memoized sums, lambda = eta + X; "scaled"
# a store lambda = offset + scale X; "lambda" a store lambda = X (streaming);
# "beta" a store whose normalised rows are the topics (ML-OPE); "sparse"
# gibbs's sparse store; "dense" a dense lambda and sums S). Read from the
# registry, so a fit saved by an older version gets the same.
lda_step <- function(control) {
  # (the fit records its form as control$global_step; a fit saved by an
  # older version recorded a label of another kind: the registry's then)
  holds <- control$global_step
  if (!is.character(holds) || length(holds) != 1L || !holds %in% lda_holds_forms) {
    holds <- lda_engine(control$local)$holds[[control$global]]
  }
  c(lda_global_kind(control$global), list(holds = holds))
}

# The forms an engine's global step may hold its topics in (lda_step()).
lda_holds_forms <- c("sums", "scaled", "lambda", "beta", "sparse", "dense")

# TRUE when engine `local` has ability `what` (the registry's `can`:
# "top_L" its responsibilities keep the top L topics; "restarts" restart
# proposals; "learn_eta" empirical Bayes eta; "reuse_dead" re-seeding dead
# topics; "warm_start" documents starting from their previous lap; "elbo" an
# exact objective with the memoized steps; "proportions" its documents'
# topics are proportions, not expected counts).
lda_engine_can <- function(local, what) {
  what %in% sparsevi_engines$lda[[local]]$can
}

# Whether fit_lda(reuse_dead = ) can re-seed the topics of this engine and
# global step: the engine can, and its entry's reuse_dead_globals (when it
# has one) hold the step (OPE: Online-OPE only; ML-OPE's topics are a point
# estimate on the simplex, with no lambda to re-seed).
lda_reuse_dead_ok <- function(local, global) {
  gl <- sparsevi_engines$lda[[local]]$reuse_dead_globals
  lda_engine_can(local, "reuse_dead") && (is.null(gl) || global %in% gl)
}

# The engine fit_lda() runs when `local` is not given.
lda_default_local <- "cvb0"

# ... unless K x V is larger than this: then the sparse engine (issue 33).
# SCVB0 holds dense K x V tables (its store, the fit's lambda, and for a
# held-out score the topics and the completion step's K x (test words)
# tables): at K = 5000, V = 129,289 (6.5e8 entries) a fit and a held-out
# score peaked at 15.9 GB. Above 2^28 entries (2 GiB per table) the default
# is "gibbs", whose topics are a sparse store whose size grows with the
# (topic, word) pairs sampled, and whose cost per token hardly grows with K.
# It runs with the default engine's eta (0.01), not gibbs's own 0.2: with V
# eta = 25,858 pseudo-counts per topic against some 3,000 tokens per topic
# at K = 10,000 on wikipara, eta = 0.2 blurs every topic (one pass over
# 59,000 paragraphs, 1,000 held out: -11.50 against -10.44 nats/token with
# eta = 0.01; alpha 0.01 or 0.001 instead of 0.1 did not help;
# inst/bench/results/large.txt).
lda_default_large <- list(local = "gibbs", above = 2^28, eta = 0.01)

# The default engine for K topics over V terms: list(local, reason), reason
# NULL for the usual default, else the sentence print() shows. The one place
# of this rule (fit_lda() calls it when `local` is missing).
lda_default_engine <- function(K, V) {
  size <- as.double(K) * V
  if (size <= lda_default_large$above) {
    return(list(local = lda_default_local, reason = NULL, eta = NULL))
  }
  list(local = lda_default_large$local, eta = lda_default_large$eta,
       reason = sprintf("chosen by default for K x V = %s > 2^28 entries: the default engine \"%s\" would hold dense K x V tables of %.1f GB each; \"%s\" holds its topics sparsely (eta = %g unless given); give `local` to choose",
                        formatC(size, format = "g", digits = 3), lda_default_local,
                        size * 8 / 1e9, lda_default_large$local, lda_default_large$eta))
}

#' Valid combinations of LDA local and global steps
#'
#' A data frame with columns `local`, `global` and `supported`, one row per
#' engine [fit_lda()] accepts (from the package's engine registry);
#' [fit_lda()] refuses any other pair.
#' @format A data frame.
#' @examples
#' lda_combinations
#' @export
lda_combinations <- local({
  eng <- sparsevi_engines$lda
  data.frame(local = rep(names(eng), vapply(eng, function(e) length(e$globals), 1L)),
             global = unlist(lapply(eng, `[[`, "globals"), use.names = FALSE),
             supported = TRUE, stringsAsFactors = FALSE)
})

# Per local step: default global step, priors and step scale (read by fit_lda).
lda_engine_defaults <- lapply(sparsevi_engines$lda, `[[`, "defaults")

# Engine controls fit_lda() accepts in `...`, by local step.
lda_engine_controls <- lapply(sparsevi_engines$lda, `[[`, "controls")

# ---- the engines as objects ------------------------------------------------

# The LDA engines with their functions (see the header of this file), one
# constructor per engine: lda_engine_vb(), lda_engine_ope(),
# lda_engine_cvb0(), lda_engine_gibbs(). Each global step is named once, in
# its engine's `global`; the lazy (store) forms are chosen here, not by the
# engines' control hooks.
lda_engine_vb <- function() {
  new_lda_engine(
    "vb",
    local = lda_local_vb,
    # stochastic training: the lazy form of the global step (O(K x batch
    # vocabulary) per minibatch instead of O(K V)); memoized: S kept in a
    # store updated at the batch's words; streaming: lambda kept in a store
    # the batch summaries are added to (R/lda-global.R)
    global = list(memoized = lda_global_memoized_lazy,
                  stochastic = lda_global_stochastic_lazy,
                  streaming = lda_global_streaming_lazy,
                  batch = lda_global_batch),
    holds = c(memoized = "sums", stochastic = "scaled", streaming = "lambda",
                    batch = "dense"),
    control = lda_vb_fit_control,
    finish = lda_vb_finish,
    end_lap = lda_vb_end_lap,
    infer = lda_infer_vb,
    columns = lda_columns_store)
}

lda_engine_ope <- function() {
  new_lda_engine(
    "ope",
    local = lda_local_ope,
    # every learner keeps its topics in a lazy store between batches, so a
    # batch costs O(K x its vocabulary) (R/lda-ope.R, R/lda-global.R)
    global = list(ml = lda_global_ml_lazy,
                  stochastic = lda_global_stochastic_lazy,
                  streaming = lda_global_streaming_lazy,
                  memoized = lda_global_memoized_lazy),
    holds = c(ml = "beta", stochastic = "scaled", streaming = "lambda",
                    memoized = "sums"),
    control = lda_ope_control,
    finish = lda_ope_finish,
    end_lap = lda_ope_end_lap,
    infer = lda_infer_ope,
    topic_sizes = lda_topic_sizes_ope,
    columns = lda_columns_store)
}

lda_engine_cvb0 <- function() {
  new_lda_engine(
    "cvb0",
    local = lda_local_cvb0,
    # SCVB0's own topic step, in its lazy form (R/lda-cvb0.R)
    global = list(stochastic = lda_global_cvb0_lazy),
    holds = c(stochastic = "scaled"),
    control = lda_cvb0_control,
    finish = lda_cvb0_finish,
    infer = lda_infer_cvb0,
    columns = lda_columns_cvb0,
    shard = cvb0_shard,
    start = list(seeded = lda_cvb0_seeded_start))
}

lda_engine_gibbs <- function() {
  new_lda_engine(
    "gibbs",
    local = lda_local_gibbs,
    # the sparse lazy implementation of the stochastic step (R/lda-gibbs.R)
    global = list(stochastic = lda_global_gibbs),
    holds = c(stochastic = "sparse"),
    control = lda_gibbs_control,
    finish = lda_gibbs_finish,
    end_lap = lda_gibbs_end_lap,
    infer = lda_infer_gibbs,
    columns = lda_columns_gibbs,
    start = list(sparse = lda_gibbs_sparse_start, seeded = lda_gibbs_seeded_start,
                 bregman = lda_gibbs_bregman_start))
}

# One engine object: the registry's data for `name` (sparsevi_engines$lda)
# with the engine's functions. Cheap (the table is built at each use); what
# the loop relies on is checked by validate_lda_engine(), which
# tests/testthat/test-engines.R runs on every entry.
new_lda_engine <- function(name, local, global, holds, control = NULL, finish = NULL,
                           end_lap = NULL, infer, topic_sizes = NULL, columns = NULL,
                           shard = NULL, start = list()) {
  c(list(name = name), sparsevi_engines$lda[[name]],
    list(local = local, global = global, holds = holds, control = control,
         finish = finish, end_lap = end_lap, infer = infer, topic_sizes = topic_sizes,
         columns = columns, shard = shard, start = start))
}

# TRUE when `engine` has what the loop calls, else an internal error.
validate_lda_engine <- function(engine) {
  fun_or_null <- function(f) is.null(f) || is.function(f)
  ok <- is.list(engine) && !is.null(engine$globals) && is.function(engine$local) &&
    is.function(engine$infer) && is.list(engine$global) &&
    identical(names(engine$global), engine$globals) &&
    all(vapply(engine$global, is.function, TRUE)) && is.character(engine$holds) &&
    all(engine$holds %in% lda_holds_forms) &&
    identical(names(engine$holds), engine$globals) &&
    fun_or_null(engine$control) && fun_or_null(engine$finish) &&
    fun_or_null(engine$end_lap) && fun_or_null(engine$topic_sizes) &&
    fun_or_null(engine$columns) &&
    (is.null(engine$shard) || (is.list(engine$shard) &&
       all(c("can", "dense", "store", "step", "after") %in% names(engine$shard)) &&
       all(vapply(engine$shard, is.function, TRUE)))) &&
    is.list(engine$start) && all(names(engine$start) %in% c("sparse", "seeded", "bregman")) &&
    all(vapply(engine$start, is.function, TRUE))
  if (!ok) abort(sprintf("internal error: invalid engine \"%s\" in the registry.",
                         format(engine$name)), "internal")
  invisible(TRUE)
}

# The engine object of local step `local` (a string), or NULL. Built at
# each use (a few microseconds, once per batch at most), not memoised, so
# that it always holds the namespace's current functions: the failure tests
# replace a step with assignInNamespace().
lda_engine <- function(local) {
  if (!is.character(local) || length(local) != 1L || is.na(local)) return(NULL)
  switch(local,
         vb = lda_engine_vb(),
         ope = lda_engine_ope(),
         cvb0 = lda_engine_cvb0(),
         gibbs = lda_engine_gibbs(),
         NULL)
}

# Every LDA engine, by name.
lda_engines <- function() {
  stats::setNames(lapply(names(sparsevi_engines$lda), lda_engine), names(sparsevi_engines$lda))
}
