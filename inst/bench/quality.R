# Topic quality side by side (issue 35): held-out score, NPMI coherence,
# diversity and seconds of every engine of fit_lda() at its defaults and of
# the peers (topicmodels Gibbs and text2vec WarpLDA, 300 iterations each),
# per corpus and K. Run from the package root:
#   nice -n 19 Rscript inst/bench/quality.R
# Environment:
#  SPARSEVI_QUALITY_CORPORA  comma-separated corpora of ../shared/data (default
#                            every one: kos, nips_f20, poliblog5k, sotu_chunks,
#                            spamassassin, moviereviews, wikipara20000 = the
#                            first 20,000 Wikipedia paragraphs)
#  SPARSEVI_QUALITY_K        comma-separated K (default 20,100,200)
#  SPARSEVI_QUALITY_SYSTEMS  comma-separated among cvb0, vb, ope, gibbs (each
#                            fit_lda() engine at its defaults), tm_gibbs,
#                            t2v_warp (default all), and the online VB
#                            peers sk_online, gensim (not in the default);
#                            a variant of an engine
#                            is "engine+arg=value+arg=value" (e.g.
#                            "cvb0+batch_size=1000"): the engine's default
#                            call with those arguments changed (probes);
#                            "+opt.NAME=value" sets options(sparsevi.NAME =
#                            value) for that fit
#  SPARSEVI_QUALITY_OUT      results file (default inst/bench/results/quality.txt;
#                            vb's stochastic step schedule was chosen with
#                            results/vb-stochastic.txt)
#  SPARSEVI_PEER_LIB         library holding the peers (default ../peerlib);
#                            they are never dependencies of the package
#  SPARSEVI_BENCH_SMOKE=1    smoke mode (the test suite): a small simulated
#                            corpus, K = 3, the package's engines only, the
#                            results in a temporary directory
#
# The same for every system:
#  - one split per corpus: 1,000 documents held out, or 10% when that is
#    fewer (split_heldout(seed = 1)); 80% of each test document's word types
#    observed, the rest scored;
#  - held-out: our document completion (completion_score(), notes/math.md §7)
#    with the system's topics and its own alpha, nats per held-out token;
#  - NPMI: each topic's 10 most probable words, document co-occurrence on the
#    training documents, -1 for a pair that never co-occurs, mean over the
#    45 pairs then over topics (the package's coherence_npmi());
#  - diversity: distinct words among all topics' 25 most probable over 25 K;
#  - seconds: CPU seconds (user + system) of the whole call, one thread;
#  - spread: topics that hold each of the training corpus's 10 most frequent
#    words among their 10 most probable, averaged over those words; dup1:
#    topics whose most probable word heads another topic too.
# Every system hands a K x V topic-word matrix (rows sum to 1) to one
# function, score_topics(). text2vec's topic_word_distribution gives 0 to
# words a topic never drew, so its topics are its counts plus its prior
# (topic_word_prior = 1 / K), normalised.
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
data_dir <- file.path("..", "shared", "data")
out_file <- if (smoke) bench_out("quality.txt") else
  Sys.getenv("SPARSEVI_QUALITY_OUT", file.path(bench_dir, "results", "quality.txt"))
say <- bench_logger(out_file)
env_list <- function(v, default) strsplit(Sys.getenv(v, default), ",")[[1]]
corpora <- if (smoke) "simulated" else env_list("SPARSEVI_QUALITY_CORPORA",
  "kos,nips_f20,poliblog5k,sotu_chunks,spamassassin,moviereviews,wikipara20000")
Ks <- if (smoke) 3L else as.integer(env_list("SPARSEVI_QUALITY_K", "20,100,200"))
systems <- if (smoke) c("cvb0", "vb", "ope", "gibbs") else
  env_list("SPARSEVI_QUALITY_SYSTEMS", "cvb0,vb,ope,gibbs,tm_gibbs,t2v_warp")
peer_lib <- Sys.getenv("SPARSEVI_PEER_LIB", file.path("..", "peerlib"))
if (dir.exists(peer_lib)) .libPaths(c(peer_lib, .libPaths()))

# load the package's code before anything is timed
invisible(fit_lda(simulate_lda(D = 50, V = 30, K = 3, seed = 1)$dtm, K = 3, passes = 1,
                  seed = 1, progress = FALSE))

# ---- the one scorer ---------------------------------------------------------
# tw: K x V topic-word matrix over tr's vocabulary (rows sum to 1); alpha: the
# system's document-topic prior (for the completion of test documents).
score_topics <- function(tw, alpha, tr, test) {
  colnames(tw) <- tr$vocab
  top25 <- apply(tw, 1L, function(p) order(p, decreasing = TRUE)[1:25])
  freq <- tapply(tr$count, factor(tr$term + 1L, levels = seq_len(ncol(tr))), sum, default = 0)
  freq10 <- order(freq, decreasing = TRUE)[1:10]
  list(heldout = sparsevi:::completion_score(tw, alpha, test),
       npmi = mean(sparsevi:::coherence_npmi(tw, tr, n = 10L)),
       diversity = sparsevi:::topic_diversity(tw, 25L), # (the package's own measure)
       # how far frequent words spread: topics holding each of the corpus's
       # 10 most frequent words among their top 10, averaged over the words
       spread = mean(vapply(freq10, function(v) sum(top25[1:10, ] == v), 0)),
       # topics whose first word is also another topic's first word
       dup_first = nrow(tw) - length(unique(top25[1, ])),
       top = top25)
}

# ---- the systems --------------------------------------------------------------
# fit_lda() with every engine default named in the call: the registry's global
# step and priors (1 / K where it says NA), and the start fit_lda() would take
# (SCVB0 switches to "seeded" on large tables); `extra` changes some (probes).
engine_call <- function(tr, K, local, extra = list()) {
  d <- sparsevi:::lda_engine_defaults[[local]]
  init <- sparsevi:::lda_default_init(local, K, ncol(tr), sum(tr$count))
  args <- list(x = tr, K = K, local = local, global = d$global,
               alpha = sparsevi:::lda_default_prior(d$alpha, K),
               eta = sparsevi:::lda_default_prior(d$eta, K),
               init = init, seed = 1L, threads = 1L, progress = FALSE)
  args[names(extra)] <- extra
  args
}
`%||%` <- function(a, b) if (is.null(a)) b else a

parse_system <- function(s) {
  parts <- strsplit(s, "+", fixed = TRUE)[[1]]
  extra <- list()
  for (p in parts[-1]) {
    kv <- strsplit(p, "=", fixed = TRUE)[[1]]
    extra[[kv[1]]] <- eval(parse(text = kv[2]))
  }
  list(engine = parts[1], extra = extra)
}

run_system <- function(s, tr, K) {
  sp <- parse_system(s)
  if (sp$engine %in% c("cvb0", "vb", "ope", "gibbs")) {
    # "opt.NAME=value" sets options(sparsevi.NAME = value) for this run
    is_opt <- startsWith(as.character(names(sp$extra)), "opt.")
    opts <- sp$extra[is_opt]
    names(opts) <- sub("^opt[.]", "sparsevi.", names(opts))
    old <- options(opts)
    on.exit(options(old))
    args <- engine_call(tr, K, sp$engine, sp$extra[!is_opt])
    wc <- cpu_of(do.call(fit_lda, args))
    f <- wc$value
    ct <- f$control
    shown <- c("local", "global", "alpha", "eta", "init", "tau", "kappa", "batch_size",
               "background", "passes", names(sp$extra))
    shown <- unique(shown[shown %in% names(ct) | shown %in% names(f)])
    val <- function(nm) {
      v <- if (!is.null(ct[[nm]])) ct[[nm]] else f[[nm]]
      if (is.numeric(v)) format(v, digits = 4) else as.character(v)
    }
    ran <- paste(vapply(shown, function(nm) sprintf("%s=%s", nm, paste(val(nm), collapse = "/")),
                        ""), collapse = " ")
    cs <- ct$cvb0_settings
    if (!is.null(cs$top_L) && cs$top_L > 0L && !"sparse_rest" %in% shown) {
      # (SCVB0's sparse summary: its form, read from the fit)
      ran <- sprintf("%s sparse_rest=%s", ran,
                     c("renormalise", "sample", "shape")[cs$top_rest + 1L])
    }
    if (isTRUE(ct$ope_L > 0L)) {
      # (OPE's sparse summary: its form, read from the fit)
      ran <- sprintf("%s ope_sparse_rest=%s", ran,
                     c("renormalise", "sample", "shape")[ct$ope_sparse_rest + 1L])
    }
    if (isTRUE(ct$background > 0)) {
      # (SCVB0's background topic, topic 1: its share of the training tokens)
      size <- sparsevi:::lda_topic_sizes(f)
      ran <- sprintf("%s background_share=%.3f", ran, size[1] / sum(size))
    }
    ran <- sprintf("%s; laps %d (%s)", ran, nrow(f$trace), f$ended %||% "?")
    # fit_lda(reuse_dead = ): the topics re-seeded after each lap but the last
    if (isTRUE(ct$reuse_dead)) {
      ran <- sprintf("%s; dead_share %s, re-seeded %s", ran, format(ct$dead_share),
                     paste(f$state$reused %||% 0L, collapse = "/"))
    }
    return(list(name = sprintf("sparsevi %s", s), tw = f$topic_word, alpha = f$alpha,
                cpu = wc$cpu, ran = ran))
  }
  doc_of <- rep.int(seq_len(nrow(tr)), diff(tr$doc_ptr))
  if (s == "tm_gibbs") {
    if (!requireNamespace("topicmodels", quietly = TRUE)) return(NULL)
    stm <- slam::simple_triplet_matrix(doc_of, tr$term + 1L, as.integer(round(tr$count)),
                                       nrow(tr), ncol(tr), dimnames = list(NULL, tr$vocab))
    wc <- cpu_of(topicmodels::LDA(stm, k = K, method = "Gibbs",
                                  control = list(iter = 300, seed = 1L)))
    tw <- exp(wc$value@beta)
    tw <- tw / rowSums(tw)
    return(list(name = "topicmodels Gibbs", tw = tw, alpha = wc$value@alpha, cpu = wc$cpu,
                ran = sprintf("LDA(method = \"Gibbs\", iter = 300, seed = 1): alpha %.4g, delta %.4g",
                              wc$value@alpha, wc$value@control@delta)))
  }
  if (s == "t2v_warp") {
    if (!requireNamespace("text2vec", quietly = TRUE)) return(NULL)
    m <- Matrix::sparseMatrix(i = doc_of, j = tr$term + 1L, x = round(tr$count),
                              dims = c(nrow(tr), ncol(tr)), dimnames = list(NULL, tr$vocab))
    set.seed(1)
    lda <- text2vec::LDA$new(n_topics = K, doc_topic_prior = 50 / K, topic_word_prior = 1 / K)
    wc <- cpu_of(suppressMessages(lda$fit_transform(m, n_iter = 300, convergence_tol = -1,
                                                    progressbar = FALSE)))
    cnt <- lda$components[, tr$vocab, drop = FALSE]
    tw <- (cnt + 1 / K) / rowSums(cnt + 1 / K)
    return(list(name = "text2vec WarpLDA", tw = tw, alpha = 50 / K, cpu = wc$cpu,
                ran = sprintf("LDA$new(doc_topic_prior = %.4g, topic_word_prior = %.4g), fit_transform(n_iter = 300, convergence_tol = -1); topics = counts + prior",
                              50 / K, 1 / K)))
  }
  if (s %in% c("sk_online", "gensim")) return(run_python_peer(s, tr, K))
  stop("unknown system ", s)
}

# The online VB peers (Hoffman, Blei & Bach's learner, as fit_lda(local =
# "vb", global = "stochastic")): scikit-learn's LatentDirichletAllocation
# (learning_method = "online") and gensim's LdaModel, with /usr/bin/python3
# (Debian's python3-sklearn and python3-gensim), one thread, each at its own
# defaults (priors 1 / K; scikit-learn: minibatches of 128, learning_offset
# 10, learning_decay 0.7; gensim: chunks of 2,000, offset 1, decay 0.5)
# except the laps: 10, as fit_lda()'s `passes`. Their topics are their
# lambda normalised; alpha their document-topic prior.
run_python_peer <- function(s, tr, K) {
  if (!file.exists("/usr/bin/python3")) return(NULL)
  tmp <- tempfile("quality-peer-")
  dir.create(tmp)
  on.exit(unlink(tmp, recursive = TRUE))
  write_uci_bow(tr, file.path(tmp, "docword.txt"))
  py <- file.path(tmp, "peer.py")
  writeLines(c(
    "import sys, time, numpy as np, scipy.sparse as sps",
    "d = np.loadtxt(sys.argv[1] + '/docword.txt', ndmin=2, skiprows=3)",
    "D, V, K, which = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]",
    "X = sps.csr_matrix((d[:, 2], (d[:, 0].astype(np.int64) - 1, d[:, 1].astype(np.int64) - 1)), shape=(D, V))",
    "if which == 'sk_online':",
    "    from sklearn.decomposition import LatentDirichletAllocation",
    "    t = time.process_time()",
    "    m = LatentDirichletAllocation(n_components=K, learning_method='online', max_iter=10, random_state=1, n_jobs=1)",
    "    m.fit(X); el = time.process_time() - t",
    "    tw = m.components_; alpha = m.doc_topic_prior_",
    "    ran = 'LatentDirichletAllocation(learning_method=online, max_iter=10, batch_size=%d, learning_offset=%g, learning_decay=%g, doc_topic_prior=%g, topic_word_prior=%g)' % (m.batch_size, m.learning_offset, m.learning_decay, m.doc_topic_prior_, m.topic_word_prior_)",
    "else:",
    "    from gensim.models import LdaModel",
    "    from gensim.matutils import Sparse2Corpus",
    "    corpus = list(Sparse2Corpus(X, documents_columns=False))",
    "    t = time.process_time()",
    "    m = LdaModel(corpus, num_topics=K, passes=10, random_state=1, id2word={i: str(i) for i in range(V)})",
    "    el = time.process_time() - t",
    "    tw = m.get_topics(); alpha = float(np.mean(m.alpha))",
    "    ran = 'LdaModel(passes=10, chunksize=%d, offset=%g, decay=%g, alpha=%g, eta=%g)' % (m.chunksize, m.offset, m.decay, alpha, float(np.mean(m.eta)))",
    "tw = tw / tw.sum(axis=1, keepdims=True)",
    "np.savetxt(sys.argv[1] + '/tw.txt', tw)",
    "print(ran); print(el, alpha)"), py)
  env <- c("OMP_NUM_THREADS=1", "OPENBLAS_NUM_THREADS=1", "MKL_NUM_THREADS=1")
  out <- tryCatch(suppressWarnings(system2("/usr/bin/python3", c(py, tmp, nrow(tr), ncol(tr), K, s),
                                           stdout = TRUE, stderr = FALSE, env = env)),
                  error = function(e) NULL)
  if (length(out) < 2L || !file.exists(file.path(tmp, "tw.txt"))) return(NULL)
  vals <- as.numeric(strsplit(utils::tail(out, 1L), " ")[[1]])
  tw <- as.matrix(utils::read.table(file.path(tmp, "tw.txt")))
  dimnames(tw) <- NULL
  list(name = c(sk_online = "scikit-learn online VB", gensim = "gensim LdaModel")[[s]],
       tw = tw, alpha = vals[2], cpu = vals[1], ran = out[length(out) - 1L])
}

env_of <- function(v) {
  val <- Sys.getenv(v, "")
  if (nzchar(val)) sprintf("%s=%s ", v, val) else ""
}
commit <- bench_commit()
dirty <- FALSE # (bench_commit() says "+uncommitted" itself)
command <- sprintf("%s%sRscript inst/bench/quality.R",
                   paste0(vapply(c("SPARSEVI_QUALITY_CORPORA", "SPARSEVI_QUALITY_K",
                                   "SPARSEVI_QUALITY_SYSTEMS", "SPARSEVI_QUALITY_OUT",
                                   "SPARSEVI_PEER_LIB", "R_LIBS"), env_of, ""), collapse = ""),
                   bench_nice())

for (cn in corpora) {
  x <- bench_corpus(cn, data_dir)
  n_test <- min(1000L, as.integer(round(0.1 * nrow(x))))
  sp <- split_heldout(x, n_test = n_test, seed = 1)
  tr <- sp$train
  for (K in Ks) {
    say("")
    say("== %s, K = %d; commit %s%s; %s; load %s", cn, K, commit,
        if (dirty) " (+ uncommitted R/src changes)" else "", format(Sys.time()),
        paste(readLines("/proc/loadavg", warn = FALSE), collapse = ""))
    say("   command: %s", command)
    say("   %d documents (%d train, %d held out), V = %d, %d training tokens", nrow(x), nrow(tr),
        n_test, ncol(tr), sum(tr$count))
    say("   %-40s %9s %7s %9s %8s %7s %6s", "system", "held-out", "NPMI", "diversity", "CPU s",
        "spread", "dup1")
    for (s in systems) {
      r <- run_system(s, tr, K)
      if (is.null(r)) {
        say("   %-40s absent", s)
        next
      }
      sc <- score_topics(r$tw, r$alpha, tr, sp$test)
      say("   %-40s %9.4f %7.4f %9.4f %8.1f %7.1f %6d", r$name, sc$heldout, sc$npmi,
          sc$diversity, r$cpu, sc$spread, sc$dup_first)
      say("      ran: %s", r$ran)
    }
  }
}
attr(say, "close")()
