# The results logger the benchmarks share: say(fmt, ...) prints a line and
# appends it to the results file at once (a long run killed half-way keeps
# what it measured). Source it from the package root:
#   source(file.path("inst", "bench", "bench-log.R")); say <- bench_logger(out_file)
# and call attr(say, "close")() at the end.
bench_logger <- function(out_file, append = TRUE) {
  con <- file(out_file, open = if (append) "a" else "w")
  say <- function(...) {
    line <- sprintf(...)
    cat(line, "\n", sep = "")
    cat(line, "\n", sep = "", file = con)
    flush(con)
  }
  attr(say, "close") <- function() close(con)
  say
}
