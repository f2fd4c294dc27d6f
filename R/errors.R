# Classed conditions and the small argument checks every user-facing function
# uses. Each check names the offending argument and says how to fix it.

abort <- function(msg, class, call = caller_call(), ...) {
  force(call)
  cnd <- errorCondition(
    msg,
    class = c(paste0("sparsevi_error_", class), "sparsevi_error"),
    call = call, ...
  )
  stop(cnd)
}

warn <- function(msg, class, call = caller_call()) {
  force(call)
  cnd <- warningCondition(
    msg,
    class = c(paste0("sparsevi_warning_", class), "sparsevi_warning"),
    call = call
  )
  warning(cnd)
}

# Used as a default argument `call = caller_call()` of a function f: the call
# of whoever called f (n = 1), or n generations further up.
caller_call <- function(n = 1) {
  sys.call(sys.parent(n + 1))
}

arg_label <- function(arg) {
  sprintf("`%s`", arg)
}

check_count <- function(x, arg = deparse(substitute(x)), min = 1, max = Inf,
                        call = caller_call()) {
  if (!is.numeric(x) || length(x) != 1L || is.na(x) || !is.finite(x) ||
      x != round(x)) {
    abort(sprintf("%s must be a single whole number, not %s.",
                  arg_label(arg), describe(x)), "argument", call = call)
  }
  if (x < min || x > max) {
    range <- if (is.finite(max)) sprintf("between %s and %s", format(min), format(max))
             else sprintf("at least %s", format(min))
    abort(sprintf("%s must be %s, not %s.", arg_label(arg), range, format(x)),
          "argument", call = call)
  }
  as.integer(x)
}

check_number <- function(x, arg = deparse(substitute(x)), lower = -Inf,
                         upper = Inf, lower_open = FALSE, upper_open = FALSE,
                         call = caller_call()) {
  if (!is.numeric(x) || length(x) != 1L || is.na(x) || !is.finite(x)) {
    abort(sprintf("%s must be a single finite number, not %s.",
                  arg_label(arg), describe(x)), "argument", call = call)
  }
  bad_low <- if (lower_open) x <= lower else x < lower
  bad_high <- if (upper_open) x >= upper else x > upper
  if (bad_low || bad_high) {
    lo <- if (lower_open) "(" else "["
    hi <- if (upper_open) ")" else "]"
    abort(sprintf("%s must lie in %s%s, %s%s, not %s.", arg_label(arg), lo,
                  format(lower), format(upper), hi, format(x)),
          "argument", call = call)
  }
  as.double(x)
}

check_positive <- function(x, arg = deparse(substitute(x)), max = 1e10,
                           call = caller_call()) {
  check_number(x, arg, lower = 0, upper = max, lower_open = TRUE, call = call)
}

check_probability <- function(x, arg = deparse(substitute(x)), open = TRUE,
                              call = caller_call()) {
  check_number(x, arg, lower = 0, upper = 1, lower_open = open,
               upper_open = open, call = call)
}

check_flag <- function(x, arg = deparse(substitute(x)), call = caller_call()) {
  if (!is.logical(x) || length(x) != 1L || is.na(x)) {
    abort(sprintf("%s must be TRUE or FALSE, not %s.", arg_label(arg),
                  describe(x)), "argument", call = call)
  }
  x
}

check_string <- function(x, arg = deparse(substitute(x)), call = caller_call()) {
  if (!is.character(x) || length(x) != 1L || is.na(x)) {
    abort(sprintf("%s must be a single string, not %s.", arg_label(arg),
                  describe(x)), "argument", call = call)
  }
  x
}

# match.arg() with a classed error naming the valid choices.
check_choice <- function(x, choices, arg = deparse(substitute(x)),
                         call = caller_call()) {
  if (!is.character(x) || length(x) < 1L || is.na(x[1L])) {
    abort(sprintf("%s must be one of %s.", arg_label(arg),
                  paste0('"', choices, '"', collapse = ", ")),
          "argument", call = call)
  }
  x <- x[1L]
  if (!x %in% choices) {
    abort(sprintf("%s must be one of %s, not \"%s\".", arg_label(arg),
                  paste0('"', choices, '"', collapse = ", "), x),
          "argument", call = call)
  }
  x
}

describe <- function(x) {
  if (is.null(x)) return("NULL")
  if (is.function(x)) return("a function")
  if (!is.atomic(x)) return(sprintf("an object of class %s", class(x)[1L]))
  if (length(x) == 0L) return(sprintf("an empty %s vector", typeof(x)))
  if (length(x) > 1L) return(sprintf("a %s vector of length %d", typeof(x), length(x)))
  if (is.na(x)) return("NA")
  if (is.character(x)) return(sprintf('the string "%s"', x))
  if (is.numeric(x) || is.logical(x)) return(format(x))
  sprintf("an object of class %s", class(x)[1L])
}

# update() of any fit: only the named arguments of its method, so a typo or
# a setting that cannot change (alpha, K ...) is an error, not ignored.
check_update_dots <- function(..., valid, call = caller_call()) {
  dots <- list(...)
  if (!length(dots)) return(invisible(TRUE))
  nm <- names(dots)
  if (is.null(nm)) nm <- rep("", length(dots))
  shown <- ifelse(nzchar(nm), paste0("`", nm, "`"), "an unnamed argument")
  abort(sprintf("update() does not take %s. Valid arguments: %s. Settings of the model itself (K, alpha, the engine ...) are fixed: fit a new model to change them.",
                paste(unique(shown), collapse = ", "), paste0("`", valid, "`", collapse = ", ")),
        "argument", call = call)
}
