# Resident memory over 1,000 repeated small fits (issue 11): RSS from
# /proc/self/status every 100 fits, for LDA (vb, cvb0, gibbs), mixtures and
# Fast-VDP in turn. A leak in C (memory not owned by R, or a topic table
# outside R's heap, src/table.c, never freed) shows as RSS that keeps
# growing after R's heap has settled.
#
# Usage: Rscript inst/bench/memory.R [fits]   (from the package root)
# Writes inst/bench/results/memory.txt.

suppressPackageStartupMessages(library(sparsevi))
bench_dir <- local({
  a <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  d <- c(if (length(a)) dirname(a[1]), file.path("inst", "bench"),
         system.file("bench", package = "sparsevi"))
  d[file.exists(file.path(d, "bench-log.R"))][1]
})
source(file.path(bench_dir, "bench-log.R"))
args <- commandArgs(trailingOnly = TRUE)
n_fits <- if (length(args)) as.integer(args[1]) else 1000L
out_file <- file.path("inst", "bench", "results", "memory.txt")

rss_mb <- function() {
  st <- readLines("/proc/self/status")
  kb <- as.numeric(gsub("[^0-9]", "", st[grepl("^VmRSS:", st)]))
  kb / 1024
}

x <- simulate_lda(D = 40, V = 60, K = 3, doc_length = 30, seed = 1)$dtm
X <- simulate_mixture(N = 150, D = 2, K = 3, seed = 1)$X
fits <- list(
  lda_vb = function(i) fit_lda(x, K = 3, local = "vb", passes = 2, seed = i,
                               progress = FALSE),
  lda_cvb0 = function(i) fit_lda(x, K = 3, local = "cvb0", passes = 2, seed = i,
                                 progress = FALSE),
  # SCVB0's seeded start: its store's table comes from malloc (src/table.c)
  lda_seeded = function(i) fit_lda(x, K = 3, local = "cvb0", init = "seeded", passes = 2,
                                   seed = i, progress = FALSE),
  lda_gibbs = function(i) fit_lda(x, K = 3, local = "gibbs", passes = 2, seed = i,
                                  progress = FALSE),
  mixture = function(i) fit_mixture(X, K = 3, passes = 3, seed = i, progress = FALSE),
  vdp = function(i) fit_vdp(X, seed = i, progress = FALSE, max_iter = 10)
)
# each fit also predicts, so prediction paths are covered
use <- function(f, i) {
  fit <- f(i)
  if (inherits(fit, "sparsevi_lda")) predict(fit, x[1:5, ], seed = i) else predict(fit, X)
  invisible(NULL)
}

commit <- tryCatch(system2("git", c("rev-parse", "--short", "HEAD"), stdout = TRUE),
                   error = function(e) "unknown")
lines <- c(sprintf("# inst/bench/memory.R: %d fits per engine, RSS (MB) every 100 fits", n_fits),
           sprintf("# %s, R %s, sparsevi %s, commit %s", format(Sys.time(), "%Y-%m-%d %H:%M UTC", tz = "UTC"),
                   getRversion(), utils::packageVersion("sparsevi"), commit),
           sprintf("# command: Rscript inst/bench/memory.R %d (from the package root)", n_fits))
cat(lines, sep = "\n")
for (nm in names(fits)) {
  invisible(gc())
  rss <- rss_mb()
  for (i in seq_len(n_fits)) {
    use(fits[[nm]], i)
    if (i %% 100L == 0L) {
      invisible(gc())
      rss <- c(rss, rss_mb())
    }
  }
  # growth over the second half (after R's heap has settled)
  half <- rss[ceiling(length(rss) / 2):length(rss)]
  line <- sprintf("%-10s RSS: %s | growth over the last half: %+.1f MB (%s)", nm,
                  paste(sprintf("%.0f", rss), collapse = " "), max(half) - half[1],
                  if (max(half) - half[1] < 5) "flat" else "GROWING")
  cat(line, "\n")
  lines <- c(lines, line)
}
dir.create(dirname(out_file), showWarnings = FALSE, recursive = TRUE)
writeLines(lines, out_file)
